package errtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The rules within a line. Each starts at the byte at n.pos that picked
// it, writes what the text there becomes, and moves n.pos past what it
// read.

// text copies, lower-cased, what no rule needs to look at: most of a text.
// That is the plain bytes (isPlain), a single space, and an a inside a
// word or not before a t.
func (n *normalizer) text() {
	s, start := n.src, n.pos
	n.room(textChunk)
	run := s[start:min(len(s), start+n.limit-n.runes, start+len(n.buf)-n.size)]
	out := n.buf[n.size:][:len(run)]
	k := 0
	for ; k < len(run); k++ {
		c := run[k]
		if !plainBytes[c] {
			if c == ' ' {
				if j := start + k + 1; j < len(s) && (isASCIISpace(s[j]) || s[j] == esc) {
					break // a run of white space: the space rule
				}
			} else if c|0x20 != 'a' || mayStartAt(s, start, start+k) {
				break
			}
		}
		out[k] = lowerBytes[c]
	}
	n.size += k
	n.runes += k
	n.pos += k
}

// textChunk is the room the text rule asks for at once, for a digest: it
// copies at most that much before it asks again.
const textChunk = 4 << 10

// mayStartAt reports whether the a at s[i] may start an inline stack frame
// (see the at rule): it is before a t, and not after a word byte that the
// text rule read from s[start] on.
func mayStartAt(s string, start, i int) bool {
	return i+1 < len(s) && s[i+1]|0x20 == 't' && !(i > start && isWordRune(rune(s[i-1])))
}

// isPlain reports whether c is copied as it is but for lower-casing,
// wherever it is: ASCII that is not a digit, an a, white space, a slash or
// ESC.
func isPlain(c byte) bool {
	return c < utf8.RuneSelf && !isDigit(c) && c|0x20 != 'a' && !isASCIISpace(c) && c != '/' && c != esc
}

// plainBytes holds isPlain, and lowerBytes each byte lower-cased (ASCII
// letters; others stay as they are), as tables: the text rule looks up
// most bytes of a text in them.
var plainBytes, lowerBytes = func() (plain [256]bool, lower [256]byte) {
	for c := range 256 {
		plain[c] = isPlain(byte(c))
		lower[c] = byte(c)
		if 'A' <= c && c <= 'Z' {
			lower[c] = byte(c) + 'a' - 'A'
		}
	}
	return plain, lower
}()

// multiByte copies a multi-byte rune lower-cased; an invalid byte becomes
// U+FFFD.
func (n *normalizer) multiByte() {
	r, size := utf8.DecodeRuneInString(n.src[n.pos:])
	n.emitRune(unicode.ToLower(r))
	n.pos += size
}

// space writes a run of white space (and the ANSI escapes within it) as one
// newline if it crosses a line, else as one space. After a newline the
// line rules look at the next line.
func (n *normalizer) space() {
	end, newline := spaceRunEnd(n.src, n.pos)
	if newline {
		n.emit('\n')
		n.atLineStart = true
	} else {
		n.emit(' ')
	}
	n.pos = end
}

// spaceRunEnd returns the end of the run of ASCII white space (and the
// ANSI escapes within it) that starts at s[i], and whether it crosses a
// line.
func spaceRunEnd(s string, i int) (end int, newline bool) {
	for i < len(s) {
		if c := s[i]; isASCIISpace(c) {
			newline = newline || c == '\n'
			i++
		} else if c == esc {
			i = escapeEnd(s, i)
		} else {
			break
		}
	}
	return i, newline
}

