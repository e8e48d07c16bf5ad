package cmdcheck

import (
	"path"
	"regexp"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/pattern"
)

// find deletes what its expression matches with -delete, runs commands on
// it with -exec, and prints it (for xargs). Its tests say what that is:
// -name, -iname, -path, -ipath, -wholename, -type, -maxdepth, -mindepth,
// -prune, ! and -not, -a, -o, ( ) and , are read; any other test may be
// true or not. A protected path is touched when it, a file or folder in
// it (Options.Files), or, for a command that removes folders with what
// they hold, a folder that holds it, can match: find . -name '*.pyc'
// -delete touches nothing protected, find . -name '*.md' -delete does.
func (inv *invocation) find() {
	roots, expr := findParts(inv.args)
	q := parseFind(expr)
	for _, n := range q.actions {
		switch n.op {
		case "-delete":
			inv.label = "find -delete"
			for _, r := range roots {
				if inv.affect(action{verb: verbRemove}, inv.found(r, q, n)) {
					return
				}
			}
			inv.label = ""
		case "-exec", "-execdir", "-ok", "-okdir":
			if len(n.cmd) == 0 {
				continue
			}
			for _, r := range roots {
				f := inv.found(r, q, n)
				args := make([]field, len(n.cmd))
				for k, a := range n.cmd {
					args[k] = a
					if s, ok := a.text(); ok && strings.Contains(s, "{}") {
						args[k] = f
					}
				}
				sub := inv.child()
				sub.stdin = nil
				if n.op == "-execdir" || n.op == "-okdir" {
					sub.dir, sub.dirWhy = "", "the directory of each path find finds"
				}
				sub.run(args)
				if inv.c.refusal != nil {
					return
				}
			}
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if inv.affect(action{verb: verbTruncate, overwrite: true}, n.arg) {
				return
			}
		}
	}
}

// findParts splits find's arguments into its starting points (default .)
// and its expression.
func findParts(args []field) (roots, expr []field) {
	i := 0
	for i < len(args) {
		t, ok := args[i].text()
		if !ok {
			break
		}
		if t == "-H" || t == "-L" || t == "-P" || strings.HasPrefix(t, "-O") {
			i++
			continue
		}
		if t == "-D" {
			i += 2
			continue
		}
		break
	}
	for ; i < len(args); i++ {
		t, ok := args[i].text()
		if ok && (len(t) > 1 && t[0] == '-' || t == "(" || t == "!" || t == ")" || t == ",") {
			break
		}
		roots = append(roots, args[i])
	}
	if len(roots) == 0 {
		roots = []field{textField(".")}
	}
	return roots, args[min(i, len(args)):]
}

// found stands for the paths under root that reach the find actions acts
// (none: that the expression is true for, as -print's are).
func (inv *invocation) found(root field, q *findQuery, acts ...*findNode) field {
	pat, ok := root.pattern()
	if !ok {
		return root
	}
	if !strings.HasPrefix(pat, "/") {
		if inv.dir == "" {
			return unknownField(inv.dirWhy)
		}
		pat = escapeGlob(inv.dir) + "/" + pat
	}
	// The starting point as written begins the paths find prints (for
	// -path); a pattern's are not known.
	written := ""
	if lit, ok := root.literal(); ok {
		if written = strings.TrimRight(lit, "/"); written == "" {
			written = "/"
		}
	}
	sc := &scope{root: pat, deep: true, find: &findAction{q: q, acts: acts, written: written}}
	return field{segs: []seg{{unknown: "what find finds"}}, under: sc}
}

// findScope says where the paths lie that a find prints, for the xargs
// after it; nil when it cannot tell.
func (inv *invocation) findScope() *scope {
	roots, expr := findParts(inv.args)
	if len(roots) != 1 {
		return nil
	}
	q := parseFind(expr)
	var prints []*findNode
	for _, n := range q.actions {
		switch n.op {
		case "-printf", "-exec", "-execdir", "-ok", "-okdir":
			return nil // they print what the checker cannot know
		case "-print", "-print0", "-ls":
			prints = append(prints, n)
		}
	}
	if !q.printsAll && len(prints) == 0 {
		return &scope{root: "/", find: &findAction{q: q, none: true}}
	}
	return inv.found(roots[0], q, prints...).under
}

