// Package errtext reads the text of errors. Normalize and Fingerprint turn
// an error text into its identity, so that the same failure at another
// line, address or directory is recognised; ExtractError finds the error in
// an agent's raw output. The loopbreaker package documents them for users.
package errtext

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNormalizedRunes is the length cap of Normalize's result, in runes.
const MaxNormalizedRunes = 500

// MaxNormalizedInput bounds how much of a text Normalize reads, in bytes.
const MaxNormalizedInput = 16 << 10

// maxNormalizedBytes bounds the UTF-8 size of a normalized text.
const maxNormalizedBytes = MaxNormalizedRunes * utf8.UTFMax

// Normalize returns the identity of an error text: the text with the parts
// that change between iterations of the same failure replaced by fixed
// placeholders (HEX, STACK, N, DURATION, TMP), lower-cased, trimmed and
// capped at MaxNormalizedRunes runes. The rules are in rules.go (within a
// line) and frames.go (whole lines).
func Normalize(msg string) string {
	var buf [maxNormalizedBytes]byte
	n := normalizer{buf: buf[:], limit: MaxNormalizedRunes}
	return string(n.run(readLimit(msg)))
}

// Fingerprint returns the first four bytes of the MD5 of Normalize(msg),
// big-endian. It allocates nothing.
func Fingerprint(msg string) uint32 {
	var buf [maxNormalizedBytes]byte
	n := normalizer{buf: buf[:], limit: MaxNormalizedRunes}
	sum := md5.Sum(n.run(readLimit(msg)))
	return binary.BigEndian.Uint32(sum[:4])
}

// normalizer is the state of one pass over a text. Like a lexer it reads
// the text once, front to back. At the first byte of a line (after its
// indentation) it tries the rules that take whole lines: a run of stack
// frames, a compiler's source excerpt. Elsewhere the byte at pos picks the
// rule: a digit the number rule, an "a" the inline stack-frame rule, a
// slash the path rule, and so on. Each rule writes its part of the result
// and moves pos past what it read. It stops when the result is full.
type normalizer struct {
	src   string // the text, cut to MaxNormalizedInput
	start int    // where the text's content starts, after white space
	pos   int    // the next byte to read

	buf   []byte // the result is buf[:size]: a buffer of the caller's,
	size  int    // so that normalizing allocates nothing
	runes int    // runes in the result
	limit int    // the cap on runes: MaxNormalizedRunes, or for a digest math.MaxInt32 (none)

	// digest, for Digest, hashes the result as it is written, so that the
	// result of a text of any length fits buf (digest.go); nil otherwise.
	digest *digester

	// keepNumbers: digits are content, copied as they are, but for those
	// of dates, times of day, durations and hex values (ResultDigest).
	keepNumbers bool

	// atLineStart: pos is at the first byte of a line, after its
	// indentation, and the line rules have not looked at it yet.
	atLineStart bool

	// The line being copied as text, if lineText: where it starts in src,
	// and the size of the result and its runes before it. A Go call line
	// ("main.run()") is known to be a frame only when its file line is
	// reached, so the call line is copied as text until then and taken
	// back when it turns out to be a frame.
	lineText                  bool
	line, lineSize, lineRunes int
}

// run normalizes msg and returns the result, which is in n.buf.
func (n *normalizer) run(msg string) []byte {
	n.src = msg
	n.pos = skipSpaceAndEscapes(n.src, 0)
	n.start = n.pos
	n.atLineStart = true
	for {
		for n.pos < len(n.src) && !n.full() {
			if n.atLineStart {
				n.atLineStart = false
				if n.lineRule() {
					continue
				}
				n.startText()
			}
			// The byte at pos picks the rule (rules.go).
			switch c := n.src[n.pos]; {
			case plainBytes[c]:
				n.text()
			case isDigit(c):
				n.number()
			case c == 'a' || c == 'A':
				n.at()
			case isASCIISpace(c):
				n.space()
			case c == '/':
				n.path()
			case c == esc:
				n.pos = escapeEnd(n.src, n.pos) // ANSI escapes are removed
			default: // the first byte of a multi-byte rune, or an invalid one
				n.multiByte()
			}
		}
		// The result is full, or the text is read. A Go call line is
		// looked at as a frame when its file line is reached; if the cap
		// came first, look at it now.
		if !n.full() || !n.goCallAtCap() {
			break
		}
	}
	if n.digest != nil {
		return n.buf[:n.size] // the digester trims what is left, and only at the ends
	}
	// A rule that drops the start of the text (an absolute path keeps only
	// its last element: "/app/\u00a0boom") can leave white space there.
	return bytes.TrimFunc(n.buf[:n.size], unicode.IsSpace)
}

