package cmdcheck

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// field is one argument after expansion: the word's brace expansion,
// tilde, variables and word splitting are done; globbing is not (the
// checker matches patterns against the protected paths instead of the
// file system).
type field struct {
	segs  []seg
	under *scope // set for the paths a find or ls before a pipe prints: where they lie
}

// seg is a piece of a field.
type seg struct {
	text    string
	glob    bool   // glob characters in text are patterns (it was not quoted)
	unknown string // not "": the piece cannot be known, and this says why ("what $DIR holds")
}

// scope says where unknown paths lie: the output of find (anywhere under
// root that its expression matches) or ls (directly in root).
type scope struct {
	root string // absolute, as a pattern
	deep bool
	find *findAction // for find's paths: what they must match
}

func textField(s string) field { return field{segs: []seg{{text: s}}} }

func unknownField(why string) field { return field{segs: []seg{{unknown: why}}} }

// unknown says why the field cannot be known, or "" when it can.
func (f field) unknown() string {
	for _, s := range f.segs {
		if s.unknown != "" {
			return s.unknown
		}
	}
	return ""
}

// text returns the field's text, glob characters and all.
func (f field) text() (string, bool) {
	if f.under != nil || f.unknown() != "" {
		return "", false
	}
	if len(f.segs) == 1 {
		return f.segs[0].text, true
	}
	var b strings.Builder
	for _, s := range f.segs {
		b.WriteString(s.text)
	}
	return b.String(), true
}

// literal returns the field's text when it is known and no glob character
// in it is a pattern.
func (f field) literal() (string, bool) {
	if f.isGlob() {
		return "", false
	}
	return f.text()
}

// isGlob reports whether the field has a glob character that is a pattern.
func (f field) isGlob() bool {
	for _, s := range f.segs {
		if s.glob && strings.ContainsAny(s.text, "*?[") {
			return true
		}
	}
	return false
}

// pattern returns the field as a glob pattern, quoted glob characters
// escaped.
func (f field) pattern() (string, bool) {
	if f.under != nil || f.unknown() != "" {
		return "", false
	}
	var b strings.Builder
	for _, s := range f.segs {
		if s.glob {
			b.WriteString(s.text)
		} else {
			b.WriteString(escapeGlob(s.text))
		}
	}
	return b.String(), true
}

// isOption reports whether the field is known to start with "-".
func (f field) isOption() bool {
	return len(f.segs) > 0 && f.segs[0].unknown == "" && strings.HasPrefix(f.segs[0].text, "-")
}

// vars holds the shell variables whose values the checker knows. It is
// never changed in place: with and without return a new set.
type vars struct {
	m map[string]field
}

func (v *vars) get(name string) (field, bool) {
	if v == nil {
		return field{}, false
	}
	f, ok := v.m[name]
	return f, ok
}

func (v *vars) with(name string, f field) *vars {
	n := &vars{m: make(map[string]field, len(v.mapOrNil())+1)}
	for k, x := range v.mapOrNil() {
		n.m[k] = x
	}
	n.m[name] = f
	return n
}

func (v *vars) without(name string) *vars {
	if _, ok := v.get(name); !ok {
		return v
	}
	n := &vars{m: make(map[string]field, len(v.m))}
	for k, x := range v.m {
		if k != name {
			n.m[k] = x
		}
	}
	return n
}

func (v *vars) mapOrNil() map[string]field {
	if v == nil {
		return nil
	}
	return v.m
}

// maxFields bounds the fields one word may expand to.
const maxFields = 256

// expand expands a word into fields, as the shell does before it runs a
// command: braces, ~, the variables the line set, word splitting. Globs
// are not expanded (the checker matches them against the protected paths
// instead); a part the checker cannot know (a command substitution, a
// variable it has not seen set) leaves a field that says so.
func (c *checker) expand(w *syntax.Word, st *state) []field {
	words := []*syntax.Word{w}
	braced := *w // SplitBraces replaces the parts of the word it is given
	if syntax.SplitBraces(&braced) {
		words = words[:0]
		for bw, err := range expand.BracesSeq(nil, &braced) {
			if err != nil || len(words) == maxFields {
				return []field{c.tooMany(w)}
			}
			words = append(words, bw)
		}
	}
	var out []field
	for _, bw := range words {
		out = append(out, c.fields(bw.Parts, st)...)
		if len(out) > maxFields {
			return []field{c.tooMany(w)}
		}
	}
	return out
}

