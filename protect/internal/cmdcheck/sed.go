package cmdcheck

import "strings"

// sed edits its files in place with -i (GNU's -i[SUFFIX], BSD's -i
// SUFFIX): an edit, which only read-only paths refuse, unless its script
// empties the file or cuts it short. That loses the file as > does, and
// is refused for every protected path: d, D, c or z of every line (no
// address, a range to the end, an address with !), q or Q (the lines after
// it are dropped), -n (only the lines it prints are kept). Deleting the
// lines an address picks (/^- \[x\]/d, 3d, 10,20d) is an edit. A script
// the checker cannot read (-f FILE, an expansion) may do either. Whether
// -i or not, its w commands write (truncate) their files, and its e
// commands run.
func (inv *invocation) sed() {
	args := inv.args
	inPlace, quiet, fromFile := false, false, false
	var scripts, operands []field
	rest := false
	for i := 0; i < len(args); i++ {
		t, ok := args[i].text()
		if rest || !ok || len(t) < 2 || t[0] != '-' {
			operands = append(operands, args[i])
			continue
		}
		if t == "--" {
			rest = true
			continue
		}
		if strings.HasPrefix(t, "--") {
			o := option{long: true}
			var val string
			var eq bool
			o.name, val, eq = strings.Cut(t[2:], "=")
			switch {
			case o.is("in-place"):
				inPlace = true
			case o.is("quiet", "silent"):
				quiet = true
			case o.is("expression", "file"):
				fromFile = fromFile || o.is("file")
				if eq {
					scripts = append(scripts, textField(val))
				} else if i+1 < len(args) {
					i++
					scripts = append(scripts, args[i])
				}
			case o.is("line-length") && !eq:
				i++
			}
			continue
		}
		for j := 1; j < len(t); j++ {
			switch t[j] {
			case 'i':
				inPlace = true
				if j+1 == len(t) && i+1 < len(args) {
					if s, ok := args[i+1].literal(); ok && (s == "" || strings.HasPrefix(s, ".") && !strings.Contains(s, "/")) {
						i++ // BSD sed: -i '' or -i .bak
					}
				}
				j = len(t)
			case 'n':
				quiet = true
			case 'e', 'f':
				fromFile = fromFile || t[j] == 'f'
				switch {
				case j+1 < len(t):
					scripts = append(scripts, textField(t[j+1:]))
				case i+1 < len(args):
					i++
					scripts = append(scripts, args[i])
				}
				j = len(t)
			case 'l':
				if j+1 == len(t) {
					i++
				}
				j = len(t)
			}
		}
	}
	if len(scripts) == 0 && len(operands) > 0 {
		scripts, operands = operands[:1], operands[1:]
	}
	read := sedScript{}
	known := !fromFile
	for _, f := range scripts {
		src, ok := f.text()
		known = known && ok && read.read(src)
	}
	for _, src := range read.runs {
		inv.c.source(src, inv.st, inv.c.nest+1)
	}
	for _, w := range read.writes {
		if inv.affect(action{verb: verbTruncate, overwrite: true}, textField(w)) {
			return
		}
	}
	if !inPlace {
		return
	}
	cut := action{verb: verbDeleteLines}
	switch {
	case !known:
		cut.maybe, cut.why = true, "its script cannot be read"
	case quiet || read.quiet:
		cut.why = "-n: only the lines it prints are kept"
	case read.cuts != "":
		cut.why = read.cuts
	default:
		cut.edit, cut.verb = true, verbEdit
	}
	inv.label = "sed -i"
	for _, f := range operands {
		if inv.affect(cut, f) {
			return
		}
	}
}

// sedScript is what the checker reads in a sed script: whether it cuts
// the file, and the files its w commands write.
type sedScript struct {
	cuts   string // what empties or cuts the file short ("d of every line"); "" when nothing does
	quiet  bool   // #n on the first line: -n
	writes []string
	runs   []string // the commands of e
}

