package cmdcheck

import (
	"strings"
	"unicode/utf8"
)

// Paths are compared as lists of segments, each a literal name or a glob
// pattern (* ? [...]). Two segments overlap when some name matches both;
// that works for a glob on the command line against a literal protected
// path, and for a protected pattern such as /repo/specs/*.md against a
// literal target, and for two patterns.

// segment is one path element.
type segment struct {
	raw  string  // as written, for messages
	lit  string  // the name, with escapes removed, when it is not a pattern
	toks []token // the pattern; nil when lit is the whole story
}

type tokKind uint8

const (
	tokChar  tokKind = iota // one given character
	tokAny                  // ?
	tokStar                 // *
	tokClass                // [...]
)

type token struct {
	kind  tokKind
	r     rune
	class *charClass
}

// charClass is a bracket expression.
type charClass struct {
	negated bool
	ranges  [][2]rune
	named   bool // holds a [:name:] class: taken to match anything
}

func (c *charClass) contains(r rune) bool {
	if c.named {
		return true
	}
	in := false
	for _, rg := range c.ranges {
		if rg[0] <= r && r <= rg[1] {
			in = true
			break
		}
	}
	return in != c.negated
}

// compileSegment reads one path element written as a pattern, in which a
// backslash makes the next character literal.
func compileSegment(s string) segment {
	if !strings.ContainsAny(s, `*?[\`) {
		return segment{raw: s, lit: s}
	}
	var toks []token
	glob := false
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '\\':
			if i+1 < len(s) {
				r, n := utf8.DecodeRuneInString(s[i+1:])
				toks = append(toks, token{kind: tokChar, r: r})
				i += 1 + n
				continue
			}
			toks = append(toks, token{kind: tokChar, r: '\\'})
			i++
		case '*':
			glob = true
			if len(toks) == 0 || toks[len(toks)-1].kind != tokStar {
				toks = append(toks, token{kind: tokStar})
			}
			i++
		case '?':
			glob = true
			toks = append(toks, token{kind: tokAny})
			i++
		case '[':
			if class, n := parseClass(s[i:]); class != nil {
				glob = true
				toks = append(toks, token{kind: tokClass, class: class})
				i += n
				continue
			}
			toks = append(toks, token{kind: tokChar, r: '['})
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			toks = append(toks, token{kind: tokChar, r: r})
			i += n
		}
	}
	if !glob {
		var b strings.Builder
		for _, t := range toks {
			b.WriteRune(t.r)
		}
		return segment{raw: b.String(), lit: b.String()}
	}
	return segment{raw: s, toks: toks}
}

// parseClass reads a bracket expression at the start of s ("[a-z]",
// "[!.]", "[]x]"); it returns nil when the bracket is not closed, in which
// case the [ is literal.
func parseClass(s string) (*charClass, int) {
	c := &charClass{}
	i := 1
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		c.negated = true
		i++
	}
	first := true
	for i < len(s) {
		if s[i] == ']' && !first {
			return c, i + 1
		}
		first = false
		if strings.HasPrefix(s[i:], "[:") {
			if end := strings.Index(s[i+2:], ":]"); end >= 0 {
				c.named = true
				i += end + 4
				continue
			}
		}
		lo, n := classChar(s[i:])
		i += n
		hi := lo
		if i+1 < len(s) && s[i] == '-' && s[i+1] != ']' {
			hi, n = classChar(s[i+1:])
			i += 1 + n
		}
		c.ranges = append(c.ranges, [2]rune{lo, hi})
	}
	return nil, 0
}

func classChar(s string) (rune, int) {
	if s[0] == '\\' && len(s) > 1 {
		r, n := utf8.DecodeRuneInString(s[1:])
		return r, n + 1
	}
	return utf8.DecodeRuneInString(s)
}

// isPattern reports whether the segment holds glob characters.
func (s *segment) isPattern() bool { return s.toks != nil }

// overlaps reports whether some name matches both segments.
func (s *segment) overlaps(t *segment) bool {
	switch {
	case s.toks == nil && t.toks == nil:
		return s.lit == t.lit
	case s.toks == nil:
		return overlapTokens(literalTokens(s.lit), t.toks)
	case t.toks == nil:
		return overlapTokens(s.toks, literalTokens(t.lit))
	}
	return overlapTokens(s.toks, t.toks)
}

func literalTokens(s string) []token {
	toks := make([]token, 0, len(s))
	for _, r := range s {
		toks = append(toks, token{kind: tokChar, r: r})
	}
	return toks
}

// maxOverlapWork bounds the search of overlapTokens; patterns too long for
// it are taken to overlap, which refuses rather than allows.
const maxOverlapWork = 1 << 16

// overlapTokens reports whether some string matches both patterns. It
// walks the product of the two patterns: a state is a position in each,
// and a star may stay where it is while the other side moves on.
func overlapTokens(a, b []token) bool {
	width := len(b) + 1
	if (len(a)+1)*width > maxOverlapWork {
		return true
	}
	seen := make([]bool, (len(a)+1)*width)
	stack := [][2]int{{0, 0}}
	push := func(i, j int) {
		if k := i*width + j; !seen[k] {
			seen[k] = true
			stack = append(stack, [2]int{i, j})
		}
	}
	seen[0] = true
	for len(stack) > 0 {
		ij := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		i, j := ij[0], ij[1]
		if i == len(a) && j == len(b) {
			return true
		}
		aStar := i < len(a) && a[i].kind == tokStar
		bStar := j < len(b) && b[j].kind == tokStar
		if aStar {
			push(i+1, j) // the star matches nothing more
			if j < len(b) {
				push(i, j+1) // the star swallows b[j]
			}
		}
		if bStar {
			push(i, j+1)
			if i < len(a) {
				push(i+1, j)
			}
		}
		if !aStar && !bStar && i < len(a) && j < len(b) && charsOverlap(a[i], b[j]) {
			push(i+1, j+1)
		}
	}
	return false
}

// charsOverlap reports whether one character matches both tokens, neither
// of them a star.
func charsOverlap(x, y token) bool {
	switch {
	case x.kind == tokAny || y.kind == tokAny:
		return true
	case x.kind == tokChar && y.kind == tokChar:
		return x.r == y.r
	case x.kind == tokChar:
		return y.class.contains(x.r)
	case y.kind == tokChar:
		return x.class.contains(y.r)
	}
	// Two classes: if they share a character, they share one at an edge
	// of one of their ranges, or at the ends of the rune space.
	candidates := []rune{0, 'a', utf8.MaxRune}
	for _, c := range []*charClass{x.class, y.class} {
		for _, rg := range c.ranges {
			candidates = append(candidates, rg[0]-1, rg[0], rg[1], rg[1]+1)
		}
	}
	for _, r := range candidates {
		if r >= 0 && r <= utf8.MaxRune && x.class.contains(r) && y.class.contains(r) {
			return true
		}
	}
	return false
}

// escapeGlob makes every character of s literal in a pattern.
func escapeGlob(s string) string {
	if !strings.ContainsAny(s, `*?[\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// splitPath compiles an absolute path pattern into its segments, dropping
// empty and "." elements and applying ".." the way the kernel does for a
// path without symbolic links.
func splitPath(p string, fold bool) []segment {
	if fold {
		p = strings.ToLower(p)
	}
	segs := make([]segment, 0, strings.Count(p, "/"))
	for _, s := range strings.Split(p, "/") {
		if s == "" {
			continue
		}
		seg := compileSegment(s)
		switch {
		case !seg.isPattern() && seg.lit == ".":
		case !seg.isPattern() && seg.lit == "..":
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
		default:
			segs = append(segs, seg)
		}
	}
	return segs
}

// display renders segments as an absolute path for messages.
func display(segs []segment) string {
	if len(segs) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(s.raw)
	}
	return b.String()
}

// isPattern reports whether any segment is a pattern.
func isPatternPath(segs []segment) bool {
	for i := range segs {
		if segs[i].isPattern() {
			return true
		}
	}
	return false
}
