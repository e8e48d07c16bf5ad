package shellguard

import (
	"strconv"
	"strings"
)

// word is one shell word as written, cut into the parts that expand
// differently.
type word struct {
	pos, end  int
	raw       string // the word as written
	procSubst bool   // the word is a process substitution <(...) or >(...): a pipe, not a file
	parts     []part
	runs      []string // sources of the commands that expanding the word runs: $(...), `...`, <(...)
}

type partKind uint8

const (
	partText  partKind = iota // literal text
	partTilde                 // ~ or ~user at the start of the word; text is the user name
	partParam                 // $NAME or ${NAME}; text is the name
	partOther                 // an expansion whose value cannot be known; text says what it is
)

type part struct {
	kind   partKind
	text   string
	quoted bool // inside quotes or escaped: no field splitting, no globbing
}

// literal returns the word's text when it holds no expansion at all.
func (w *word) literal() (string, bool) {
	var b strings.Builder
	for _, p := range w.parts {
		if p.kind != partText {
			return "", false
		}
		b.WriteString(p.text)
	}
	return b.String(), true
}

// is reports whether the word is s written plainly, without quotes: that
// is how reserved words such as "if", "{" and "]]" are recognized.
func (w *word) is(s string) bool {
	return len(w.parts) == 1 && w.parts[0].kind == partText && !w.parts[0].quoted && w.parts[0].text == s
}

// assignment splits NAME=value (or NAME+=value) as written before a
// command; ok is false for any other word.
func (w *word) assignment() (name string, value []part, appendTo, ok bool) {
	if len(w.parts) == 0 || w.parts[0].kind != partText || w.parts[0].quoted {
		return "", nil, false, false
	}
	first := w.parts[0].text
	eq := strings.IndexByte(first, '=')
	if eq <= 0 {
		return "", nil, false, false
	}
	name = first[:eq]
	if strings.HasSuffix(name, "+") {
		name, appendTo = name[:len(name)-1], true
	}
	if !isName(name) {
		return "", nil, false, false
	}
	if rest := first[eq+1:]; rest != "" {
		value = append(value, part{kind: partText, text: rest})
	}
	return name, append(value, w.parts[1:]...), appendTo, true
}

// wordBuilder collects the parts of a word, merging neighbouring text of
// the same quoting.
type wordBuilder struct {
	w *word
}

func (b *wordBuilder) text(s string, quoted bool) {
	ps := b.w.parts
	if n := len(ps); n > 0 && ps[n-1].kind == partText && ps[n-1].quoted == quoted {
		ps[n-1].text += s
		return
	}
	b.w.parts = append(ps, part{kind: partText, text: s, quoted: quoted})
}

func (b *wordBuilder) add(p part) { b.w.parts = append(b.w.parts, p) }