// tri is a truth the checker may not know.
type tri uint8

const (
	no tri = iota
	maybe
	yes
)

func not3(t tri) tri { return yes - t }

// findNode is a piece of find's expression: an operator over kids, or a
// test or action with its argument.
type findNode struct {
	op   string
	kids []*findNode
	arg  field   // a test's or -fprint's argument
	cmd  []field // -exec's command, {} as written
}

// The operators of find's expression, named so that no argument of find
// can be taken for one.
const (
	opAnd  = "(and)"
	opOr   = "(or)"
	opNot  = "(not)"
	opList = "(,)"
)

// findQuery is find's expression, read.
type findQuery struct {
	expr       *findNode // nil: none, which is true
	actions    []*findNode
	minDepth   int // -1: none
	maxDepth   int // -1: none
	depthFirst bool
	printsAll  bool // no action but -prune: what is true is printed
	prunes     bool // -prune is an action, and works (not -depth)
}

// findAction is a find whose matches a command acts on: the actions that
// count (none: what the expression is true for), and the starting point as
// written, for -path.
type findAction struct {
	q       *findQuery
	acts    []*findNode
	written string // "" when the paths it prints cannot be known
	none    bool   // the find prints nothing
}

// findParser reads find's expression: , binds loosest, then -o, then -a
// (written or not), then ! and -not.
type findParser struct {
	args []field
	i    int
	q    *findQuery
}

func parseFind(args []field) *findQuery {
	q := &findQuery{minDepth: -1, maxDepth: -1}
	p := &findParser{args: args, q: q}
	if len(args) > 0 {
		q.expr = p.list()
	}
	q.printsAll = true
	for _, n := range q.actions {
		if n.op != "-prune" {
			q.printsAll = false
		}
		q.depthFirst = q.depthFirst || n.op == "-delete"
	}
	for _, n := range q.actions {
		q.prunes = q.prunes || n.op == "-prune" && !q.depthFirst // -prune works only from the top down
	}
	return q
}

func (p *findParser) peek() string {
	if p.i >= len(p.args) {
		return ""
	}
	t, _ := p.args[p.i].text()
	return t
}

func (p *findParser) take() field {
	if p.i >= len(p.args) {
		return unknownField("find's missing argument")
	}
	p.i++
	return p.args[p.i-1]
}

func (p *findParser) list() *findNode {
	n := p.or()
	for p.peek() == "," {
		p.i++
		n = &findNode{op: opList, kids: []*findNode{n, p.or()}}
	}
	return n
}

func (p *findParser) or() *findNode {
	n := p.and()
	for t := p.peek(); t == "-o" || t == "-or"; t = p.peek() {
		p.i++
		n = &findNode{op: opOr, kids: []*findNode{n, p.and()}}
	}
	return n
}

func (p *findParser) and() *findNode {
	n := p.not()
	for p.i < len(p.args) {
		switch t := p.peek(); t {
		case "-a", "-and":
			p.i++
		case ")", "-o", "-or", ",":
			return n
		}
		n = &findNode{op: opAnd, kids: []*findNode{n, p.not()}}
	}
	return n
}

func (p *findParser) not() *findNode {
	if t := p.peek(); t == "!" || t == "-not" {
		p.i++
		return &findNode{op: opNot, kids: []*findNode{p.not()}}
	}
	return p.primary()
}

// findArgs counts the arguments of find's tests and actions; a primary
// not named here takes none, and may be true or not.
var findArgs = map[string]int{
	"-name": 1, "-iname": 1, "-path": 1, "-ipath": 1, "-wholename": 1, "-iwholename": 1,
	"-regex": 1, "-iregex": 1, "-type": 1, "-xtype": 1, "-lname": 1, "-ilname": 1,
	"-user": 1, "-group": 1, "-uid": 1, "-gid": 1, "-perm": 1, "-size": 1, "-links": 1,
	"-inum": 1, "-samefile": 1, "-fstype": 1, "-used": 1, "-context": 1,
	"-mtime": 1, "-atime": 1, "-ctime": 1, "-mmin": 1, "-amin": 1, "-cmin": 1,
	"-newer": 1, "-anewer": 1, "-cnewer": 1, "-maxdepth": 1, "-mindepth": 1,
	"-regextype": 1, "-files0-from": 1, "-printf": 1, "-fprint": 1, "-fprint0": 1, "-fls": 1,
	"-fprintf": 2,
}