// read reads one script (of -e, or the first operand), and reports false
// when it holds something it does not know.
func (s *sedScript) read(src string) bool {
	if strings.HasPrefix(src, "#n\n") || src == "#n" {
		s.quiet = true
	}
	p := &sedParser{src: src}
	var blocks []string // for each open {: the lines its address leaves to it ("" when it picks some)
	for {
		p.skip(" \t\n;")
		if p.done() {
			return len(blocks) == 0
		}
		switch p.peek() {
		case '#':
			p.line()
			continue
		case '}':
			if len(blocks) == 0 {
				return false
			}
			blocks = blocks[:len(blocks)-1]
			p.i++
			continue
		}
		lines, ok := p.address()
		if !ok || p.done() {
			return false
		}
		for _, b := range blocks {
			if b == "" {
				lines = "" // the block picks some lines
			}
		}
		cmd := p.next()
		switch cmd {
		case '{':
			blocks = append(blocks, lines)
		case 'd', 'D', 'z', 'c':
			if lines != "" {
				s.cut(string(cmd) + " of " + lines)
			}
			if cmd == 'c' {
				p.text()
			}
		case 'a', 'i':
			p.text()
		case 'q', 'Q':
			s.cut(string(cmd) + " drops the lines after it")
			p.skip(" \t")
			p.digits()
		case 's':
			if !p.delimited(2) {
				return false
			}
			for !p.done() && strings.IndexByte("gpiImMe0123456789", p.peek()) >= 0 {
				p.i++
			}
			if !p.done() && p.peek() == 'w' {
				p.i++
				s.writes = append(s.writes, strings.TrimSpace(p.line()))
			}
		case 'y':
			if !p.delimited(2) {
				return false
			}
		case 'w', 'W':
			s.writes = append(s.writes, strings.TrimSpace(p.line()))
		case 'r', 'R', ':':
			p.line()
		case 'b', 't', 'T':
			p.label()
		case 'l', 'L':
			p.skip(" \t")
			p.digits()
		case 'e':
			s.runs = append(s.runs, p.line())
		case '=', 'n', 'N', 'p', 'P', 'h', 'H', 'g', 'G', 'x', 'F':
		default: // not known
			return false
		}
	}
}

func (s *sedScript) cut(why string) {
	if s.cuts == "" {
		s.cuts = why
	}
}

// sedParser walks a sed script.
type sedParser struct {
	src string
	i   int
}

func (p *sedParser) done() bool { return p.i >= len(p.src) }
func (p *sedParser) peek() byte { return p.src[p.i] }

func (p *sedParser) next() byte {
	c := p.src[p.i]
	p.i++
	return c
}

func (p *sedParser) skip(set string) {
	for !p.done() && strings.IndexByte(set, p.peek()) >= 0 {
		p.i++
	}
}

// line reads to the end of the line.
func (p *sedParser) line() string {
	start := p.i
	for !p.done() && p.peek() != '\n' {
		p.i++
	}
	return p.src[start:p.i]
}

// text reads the text of a, i and c: to the end of the line, and on over
// lines that end with a backslash.
func (p *sedParser) text() {
	for !p.done() {
		if c := p.next(); c == '\\' && !p.done() {
			p.i++
		} else if c == '\n' {
			return
		}
	}
}

// label reads a branch's label, up to ; or the end of the line.
func (p *sedParser) label() {
	for !p.done() && p.peek() != ';' && p.peek() != '\n' && p.peek() != '}' {
		p.i++
	}
}

func (p *sedParser) digits() {
	for !p.done() && p.peek() >= '0' && p.peek() <= '9' {
		p.i++
	}
}

// delimited reads n parts of s or y, each ended by the delimiter that
// follows the command.
func (p *sedParser) delimited(n int) bool {
	if p.done() {
		return false
	}
	delim := p.next()
	if delim == '\\' || delim == '\n' {
		return false
	}
	for ; n > 0; n-- {
		for {
			if p.done() {
				return false
			}
			c := p.next()
			if c == '\\' && !p.done() {
				p.i++
				continue
			}
			if c == delim {
				break
			}
		}
	}
	return true
}

// address reads a command's address, if any, and its !: lines says which
// lines the command applies to when it is not a pick of some: "every
// line" (no address), "every line to the end" (a range to $), "every line
// the address does not pick" (!); "" when it picks some and leaves the
// rest.
func (p *sedParser) address() (lines string, ok bool) {
	first, ok := p.oneAddress()
	if !ok {
		return "", false
	}
	if first == "" {
		return "every line", true
	}
	p.skip(" \t")
	if !p.done() && p.peek() == ',' {
		p.i++
		p.skip(" \t")
		last, ok := p.oneAddress()
		switch {
		case !ok:
			return "", false
		case last == "" && !p.done() && (p.peek() == '+' || p.peek() == '~'): // GNU's addr,+N and addr,~N
			p.i++
			p.digits()
		case last == "$":
			lines = "every line to the end"
		case last == "":
			return "", false
		}
	}
	p.skip(" \t")
	if !p.done() && p.peek() == '!' {
		p.i++
		p.skip(" \t")
		lines = "every line the address does not pick"
	}
	return lines, true
}

// oneAddress reads a line number (first~step too), $, /regex/ or
// \cREGEXc with its flags; "" when there is none.
func (p *sedParser) oneAddress() (string, bool) {
	if p.done() {
		return "", true
	}
	start := p.i
	switch c := p.peek(); {
	case c >= '0' && c <= '9':
		p.digits()
		if !p.done() && p.peek() == '~' {
			p.i++
			p.digits()
		}
	case c == '$':
		p.i++
	case c == '/' || c == '\\':
		if c == '\\' { // \cREGEXc: the delimiter is c
			p.i++
		}
		if !p.delimited(1) {
			return "", false
		}
		for !p.done() && (p.peek() == 'I' || p.peek() == 'M') {
			p.i++
		}
	default:
		return "", true
	}
	return p.src[start:p.i], true
}
