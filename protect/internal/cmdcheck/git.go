package cmdcheck

import "strings"

// git checks the git commands that remove files or changes from the work
// tree. Whether git touches a protected path depends on what git holds
// there (Options.Git): git clean removes only untracked (or ignored) files,
// git rm only tracked ones, and checkout, restore, reset --hard and stash
// lose only uncommitted changes unless they bring in another commit.
//
// Plain git checkout BRANCH and git switch are allowed: git refuses to
// switch when it would overwrite changes. git pull, merge and rebase are
// allowed for the same reason.
func (inv *invocation) git() {
	args := inv.args
	i := 0
	for i < len(args) {
		t, ok := args[i].text()
		if !ok || !strings.HasPrefix(t, "-") {
			break
		}
		i++
		switch t {
		case "-C":
			if i < len(args) {
				inv.chdir(args[i], "git -C")
				i++
			}
		case "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix":
			i++
		}
	}
	if i >= len(args) {
		return
	}
	sub, _ := args[i].literal()
	inv.args, inv.name = args[i+1:], "git "+sub
	switch sub {
	case "clean":
		inv.gitClean()
	case "rm":
		inv.gitRm()
	case "checkout":
		inv.gitCheckout()
	case "restore":
		inv.gitRestore()
	case "reset":
		inv.gitReset()
	case "stash":
		inv.gitStash()
	case "switch":
		opts, _ := parseOpts(inv.args, optSpec{shortArgs: "cC", longArgs: []string{"create", "force-create", "orphan", "conflict"}})
		if has(opts, "f", "force", "discard-changes") {
			inv.affectRepo(action{verb: verbDiscard, git: Modified})
		}
	case "mv":
		if opts, _ := parseOpts(inv.args, optSpec{}); !has(opts, "n", "dry-run") {
			inv.transfer(transferMove)
		}
	case "worktree":
		if len(inv.args) > 0 {
			if t, _ := inv.args[0].literal(); t == "remove" {
				_, operands := parseOpts(inv.args[1:], optSpec{})
				for _, f := range operands {
					if inv.affect(action{verb: verbRemove, deep: true}, f) {
						return
					}
				}
			}
		}
	}
}

// chdir moves the invocation to the directory f (git -C, sudo -D).
func (inv *invocation) chdir(f field, how string) {
	if lit, ok := f.literal(); ok {
		if d := resolve(inv.dir, lit); d != "" {
			inv.dir, inv.dirWhy = d, ""
			return
		}
		return // relative to a directory that is not known: stays unknown
	}
	inv.dir, inv.dirWhy = "", "where "+how+" "+shortField(f)+" goes"
}

// splitDashDash cuts args at the first "--".
func splitDashDash(args []field) (before, after []field, found bool) {
	for i, a := range args {
		if t, ok := a.literal(); ok && t == "--" {
			return args[:i], args[i+1:], true
		}
	}
	return args, nil, false
}

func isHead(f field) bool {
	t, ok := f.literal()
	return ok && (t == "HEAD" || t == "@")
}

// pathspecs applies a to git pathspecs: relative to the directory, with
// git's own globbing (where * crosses directories) and magic such as :/
// (the top of the work tree) taken to reach everything.
func (inv *invocation) pathspecs(a action, specs []field) {
	for _, s := range specs {
		if t, ok := s.text(); ok {
			if strings.HasPrefix(t, ":") {
				if inv.affectRepo(a) {
					return
				}
				continue
			}
			if i := strings.IndexAny(t, "*?["); i >= 0 {
				dir := t[:strings.LastIndexByte(t[:i], '/')+1]
				if dir == "" {
					dir = "."
				}
				s = textField(dir)
				a.deep = true
			}
		}
		if inv.affect(a, s) {
			return
		}
	}
}

// refuseFromFile refuses --pathspec-from-file, whose paths are not seen.
func (inv *invocation) refuseFromFile(opts []option) bool {
	if has(opts, "pathspec-from-file") {
		inv.c.refuse(inv.text(), "", "cannot tell which paths "+inv.name+" reads from --pathspec-from-file")
		return true
	}
	return false
}

// gitClean removes untracked files, with -x ignored ones too, with -X only
// ignored ones, under the pathspecs or the current directory. -n and
// --dry-run remove nothing. Without -f git refuses unless clean.requireForce
// is off, which the checker cannot see, so it counts anyway.
func (inv *invocation) gitClean() {
	opts, operands := parseOpts(inv.args, optSpec{shortArgs: "e", longArgs: []string{"exclude"}})
	if has(opts, "n", "dry-run") {
		return
	}
	want := Untracked
	switch {
	case has(opts, "X"):
		want = Ignored
	case has(opts, "x"):
		want = Untracked | Ignored
	}
	if len(operands) == 0 {
		operands = []field{textField(".")}
	}
	inv.pathspecs(action{verb: verbClean, deep: true, git: want}, operands)
}

