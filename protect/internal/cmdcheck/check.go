package cmdcheck

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Options tunes a Checker. The zero value checks against the protected
// paths alone, assuming the worst wherever it would need the file system,
// git or the environment to know better.
type Options struct {
	// ReadOnly lists paths that must not even be edited: besides what
	// protects every protected path (no deleting, truncating, moving or
	// overwriting), sed -i, perl -i, >> and tee -a on them are refused. They
	// are written like the protected paths.
	ReadOnly []string

	// Env holds the variables the command line starts with, as the shell
	// that runs it will see them. HOME expands ~; any other variable is
	// unknown until the command line assigns it, and a target that depends
	// on an unknown variable is refused.
	Env map[string]string

	// Stat tells whether a path exists and whether it is a directory
	// (os.Stat fits). It is asked only about targets that a command would
	// overwrite (cp, mv, >, tee, truncate, dd): a file that does not exist
	// yet is not lost by being written, even inside a protected directory.
	// Nil means every such target is taken to exist.
	Stat func(path string) (fs.FileInfo, error)

	// Git tells what git holds at a protected path, as given to New (so
	// possibly a pattern, which git takes as a pathspec), or at a literal
	// path inside one; see GitState. The git commands that only touch some
	// files (git clean: untracked or ignored ones; git rm: tracked ones;
	// git checkout, restore, reset --hard and stash: modified ones) are
	// refused only for protected paths in a matching state. Nil, or an
	// error, means any state.
	Git func(path string) (GitState, error)

	// IgnoreCase compares paths without regard to case, as on the default
	// file systems of macOS and Windows, where rm agents.md removes
	// AGENTS.md.
	IgnoreCase bool

	// Files lists the protected files, folders and links as they are (a
	// Guard knows them from its last stock taking). find's tests (-name,
	// -path, -type, ...) are matched against them and the folders that
	// hold them: find . -name '*.pyc' -delete is allowed when no
	// protected file is named so. Nil means only the protected paths are
	// known, and what a protected folder holds may be named anything.
	Files func() []File
}

// File is a protected file, folder or link, for Options.Files.
type File struct {
	Path string // absolute, "/"-separated
	Type byte   // 'f' a file, 'd' a folder, 'l' a link, as find's -type names them
}

// GitState says what git holds at a path: for a directory, everything
// under it. It is a set of the flags below (a modified file is tracked
// too); 0 means git has nothing there: the path is outside any work tree,
// or nothing exists there.
type GitState uint8

const (
	Tracked   GitState = 1 << iota // git tracks a file there
	Modified                       // a tracked file there differs from HEAD (staged or not)
	Untracked                      // a file there is neither tracked nor ignored
	Ignored                        // an ignored file is there
)

var gitStateNames = []string{"tracked", "modified", "untracked", "ignored"}