// findActions are the primaries that do something.
var findActions = map[string]bool{
	"-delete": true, "-exec": true, "-execdir": true, "-ok": true, "-okdir": true,
	"-print": true, "-print0": true, "-printf": true, "-ls": true, "-prune": true, "-quit": true,
	"-fprint": true, "-fprint0": true, "-fprintf": true, "-fls": true,
}

func (p *findParser) primary() *findNode {
	if p.i >= len(p.args) {
		return &findNode{op: "-true"}
	}
	t := p.peek()
	p.i++
	switch t {
	case "(":
		n := p.list()
		if p.peek() == ")" {
			p.i++
		}
		return n
	case ")", ",", "-o", "-or", "-a", "-and":
		return &findNode{op: "-true"} // where a test should be: find refuses the line
	}
	n := &findNode{op: t}
	switch {
	case t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir":
		for p.i < len(p.args) {
			e := p.peek()
			if e == ";" || e == "+" && len(n.cmd) > 0 {
				p.i++
				break
			}
			n.cmd = append(n.cmd, p.take())
		}
	case strings.HasPrefix(t, "-newer") && len(t) == len("-newerXY"):
		n.arg = p.take()
	case findArgs[t] > 0:
		n.arg = p.take()
		for range findArgs[t] - 1 {
			p.take()
		}
	case t == "-depth" || t == "-d":
		p.q.depthFirst = true
	}
	switch t {
	case "-maxdepth", "-mindepth":
		depth := -1
		if s, ok := n.arg.literal(); ok {
			if d, err := strconv.Atoi(s); err == nil && d >= 0 {
				depth = d
			}
		}
		if t == "-maxdepth" {
			p.q.maxDepth = depth
		} else {
			p.q.minDepth = depth
		}
	}
	if findActions[t] {
		p.q.actions = append(p.q.actions, n)
	}
	return n
}

// findCand is a path find may come to: a protected one, a file or folder
// in it, a folder that holds it, or, when what a protected folder holds is
// not known, anything in it.
type findCand struct {
	segs    []segment // absolute
	kind    byte      // 'f', 'd', 'l'; 0 when not known
	depth   int       // from the starting point
	name    string    // its last element, as find's -name sees it
	printed string    // as find prints it; "" when not known
	any     bool      // anything under segs, at depth or deeper
}

// findEval evaluates the expression for one path.
type findEval struct {
	q       *findQuery
	fold    bool
	reached map[*findNode]tri
	unsure  string // why a test could not be read: its argument cannot be known
}

// reach tells whether find comes to c and does one of the actions acts
// there (none: whether the expression is true there); unsure says why
// when that depends on an argument the checker cannot know.
func (fa *findAction) reach(c findCand, ancestors func() []findCand, fold bool) (tri, string) {
	q := fa.q
	if fa.none {
		return no, ""
	}
	if q.maxDepth >= 0 && c.depth > q.maxDepth || q.minDepth >= 0 && c.depth < q.minDepth && !c.any {
		return no, ""
	}
	e := &findEval{q: q, fold: fold}
	visit := yes
	if q.prunes {
		for _, a := range ancestors() {
			e.reached = map[*findNode]tri{}
			e.eval(q.expr, yes, a)
			for _, n := range q.actions {
				if n.op == "-prune" {
					visit = min(visit, not3(e.reached[n]))
				}
			}
		}
	}
	if visit == no {
		return no, ""
	}
	e.reached = map[*findNode]tri{}
	value := e.eval(q.expr, visit, c)
	if len(fa.acts) == 0 {
		return min(value, visit), e.unsure
	}
	got := no
	for _, n := range fa.acts {
		got = max(got, e.reached[n])
	}
	return got, e.unsure
}