// number handles the digit at pos: a hex value becomes HEX, a duration
// DURATION, any other digit run N. A file(line,column): location, as tsc
// and MSBuild-style tools write it without pretty output, becomes
// file:N:N - , as they write it with pretty output.
func (n *normalizer) number() {
	s, i := n.src, n.pos
	if end := hexEnd(s, i); end > i {
		n.emitPlaceholder("HEX")
		n.pos = end
		return
	}
	if end := durationEnd(s, i); end > i {
		n.emitPlaceholder("DURATION")
		n.pos = end
		return
	}
	if n.keepNumbers {
		if end := timestampEnd(s, i); end > i {
			n.emitPlaceholder("TIME")
			n.pos = end
			return
		}
		end := digitsEnd(s, i)
		n.room(end - i)
		for ; n.pos < end && !n.full(); n.pos++ {
			n.emit(s[n.pos])
		}
		n.pos = end
		return
	}
	end := digitsEnd(s, i)
	if k := n.size; k > 1 && n.buf[k-1] == '(' && endsWithFileName(n.buf[:k-1]) {
		if after := parenLocationEnd(s, end); after > end {
			// The space after the colon is left to the white-space rule,
			// so that more spaces, or a line break, read as anywhere else.
			n.size, n.runes = k-1, n.runes-1
			n.emitPlaceholder(":N:N -")
			n.pos = after
			return
		}
	}
	n.emitPlaceholder("N")
	n.pos = end
}

// hexEnd returns the end of a hex value (0x followed by at least one hex
// digit, either case) starting at s[i], or i when there is none.
func hexEnd(s string, i int) int {
	if s[i] != '0' || i+2 >= len(s) || s[i+1]|0x20 != 'x' || !isHexDigit(s[i+2]) {
		return i
	}
	j := i + 3
	for j < len(s) && isHexDigit(s[j]) {
		j++
	}
	return j
}

// digitsEnd returns the end of the digit run starting at s[i]. The run
// stops before a hex value, which takes precedence over digits: 10x1f is
// NHEX.
func digitsEnd(s string, i int) int {
	j := i + 1
	for j < len(s) && isDigit(s[j]) {
		if s[j] == '0' && hexEnd(s, j) > j {
			break
		}
		j++
	}
	return j
}

// durationEnd returns the end of a duration starting at s[i] (a number with
// an optional fraction and a time unit, possibly several, as in 1m2.5s),
// or i when there is none. The number must start a word and the unit must
// end it: 10min and v2s are no durations.
func durationEnd(s string, i int) int {
	if i > 0 && isWordRune(rune(s[i-1])) {
		return i
	}
	j, found := i, i
	for j < len(s) && isDigit(s[j]) {
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
			j++
			for j < len(s) && isDigit(s[j]) {
				j++
			}
		}
		u := unitEnd(s, j)
		if u == j {
			break
		}
		j, found = u, u
	}
	if found > i && found < len(s) && isWordRune(rune(s[found])) {
		return i
	}
	return found
}

// timestampEnd returns the end of a date or a time of day starting at
// s[i], as logs and tools print them, or i when there is none: a date
// 2026-12-01, with a time after it (T or a space) and a zone (Z, +01:00)
// if given; a time of day 23:04:05 (seconds needed, so that a file's
// line:column is no time), with a fraction and a zone if given.
func timestampEnd(s string, i int) int {
	if i > 0 && isWordRune(rune(s[i-1])) {
		return i
	}
	j := i
	if k := digitGroups(s, j, '-', 4, 2, 2); k > j {
		j = k
		if j+1 < len(s) && (s[j] == 'T' || s[j] == ' ') && isDigit(s[j+1]) {
			if k := clockEnd(s, j+1); k > j+1 {
				j = k
			}
		}
	} else if j = clockEnd(s, i); j == i {
		return i
	}
	switch {
	case j < len(s) && s[j] == 'Z':
		j++
	case j < len(s) && (s[j] == '+' || s[j] == '-'):
		if k := digitGroups(s, j+1, ':', 2, 2); k > j+1 {
			j = k
		} else if k := digitGroups(s, j+1, 0, 4); k > j+1 {
			j = k
		}
	}
	if j < len(s) && isWordRune(rune(s[j])) {
		return i
	}
	return j
}

// clockEnd returns the end of a time of day h:mm:ss or hh:mm:ss, with a
// fraction of a second if given, at s[i], or i.
func clockEnd(s string, i int) int {
	j := digitsEnd(s, i)
	if j-i > 2 || j >= len(s) || s[j] != ':' {
		return i
	}
	k := digitGroups(s, j+1, ':', 2, 2)
	if k == j+1 {
		return i
	}
	if k+1 < len(s) && (s[k] == '.' || s[k] == ',') && isDigit(s[k+1]) {
		k = digitsEnd(s, k+1)
	}
	return k
}