func (c *checker) tooMany(w *syntax.Word) field {
	return unknownField("what " + shorten(c.span(w.Pos(), w.End())) + " expands to (too many words)")
}

// fields expands the parts of a word that brace expansion left: a word,
// or none, or several when an unquoted variable's value is split.
func (c *checker) fields(parts []syntax.WordPart, st *state) []field {
	var out []field
	var cur field
	have := false
	flush := func() {
		if have {
			out = append(out, cur)
		}
		cur, have = field{}, false
	}
	for i, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			text := p.Value
			if i == 0 {
				if s, rest, ok := c.tilde(text, len(parts) > 1, st); ok {
					cur.segs = append(cur.segs, s)
					have, text = true, rest
				}
			}
			for _, s := range unescape(text) {
				cur.segs = append(cur.segs, s)
				have = have || s.text != ""
			}
		case *syntax.ParamExp:
			v, ok := c.param(p, st)
			switch {
			case !ok:
				cur.segs = append(cur.segs, v.segs...)
				have = true
			case v.under != nil && len(parts) == 1:
				out = append(out, v)
			default:
				for _, s := range v.segs {
					if s.unknown != "" {
						cur.segs = append(cur.segs, s)
						have = true
						continue
					}
					for t := s.text; t != ""; {
						if strings.IndexByte(" \t\n", t[0]) >= 0 {
							flush()
							t = strings.TrimLeft(t, " \t\n")
							continue
						}
						j := strings.IndexAny(t, " \t\n")
						if j < 0 {
							j = len(t)
						}
						cur.segs = append(cur.segs, seg{text: t[:j], glob: true})
						have = true
						t = t[j:]
					}
				}
			}
		case *syntax.ExtGlob:
			// An extended glob matches at most what * matches.
			cur.segs = append(cur.segs, seg{text: "*", glob: true})
			have = true
		default:
			v := c.quoted(p, st)
			if p, ok := p.(*syntax.DblQuoted); ok && len(p.Parts) == 1 {
				if v.under != nil && len(parts) == 1 { // "$PATHS" from xargs
					out = append(out, v)
					continue
				}
			}
			cur.segs = append(cur.segs, v.segs...)
			have = true
		}
	}
	flush()
	return out
}

// quoted expands a part that is not split into fields: a quoted one, or
// an expansion whose value cannot be known.
func (c *checker) quoted(p syntax.WordPart, st *state) field {
	switch p := p.(type) {
	case *syntax.SglQuoted:
		text := p.Value
		if p.Dollar { // $'...': backslash escapes
			text, _, _ = expand.Format(nil, text, nil)
			text, _, _ = strings.Cut(text, "\x00")
		}
		return field{segs: []seg{{text: text}}}
	case *syntax.DblQuoted:
		f := field{segs: []seg{{}}} // "" is an empty argument
		for _, q := range p.Parts {
			switch q := q.(type) {
			case *syntax.Lit:
				f.segs = append(f.segs, seg{text: unescapeDouble(q.Value)})
			case *syntax.ParamExp:
				v, _ := c.param(q, st)
				if v.under != nil && len(p.Parts) == 1 { // "$1" from xargs or find -exec
					return v
				}
				// Quotes keep the value from splitting and globbing, but a
				// loop variable's value set from a glob still stands for
				// the names the glob matched.
				f.segs = append(f.segs, v.segs...)
			default:
				f.segs = append(f.segs, c.quoted(q, st).segs...)
			}
		}
		return f
	case *syntax.CmdSubst:
		return unknownField("what " + shorten(c.span(p.Pos(), p.End())) + " expands to")
	case *syntax.ArithmExp:
		return unknownField("what " + shorten(c.span(p.Pos(), p.End())) + " comes to")
	case *syntax.ProcSubst:
		return unknownField("what " + shorten(c.span(p.Pos(), p.End())) + " expands to")
	}
	return unknownField("what " + shorten(c.span(p.Pos(), p.End())) + " expands to")
}