// eval returns the value of n at c, reached with the truth reach; it
// notes how far each action is reached.
func (e *findEval) eval(n *findNode, reach tri, c findCand) tri {
	if n == nil {
		return yes
	}
	switch n.op {
	case opAnd:
		a := e.eval(n.kids[0], reach, c)
		return min(a, e.eval(n.kids[1], min(reach, a), c))
	case opOr:
		a := e.eval(n.kids[0], reach, c)
		return max(a, e.eval(n.kids[1], min(reach, not3(a)), c))
	case opNot:
		return not3(e.eval(n.kids[0], reach, c))
	case opList:
		e.eval(n.kids[0], reach, c)
		return e.eval(n.kids[1], reach, c)
	}
	if findActions[n.op] {
		if reach > e.reached[n] {
			e.reached[n] = reach
		}
		if strings.HasPrefix(n.op, "-exec") || strings.HasPrefix(n.op, "-ok") {
			return maybe // the command's exit status
		}
		return yes
	}
	if reach == no {
		return no // not evaluated: its argument does not matter
	}
	return e.test(n, c)
}

// test evaluates a test at c.
func (e *findEval) test(n *findNode, c findCand) tri {
	arg := func() (string, bool) {
		t, ok := n.arg.text()
		if !ok {
			if e.unsure == "" {
				e.unsure = n.arg.unknown()
			}
			return "", false
		}
		return t, true
	}
	switch n.op {
	case "-true", "-maxdepth", "-mindepth", "-depth", "-d", "-mount", "-xdev", "-noleaf", "-follow",
		"-daystart", "-warn", "-nowarn", "-ignore_readdir_race", "-noignore_readdir_race", "-regextype":
		return yes
	case "-false":
		return no
	case "-name", "-iname":
		pat, ok := arg()
		if !ok || c.any {
			return maybe
		}
		fold := e.fold || n.op == "-iname"
		var name segment
		switch {
		case c.depth > 0:
			name = c.segs[len(c.segs)-1]
		case c.name == "":
			return maybe
		default: // the starting point, named as written
			name = compileSegment(escapeGlob(c.name))
		}
		if fold {
			pat = strings.ToLower(pat)
			name = compileSegment(strings.ToLower(name.raw))
		}
		if !name.isPattern() && !strings.Contains(pat, "[") { // the common case: a file's name, and * or ?
			if ok, err := path.Match(pat, name.lit); err == nil && ok {
				return yes
			} else if err == nil {
				return no
			}
		}
		want := compileSegment(pat)
		switch {
		case !want.overlaps(&name):
			return no
		case name.isPattern():
			return maybe
		}
		return yes
	case "-path", "-ipath", "-wholename", "-iwholename":
		pat, ok := arg()
		if !ok || c.printed == "" || c.any {
			return maybe
		}
		mode := pattern.EntireString
		if e.fold || n.op == "-ipath" || n.op == "-iwholename" {
			mode |= pattern.NoGlobCase
		}
		expr, err := pattern.Regexp(pat, mode)
		if err != nil {
			return maybe
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return maybe
		}
		if re.MatchString(c.printed) {
			return yes
		}
		return no
	case "-type":
		types, ok := arg()
		if !ok || c.kind == 0 {
			return maybe
		}
		for _, t := range strings.Split(types, ",") {
			if t == string(c.kind) {
				return yes
			}
		}
		return no
	}
	return maybe // a test the checker does not read
}

