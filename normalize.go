package loopbreaker

import "github.com/loopbreaker/loopbreaker/internal/errtext"

// maxNormalizedInput bounds how much of a text Normalize reads, in bytes:
// what lies beyond it (and beyond the last line end before it) never
// reaches the result. Stack traces collapse, so the cap of the result alone
// does not bound the reading; this does.
const maxNormalizedInput = errtext.MaxNormalizedInput

// Normalize returns the identity of an error text: the parts that change
// between iterations of one failure are replaced by placeholders (HEX,
// STACK for frames and runs of frame lines, N for digits, DURATION, TMP),
// absolute paths keep their last element, ANSI colour and compiler source
// excerpts are dropped, white space is collapsed, and the rest is
// lower-cased. The result is trimmed and at most 500 runes of valid UTF-8
// (invalid input becomes U+FFFD); at most the first 16 KiB of msg are read.
func Normalize(msg string) string { return errtext.Normalize(msg) }

// Fingerprint returns the first 8 lower-case hex characters of the MD5 of
// [Normalize](msg): two errors with the same fingerprint are the same error.
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