// digitGroups returns the end of groups of exactly the given numbers of
// digits, joined by sep (0: a single group), at s[i], or i.
func digitGroups(s string, i int, sep byte, sizes ...int) int {
	j := i
	for g, size := range sizes {
		if g > 0 {
			if j >= len(s) || s[j] != sep {
				return i
			}
			j++
		}
		for k := 0; k < size; k++ {
			if j >= len(s) || !isDigit(s[j]) {
				return i
			}
			j++
		}
	}
	if j < len(s) && isDigit(s[j]) {
		return i
	}
	return j
}

// unitEnd returns the end of a time unit (ns, us, µs, ms, s, m, h) at s[j],
// or j.
func unitEnd(s string, j int) int {
	switch {
	case j+1 < len(s) && s[j+1] == 's' && (s[j] == 'n' || s[j] == 'u' || s[j] == 'm'):
		return j + 2
	case j < len(s) && (s[j] == 's' || s[j] == 'm' || s[j] == 'h'):
		return j + 1
	case strings.HasPrefix(s[j:], "µs"):
		return j + len("µs")
	}
	return j
}

// endsWithFileName reports whether b ends in a file name with an
// extension ("app.ts", "program.cs").
func endsWithFileName(b []byte) bool {
	k := len(b) - 1
	for k >= 0 && b[k] != '.' && isPathByte(b[k]) {
		k--
	}
	return k > 0 && k < len(b)-1 && b[k] == '.' && isPathByte(b[k-1])
}

// parenLocationEnd returns the index of the blank after ",column):" when
// s[j:] starts with it (the text was read up to "file(line"), or j.
func parenLocationEnd(s string, j int) int {
	if j >= len(s) || s[j] != ',' {
		return j
	}
	k := digitsEnd(s, j+1)
	if k == j+1 || k+2 >= len(s) || s[k] != ')' || s[k+1] != ':' || !isBlank(s[k+2]) {
		return j
	}
	return k + 2
}

// at handles an a: at the start of a word it may start an inline stack
// frame, which becomes STACK; anywhere else it is copied. The start of a
// word is judged on the text: the rune before the a, lower-cased (so the
// Kelvin sign counts as a k), is not an ASCII word character.
func (n *normalizer) at() {
	s, i := n.src, n.pos
	if i == n.start || !isWordRune(lastRuneLower(s[:i])) {
		if end := stackFrameEnd(s, i); end > i {
			n.emitPlaceholder("STACK")
			n.pos = end
			return
		}
	}
	n.emit('a')
	n.pos++
}

// stackFrameEnd returns the end of an inline stack frame starting at s[i],
// or i when there is none. A stack frame is "at" (either case), blanks, a
// name without white space or parentheses, blanks, and a parenthesised
// location on one line that ends in ":line:column":
//
//	at UserController (/src/controllers/user.ts:42:15)
func stackFrameEnd(s string, i int) int {
	if i+2 > len(s) || s[i+1]|0x20 != 't' {
		return i
	}
	nameStart := skipBlanks(s, i+2)
	if nameStart == i+2 {
		return i
	}
	nameEnd := nameStart
	for nameEnd < len(s) && !isRE2Space(s[nameEnd]) && s[nameEnd] != '(' && s[nameEnd] != ')' {
		nameEnd++
	}
	if nameEnd == nameStart {
		return i
	}
	open := skipBlanks(s, nameEnd)
	if open == nameEnd || open >= len(s) || s[open] != '(' {
		return i
	}
	end := open + 1
	for end < len(s) && s[end] != '(' && s[end] != ')' && s[end] != '\n' {
		end++
	}
	if end >= len(s) || s[end] != ')' || !endsWithLineColumn(s[open+1:end]) {
		return i
	}
	return end + 1
}

// endsWithLineColumn reports whether loc ends in ":digits:digits".
func endsWithLineColumn(loc string) bool {
	j := len(loc)
	for range 2 {
		end := j
		for j > 0 && isDigit(loc[j-1]) {
			j--
		}
		if j == end || j == 0 || loc[j-1] != ':' {
			return false
		}
		j--
	}
	return true
}

