package loopbreaker

import "github.com/loopbreaker/loopbreaker/internal/errtext"

// maxNormalizedInput bounds how much of a text Normalize reads, in bytes:
// what lies beyond it (and beyond the last line end before it) never
// reaches the result. Stack traces collapse, so the cap of the result alone
// does not bound the reading; this does.
const maxNormalizedInput = errtext.MaxNormalizedInput

// Normalize returns the identity of an error text: the text with the parts
// that change between iterations of the same failure replaced by fixed
// placeholders.
//
// The base rules:
//   - hex values (0x7f3a) become HEX;
//   - stack frames (at UserController (/src/controllers/user.ts:42:15)) become STACK;
//   - runs of ASCII digits become N;
//   - everything else is lower-cased; the placeholders stay upper case, so a
//     literal "n" in the text never equals a replaced number;
//   - surrounding white space is trimmed and the result is capped at
//     500 runes; the cut never splits a UTF-8 sequence and
//     never leaves trailing white space.
//
// And on top of them, so that real tools' output between iterations keeps
// one identity:
//   - a run of stack-frame lines (Node, Java, Python, Go, Rust) becomes one
//     STACK, so the decisive line of a long trace fits under the cap;
//   - ANSI escape sequences are removed;
//   - a run of white space becomes one newline if it crosses a line, else
//     one space;
//   - an absolute path keeps only its last element; a bare temporary
//     directory (/tmp/tmp.Xy12) becomes TMP;
//   - a number with a time unit (1500ms, 0.03s, 1m2.5s) becomes DURATION;
//   - a compiler's source excerpt with its ~~~ underline, and its "Found 2
//     errors" summary, are dropped, and the location file(12,5): is written
//     as file:N:N - , so that tsc (and MSBuild-style tools) with pretty
//     output on and off give one text.
//
// Any input is accepted: invalid UTF-8 becomes U+FFFD, so the result is
// always valid UTF-8. Normalize reads its input once, front to back; it
// stops when the result is full, and it reads at most 16 KiB
// bytes, so a huge text costs what its head does.
func Normalize(msg string) string { return errtext.Normalize(msg) }

// Fingerprint returns the first 8 lower-case hex characters of the MD5 of
// Normalize(msg). Two errors with the same fingerprint are "the same error"
// to the breaker.
func Fingerprint(msg string) string {
	return formatFingerprint(fingerprint32(msg))
}

// fingerprint32 is Fingerprint as a number: the first four bytes of the MD5,
// big-endian. It allocates nothing.
func fingerprint32(msg string) uint32 { return errtext.Fingerprint(msg) }

const hexDigits = "0123456789abcdef"

// formatFingerprint renders a fingerprint as 8 lower-case hex characters.
func formatFingerprint(fp uint32) string {
	var b [8]byte
	for i := 7; i >= 0; i-- {
		b[i] = hexDigits[fp&0xf]
		fp >>= 4
	}
	return string(b[:])
}