// String names the flags set, as in "tracked, modified".
func (s GitState) String() string {
	var names []string
	for i, n := range gitStateNames {
		if s&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// Refusal says why a command line must not run.
type Refusal struct {
	Command string // the command that would touch a protected path, as written
	Path    string // the protected path touched; "" when the checker cannot tell what is touched
	Why     string // what the command does to the path, or what the checker cannot tell
}

// String gives the command and the reason, as in "rm -rf specs: rm -rf
// removes protected /repo/specs".
func (r *Refusal) String() string { return fmt.Sprintf("%s: %s", r.Command, r.Why) }

// Checker checks command lines against a set of protected paths. It is
// safe for concurrent use when the Options functions are.
type Checker struct {
	paths    []protPath
	readOnly bool // some paths are read-only
	opt      Options
}

// protPath is a protected or read-only path, compiled.
type protPath struct {
	path     string // as given, cleaned
	segs     []segment
	readOnly bool
}

// New returns a Checker for the protected paths. Each must be absolute;
// it protects the path and everything under it (a trailing / is allowed
// and changes nothing). Glob characters (* ? [...]) in a path are
// patterns, so /repo/*.md protects every Markdown file in /repo; a
// backslash makes the next character literal.
func New(protected []string, opt Options) (*Checker, error) {
	g := &Checker{opt: opt}
	for _, list := range []struct {
		paths    []string
		readOnly bool
	}{{protected, false}, {opt.ReadOnly, true}} {
		for _, p := range list.paths {
			if !strings.HasPrefix(p, "/") {
				return nil, fmt.Errorf("protected path %q is not absolute", p)
			}
			clean := path.Clean(p)
			g.paths = append(g.paths, protPath{path: clean, segs: splitPath(clean, opt.IgnoreCase), readOnly: list.readOnly})
			g.readOnly = g.readOnly || list.readOnly
		}
	}
	return g, nil
}

// Check reports whether cmdline, run by bash in the directory dir
// (absolute), could delete, truncate, move or overwrite a protected path,
// or edit a read-only one. It returns nil when it finds nothing, and the
// first refusal otherwise, in the order the shell would run the commands.
// When it cannot tell what a command touches (a variable, $(...), xargs, a
// cd it cannot follow), it refuses and says so. A command line it cannot
// parse is refused too.
func (g *Checker) Check(cmdline, dir string) *Refusal {
	c := &checker{g: g, funcs: map[string]funcDefAt{}}
	c.source(cmdline, g.initialState(dir), 0)
	return c.refusal
}

func (g *Checker) initialState(dir string) state {
	st := state{ok: true}
	for k, v := range g.opt.Env {
		st.vars = st.vars.with(k, textField(v))
	}
	if strings.HasPrefix(dir, "/") {
		st.dir = path.Clean(dir)
		st.vars = st.vars.with("PWD", textField(st.dir))
	} else {
		st.dirWhy = "the working directory (none given)"
	}
	return st
}

// state is what the checker knows of the shell between two commands. A
// command line can leave the shell in several states (cd build; rm -rf *
// runs rm in build, or, when cd fails, where it started), so the walker
// carries a set of them.
type state struct {
	dir     string // working directory; "" when unknown
	dirWhy  string // why dir is unknown ("where cd $X goes")
	vars    *vars
	ok      bool // the last command succeeded
	errexit bool // set -e
}

// maxStates bounds the states carried at once; beyond it they merge into
// one whose directory is unknown unless all agree.
const maxStates = 16

// maxWork bounds the simple commands one check looks at (loops and
// function calls multiply them); beyond it the command line is refused.
const maxWork = 4096

// maxNest bounds how deeply $(...), bash -c, eval and function calls may
// nest; past it the command line is refused.
const maxNest = 16

// funcDefAt is a function the command line defined, with the source its
// body's positions point into.
type funcDefAt struct {
	body *syntax.Stmt
	src  string
}

// checker walks one command line.
type checker struct {
	g        *Checker
	src      string // the source the nodes being walked point into
	nest     int
	refusal  *Refusal
	work     int
	funcs    map[string]funcDefAt
	calls    int // function calls under way: return ends the innermost
	gitCache map[string]gitAnswer
	files    []fileSegs // Options.Files, asked once, when find needs them
}

type gitAnswer struct {
	state GitState
	known bool
	err   error
}

// refuse records the first refusal.
func (c *checker) refuse(command, protected, why string) {
	if c.refusal == nil {
		c.refusal = &Refusal{Command: strings.TrimSpace(command), Path: protected, Why: why}
	}
}

// span returns the source of a node, or the whole source when the node's
// positions do not point into it.
func (c *checker) span(pos, end syntax.Pos) string {
	p, e := int(pos.Offset()), int(end.Offset())
	if pos.IsValid() && end.IsValid() && 0 <= p && p <= e && e <= len(c.src) {
		return c.src[p:e]
	}
	return c.src
}

// text returns a command as written: its words and redirections, without
// the here-documents' bodies or what ends it (; &).
func (c *checker) text(s *syntax.Stmt) string {
	end := s.Position
	if s.Cmd != nil {
		end = s.Cmd.End()
	}
	for _, r := range s.Redirs {
		if e := r.Word.End(); e.Offset() > end.Offset() {
			end = e
		}
	}
	return c.span(s.Position, end)
}

// source parses and walks src, a command line or a string that bash -c,
// eval or $(...) runs, from state st.
func (c *checker) source(src string, st state, nest int) []state {
	if c.refusal != nil {
		return nil
	}
	if nest > maxNest {
		c.refuse(src, "", "cannot tell what it runs: commands nested too deeply")
		return nil
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		c.refuse(src, "", "cannot read the command line: "+parseError(err))
		return nil
	}
	savedSrc, savedNest := c.src, c.nest
	c.src, c.nest = src, nest
	out := c.stmts(f.Stmts, []state{st}, false)
	c.src, c.nest = savedSrc, savedNest
	return out
}

// parseError words a parser's error without its position, which means
// nothing to the agent that wrote the line.
func parseError(err error) string {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		if pe.Incomplete {
			return pe.Text + " (the line is incomplete)"
		}
		return pe.Text
	}
	return err.Error()
}

// stmts walks a list of statements. cond is true inside the condition of
// if, while and until, and on the left of && and ||, where set -e does
// not apply.
func (c *checker) stmts(list []*syntax.Stmt, in []state, cond bool) []state {
	for _, s := range list {
		if c.refusal != nil || len(in) == 0 {
			return in
		}
		if s.Background || s.Coprocess || s.Disown {
			c.stmt(s, in, true, nil)
			in = setOK(in, true)
			continue
		}
		in = merge(c.stmt(s, in, cond, nil))
	}
	return in
}

// stmt walks one statement: a command with its redirections, or commands
// joined by &&, || or a pipe. Under set -e, a failure ends the shell.
func (c *checker) stmt(s *syntax.Stmt, in []state, cond bool, stdin *input) []state {
	if c.refusal != nil {
		return nil
	}
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && len(s.Redirs) == 0 {
		switch b.Op {
		case syntax.AndStmt, syntax.OrStmt:
			left := c.stmt(b.X, in, true, stdin)
			run, skipped := split(left)
			if b.Op == syntax.OrStmt {
				run, skipped = skipped, run
			}
			out := append(skipped, c.stmt(b.Y, run, cond || s.Negated, nil)...)
			return negate(out, s.Negated)
		case syntax.Pipe, syntax.PipeAll:
			out := negate(c.pipeline(s, in), s.Negated)
			return exitOnError(out, cond || s.Negated)
		}
	}
	out := negate(c.command(s, in, stdin), s.Negated)
	return exitOnError(out, cond || s.Negated)
}

// negate flips the outcome of a negated statement (! cmd).
func negate(out []state, negated bool) []state {
	if !negated {
		return out
	}
	for i := range out {
		out[i].ok = !out[i].ok
	}
	return out
}

// exitOnError drops the states that failed under set -e, unless set -e
// does not apply there.
func exitOnError(out []state, cond bool) []state {
	if cond {
		return out
	}
	kept := out[:0:0]
	for _, s := range out {
		if s.ok || !s.errexit {
			kept = append(kept, s)
		}
	}
	return kept
}

// pipeline walks the commands of a pipeline, each in a subshell: a cd
// there does not last. What a command prints is the next one's input.
func (c *checker) pipeline(s *syntax.Stmt, in []state) []state {
	// The pipeline's own parts, whether or not it is negated (! a | b):
	// the negation is its caller's to apply.
	b := s.Cmd.(*syntax.BinaryCmd)
	cmds := pipeParts(b.Y, pipeParts(b.X, nil))
	for _, st := range in {
		var stdin *input
		for _, cmd := range cmds {
			sub := st
			sub.errexit = false
			c.stmt(cmd, []state{sub}, true, stdin)
			if c.refusal != nil {
				return nil
			}
			stdin = c.output(cmd, st, stdin)
		}
	}
	return both(in)
}

// pipeParts lists the commands of a pipeline, in order.
func pipeParts(s *syntax.Stmt, out []*syntax.Stmt) []*syntax.Stmt {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && !s.Negated && len(s.Redirs) == 0 {
		return pipeParts(b.Y, pipeParts(b.X, out))
	}
	return append(out, s)
}

// command walks a statement that is not a list: its redirections, and the
// command they apply to.
func (c *checker) command(s *syntax.Stmt, in []state, stdin *input) []state {
	if c.refusal != nil {
		return nil
	}
	if call, ok := s.Cmd.(*syntax.CallExpr); ok {
		var out []state
		for _, st := range in {
			out = append(out, c.call(s, call, st, stdin)...)
			if c.refusal != nil {
				return nil
			}
		}
		return out
	}
	for _, st := range in {
		c.redirects(s, st)
	}
	if c.refusal != nil {
		return nil
	}
	switch cmd := s.Cmd.(type) {
	case nil: // redirections alone
		return in
	case *syntax.Subshell:
		var out []state
		for _, st := range in {
			res := c.stmts(cmd.Stmts, []state{st}, false)
			if len(res) == 0 { // exit in a subshell ends only the subshell
				out = append(out, both([]state{st})...)
			}
			for _, r := range res {
				st.ok = r.ok
				out = append(out, st)
			}
		}
		return out
	case *syntax.Block:
		return c.stmts(cmd.Stmts, in, false)
	case *syntax.IfClause:
		var out []state
		cur := in
		for clause := cmd; clause != nil; clause = clause.Else {
			if len(clause.Cond) == 0 { // else
				out = append(out, c.stmts(clause.Then, cur, false)...)
				cur = nil
				break
			}
			yes, no := split(c.stmts(clause.Cond, cur, true))
			out = append(out, c.stmts(clause.Then, yes, false)...)
			cur = no
		}
		return merge(append(out, setOK(cur, true)...))
	case *syntax.WhileClause:
		// Two rounds show what a loop body does to the state it starts
		// the next round with (a cd in the body).
		var out []state
		cur := in
		for round := 0; round < 2 && len(cur) > 0; round++ {
			yes, no := split(c.stmts(cmd.Cond, cur, true))
			if cmd.Until {
				yes, no = no, yes
			}
			out = append(out, setOK(no, true)...)
			cur = merge(c.stmts(cmd.Do, yes, false))
		}
		return merge(append(out, cur...))
	case *syntax.ForClause:
		return c.forLoop(cmd, in)
	case *syntax.CaseClause:
		var out []state
		for _, st := range in {
			c.runs(cmd.Word, st)
			for _, item := range cmd.Items {
				for _, w := range item.Patterns {
					c.runs(w, st)
				}
			}
		}
		for _, item := range cmd.Items {
			out = append(out, c.stmts(item.Stmts, in, false)...)
		}
		return merge(append(out, setOK(in, true)...))
	case *syntax.FuncDecl:
		names := cmd.Names
		if cmd.Name != nil {
			names = append([]*syntax.Lit{cmd.Name}, names...)
		}
		if len(names) == 0 { // an anonymous function runs at once
			return c.stmt(cmd.Body, in, false, nil)
		}
		for _, name := range names {
			c.funcs[name.Value] = funcDefAt{body: cmd.Body, src: c.src}
		}
		return setOK(in, true)
	case *syntax.DeclClause:
		var out []state
		for _, st := range in {
			out = append(out, c.declare(cmd, st))
		}
		return out
	case *syntax.TimeClause:
		if cmd.Stmt == nil {
			return setOK(in, true)
		}
		return c.stmt(cmd.Stmt, in, true, stdin)
	case *syntax.CoprocClause:
		c.stmt(cmd.Stmt, in, true, nil)
		return setOK(in, true)
	default: // [[ ]], (( )), let: they run only their substitutions
		for _, st := range in {
			c.runsIn(cmd, st)
		}
		return both(in)
	}
}

// forLoop walks the body once for each value the loop variable takes
// (when the words are known and few), else once with it unknown.
func (c *checker) forLoop(cmd *syntax.ForClause, in []state) []state {
	iter, ok := cmd.Loop.(*syntax.WordIter)
	if !ok { // for ((...))
		for _, st := range in {
			c.runsIn(cmd.Loop, st)
		}
		return merge(setOK(append(c.stmts(cmd.Do, in, false), in...), true))
	}
	var out []state
	for _, s := range in {
		var values []field
		known := iter.InPos.IsValid() // without "in", the loop runs over "$@"
		for _, w := range iter.Items {
			c.runs(w, s)
			for _, f := range c.expand(w, &s) {
				known = known && f.unknown() == ""
				values = append(values, f)
			}
		}
		if !known || len(values) > maxStates {
			values = []field{unknownField("what the loop variable $" + iter.Name.Value + " holds")}
		}
		cur := []state{s}
		for _, v := range values {
			next := make([]state, len(cur))
			for i, st := range cur {
				st.vars = st.vars.with(iter.Name.Value, v)
				next[i] = st
			}
			cur = merge(c.stmts(cmd.Do, next, false))
			out = append(out, cur...)
		}
		out = append(out, s)
	}
	return merge(setOK(out, true))
}

// call walks a simple command in one state.
func (c *checker) call(s *syntax.Stmt, call *syntax.CallExpr, st state, stdin *input) []state {
	c.work++
	if c.work > maxWork {
		c.refuse(c.src, "", "cannot tell what it runs: too many commands to check")
		return nil
	}
	// Command substitutions run before the command, each in a subshell.
	for _, a := range call.Assigns {
		c.runsIn(a, st)
	}
	for _, w := range call.Args {
		c.runs(w, st)
	}
	var args []field
	for _, w := range call.Args {
		args = append(args, c.expand(w, &st)...)
	}
	c.redirects(s, st)
	if c.refusal != nil {
		return nil
	}
	if len(call.Args) == 0 {
		// Assignments alone set shell variables.
		for _, a := range call.Assigns {
			st.vars = c.assign(a, st)
		}
		return []state{st}
	}
	if len(args) == 0 {
		return []state{st}
	}
	inv := &invocation{c: c, cmd: s, st: st, dir: st.dir, dirWhy: st.dirWhy, stdin: stdin}
	return inv.run(args)
}

// assign returns the variables after NAME=value.
func (c *checker) assign(a *syntax.Assign, st state) *vars {
	switch {
	case a.Name == nil || a.Naked:
		return st.vars
	case a.Append || a.Index != nil:
		return st.vars.without(a.Name.Value)
	case a.Array != nil:
		return st.vars.with(a.Name.Value, unknownField("what the array $"+a.Name.Value+" holds"))
	}
	return st.vars.with(a.Name.Value, c.assignValue(a.Value, &st))
}

// declare follows export NAME=value and its kin.
func (c *checker) declare(d *syntax.DeclClause, st state) state {
	for _, a := range d.Args {
		c.runsIn(a, st)
	}
	for _, a := range d.Args {
		st.vars = c.assign(a, st)
	}
	st.ok = true
	return st
}

// runs walks the command substitutions in w: $(...), backquotes and
// process substitutions, each run in a subshell.
func (c *checker) runs(w *syntax.Word, st state) {
	if w != nil {
		c.runsIn(w, st)
	}
}

// runsIn walks the command substitutions anywhere in node.
func (c *checker) runsIn(node syntax.Node, st state) {
	syntax.Walk(node, func(n syntax.Node) bool {
		if c.refusal != nil {
			return false
		}
		var list []*syntax.Stmt
		switch n := n.(type) {
		case *syntax.CmdSubst:
			list = n.Stmts
		case *syntax.ProcSubst:
			list = n.Stmts
		default:
			return true
		}
		if c.nest+1 > maxNest {
			c.refuse(c.src, "", "cannot tell what it runs: commands nested too deeply")
			return false
		}
		sub := st
		sub.errexit = false
		c.nest++
		c.stmts(list, []state{sub}, false)
		c.nest--
		return false
	})
}

// redirects checks the redirections of a command.
func (c *checker) redirects(s *syntax.Stmt, st state) {
	for _, r := range s.Redirs {
		if c.refusal != nil {
			return
		}
		if r.Hdoc != nil {
			c.runsIn(r.Hdoc, st)
			continue
		}
		c.runs(r.Word, st)
		if isProcSubst(r.Word) {
			continue // a pipe, not a file
		}
		fd := ""
		if r.N != nil {
			fd = r.N.Value
		}
		var a action
		switch r.Op {
		case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll, syntax.RdrAllClob:
			a = action{verb: verbTruncate, overwrite: true}
		case syntax.DplOut:
			if lit := r.Word.Lit(); lit == "-" || isDigits(lit) {
				continue // duplicates a file descriptor
			}
			a = action{verb: verbTruncate, overwrite: true}
		case syntax.AppOut, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
			a = action{verb: verbEdit, edit: true}
		default: // <, <&, <<<
			continue
		}
		name := fd + r.Op.String()
		targets := c.expand(r.Word, &st)
		inv := &invocation{c: c, cmd: s, st: st, dir: st.dir, dirWhy: st.dirWhy, name: name}
		if len(targets) != 1 {
			c.refuse(c.text(s), "", "cannot tell which file "+name+" "+shorten(c.span(r.Word.Pos(), r.Word.End()))+" writes")
			return
		}
		inv.affect(a, targets[0])
	}
}

// isProcSubst reports whether w is a process substitution alone: <(...).
func isProcSubst(w *syntax.Word) bool {
	if w == nil || len(w.Parts) != 1 {
		return false
	}
	_, ok := w.Parts[0].(*syntax.ProcSubst)
	return ok
}

// input is what a command of a pipeline reads from the command before
// it: the paths a find or a plain ls prints (for xargs), or the text echo
// and printf print (for a shell that reads its script from it).
type input struct {
	paths   *scope
	hasText bool
	text    string
	textWhy string // why the text cannot be known; "" when it can
}

// output says what cmd prints for the next command of a pipeline, given
// what it reads itself; nil when the checker cannot tell.
func (c *checker) output(s *syntax.Stmt, st state, stdin *input) *input {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return nil
	}
	var args []field
	for _, w := range call.Args {
		args = append(args, c.expand(w, &st)...)
	}
	if len(args) == 0 { // the words expanded to nothing, as {,} does
		return nil
	}
	name, _ := args[0].literal()
	name = path.Base(name)
	inv := &invocation{c: c, cmd: s, st: st, dir: st.dir, name: name, args: args[1:], stdin: stdin}
	switch name {
	case "find":
		if sc := inv.findScope(); sc != nil {
			return &input{paths: sc}
		}
	case "ls":
		for _, a := range args[1:] {
			if a.isOption() {
				if t, _ := a.text(); strings.ContainsAny(t, "Rd") {
					return nil
				}
			}
		}
		if st.dir == "" {
			return nil
		}
		// ls prints bare names, which the next command reads relative to
		// its own directory.
		return &input{paths: &scope{root: escapeGlob(st.dir)}}
	case "echo":
		return inv.echoed()
	case "printf":
		return inv.printed()
	case "cat":
		if len(inv.args) > 0 {
			return nil // files, which are not read
		}
		src, why, ok := inv.scriptOnStdin()
		if ok || why != "" {
			return &input{hasText: true, text: src, textWhy: why}
		}
		return stdin
	case "tee":
		return stdin
	}
	return nil
}