// path handles a slash. An absolute path (a slash that does not continue a
// word or a relative path) keeps only its last element, so the same file in
// another working or temporary directory is the same text; a bare
// temporary directory, /tmp and one element (/tmp/tmp.Xy12), becomes TMP.
// Other slashes are copied.
func (n *normalizer) path() {
	s, i := n.src, n.pos
	slashesEnd := i
	for slashesEnd < len(s) && s[slashesEnd] == '/' {
		slashesEnd++
	}
	if n.continuesWord() || slashesEnd >= len(s) || !isPathByte(s[slashesEnd]) {
		for ; n.pos < slashesEnd && !n.full(); n.pos++ {
			n.emit('/')
		}
		n.pos = slashesEnd
		return
	}
	end, base, elems := i, i+1, 0
	for end < len(s) && (isPathByte(s[end]) || s[end] == '/') {
		if s[end] == '/' && end+1 < len(s) && isPathByte(s[end+1]) {
			base = end + 1
			elems++
		}
		end++
	}
	if elems == 2 && s[i:base] == "/tmp/" {
		n.emitPlaceholder("TMP")
		n.pos = end
		return
	}
	n.pos = base // the last element is read as ordinary text
}

// continuesWord reports whether a slash read now continues a word or a
// relative path: the result ends in a path byte. That is judged on the
// result, so that escapes removed before the slash do not count. A
// multi-byte rune counts unless it is white space: the result's start is
// trimmed of white space, and a slash after some must read the same with
// it gone ("\u00a0/app/x" and "/app/x" both keep only x).
func (n *normalizer) continuesWord() bool {
	if n.size == 0 {
		return false
	}
	last := n.buf[n.size-1]
	if last < utf8.RuneSelf {
		return isPathByte(last)
	}
	r, _ := utf8.DecodeLastRune(n.buf[:n.size])
	return !unicode.IsSpace(r)
}

// escapeEnd returns the end of the ANSI escape sequence at s[i] (ESC): a
// CSI sequence (ESC [ parameters final), an OSC sequence (ESC ] ... BEL or
// ESC \, or up to the line end), or ESC and one more byte.
func escapeEnd(s string, i int) int {
	j := i + 1
	if j >= len(s) {
		return j
	}
	switch s[j] {
	case '[':
		j++
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x3f {
			j++
		}
		if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
			j++
		}
		return j
	case ']':
		for j++; j < len(s) && s[j] != '\n'; j++ {
			if s[j] == 0x07 {
				return j + 1
			}
			if s[j] == esc && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return j
	}
	return j + 1
}

// skipSpaceAndEscapes returns the index of the first byte at or after i
// that is neither white space (Unicode's) nor part of an ANSI escape.
func skipSpaceAndEscapes(s string, i int) int {
	for i < len(s) {
		switch c := s[i]; {
		case c == esc:
			i = escapeEnd(s, i)
		case isASCIISpace(c):
			i++
		case c < utf8.RuneSelf:
			return i
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if !unicode.IsSpace(r) {
				return i
			}
			i += size
		}
	}
	return i
}

// skipBlanks returns the index after the spaces and tabs starting at s[i].
func skipBlanks(s string, i int) int {
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	return i
}

// lastRuneLower returns the last rune of s lower-cased, as the result
// holds it (an invalid byte is U+FFFD).
func lastRuneLower(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return unicode.ToLower(r)
}

// esc starts an ANSI escape sequence.
const esc = 0x1b

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHexDigit(c byte) bool { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }

// isWordRune reports whether r is an ASCII word character, the kind that
// makes "at" part of a longer word.
func isWordRune(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
}

// isPathByte reports whether c may be part of a path element: an ASCII
// letter or digit, one of . _ - ~ + @, or a byte of a multi-byte sequence.
func isPathByte(c byte) bool {
	switch c {
	case '.', '_', '-', '~', '+', '@':
		return true
	}
	return 'a' <= c|0x20 && c|0x20 <= 'z' || isDigit(c) || c >= utf8.RuneSelf
}

// isBlank reports whether c is a space or a tab.
func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// isASCIISpace reports whether c is white space to unicode.IsSpace: a
// space, or \t \n \v \f \r, which are consecutive.
func isASCIISpace(c byte) bool {
	return c == ' ' || '\t' <= c && c <= '\r'
}

// isRE2Space reports whether c is white space as RE2's \s matches it:
// space, tab, newline, form feed, carriage return.
func isRE2Space(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}