// gitRm removes tracked files (with -r, directories), unless --cached or
// --dry-run.
func (inv *invocation) gitRm() {
	opts, operands := parseOpts(inv.args, optSpec{longArgs: []string{"pathspec-from-file"}})
	if has(opts, "cached", "n", "dry-run") || inv.refuseFromFile(opts) {
		return
	}
	inv.pathspecs(action{verb: verbRemove, deep: has(opts, "r"), git: Tracked | Modified}, operands)
}

// gitCheckout: "git checkout [tree-ish] -- paths" and "git checkout
// paths" overwrite the files with the index's or the tree-ish's version.
// Without "--" git takes the first argument as a branch or commit when it
// is one, else as a path; the checker takes it as both. -f discards every
// change when switching.
func (inv *invocation) gitCheckout() {
	before, after, dashes := splitDashDash(inv.args)
	opts, operands := parseOpts(before, optSpec{shortArgs: "bB", longArgs: []string{"orphan", "conflict", "pathspec-from-file"}})
	if has(opts, "p", "patch") || inv.refuseFromFile(opts) {
		return // -p asks about each change
	}
	force := has(opts, "f", "force")
	discard := action{verb: verbDiscard, deep: true, git: Modified}
	switch {
	case dashes:
		if len(operands) > 0 && !isHead(operands[0]) {
			discard.verb, discard.git = verbOverwrite, Tracked|Modified
		}
		inv.pathspecs(discard, after)
	case force:
		inv.affectRepo(action{verb: verbDiscard, git: Modified})
	case has(opts, "b", "B", "orphan") || len(operands) == 0:
		// a new branch from the current one, or nothing to check out
	case len(operands) == 1:
		inv.pathspecs(discard, operands)
	default:
		if !isHead(operands[0]) {
			discard.verb, discard.git = verbOverwrite, Tracked|Modified
		}
		inv.pathspecs(discard, operands)
	}
}

// gitRestore overwrites the work tree's files with the index's version, or
// with --source another commit's (and removes the files it lacks).
// --staged alone touches only the index.
func (inv *invocation) gitRestore() {
	opts, operands := parseOpts(inv.args, optSpec{shortArgs: "s", longArgs: []string{"source", "conflict", "pathspec-from-file"}})
	if has(opts, "p", "patch") || inv.refuseFromFile(opts) {
		return
	}
	if has(opts, "S", "staged") && !has(opts, "W", "worktree") {
		return
	}
	a := action{verb: verbDiscard, deep: true, git: Modified}
	if src, ok := value(opts, "s", "source"); ok && !isHead(src) {
		a.verb, a.git = verbOverwrite, Tracked|Modified
	}
	inv.pathspecs(a, operands)
}

// gitReset --hard overwrites every tracked file of the work tree: it loses
// changes to modified files and, to another commit, replaces or removes
// tracked files. Untracked files stay. The other modes keep the work tree
// (or, --keep and --merge, refuse to lose changes).
func (inv *invocation) gitReset() {
	opts, operands := parseOpts(inv.args, optSpec{longArgs: []string{"pathspec-from-file"}})
	if !has(opts, "hard") {
		return
	}
	a := action{verb: verbDiscard, git: Modified}
	inv.label = "git reset --hard"
	if len(operands) > 0 && !isHead(operands[0]) {
		a.verb, a.git = verbOverwrite, Tracked|Modified
		if t, ok := operands[0].text(); ok {
			inv.label += " " + shorten(t)
		}
	}
	inv.affectRepo(a)
}

// gitStash (push or save) takes the changes to tracked files out of the
// work tree, with -u the untracked files too, with -a the ignored ones
// too. They can come back with git stash pop, but the loop's next
// iteration would not see them. Other subcommands are allowed.
func (inv *invocation) gitStash() {
	args := inv.args
	sub := "push"
	if len(args) > 0 {
		if t, ok := args[0].literal(); ok && !strings.HasPrefix(t, "-") {
			sub, args = t, args[1:]
		}
	}
	if sub != "push" && sub != "save" {
		return
	}
	before, after, _ := splitDashDash(args)
	opts, operands := parseOpts(before, optSpec{shortArgs: "m", longArgs: []string{"message", "pathspec-from-file"}})
	if has(opts, "p", "patch") || inv.refuseFromFile(opts) {
		return
	}
	a := action{verb: verbStash, deep: true, git: Modified}
	if has(opts, "u", "include-untracked") {
		a.git |= Untracked
	}
	if has(opts, "a", "all") {
		a.git |= Untracked | Ignored
	}
	specs := append(operands, after...)
	if sub == "save" {
		specs = nil // git stash save takes a message, not paths
	}
	if len(specs) == 0 {
		inv.affectRepo(a)
		return
	}
	inv.pathspecs(a, specs)
}
