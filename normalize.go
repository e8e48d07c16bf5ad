package loopbreaker

import (
	"crypto/md5"
	"encoding/binary"
	"unicode"
	"unicode/utf8"
)

// MaxNormalizedRunes is the length cap of Normalize's result, in runes.
const MaxNormalizedRunes = 500

// maxNormalizedBytes bounds the UTF-8 size of a normalized text.
const maxNormalizedBytes = MaxNormalizedRunes * utf8.UTFMax

// Normalize returns the identity of an error text: the text with the parts
// that change between iterations of the same failure replaced by fixed
// placeholders.
//
// The rules, in order of precedence:
//   - hex values (0x7f3a) become HEX;
//   - stack frames (at UserController (/src/controllers/user.ts:42:15)) become STACK;
//   - runs of ASCII digits become N;
//   - everything else is lower-cased; the placeholders stay upper case, so a
//     literal "n" in the text never equals a replaced number;
//   - surrounding white space is trimmed and the result is capped at
//     MaxNormalizedRunes runes; the cut never splits a UTF-8 sequence and
//     never leaves trailing white space.
//
// Any input is accepted: invalid UTF-8 becomes U+FFFD, so the result is
// always valid UTF-8. Normalize reads its input once, front to back, and
// stops reading as soon as the cap is full, so a huge text costs about what
// its first few hundred characters do.
func Normalize(msg string) string {
	var w normWriter
	w.normalize(msg)
	return string(w.bytes())
}

// Fingerprint returns the first 8 lower-case hex characters of the MD5 of
// Normalize(msg). Two errors with the same fingerprint are "the same error"
// to the breaker.
func Fingerprint(msg string) string {
	return formatFingerprint(fingerprint32(msg))
}

// fingerprint32 is Fingerprint as a number: the first four bytes of the MD5,
// big-endian. It allocates nothing.
func fingerprint32(msg string) uint32 {
	var w normWriter
	w.normalize(msg)
	sum := md5.Sum(w.bytes())
	return binary.BigEndian.Uint32(sum[:4])
}

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

// normWriter accumulates normalized output in a fixed buffer that can hold
// the largest possible result, so normalizing allocates nothing.
type normWriter struct {
	buf   [maxNormalizedBytes]byte
	n     int // bytes used
	runes int // runes written
}

func (w *normWriter) bytes() []byte { return w.buf[:w.n] }

func (w *normWriter) full() bool { return w.runes >= MaxNormalizedRunes }

// putASCII writes one ASCII byte.
func (w *normWriter) putASCII(c byte) {
	w.buf[w.n] = c
	w.n++
	w.runes++
}

// putRune writes one rune.
func (w *normWriter) putRune(r rune) {
	w.n += utf8.EncodeRune(w.buf[w.n:], r)
	w.runes++
}

// putPlaceholder writes a placeholder, cut short if the cap is reached
// inside it.
func (w *normWriter) putPlaceholder(p string) {
	for i := 0; i < len(p) && !w.full(); i++ {
		w.buf[w.n] = p[i]
		w.n++
		w.runes++
	}
}

// trimRight drops trailing white space from the output.
func (w *normWriter) trimRight() {
	for w.n > 0 {
		r, size := utf8.DecodeLastRune(w.buf[:w.n])
		if !unicode.IsSpace(r) {
			return
		}
		w.n -= size
		w.runes--
	}
}

// Byte classes for the normalizer's dispatch.
const (
	classPlain = iota // ASCII that is copied lower-cased
	classDigit        // 0-9: a digit run or a hex value
	classA            // a or A: perhaps the "at" of a stack frame
	classMulti        // the first byte of a multi-byte (or invalid) sequence
)

var byteClass, lowerTable = func() (class, lower [256]byte) {
	for c := 0; c < 256; c++ {
		lower[c] = byte(c)
		switch {
		case c >= utf8.RuneSelf:
			class[c] = classMulti
		case c >= '0' && c <= '9':
			class[c] = classDigit
		case c == 'a' || c == 'A':
			class[c] = classA
		}
		if c >= 'A' && c <= 'Z' {
			lower[c] = byte(c) + 'a' - 'A'
		}
	}
	return class, lower
}()