// param returns the value of $NAME or ${NAME}, or a field that says why
// it cannot be known (ok false): a variable the line has not set, a
// special parameter, or an expansion with an operator (${X:-build}).
func (c *checker) param(p *syntax.ParamExp, st *state) (v field, ok bool) {
	name := ""
	if p.Param != nil {
		name = p.Param.Value
	}
	simple := name != "" && !p.Excl && !p.Length && !p.Width && p.Index == nil && p.Slice == nil && p.Repl == nil && p.Names == 0 && p.Exp == nil
	if !simple {
		return unknownField("what " + shorten(c.span(p.Pos(), p.End())) + " holds"), false
	}
	if !isName(name) && !isDigits(name) {
		return unknownField("what $" + name + " holds"), false
	}
	v, ok = st.vars.get(name)
	if !ok {
		return unknownField("what $" + name + " holds"), false
	}
	return v, true
}

// tilde expands a tilde prefix at the start of an unquoted word (~, ~+,
// ~-, ~user): ok is false when text has none. The prefix runs to the
// first /; when the word goes on without one, the rest is quoted or
// expanded, and it is no tilde prefix.
func (c *checker) tilde(text string, more bool, st *state) (s seg, rest string, ok bool) {
	if !strings.HasPrefix(text, "~") {
		return seg{}, text, false
	}
	user, rest, slash := strings.Cut(text[1:], "/")
	if !slash && more || strings.ContainsAny(user, `\`) {
		return seg{}, text, false
	}
	if slash {
		rest = "/" + rest
	}
	name := map[string]string{"": "HOME", "+": "PWD", "-": "OLDPWD"}[user]
	if name == "" {
		return seg{unknown: "what ~" + user + " stands for"}, rest, true
	}
	if v, ok := st.vars.get(name); ok {
		if t, ok := v.text(); ok {
			return seg{text: t}, rest, true
		}
	}
	if name == "HOME" {
		return seg{unknown: "what ~ stands for (no HOME given)"}, rest, true
	}
	return seg{unknown: "what ~" + user + " stands for"}, rest, true
}

// unescape splits unquoted text into its plain pieces, where glob
// characters are patterns, and the characters a backslash quotes.
func unescape(text string) []seg {
	var out []seg
	for {
		i := strings.IndexByte(text, '\\')
		if i < 0 || i == len(text)-1 { // a trailing backslash stays
			return append(out, seg{text: text, glob: true})
		}
		out = append(out, seg{text: text[:i], glob: true}, seg{text: text[i+1 : i+2]})
		text = text[i+2:]
	}
}

// unescapeDouble removes the backslashes that quote $ ` " \ inside double
// quotes; any other backslash stays.
func unescapeDouble(text string) string {
	if !strings.Contains(text, `\`) {
		return text
	}
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		if text[i] == '\\' && i+1 < len(text) && strings.IndexByte("$`\"\\", text[i+1]) >= 0 {
			i++
		}
		b.WriteByte(text[i])
	}
	return b.String()
}

// assignValue expands the value of NAME=value: ~ at its start, no word
// splitting, no globbing.
func (c *checker) assignValue(w *syntax.Word, st *state) field {
	var f field
	if w == nil {
		return textField("")
	}
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			text := p.Value
			if i == 0 {
				if s, rest, ok := c.tilde(text, len(w.Parts) > 1, st); ok {
					f.segs = append(f.segs, s)
					text = rest
				}
			}
			for _, s := range unescape(text) {
				s.glob = false
				f.segs = append(f.segs, s)
			}
		case *syntax.ParamExp:
			v, _ := c.param(p, st)
			if v.under != nil && len(w.Parts) == 1 {
				return v
			}
			f.segs = append(f.segs, v.segs...)
		default:
			v := c.quoted(p, st)
			if v.under != nil && len(w.Parts) == 1 {
				return v
			}
			f.segs = append(f.segs, v.segs...)
		}
	}
	for i := range f.segs {
		f.segs[i].glob = false
	}
	if f.unknown() != "" {
		return unknownField(f.unknown())
	}
	if len(f.segs) == 0 {
		f.segs = []seg{{}}
	}
	return f
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

func isName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameChar(s[i]) {
			return false
		}
	}
	return true
}

func isNameStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isNameChar(c byte) bool  { return isNameStart(c) || isDigit(c) }
func isDigit(c byte) bool     { return '0' <= c && c <= '9' }
