package cmdcheck

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// invocation is one command about to run: a program and its arguments, in
// a shell state.
type invocation struct {
	c      *checker
	cmd    *syntax.Stmt // the command as written, for the refusal
	st     state
	dir    string // where the program runs; "" when unknown
	dirWhy string // why dir is unknown
	name   string // program name for messages ("rm", "git clean", ">")
	args   []field
	label  string // set to override the description made from name and options
	stdin  *input // what the command before it in a pipeline prints
}

func (inv *invocation) text() string { return inv.c.text(inv.cmd) }

// desc describes the command in messages: its name and first options, as
// in "rm -rf" or "git clean -fdx".
func (inv *invocation) desc() string {
	if inv.label != "" {
		return inv.label
	}
	d := inv.name
	n := 0
	for _, a := range inv.args {
		if t, ok := a.text(); ok && strings.HasPrefix(t, "-") && t != "--" && len(t) > 1 && n < 3 {
			d += " " + t
			n++
		}
	}
	return d
}

// child returns an invocation for a command that this one runs (sudo's,
// xargs', find -exec's).
func (inv *invocation) child() *invocation {
	n := *inv
	n.label = ""
	return &n
}

type verb uint8

const (
	verbRemove verb = iota
	verbShred
	verbTruncate
	verbOverwrite
	verbMove
	verbClean
	verbDiscard
	verbStash
	verbEdit
	verbGiven
	verbDeleteLines
)

var verbs = [...]struct{ does, may, base string }{
	verbRemove:    {"removes", "may remove", "remove"},
	verbShred:     {"shreds", "may shred", "shred"},
	verbTruncate:  {"truncates", "may truncate", "truncate"},
	verbOverwrite: {"overwrites", "may overwrite", "overwrite"},
	verbMove:      {"moves", "may move", "move"},
	verbClean:     {"cleans", "may clean", "clean"},
	verbDiscard:   {"discards changes in", "may discard changes in", "discard changes in"},
	verbStash:     {"stashes", "may stash", "stash"},
	verbEdit:      {"edits", "may edit", "edit"},
	verbGiven:     {"is given", "may be given", "be given"},

	verbDeleteLines: {"deletes lines of", "may delete lines of", "delete lines of"},
}

// action is what a command does to a target.
type action struct {
	verb      verb
	deep      bool     // everything under the target is affected too (rm -r, mv of a directory)
	overwrite bool     // a target that does not exist is not affected (Options.Stat)
	edit      bool     // only read-only paths count
	git       GitState // not 0: only protected paths git holds in one of these states count
	maybe     bool     // the command may do it, or not: the checker cannot tell
	why       string   // said after the reason, in parentheses: what makes it so
}

// affect checks a target of the invocation; it reports true when it
// refused.
func (inv *invocation) affect(a action, f field) bool {
	c := inv.c
	if c.refusal != nil {
		return true
	}
	if a.edit && !c.g.hasReadOnly() {
		return false
	}
	if f.under != nil && f.under.find != nil {
		return inv.affectFound(a, f.under)
	}
	if f.under != nil {
		segs := splitPath(f.under.root, c.g.opt.IgnoreCase)
		shown := splitPath(f.under.root, false)
		if !f.under.deep {
			segs = append(segs, compileSegment("*"))
			shown = append(shown, compileSegment("*"))
		}
		a.deep = a.deep || f.under.deep
		return inv.affectPath(a, segs, display(shown), "", f.under.deep)
	}
	if why := f.unknown(); why != "" {
		c.refuse(inv.text(), "", fmt.Sprintf("cannot tell %s, so cannot tell what %s would %s", why, inv.desc(), verbs[a.verb].base))
		return true
	}
	pat, _ := f.pattern()
	lit, isLit := f.literal()
	if !strings.HasPrefix(pat, "/") {
		if inv.dir == "" {
			c.refuse(inv.text(), "", fmt.Sprintf("cannot tell %s, so cannot tell where %s is", inv.dirWhy, shorten(pat)))
			return true
		}
		pat = escapeGlob(inv.dir) + "/" + pat
		lit = inv.dir + "/" + lit
	}
	litPath := ""
	if isLit {
		litPath = path.Clean(lit)
	}
	if a.overwrite && litPath != "" {
		exists, isDir, known := c.exists(litPath)
		if !exists || known && isDir && !a.deep {
			return false // nothing there to lose
		}
	}
	segs := splitPath(pat, c.g.opt.IgnoreCase)
	shown := segs
	if c.g.opt.IgnoreCase {
		shown = splitPath(pat, false)
	}
	return inv.affectPath(a, segs, display(shown), litPath, false)
}

type relation uint8

const (
	relNone   relation = iota
	relSame            // the target is the protected path
	relHolds           // the protected path lies under the target
	relInside          // the target lies under the protected path
)