// normalize appends the normalized form of s. It is a single left-to-right
// pass: at each position the first rule that matches there wins (hex, then
// stack frame, then digits), which gives the same result as applying the
// rules one after another over the whole text.
func (w *normWriter) normalize(s string) {
	i := skipLeadingSpace(s)
	start := i
	for i < len(s) && !w.full() {
		switch byteClass[s[i]] {
		case classPlain:
			// Copy the run of plain bytes that fits under the cap.
			end := min(len(s), i+MaxNormalizedRunes-w.runes)
			j := i
			for j < end && byteClass[s[j]] == classPlain {
				w.buf[w.n] = lowerTable[s[j]]
				w.n++
				j++
			}
			w.runes += j - i
			i = j
		case classDigit:
			if end := hexEnd(s, i); end > i {
				w.putPlaceholder("HEX")
				i = end
				continue
			}
			w.putPlaceholder("N")
			i = digitsEnd(s, i)
		case classA:
			if i == start || !isWordRune(lastRuneLower(s[:i])) {
				if end := stackFrameEnd(s, i); end > i {
					w.putPlaceholder("STACK")
					i = end
					continue
				}
			}
			w.putASCII('a')
			i++
		case classMulti:
			r, size := utf8.DecodeRuneInString(s[i:])
			w.putRune(unicode.ToLower(r))
			i += size
		}
	}
	w.trimRight()
}

// skipLeadingSpace returns the index of the first rune of s that is not
// white space.
func skipLeadingSpace(s string) int {
	i := 0
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if !isASCIISpace(c) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			return i
		}
		i += size
	}
	return i
}

// lastRuneLower returns the last rune of s, lower-cased as the normalizer
// sees it (an invalid byte is U+FFFD).
func lastRuneLower(s string) rune {
	c := s[len(s)-1]
	if c < utf8.RuneSelf {
		return rune(lowerTable[c])
	}
	r, _ := utf8.DecodeLastRuneInString(s)
	return unicode.ToLower(r)
}

// hexEnd returns the end of a hex value (0x followed by at least one hex
// digit, either case) starting at i, or i when there is none.
func hexEnd(s string, i int) int {
	if s[i] != '0' || i+2 >= len(s) || (s[i+1]|0x20) != 'x' || !isHexDigit(s[i+2]) {
		return i
	}
	j := i + 3
	for j < len(s) && isHexDigit(s[j]) {
		j++
	}
	return j
}

// digitsEnd returns the end of the digit run starting at i. The run stops
// before a hex value, which takes precedence over digits.
func digitsEnd(s string, i int) int {
	j := i + 1
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		if hexEnd(s, j) > j {
			break
		}
		j++
	}
	return j
}

// stackFrameEnd returns the end of a stack frame starting at i, or i when
// there is none. A stack frame is "at", one or more spaces or tabs, a name
// without white space or parentheses, one or more spaces or tabs, and a
// parenthesised location on one line that ends in ":line:column":
//
//	at UserController (/src/controllers/user.ts:42:15)
func stackFrameEnd(s string, i int) int {
	j := i + 2
	if j > len(s) || (s[i+1]|0x20) != 't' {
		return i
	}
	// Spaces after "at".
	k := skipBlanks(s, j)
	if k == j {
		return i
	}
	// The name.
	j = k
	for j < len(s) && !isREWhite(s[j]) && s[j] != '(' && s[j] != ')' {
		j++
	}
	if j == k {
		return i
	}
	// Spaces before the location.
	k = skipBlanks(s, j)
	if k == j || k >= len(s) || s[k] != '(' {
		return i
	}
	// The location, up to the first parenthesis or line end.
	open := k
	j = k + 1
	for j < len(s) && s[j] != '(' && s[j] != ')' && s[j] != '\n' {
		j++
	}
	if j >= len(s) || s[j] != ')' || !endsWithLineColumn(s[open+1:j]) {
		return i
	}
	return j + 1
}

// endsWithLineColumn reports whether loc ends in ":digits:digits".
func endsWithLineColumn(loc string) bool {
	j := len(loc)
	for n := 0; n < 2; n++ {
		end := j
		for j > 0 && loc[j-1] >= '0' && loc[j-1] <= '9' {
			j--
		}
		if j == end || j == 0 || loc[j-1] != ':' {
			return false
		}
		j--
	}
	return true
}

// skipBlanks returns the index after the spaces and tabs starting at i.
func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || (c|0x20) >= 'a' && (c|0x20) <= 'f'
}

// isWordRune reports whether r is an ASCII word character, the kind that
// makes "at" part of a longer word.
func isWordRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'
}

// isREWhite reports whether c is white space in the sense of the seed's
// patterns (\s): space, tab, newline, form feed, carriage return.
func isREWhite(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// isASCIISpace reports whether c is white space to unicode.IsSpace.
func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}