// echoed is what echo prints: its words, joined by spaces, and a newline
// (without -n), with backslash escapes read (with -e).
func (inv *invocation) echoed() *input {
	args, newline, escapes := inv.args, true, false
	for len(args) > 0 {
		t, ok := args[0].literal()
		if !ok || len(t) < 2 || t[0] != '-' || strings.Trim(t[1:], "neE") != "" {
			break
		}
		newline = newline && !strings.Contains(t, "n")
		if strings.ContainsAny(t, "eE") {
			escapes = strings.LastIndexByte(t, 'e') > strings.LastIndexByte(t, 'E')
		}
		args = args[1:]
	}
	text, ok := joinText(args)
	if !ok {
		return &input{hasText: true, textWhy: "what echo prints: " + unknownOf(args)}
	}
	if escapes {
		text, _, _ = expand.Format(nil, "%b", []string{text})
	}
	if newline {
		text += "\n"
	}
	return &input{hasText: true, text: text}
}

// printed is what printf prints: its format, filled in with its
// arguments, again while arguments are left, as bash's printf does.
func (inv *invocation) printed() *input {
	args := inv.args
	if len(args) > 0 {
		if t, _ := args[0].literal(); t == "--" {
			args = args[1:]
		} else if t == "-v" {
			return nil // into a variable
		}
	}
	if len(args) == 0 {
		return nil
	}
	parts := make([]string, len(args))
	for i, a := range args {
		t, ok := a.text()
		if !ok {
			return &input{hasText: true, textWhy: "what printf prints: " + a.unknown()}
		}
		parts[i] = t
	}
	format, rest := parts[0], parts[1:]
	var out strings.Builder
	for {
		text, used, err := expand.Format(nil, format, rest)
		if err != nil {
			return &input{hasText: true, textWhy: "what printf prints: " + err.Error()}
		}
		out.WriteString(text)
		rest = rest[used:]
		if used == 0 || len(rest) == 0 {
			break
		}
	}
	return &input{hasText: true, text: out.String()}
}