// scanWord scans the word starting at l.pos.
func (l *lexer) scanWord() (*word, *syntaxError) {
	w := &word{pos: l.pos}
	b := &wordBuilder{w: w}
	if l.procSubstAt(l.pos) {
		end, err := l.substEnd(l.pos + 2)
		if err != nil {
			return nil, err
		}
		w.runs = append(w.runs, l.input[l.pos+2:end])
		w.procSubst = true
		b.add(part{kind: partOther, text: "what " + l.input[l.pos:l.pos+2] + "...) expands to"})
		l.pos = end + 1
	}
	if l.peekByte(0) == '~' {
		l.scanTilde(b)
	}
	for l.pos < len(l.input) {
		c := l.input[l.pos]
		switch c {
		case ' ', '\t', '\r', '\n', ';', '&', '|', '<', '>', ')':
			return l.endWord(w), nil
		case '(':
			if !l.scanParenInWord(b) {
				return l.endWord(w), nil
			}
		case '\\':
			switch {
			case l.at("\\\n"):
				l.pos += 2
			case l.pos+1 < len(l.input):
				b.text(l.input[l.pos+1:l.pos+2], true)
				l.pos += 2
			default:
				b.text(`\`, true)
				l.pos++
			}
		case '\'':
			end := strings.IndexByte(l.input[l.pos+1:], '\'')
			if end < 0 {
				return nil, &syntaxError{pos: l.pos, msg: "unterminated single quote"}
			}
			b.text(l.input[l.pos+1:l.pos+1+end], true) // '' still makes an (empty) argument
			l.pos += end + 2
		case '"':
			l.pos++
			if err := l.scanDouble(b, true); err != nil {
				return nil, err
			}
		case '$':
			if err := l.scanDollar(b, false); err != nil {
				return nil, err
			}
		case '`':
			if err := l.scanBackquote(b, false); err != nil {
				return nil, err
			}
		default:
			b.text(l.input[l.pos:l.pos+1], false)
			l.pos++
		}
	}
	return l.endWord(w), nil
}

func (l *lexer) endWord(w *word) *word {
	w.end = l.pos
	w.raw = l.input[w.pos:w.end]
	return w
}

// scanTilde reads ~ or ~user at the start of a word. It is a tilde prefix
// only when nothing in it is quoted or expanded.
func (l *lexer) scanTilde(b *wordBuilder) {
	i := l.pos + 1
	for i < len(l.input) && l.input[i] != '/' && !strings.ContainsRune(" \t\r\n;&|<>()'\"\\$`", rune(l.input[i])) {
		i++
	}
	if i < len(l.input) && l.input[i] != '/' && strings.ContainsRune("'\"\\$`", rune(l.input[i])) {
		return // a quoted or expanded tilde prefix is plain text
	}
	b.add(part{kind: partTilde, text: l.input[l.pos+1 : i]})
	l.pos = i
}

// scanParenInWord handles a ( inside a word: an extended glob such as
// !(keep) or @(a|b), or an array assignment a=(x y). It reports false when
// the ( ends the word instead.
func (l *lexer) scanParenInWord(b *wordBuilder) bool {
	ps := b.w.parts
	if len(ps) == 0 {
		return false
	}
	last := &ps[len(ps)-1]
	if last.kind != partText || last.quoted || last.text == "" {
		return false
	}
	end := l.balancedParen(l.pos)
	if end < 0 {
		return false
	}
	switch t := last.text; {
	case strings.ContainsRune("@!+*?", rune(t[len(t)-1])):
		// An extended glob matches at most what * matches.
		last.text = t[:len(t)-1]
		b.text("*", false)
	case len(ps) == 1 && strings.HasSuffix(t, "=") && isName(strings.TrimSuffix(strings.TrimSuffix(t, "="), "+")):
		b.add(part{kind: partOther, text: "what the array " + l.input[l.pos:end] + " holds"})
	default:
		return false
	}
	l.pos = end
	return true
}

// balancedParen returns the position just past the ) that closes the ( at
// i, skipping quoted text, or -1. It does not look past a newline.
func (l *lexer) balancedParen(i int) int {
	end := l.closing(i, '(', ')', 0, true)
	if end < 0 {
		return -1
	}
	return end + 1
}

// closing returns the position of the close byte that brings depth, the
// nesting of open and close at i, to zero, skipping escaped and quoted
// text; -1 when the input (or, with stopAtNewline, its line) ends first.
func (l *lexer) closing(i int, open, close byte, depth int, stopAtNewline bool) int {
	for ; i < len(l.input); i++ {
		switch c := l.input[i]; {
		case c == '\\':
			i++
		case c == '\'':
			j := strings.IndexByte(l.input[i+1:], '\'')
			if j < 0 {
				return -1
			}
			i += j + 1
		case c == '"':
			j := i + 1
			for j < len(l.input) && l.input[j] != '"' {
				if l.input[j] == '\\' {
					j++
				}
				j++
			}
			i = j
		case c == open:
			depth++
		case c == close:
			depth--
			if depth == 0 {
				return i
			}
		case c == '\n' && stopAtNewline:
			return -1
		}
	}
	return -1
}

// scanDouble scans the inside of double quotes up to the closing quote
// (closing is true), or to the end of the input (the body of an unquoted
// here-document). l.pos is just past the opening quote.
func (l *lexer) scanDouble(b *wordBuilder, closing bool) *syntaxError {
	start := l.pos
	empty := true
	for l.pos < len(l.input) {
		c := l.input[l.pos]
		switch {
		case c == '"' && closing:
			l.pos++
			if empty {
				b.text("", true) // "" is an empty argument
			}
			return nil
		case c == '\\' && l.pos+1 < len(l.input):
			switch n := l.input[l.pos+1]; {
			case n == '\n':
				l.pos += 2
				continue
			case n == '$' || n == '`' || n == '\\' || n == '"' && closing:
				b.text(string(n), true)
				l.pos += 2
			default:
				b.text(`\`, true)
				l.pos++
			}
		case c == '$':
			if err := l.scanDollar(b, true); err != nil {
				return err
			}
		case c == '`':
			if err := l.scanBackquote(b, true); err != nil {
				return err
			}
		default:
			b.text(l.input[l.pos:l.pos+1], true)
			l.pos++
		}
		empty = false
	}
	if closing {
		return &syntaxError{pos: start - 1, msg: "unterminated double quote"}
	}
	return nil
}

// scanDollar scans an expansion starting with $ at l.pos.
func (l *lexer) scanDollar(b *wordBuilder, quoted bool) *syntaxError {
	start := l.pos
	switch n := l.peekByte(1); {
	case n == '\'' && !quoted:
		return l.scanANSIC(b)
	case n == '"' && !quoted:
		l.pos += 2
		return l.scanDouble(b, true)
	case n == '(' && l.peekByte(2) == '(':
		if end, ok := l.arithEnd(l.pos+3, false); ok {
			runs, err := scanRuns(l.input[l.pos+3:end-2], l.nest, false)
			if err != nil {
				return err
			}
			b.w.runs = append(b.w.runs, runs...)
			b.add(part{kind: partOther, text: "what " + shorten(l.input[start:end]) + " comes to", quoted: quoted})
			l.pos = end
			return nil
		}
		fallthrough
	case n == '(':
		end, err := l.substEnd(l.pos + 2)
		if err != nil {
			return err
		}
		b.w.runs = append(b.w.runs, l.input[l.pos+2:end])
		b.add(part{kind: partOther, text: "what " + shorten(l.input[start:end+1]) + " expands to", quoted: quoted})
		l.pos = end + 1
		return nil
	case n == '{':
		end := l.braceEnd(l.pos + 2)
		if end < 0 {
			return &syntaxError{pos: start, msg: "unterminated ${"}
		}
		inner := l.input[l.pos+2 : end]
		l.pos = end + 1
		if isName(inner) {
			b.add(part{kind: partParam, text: inner, quoted: quoted})
			return nil
		}
		runs, err := scanRuns(inner, l.nest, false)
		if err != nil {
			return err
		}
		b.w.runs = append(b.w.runs, runs...)
		b.add(part{kind: partOther, text: "what " + shorten(l.input[start:l.pos]) + " holds", quoted: quoted})
		return nil
	case isNameStart(n):
		i := l.pos + 1
		for i < len(l.input) && isNameChar(l.input[i]) {
			i++
		}
		b.add(part{kind: partParam, text: l.input[l.pos+1 : i], quoted: quoted})
		l.pos = i
		return nil
	case isDigit(n) || strings.IndexByte("@*#?$!-", n) >= 0:
		l.pos += 2
		if isDigit(n) {
			b.add(part{kind: partParam, text: string(n), quoted: quoted})
			return nil
		}
		b.add(part{kind: partOther, text: "what $" + string(n) + " holds", quoted: quoted})
		return nil
	}
	b.text("$", quoted)
	l.pos++
	return nil
}

// braceEnd returns the position of the } that closes a ${ whose inside
// starts at i, or -1.
func (l *lexer) braceEnd(i int) int {
	return l.closing(i, '{', '}', 1, false)
}

// substEnd returns the position of the ) that closes a $( whose inside
// starts at from.
func (l *lexer) substEnd(from int) (int, *syntaxError) {
	if l.nest+1 > maxNest {
		return 0, &syntaxError{pos: from, msg: "command substitutions nested too deeply"}
	}
	sub := &lexer{input: l.input, pos: from, start: from, inSubst: true, nest: l.nest + 1, discard: true}
	sub.run()
	if sub.err != nil {
		return 0, sub.err
	}
	return sub.pos, nil
}

// scanBackquote scans `...`; inside double quotes, \" stands for ".
func (l *lexer) scanBackquote(b *wordBuilder, quoted bool) *syntaxError {
	start := l.pos
	var inner strings.Builder
	for i := l.pos + 1; i < len(l.input); i++ {
		switch c := l.input[i]; c {
		case '`':
			if l.nest+1 > maxNest {
				return &syntaxError{pos: start, msg: "command substitutions nested too deeply"}
			}
			b.w.runs = append(b.w.runs, inner.String())
			b.add(part{kind: partOther, text: "what " + shorten(l.input[start:i+1]) + " expands to", quoted: quoted})
			l.pos = i + 1
			return nil
		case '\\':
			if i+1 < len(l.input) {
				n := l.input[i+1]
				if n == '$' || n == '`' || n == '\\' || n == '"' && quoted {
					inner.WriteByte(n)
					i++
					continue
				}
			}
			inner.WriteByte(c)
		default:
			inner.WriteByte(c)
		}
	}
	return &syntaxError{pos: start, msg: "unterminated backquote"}
}

// scanANSIC scans $'...', whose backslash escapes are decoded.
func (l *lexer) scanANSIC(b *wordBuilder) *syntaxError {
	start := l.pos
	var s strings.Builder
	for i := l.pos + 2; i < len(l.input); i++ {
		c := l.input[i]
		if c == '\'' {
			b.text(s.String(), true)
			l.pos = i + 1
			return nil
		}
		if c != '\\' || i+1 >= len(l.input) {
			s.WriteByte(c)
			continue
		}
		i++
		switch e := l.input[i]; e {
		case 'n':
			s.WriteByte('\n')
		case 't':
			s.WriteByte('\t')
		case 'r':
			s.WriteByte('\r')
		case 'a':
			s.WriteByte('\a')
		case 'b':
			s.WriteByte('\b')
		case 'e', 'E':
			s.WriteByte(0x1b)
		case 'f':
			s.WriteByte('\f')
		case 'v':
			s.WriteByte('\v')
		case 'x':
			j := i + 1
			for j < len(l.input) && j < i+3 && isHex(l.input[j]) {
				j++
			}
			if v, err := strconv.ParseUint(l.input[i+1:j], 16, 8); err == nil {
				s.WriteByte(byte(v))
				i = j - 1
			} else {
				s.WriteString(`\x`)
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(l.input) && j < i+3 && '0' <= l.input[j] && l.input[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(l.input[i:j], 8, 16)
			s.WriteByte(byte(v))
			i = j - 1
		default: // \\ \' \" \? and unknown escapes
			if !strings.ContainsRune(`\'"?`, rune(e)) {
				s.WriteByte('\\')
			}
			s.WriteByte(e)
		}
	}
	return &syntaxError{pos: start, msg: "unterminated $'"}
}

func isHex(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// scanRuns finds the command substitutions in text expanded like the inside
// of double quotes without the quotes (a here-document body, the inside of
// ${...} or $((...))).
func scanRuns(text string, nest int, closing bool) ([]string, *syntaxError) {
	if !strings.ContainsAny(text, "$`") {
		return nil, nil
	}
	sub := &lexer{input: text, nest: nest}
	w := &word{}
	if err := sub.scanDouble(&wordBuilder{w: w}, closing); err != nil {
		return nil, err
	}
	return w.runs, nil
}

// shorten keeps messages readable when an expansion is long.
func shorten(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	cut := max - 3
	for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "..."
}