// affectFound checks what a find hands to an action (its -delete, a
// command of -exec, xargs after it): a protected path is affected when
// it, a protected file or folder in it, or, for an action that reaches
// under its target, a folder that holds it, can match find's expression.
func (inv *invocation) affectFound(a action, sc *scope) bool {
	c := inv.c
	root := splitPath(sc.root, c.g.opt.IgnoreCase)
	for i := range c.g.paths {
		p := &c.g.paths[i]
		if a.edit && !p.readOnly {
			continue
		}
		for _, cand := range c.findCandidates(p, root, sc.find.written) {
			ancestors := func() []findCand { return c.ancestors(cand, root, sc.find.written) }
			reach, unsure := sc.find.reach(cand, ancestors, c.g.opt.IgnoreCase)
			if reach == no {
				continue
			}
			rel := relate(cand.segs, p.segs, a.deep)
			if cand.any && rel == relHolds {
				rel = relInside
			}
			if rel == relNone {
				continue
			}
			if reach == maybe && unsure != "" {
				c.refuse(inv.text(), "", "cannot tell "+unsure+", so cannot tell what "+inv.desc()+" would "+verbs[a.verb].base)
				return true
			}
			note := ""
			if a.git != 0 {
				var skip bool
				if note, skip = c.gitNote(p.path, a.git); skip {
					continue
				}
			}
			b := a
			b.maybe = b.maybe || reach == maybe
			why := inv.why(b, rel, display(cand.segs), isPatternPath(cand.segs), false, p)
			if cand.any {
				why = inv.desc() + " " + verbs[a.verb].may + " what protected " + p.path + " holds (its files are not known)"
			}
			c.refuse(inv.text(), p.path, why+note)
			return true
		}
	}
	return false
}

// findCandidates lists the paths under root where find may touch the
// protected path p: the protected files and folders p covers, and the
// folders that hold them (from Options.Files), or, without it, p, the
// folders that hold it, and anything in it.
func (c *checker) findCandidates(p *protPath, root []segment, written string) []findCand {
	var out []findCand
	seen := map[string]bool{}
	add := func(segs []segment, kind byte, anything bool) {
		if len(segs) < len(root) {
			if !anything || relate(segs, root, true) != relHolds {
				return
			}
			segs, kind = root, 0 // anything in p, which holds the starting point
		}
		for i := range root {
			if !root[i].overlaps(&segs[i]) {
				return
			}
		}
		key := display(segs)
		if anything {
			key += "/..."
		}
		if seen[key] {
			return
		}
		seen[key] = true
		out = append(out, c.candidate(segs, kind, anything, root, written))
	}
	addWithFolders := func(segs []segment, kind byte) {
		for n := len(root); n < len(segs); n++ {
			add(segs[:n], 'd', false)
		}
		add(segs, kind, false)
	}
	if c.g.opt.Files == nil {
		addWithFolders(p.segs, 0)
		add(p.segs, 0, true)
		return out
	}
	if c.files == nil {
		for _, f := range c.g.opt.Files() {
			c.files = append(c.files, fileSegs{segs: splitPath(escapeGlob(f.Path), c.g.opt.IgnoreCase), kind: f.Type})
		}
	}
	for _, f := range c.files {
		if r := relate(f.segs, p.segs, false); r == relSame || r == relInside {
			addWithFolders(f.segs, f.kind)
		}
	}
	return out
}

// fileSegs is a file of Options.Files, compiled.
type fileSegs struct {
	segs []segment
	kind byte
}

// candidate describes segs as find comes to it from root.
func (c *checker) candidate(segs []segment, kind byte, anything bool, root []segment, written string) findCand {
	cand := findCand{segs: segs, kind: kind, depth: len(segs) - len(root), any: anything}
	if anything {
		cand.depth++
	}
	if written != "" {
		cand.printed = written
		for _, s := range segs[len(root):] {
			if s.isPattern() {
				cand.printed = ""
				break
			}
			cand.printed = strings.TrimSuffix(cand.printed, "/") + "/" + s.lit
		}
	}
	if cand.depth == 0 && written != "" {
		cand.name = path.Base(written)
	}
	return cand
}

// ancestors lists the folders find comes to on its way from root to cand,
// root included, for -prune.
func (c *checker) ancestors(cand findCand, root []segment, written string) []findCand {
	var out []findCand
	end := len(cand.segs)
	if cand.any {
		end++
	}
	for n := len(root); n < end && n <= len(cand.segs); n++ {
		if n == len(cand.segs) && !cand.any {
			break
		}
		out = append(out, c.candidate(cand.segs[:n], 'd', false, root, written))
	}
	return out
}
