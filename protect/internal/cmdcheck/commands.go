package cmdcheck

import (
	"path"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// run looks at the command args[0] with the arguments args[1:], and
// returns the states the shell can be in afterwards.
func (inv *invocation) run(args []field) []state {
	c := inv.c
	name, known := programName(args[0])
	inv.name, inv.args, inv.label = name, args[1:], ""
	after := both([]state{inv.st})
	if !known {
		why := "what program " + shortField(args[0]) + " is"
		if u := args[0].unknown(); u != "" {
			why = u + " (the program run)"
		}
		inv.givenProtected(why)
		return after
	}
	if def, ok := c.funcs[name]; ok {
		if _, isLit := args[0].literal(); isLit {
			return inv.call(def)
		}
	}
	switch name {
	// Builtins that change the shell.
	case "cd", "pushd":
		return inv.cd()
	case "popd":
		st := inv.st
		st.dir, st.dirWhy = "", "where popd goes"
		fail := inv.st
		fail.ok = false
		return []state{st, fail}
	case "exit":
		return nil
	case "return":
		if c.calls > 0 {
			return nil
		}
		return after // outside a function, bash reports an error and goes on
	case "exec":
		rest := inv.args
		for len(rest) > 0 && rest[0].isOption() {
			if t, _ := rest[0].text(); t == "-a" && len(rest) > 1 {
				rest = rest[1:]
			}
			rest = rest[1:]
		}
		if len(rest) == 0 {
			return []state{inv.st} // exec with redirections only
		}
		inv.run(rest)
		return nil // the shell is replaced
	case "command", "builtin":
		opts, operands := parseOpts(inv.args, optSpec{posix: true})
		if len(operands) == 0 || has(opts, "v", "V") {
			return after
		}
		return inv.run(operands)
	case "set":
		return inv.set()
	case "true", ":":
		return setOK([]state{inv.st}, true)
	case "false":
		return setOK([]state{inv.st}, false)
	case "export", "declare", "typeset", "local", "readonly":
		return inv.declare()
	case "unset", "read", "mapfile", "readarray", "getopts", "printf":
		return inv.forget()
	case "source", ".":
		// The script is not seen; its variables are not known afterwards.
		st := inv.st
		st.vars = c.g.initialState(st.dir).vars
		return both([]state{st})
	case "eval":
		return inv.eval()
	case "trap":
		inv.trap()
		return after

	// Programs that run other programs.
	case "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "fish":
		inv.shell()
	case "xargs":
		inv.xargs()
	case "watch":
		inv.watch()
	case "npx":
		inv.npx()
	case "sudo", "doas", "env", "nice", "nohup", "time", "timeout", "stdbuf", "ionice", "setsid", "chronic", "unbuffer", "nocorrect", "noglob", "busybox", "caffeinate":
		if inner := inv.unwrap(); inner != nil {
			inv.run(inner)
		}

	// Programs that delete, move or overwrite files.
	case "rm":
		inv.rm()
	case "rmdir":
		inv.rmdir()
	case "unlink":
		inv.removeEach(optSpec{}, false)
	case "trash", "trash-put", "rimraf":
		inv.removeEach(optSpec{}, true)
	case "shred":
		inv.shred()
	case "mv":
		inv.transfer(transferMove)
	case "cp":
		inv.transfer(transferCopy)
	case "ln":
		inv.transfer(transferLink)
	case "install":
		inv.transfer(transferInstall)
	case "rsync":
		inv.rsync()
	case "tee":
		inv.tee()
	case "truncate":
		inv.truncate()
	case "dd":
		inv.dd()
	case "sed":
		inv.sed()
	case "rename", "prename", "perl-rename", "file-rename":
		inv.rename()
	case "perl":
		inv.perl()
	case "find":
		inv.find()
	case "git":
		inv.git()
	}
	return after
}

// programName returns the name of the program a command word runs: its
// last path element, which may be known even when the directory is not
// ($(go env GOPATH)/bin/staticcheck).
func programName(f field) (string, bool) {
	if t, ok := f.literal(); ok {
		return path.Base(t), true
	}
	if f.under != nil {
		return "", false
	}
	tail := ""
	for i := len(f.segs) - 1; i >= 0; i-- {
		s := f.segs[i]
		if s.unknown != "" || s.glob && strings.ContainsAny(s.text, "*?[") {
			return "", false
		}
		if j := strings.LastIndexByte(s.text, '/'); j >= 0 {
			return s.text[j+1:] + tail, s.text[j+1:]+tail != ""
		}
		tail = s.text + tail
	}
	return "", false
}

func shortField(f field) string {
	if t, ok := f.text(); ok {
		return shorten(t)
	}
	return "it"
}

// call runs a shell function defined earlier in the command line.
func (inv *invocation) call(def funcDefAt) []state {
	c := inv.c
	if c.nest+1 > maxNest {
		c.refuse(inv.text(), "", "cannot tell what it runs: functions nested too deeply")
		return nil
	}
	st := inv.st
	for i := 1; i <= 9; i++ {
		if i <= len(inv.args) {
			st.vars = st.vars.with(strconv.Itoa(i), inv.args[i-1])
		} else {
			st.vars = st.vars.with(strconv.Itoa(i), textField(""))
		}
	}
	savedSrc := c.src
	c.src = def.src
	c.nest++
	c.calls++
	out := c.stmt(def.body, []state{st}, false, inv.stdin)
	c.calls--
	c.nest--
	c.src = savedSrc
	if len(out) == 0 && c.refusal == nil { // return ends the function, not the shell
		return both([]state{inv.st})
	}
	return out
}

// cd follows a change of directory when its target is known.
func (inv *invocation) cd() []state {
	_, operands := parseOpts(inv.args, optSpec{posix: true})
	old := inv.st
	fail := old
	fail.ok = false
	st := old
	st.ok = true
	var target string
	switch {
	case len(operands) == 0:
		if h, ok := old.vars.get("HOME"); ok {
			target, _ = h.text()
		}
		if target == "" {
			st.dir, st.dirWhy = "", "where cd goes (no HOME given)"
		}
	default:
		lit, ok := operands[0].literal()
		switch {
		case !ok:
			why := operands[0].unknown()
			if why == "" {
				why = "which directory the pattern " + shortField(operands[0]) + " names"
			}
			st.dir, st.dirWhy = "", "where cd goes ("+why+")"
		case lit == "-":
			st.dir, st.dirWhy = "", "where cd - goes"
		default:
			target = lit
			if !strings.HasPrefix(lit, "/") && old.dir == "" {
				target = "" // relative to a directory that is not known
			}
		}
	}
	if target != "" {
		st.dir, st.dirWhy = resolve(old.dir, target), ""
		st.vars = st.vars.with("PWD", textField(st.dir))
	} else {
		st.vars = st.vars.without("PWD")
	}
	if old.dir != "" {
		st.vars = st.vars.with("OLDPWD", textField(old.dir))
	} else {
		st.vars = st.vars.without("OLDPWD")
	}
	return []state{st, fail}
}

// set follows set -e and set -o errexit.
func (inv *invocation) set() []state {
	st := inv.st
	st.ok = true
	for i := 0; i < len(inv.args); i++ {
		t, ok := inv.args[i].text()
		if !ok || len(t) < 2 || t[0] != '-' && t[0] != '+' || t == "--" {
			break
		}
		on := t[0] == '-'
		for j := 1; j < len(t); j++ {
			switch t[j] {
			case 'e':
				st.errexit = on
			case 'o':
				if i+1 < len(inv.args) {
					i++
					if v, _ := inv.args[i].text(); v == "errexit" {
						st.errexit = on
					}
				}
			}
		}
	}
	return []state{st}
}

// declare follows export NAME=value and its kin.
func (inv *invocation) declare() []state {
	st := inv.st
	st.ok = true
	for _, f := range inv.args {
		if f.isOption() || len(f.segs) == 0 || f.segs[0].unknown != "" {
			continue
		}
		name, rest, ok := strings.Cut(f.segs[0].text, "=")
		if !ok || !isName(name) {
			continue
		}
		v := field{segs: append([]seg{{text: rest}}, f.segs[1:]...)}
		for i := range v.segs {
			v.segs[i].glob = false
		}
		st.vars = st.vars.with(name, v)
	}
	return []state{st}
}

// forget makes unknown the variables that read, unset, mapfile, getopts and
// printf -v set.
func (inv *invocation) forget() []state {
	st := inv.st
	if inv.name == "printf" {
		if v, ok := value(parseOptsLoose(inv.args, "v"), "v"); ok {
			if n, ok := v.literal(); ok {
				st.vars = st.vars.without(n)
			}
		}
		return both([]state{st})
	}
	for _, n := range []string{"REPLY", "MAPFILE", "OPTARG", "OPTIND"} {
		st.vars = st.vars.without(n)
	}
	for _, f := range inv.args {
		if n, ok := f.literal(); ok && isName(n) {
			st.vars = st.vars.without(n)
		}
	}
	return both([]state{st})
}

// parseOptsLoose reads the options before the first operand.
func parseOptsLoose(args []field, shortArgs string) []option {
	opts, _ := parseOpts(args, optSpec{shortArgs: shortArgs, posix: true})
	return opts
}

// eval runs its arguments, joined by spaces, in the current shell.
func (inv *invocation) eval() []state {
	src, ok := joinText(inv.args)
	if !ok {
		inv.c.refuse(inv.text(), "", "cannot tell what eval runs")
		return nil
	}
	st := inv.st
	return inv.c.source(src, st, inv.c.nest+1)
}

// trap runs its first argument later, when the signal comes.
func (inv *invocation) trap() {
	if len(inv.args) < 2 || inv.args[0].isOption() {
		return
	}
	src, ok := inv.args[0].text()
	if !ok {
		inv.c.refuse(inv.text(), "", "cannot tell what trap runs")
		return
	}
	inv.c.source(src, inv.st, inv.c.nest+1)
}

func joinText(fs []field) (string, bool) {
	parts := make([]string, len(fs))
	for i, f := range fs {
		t, ok := f.text()
		if !ok {
			return "", false
		}
		parts[i] = t
	}
	return strings.Join(parts, " "), true
}

// shell looks into the scripts a shell runs: bash -c '...', and a script
// it reads from standard input (no script file, or -s): a here-document, a
// here-string, or what the command before it in a pipeline prints.
func (inv *invocation) shell() {
	c := inv.c
	cmdMode, stdinMode, errexit := false, false, false
	i := 0
	for i < len(inv.args) {
		t, ok := inv.args[i].text()
		if !ok || len(t) < 2 || t[0] != '-' && t[0] != '+' {
			break
		}
		i++
		if t == "--" {
			break
		}
		if strings.HasPrefix(t, "--") {
			if t == "--rcfile" || t == "--init-file" {
				i++
			}
			continue
		}
		for j := 1; j < len(t); j++ {
			switch t[j] {
			case 'c':
				cmdMode = true
			case 's':
				stdinMode = true
			case 'e':
				errexit = t[0] == '-'
			case 'o', 'O':
				if i < len(inv.args) {
					if v, _ := inv.args[i].text(); v == "errexit" {
						errexit = t[0] == '-'
					}
					i++
				}
			}
		}
	}
	operands := inv.args[i:]
	st := c.g.initialState(inv.dir)
	if inv.dir == "" {
		st.dirWhy = inv.dirWhy
	}
	st.errexit = errexit
	switch {
	case cmdMode && len(operands) > 0:
		src, ok := operands[0].text()
		if !ok {
			c.refuse(inv.text(), "", "cannot tell "+operands[0].unknown()+", so cannot tell what "+inv.name+" -c runs")
			return
		}
		for n, f := range operands[1:] { // $0, $1, ... of the script
			st.vars = st.vars.with(strconv.Itoa(n), f)
		}
		c.source(src, st, c.nest+1)
	case !cmdMode && (len(operands) == 0 || stdinMode):
		for n, f := range operands { // $1, $2, ... of the script
			st.vars = st.vars.with(strconv.Itoa(n+1), f)
		}
		src, why, ok := inv.scriptOnStdin()
		switch {
		case why != "":
			c.refuse(inv.text(), "", "cannot tell what "+inv.name+" reads from its standard input ("+why+")")
		case ok:
			c.source(src, st, c.nest+1)
		}
	}
}

// scriptOnStdin returns the text a command reads on standard input: a
// here-document or here-string of its own, or what the command before it
// in a pipeline prints. ok is false when nothing is known to come (a
// program's output, which is not seen); why says why text that comes
// cannot be known.
func (inv *invocation) scriptOnStdin() (src, why string, ok bool) {
	c := inv.c
	for _, r := range inv.cmd.Redirs {
		switch {
		case r.Hdoc != nil:
			return c.hdocText(r.Hdoc), "", true
		case r.Op == syntax.WordHdoc:
			if src, ok := joinText(c.expand(r.Word, &inv.st)); ok {
				return src + "\n", "", true
			}
			return "", "what " + shorten(c.span(r.Word.Pos(), r.Word.End())) + " holds", false
		case r.Op == syntax.RdrIn:
			return "", "", false // a file
		}
	}
	if inv.stdin == nil || !inv.stdin.hasText {
		return "", "", false
	}
	return inv.stdin.text, inv.stdin.textWhy, inv.stdin.textWhy == ""
}

// hdocText returns the body of a here-document as written. A script read
// from one is checked as written: what the outer shell would expand in it
// is left for the inner check, which refuses what it cannot know.
func (c *checker) hdocText(doc *syntax.Word) string {
	if len(doc.Parts) == 0 {
		return ""
	}
	return c.span(doc.Pos(), doc.End())
}

// watch runs its arguments again and again through sh -c.
func (inv *invocation) watch() {
	opts, operands := parseOpts(inv.args, optSpec{shortArgs: "nq", longArgs: []string{"interval", "equexit"}, posix: true})
	if len(operands) == 0 {
		return
	}
	if has(opts, "x", "exec") {
		inv.child().run(operands)
		return
	}
	src, ok := joinText(operands)
	if !ok {
		inv.c.refuse(inv.text(), "", "cannot tell what watch runs")
		return
	}
	inv.c.source(src, inv.st, inv.c.nest+1)
}

// npx runs a package's program, or with -c a shell command.
func (inv *invocation) npx() {
	opts, operands := parseOpts(inv.args, optSpec{shortArgs: "pc", longArgs: []string{"package", "call"}, posix: true})
	if v, ok := value(opts, "c", "call"); ok {
		src, ok := v.text()
		if !ok {
			inv.c.refuse(inv.text(), "", "cannot tell what npx -c runs")
			return
		}
		inv.c.source(src, inv.st, inv.c.nest+1)
		return
	}
	if len(operands) > 0 {
		inv.child().run(operands)
	}
}

// wrapper describes a program that runs the command given after its own
// options.
type wrapper struct {
	spec     optSpec
	assigns  bool   // NAME=value words may come before the command
	skip     int    // operands before the command (timeout's duration)
	noRun    string // short options with which nothing runs (command -v, sudo -l)
	chdir    string // short option that sets the directory
	chdirArg string // long option that sets the directory
}

var wrappers = map[string]wrapper{
	"sudo": {spec: optSpec{shortArgs: "CDghpRrtTUu", longArgs: []string{"chdir", "close-from", "group", "host", "prompt", "role", "type", "command-timeout", "other-user", "user"}, posix: true},
		assigns: true, noRun: "lvVkK", chdir: "D", chdirArg: "chdir"},
	"doas":       {spec: optSpec{shortArgs: "uC", posix: true}, noRun: "L"},
	"env":        {spec: optSpec{shortArgs: "uCS", longArgs: []string{"unset", "chdir", "split-string"}, posix: true}, assigns: true, chdir: "C", chdirArg: "chdir"},
	"nice":       {spec: optSpec{shortArgs: "n", longArgs: []string{"adjustment"}, posix: true}},
	"nohup":      {spec: optSpec{posix: true}},
	"time":       {spec: optSpec{shortArgs: "fo", longArgs: []string{"format", "output"}, posix: true}},
	"timeout":    {spec: optSpec{shortArgs: "sk", longArgs: []string{"signal", "kill-after"}, posix: true}, skip: 1},
	"stdbuf":     {spec: optSpec{shortArgs: "ioe", longArgs: []string{"input", "output", "error"}, posix: true}},
	"ionice":     {spec: optSpec{shortArgs: "cnpPu", longArgs: []string{"class", "classdata", "pid", "pgid", "uid"}, posix: true}, noRun: "pPu"},
	"setsid":     {spec: optSpec{posix: true}},
	"chronic":    {spec: optSpec{posix: true}},
	"unbuffer":   {spec: optSpec{posix: true}},
	"nocorrect":  {spec: optSpec{posix: true}},
	"noglob":     {spec: optSpec{posix: true}},
	"busybox":    {spec: optSpec{posix: true}},
	"caffeinate": {spec: optSpec{shortArgs: "tw", posix: true}},
}

// unwrap returns the command a wrapper runs, moving the invocation to the
// wrapper's directory; nil when it runs nothing or refused.
func (inv *invocation) unwrap() []field {
	w := wrappers[inv.name]
	opts, operands := parseOpts(inv.args, w.spec)
	for _, o := range opts {
		if !o.long && strings.Contains(w.noRun, o.name) {
			return nil
		}
	}
	if d, ok := value(opts, w.chdir, w.chdirArg); ok && w.chdir != "" {
		if lit, isLit := d.literal(); isLit && resolve(inv.dir, lit) != "" {
			inv.dir, inv.dirWhy = resolve(inv.dir, lit), ""
		} else {
			inv.dir, inv.dirWhy = "", "where "+inv.name+" -"+w.chdir+" goes"
		}
	}
	switch inv.name {
	case "sudo":
		if has(opts, "i", "login") {
			inv.dir, inv.dirWhy = "", "where sudo -i starts (the target user's home)"
		}
	case "env":
		if has(opts, "S", "split-string") {
			inv.c.refuse(inv.text(), "", "cannot tell what env -S runs")
			return nil
		}
	case "time":
		if f, ok := value(opts, "o", "output"); ok {
			a := action{verb: verbTruncate, overwrite: true}
			if has(opts, "a", "append") {
				a = action{verb: verbEdit, edit: true}
			}
			if inv.affect(a, f) {
				return nil
			}
		}
	}
	if w.assigns {
		for len(operands) > 0 {
			t, ok := operands[0].text()
			if name, _, eq := strings.Cut(t, "="); !ok || !eq || !isName(name) {
				break
			}
			operands = operands[1:]
		}
	}
	if len(operands) <= w.skip {
		return nil
	}
	return operands[w.skip:]
}

// xargs runs a command with arguments read from standard input.
func (inv *invocation) xargs() {
	args := inv.args
	replace := ""
	i := 0
	for i < len(args) {
		t, ok := args[i].text()
		if !ok || len(t) < 2 || t[0] != '-' {
			break
		}
		i++
		if t == "--" {
			break
		}
		if strings.HasPrefix(t, "--") {
			name, val, eq := strings.Cut(t[2:], "=")
			o := option{name: name, long: true}
			switch {
			case o.is("replace"):
				replace = "{}"
				if eq {
					replace = val
				}
			case !eq && o.is("arg-file", "delimiter", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"):
				i++
			}
			continue
		}
		for j := 1; j < len(t); j++ {
			switch c := t[j]; {
			case c == 'I':
				if j+1 < len(t) {
					replace = t[j+1:]
				} else if i < len(args) {
					replace, _ = args[i].text()
					i++
				}
				j = len(t)
			case c == 'i':
				replace = "{}"
				if j+1 < len(t) {
					replace = t[j+1:]
				}
				j = len(t)
			case strings.IndexByte("aEdLnPs", c) >= 0:
				if j+1 == len(t) {
					i++
				}
				j = len(t)
			case c == 'e' || c == 'l':
				j = len(t)
			}
		}
	}
	if i >= len(args) {
		return // xargs runs echo
	}
	cmd := append([]field(nil), args[i:]...)
	name, _ := programName(cmd[0])
	input := unknownField("what xargs passes to " + name)
	if inv.stdin != nil && inv.stdin.paths != nil {
		input = field{segs: []seg{{unknown: "what xargs passes to " + name}}, under: inv.stdin.paths}
	}
	if replace == "" {
		cmd = append(cmd, input)
	} else {
		for k := 1; k < len(cmd); k++ {
			if t, ok := cmd[k].text(); ok && strings.Contains(t, replace) {
				cmd[k] = input
			}
		}
	}
	sub := inv.child()
	sub.stdin = nil
	sub.run(cmd)
}

func (inv *invocation) rm() {
	opts, operands := parseOpts(inv.args, optSpec{})
	a := action{verb: verbRemove, deep: has(opts, "r", "R", "recursive")}
	for _, f := range operands {
		if inv.affect(a, f) {
			return
		}
	}
}

// removeEach removes its operands (unlink, trash, rimraf).
func (inv *invocation) removeEach(spec optSpec, deep bool) {
	_, operands := parseOpts(inv.args, spec)
	for _, f := range operands {
		if inv.affect(action{verb: verbRemove, deep: deep}, f) {
			return
		}
	}
}

// rmdir removes empty directories, and with -p their parents as written.
func (inv *invocation) rmdir() {
	opts, operands := parseOpts(inv.args, optSpec{})
	parents := has(opts, "p", "parents")
	for _, f := range operands {
		if inv.affect(action{verb: verbRemove}, f) {
			return
		}
		if !parents {
			continue
		}
		p, ok := f.pattern()
		if !ok {
			continue
		}
		for p = path.Dir(strings.TrimRight(p, "/")); p != "." && p != "/"; p = path.Dir(p) {
			if inv.affect(action{verb: verbRemove}, field{segs: []seg{{text: p, glob: true}}}) {
				return
			}
		}
	}
}

func (inv *invocation) shred() {
	opts, operands := parseOpts(inv.args, optSpec{shortArgs: "ns", longArgs: []string{"iterations", "size", "random-source"}})
	a := action{verb: verbShred}
	if has(opts, "u", "remove") {
		a.verb = verbRemove
	}
	for _, f := range operands {
		if inv.affect(a, f) {
			return
		}
	}
}

type transferKind uint8

const (
	transferMove transferKind = iota
	transferCopy
	transferLink
	transferInstall
)

// transfer checks mv, cp, ln and install: a moved source leaves its place,
// and the destination, or the file of the same name in a destination
// directory, is overwritten.
func (inv *invocation) transfer(kind transferKind) {
	spec := optSpec{shortArgs: "tS", longArgs: []string{"target-directory", "suffix"}}
	if kind == transferInstall {
		spec = optSpec{shortArgs: "gmoSt", longArgs: []string{"group", "mode", "owner", "suffix", "target-directory", "strip-program"}}
	}
	opts, operands := parseOpts(inv.args, spec)
	target, hasTarget := value(opts, "t", "target-directory")
	noTarget := has(opts, "T", "no-target-directory")
	noClobber := kind != transferLink && has(opts, "n", "no-clobber")
	if u, ok := value(opts, "update"); ok {
		if t, _ := u.text(); t == "none" || t == "none-fail" {
			noClobber = true
		}
	}
	deep := kind == transferCopy && has(opts, "r", "R", "a", "recursive", "archive")
	switch {
	case kind == transferLink && !has(opts, "f", "force"):
		return // ln refuses to replace an existing file
	case kind == transferInstall && has(opts, "d", "directory"):
		return // install -d only makes directories
	}
	var srcs []field
	var dst field
	switch {
	case hasTarget:
		srcs, dst = operands, target
	case kind == transferLink && len(operands) == 1:
		srcs, dst, hasTarget = operands, textField("."), true
	case len(operands) < 2:
		return
	default:
		srcs, dst = operands[:len(operands)-1], operands[len(operands)-1]
	}
	if kind == transferMove {
		for _, s := range srcs {
			if inv.affect(action{verb: verbMove, deep: true}, s) {
				return
			}
		}
	}
	if noClobber {
		return
	}
	over := action{verb: verbOverwrite, overwrite: true}
	intoDir, ontoDst := !noTarget, !hasTarget
	if d, ok := dst.text(); ok && strings.HasSuffix(d, "/") {
		ontoDst = false
	}
	if lit, ok := dst.literal(); ok && !hasTarget && !noTarget {
		if abs := resolve(inv.dir, lit); abs != "" {
			if exists, isDir, known := inv.c.exists(abs); known {
				intoDir, ontoDst = isDir, exists && !isDir
			}
		}
	}
	if ontoDst && inv.affect(over, dst) {
		return
	}
	if !intoDir {
		return
	}
	dp, ok := dst.pattern()
	if !ok {
		inv.affect(over, dst) // refuses: the destination cannot be known
		return
	}
	for _, s := range srcs {
		sp, ok := s.pattern()
		if !ok {
			inv.affect(over, s) // refuses: the name it lands under cannot be known
			return
		}
		name := path.Base(strings.TrimRight(sp, "/"))
		child := field{segs: []seg{{text: strings.TrimRight(dp, "/") + "/" + name, glob: true}}}
		if inv.affect(action{verb: verbOverwrite, overwrite: true, deep: deep}, child) {
			return
		}
	}
}

// rsync copies into its destination; --delete removes what the source
// lacks, --remove-source-files removes the sources.
func (inv *invocation) rsync() {
	opts, operands := parseOpts(inv.args, optSpec{shortArgs: "efTBM", longArgs: []string{
		"exclude", "include", "filter", "files-from", "exclude-from", "include-from", "temp-dir", "partial-dir",
		"backup-dir", "suffix", "rsh", "port", "block-size", "max-size", "min-size", "compare-dest", "copy-dest",
		"link-dest", "chmod", "chown", "out-format", "log-file", "password-file", "timeout", "bwlimit", "rsync-path"}})
	if len(operands) < 2 {
		return
	}
	srcs, dst := operands[:len(operands)-1], operands[len(operands)-1]
	local := func(f field) bool {
		t, ok := f.text()
		if !ok {
			return true
		}
		colon := strings.IndexByte(t, ':')
		return colon < 0 || strings.Contains(t[:colon], "/")
	}
	if has(opts, "remove-source-files") {
		for _, s := range srcs {
			if local(s) && inv.affect(action{verb: verbRemove, deep: true}, s) {
				return
			}
		}
	}
	if !local(dst) {
		return
	}
	a := action{verb: verbOverwrite, overwrite: true, deep: true}
	if has(opts, "delete", "del", "delete-before", "delete-during", "delete-delay", "delete-after", "delete-excluded") {
		a = action{verb: verbRemove, deep: true}
	}
	inv.affect(a, dst)
}

func (inv *invocation) tee() {
	opts, operands := parseOpts(inv.args, optSpec{})
	a := action{verb: verbTruncate, overwrite: true}
	if has(opts, "a", "append") {
		a = action{verb: verbEdit, edit: true}
	}
	for _, f := range operands {
		if inv.affect(a, f) {
			return
		}
	}
}

func (inv *invocation) truncate() {
	_, operands := parseOpts(inv.args, optSpec{shortArgs: "sr", longArgs: []string{"size", "reference"}})
	for _, f := range operands {
		if inv.affect(action{verb: verbTruncate, overwrite: true}, f) {
			return
		}
	}
}

// dd writes to of=FILE.
func (inv *invocation) dd() {
	for _, f := range inv.args {
		if len(f.segs) == 0 || f.segs[0].unknown != "" || !strings.HasPrefix(f.segs[0].text, "of=") {
			continue
		}
		out := field{segs: append([]seg{{text: strings.TrimPrefix(f.segs[0].text, "of="), glob: f.segs[0].glob}}, f.segs[1:]...)}
		if inv.affect(action{verb: verbOverwrite, overwrite: true}, out) {
			return
		}
	}
}

// rename moves its files to new names: perl's rename (prename,
// file-rename: an expression, then the files; or -e EXPR) and
// util-linux's (FROM TO FILES, whose TO is taken as a file too, which
// refuses nothing more). -n changes nothing.
func (inv *invocation) rename() {
	opts, operands := parseOpts(inv.args, optSpec{shortArgs: "e", longArgs: []string{"expr"}})
	if has(opts, "n", "no-act", "nono", "just-print", "dry-run") || len(operands) == 0 {
		return
	}
	if _, ok := value(opts, "e", "expr"); !ok {
		operands = operands[1:] // the expression, or FROM
	}
	for _, f := range operands {
		if inv.affect(action{verb: verbMove, deep: true}, f) {
			return
		}
	}
}

// perl -i edits its files in place.
func (inv *invocation) perl() {
	if !inv.c.g.hasReadOnly() {
		return
	}
	args := inv.args
	inPlace, script := false, false
	var operands []field
	for i := 0; i < len(args); i++ {
		t, ok := args[i].text()
		if !ok || len(t) < 2 || t[0] != '-' {
			operands = args[i:]
			break
		}
		if t == "--" {
			operands = args[i+1:]
			break
		}
		for j := 1; j < len(t); j++ {
			switch c := t[j]; {
			case c == 'i':
				inPlace = true
				j = len(t)
			case c == 'e' || c == 'E':
				script = true
				if j+1 == len(t) {
					i++
				}
				j = len(t)
			case strings.IndexByte("0ICMmldDxV", c) >= 0:
				j = len(t)
			}
		}
	}
	if !inPlace {
		return
	}
	if !script && len(operands) > 0 {
		operands = operands[1:]
	}
	for _, f := range operands {
		if inv.affect(action{verb: verbEdit, edit: true}, f) {
			return
		}
	}
}