// relate tells how a target meets a protected path; relHolds counts only
// when the action reaches under the target.
func relate(target, protected []segment, deep bool) relation {
	for i := 0; i < len(target) && i < len(protected); i++ {
		if !target[i].overlaps(&protected[i]) {
			return relNone
		}
	}
	switch {
	case len(target) == len(protected):
		return relSame
	case len(target) > len(protected):
		return relInside
	case deep:
		return relHolds
	}
	return relNone
}

// affectPath checks a target path against every protected path. shown is
// the target for messages; litPath is it as a plain path when it has no
// pattern; found says the target stands for what find prints under it.
func (inv *invocation) affectPath(a action, segs []segment, shown, litPath string, found bool) bool {
	c := inv.c
	for i := range c.g.paths {
		p := &c.g.paths[i]
		if a.edit && !p.readOnly {
			continue
		}
		rel := relate(segs, p.segs, a.deep)
		if rel == relNone {
			continue
		}
		note := ""
		if a.git != 0 {
			q := p.path
			if rel == relInside && litPath != "" {
				q = litPath
			}
			var skip bool
			if note, skip = c.gitNote(q, a.git); skip {
				continue
			}
		}
		if a.why != "" {
			note = " (" + a.why + ")" + note
		}
		c.refuse(inv.text(), p.path, inv.why(a, rel, shown, isPatternPath(segs), found, p)+note)
		return true
	}
	return false
}

// why words a refusal: "rm -rf removes /repo, which holds protected
// /repo/specs".
func (inv *invocation) why(a action, rel relation, shown string, pattern, found bool, p *protPath) string {
	v := verbs[a.verb]
	does := v.does
	if pattern || found || a.maybe {
		does = v.may
	}
	what := shown
	if found {
		what = "paths found under " + shown
	}
	kind := "protected"
	if a.edit {
		kind = "read-only"
	}
	d := inv.desc()
	switch {
	case rel == relSame && found && !pattern:
		return fmt.Sprintf("%s %s paths found under %s %s", d, does, kind, p.path)
	case rel == relSame && pattern:
		return fmt.Sprintf("%s %s %s, which matches %s %s", d, does, what, kind, p.path)
	case rel == relSame:
		return fmt.Sprintf("%s %s %s %s", d, does, kind, p.path)
	case rel == relHolds && pattern:
		return fmt.Sprintf("%s %s %s, which may hold %s %s", d, does, what, kind, p.path)
	case rel == relHolds:
		return fmt.Sprintf("%s %s %s, which holds %s %s", d, does, what, kind, p.path)
	}
	return fmt.Sprintf("%s %s %s, inside %s %s", d, does, what, kind, p.path)
}

// gitNote asks git about q: skip is true when q is in none of the states
// want; note tells what was found.
func (c *checker) gitNote(q string, want GitState) (note string, skip bool) {
	if c.g.opt.Git == nil {
		return " (its git state is not known)", false
	}
	ans := c.gitState(q)
	if ans.err != nil {
		return fmt.Sprintf(" (git cannot tell: %v)", ans.err), false
	}
	if ans.state&want == 0 {
		return "", true
	}
	return " (" + (ans.state & want).String() + ")", false
}

// affectRepo checks a git command that reaches the whole work tree (git
// reset --hard, git stash): every protected path git holds in a state of
// a.git is affected.
func (inv *invocation) affectRepo(a action) bool {
	c := inv.c
	for i := range c.g.paths {
		p := &c.g.paths[i]
		note, skip := c.gitNote(p.path, a.git)
		if skip {
			continue
		}
		c.refuse(inv.text(), p.path, fmt.Sprintf("%s %s protected %s%s", inv.desc(), verbs[a.verb].does, p.path, note))
		return true
	}
	return false
}

// givenProtected refuses a program that cannot be known when one of its
// arguments names a protected path.
func (inv *invocation) givenProtected(program string) {
	c := inv.c
	for _, f := range inv.args {
		pat, ok := f.pattern()
		if !ok || f.isOption() {
			continue
		}
		if !strings.HasPrefix(pat, "/") {
			if inv.dir == "" {
				continue
			}
			pat = escapeGlob(inv.dir) + "/" + pat
		}
		segs := splitPath(pat, c.g.opt.IgnoreCase)
		for i := range c.g.paths {
			p := &c.g.paths[i]
			if relate(segs, p.segs, true) != relNone {
				c.refuse(inv.text(), p.path, fmt.Sprintf("cannot tell %s, and it is given %s, which reaches protected %s", program, display(splitPath(pat, false)), p.path))
				return
			}
		}
	}
}

func (g *Checker) hasReadOnly() bool { return g.readOnly }

// resolve makes a literal path absolute against dir; "" when dir is
// unknown and p relative.
func resolve(dir, p string) string {
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	if dir == "" {
		return ""
	}
	return path.Join(dir, p)
}