// readLimit returns the part of s that Normalize reads: at most
// MaxNormalizedInput bytes, cut at the last line end before that or else at
// a rune start, so that no partial frame or rune is left at the end.
func readLimit(s string) string {
	if len(s) <= MaxNormalizedInput {
		return s
	}
	cut := MaxNormalizedInput
	if k := strings.LastIndexByte(s[:cut], '\n'); k > 0 {
		cut = k
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// lineRule applies, at the first byte of a line, the rules that take whole
// lines (frames.go), and reports whether one did: a run of frame lines
// becomes STACK, a compiler's source excerpt or error count is dropped.
func (n *normalizer) lineRule() bool {
	s, i := n.src, n.pos
	switch c := s[i]; {
	case c == '/':
		if n.goCallAbove() {
			return true
		}
	case c != 'a' && c != 'F' && c != '.' && !isDigit(c):
		// No frame line but a Go call starts otherwise (frameLineEnd), and
		// a Go call is looked at from its file line (goCallAbove).
		return false
	}
	if end := frameRunEnd(s, i, false); end > i {
		n.emitPlaceholder("STACK")
		n.pos, n.lineText = end, false
		return true
	}
	if end := droppedLinesEnd(s, i); end > i {
		// The line break before the dropped lines is written already.
		n.pos = skipSpaceAndEscapes(s, end)
		n.atLineStart, n.lineText = true, false
		return true
	}
	return false
}

// startText records that the line at pos is copied as text.
func (n *normalizer) startText() {
	n.lineText = true
	n.line, n.lineSize, n.lineRunes = n.pos, n.size, n.runes
}

// goCallAbove handles a line that starts with a slash: when it is the
// indented file line of a Go frame ("\t/app/main.go:12 +0x1d") below a Go
// call line copied as text ("main.run()"), the two are a frame. The call
// line is taken back and STACK written for it and the frames after it.
func (n *normalizer) goCallAbove() bool {
	s := n.src
	if !n.lineText || n.line >= n.pos {
		return false
	}
	eol := lineEnd(s, n.line)
	if skipBlanks(s, min(eol+1, len(s))) != n.pos {
		return false
	}
	end := goCallFrameEnd(s, n.line)
	if end < 0 {
		return false
	}
	if more := frameRunEnd(s, skipSpaceAndEscapes(s, end), true); more > end {
		end = more
	}
	n.lineToStack(end)
	return true
}

// goCallAtCap is goCallAbove for a result that is full: the line copied as
// text when the cap was reached may be a Go call whose file line was not
// reached. It reports whether it was, and so whether the loop goes on.
func (n *normalizer) goCallAtCap() bool {
	if !n.lineText {
		return false
	}
	end := frameRunEnd(n.src, n.line, true)
	if end < 0 {
		return false
	}
	n.lineToStack(end)
	return true
}

// lineToStack takes back the line copied as text, writes STACK in its
// place, and goes on reading at end, the end of the frames it starts.
func (n *normalizer) lineToStack(end int) {
	n.size, n.runes = n.lineSize, n.lineRunes
	n.emitPlaceholder("STACK")
	n.pos, n.lineText = end, false
}

// full reports whether the result has reached the cap.
func (n *normalizer) full() bool { return n.runes >= n.limit }

// room makes room for k more bytes of the result: for a digest, whose
// buffer is hashed and emptied as it fills (spill). A capped result always
// has room.
func (n *normalizer) room(k int) {
	if n.digest != nil && len(n.buf)-n.size < k {
		n.spill()
	}
}

// emit writes one ASCII byte.
func (n *normalizer) emit(c byte) {
	n.room(1)
	n.buf[n.size] = c
	n.size++
	n.runes++
}

// emitRune writes one rune.
func (n *normalizer) emitRune(r rune) {
	n.room(utf8.UTFMax)
	n.size += utf8.EncodeRune(n.buf[n.size:], r)
	n.runes++
}

// emitPlaceholder writes a placeholder, cut short if the cap is reached
// inside it.
func (n *normalizer) emitPlaceholder(p string) {
	for i := 0; i < len(p) && !n.full(); i++ {
		n.emit(p[i])
	}
}