// unknownOf says why the first of fs that cannot be known cannot be.
func unknownOf(fs []field) string {
	for _, f := range fs {
		if why := f.unknown(); why != "" {
			return why
		}
		if f.under != nil {
			return "the paths found"
		}
	}
	return "it"
}

// both returns each state twice: once succeeded, once failed.
func both(in []state) []state {
	out := make([]state, 0, 2*len(in))
	out = append(out, setOK(in, true)...)
	return append(out, setOK(in, false)...)
}

func setOK(in []state, ok bool) []state {
	out := make([]state, len(in))
	for i, s := range in {
		s.ok = ok
		out[i] = s
	}
	return out
}

func split(in []state) (yes, no []state) {
	for _, s := range in {
		if s.ok {
			yes = append(yes, s)
		} else {
			no = append(no, s)
		}
	}
	return yes, no
}

// merge drops duplicate states and, past maxStates, folds them into one
// success and one failure.
func merge(in []state) []state {
	out := in[:0:0]
	for _, s := range in {
		dup := false
		for _, o := range out {
			if o.dir == s.dir && o.dirWhy == s.dirWhy && o.vars == s.vars && o.ok == s.ok && o.errexit == s.errexit {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, s)
		}
	}
	if len(out) <= maxStates {
		return out
	}
	f := out[0]
	for _, s := range out[1:] {
		if s.dir != f.dir {
			f.dir, f.dirWhy = "", "the working directory (too many ways through the command line)"
		}
		if s.vars != f.vars {
			f.vars = nil
		}
		f.errexit = f.errexit && s.errexit
	}
	return both([]state{f})
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// gitState asks Options.Git about p, once per check.
func (c *checker) gitState(p string) gitAnswer {
	if c.g.opt.Git == nil {
		return gitAnswer{}
	}
	if a, ok := c.gitCache[p]; ok {
		return a
	}
	s, err := c.g.opt.Git(p)
	a := gitAnswer{state: s, known: err == nil, err: err}
	if c.gitCache == nil {
		c.gitCache = map[string]gitAnswer{}
	}
	c.gitCache[p] = a
	return a
}

// exists asks Options.Stat about a target that would be overwritten.
func (c *checker) exists(p string) (exists, dir, known bool) {
	if c.g.opt.Stat == nil {
		return true, false, false
	}
	fi, err := c.g.opt.Stat(p)
	switch {
	case err == nil:
		return true, fi.IsDir(), true
	case errors.Is(err, fs.ErrNotExist):
		return false, false, true
	}
	return true, false, false
}
