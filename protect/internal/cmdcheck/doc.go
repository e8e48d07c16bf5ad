// Package cmdcheck checks a shell command line, before it runs, for
// commands that would delete, truncate, move or overwrite a protected path:
// the loop's own state, its plan, its configuration, its memory. It follows
// superkit's hard gate (configuration, plan and memory files are never
// deleted during autonomous operation) for hosts that see an agent's
// commands before they run.
//
//	g, err := cmdcheck.New([]string{"/repo/specs/", "/repo/AGENTS.md"}, cmdcheck.Options{})
//	...
//	if r := g.Check("cd build; rm -rf *", "/repo"); r != nil {
//		// r.Command: "rm -rf *"
//		// r.Why: "rm -rf may remove /repo/*, which matches protected /repo/specs"
//	}
//
// # How it reads a command line
//
// mvdan.cc/sh/v3/syntax parses the line as bash does: quotes,
// backslashes, $'...', here-documents, ;, &&, ||, |, &, (...), { ...; },
// if, while, for, case, functions, [[ ]] and (( )). Words are expanded as
// far as they can be without running anything (mvdan.cc/sh/v3/expand does
// the braces): braces ({a,b}, {1..3}), ~ (from Options.Env's HOME),
// variables the line itself assigns (X=build; rm -rf $X, for d in a b),
// $PWD, and word splitting. Globs are not expanded against the file
// system: a glob touches a protected path when some name could match
// both (rm *.md touches /repo/AGENTS.md; rm -rf spec* touches /repo/specs).
// For that, * is taken to match dot files too, as with bash's dotglob.
//
// The checker follows the shell's state from command to command: cd
// (cd build && rm -rf * is allowed; cd build; rm -rf * is refused, since
// rm runs in the project when cd fails, unless set -e is on or the cd is
// followed by || exit), subshells and pipelines (a cd there does not
// last), and the arguments of functions defined on the line.
//
// # What it refuses
//
// A path is protected with everything under it. A command touches it when
// it acts on the path itself, on a directory that holds it (rm -rf .,
// rm -rf .., rm -rf /, rm -rf ~ when HOME holds the project), or on a path
// inside it (rm specs/old.md when specs/ is protected):
//
//   - rm (recursive with -r, -R, --recursive), rmdir (and the parents of
//     rmdir -p), unlink, shred, trash, rimraf. rm without -r on a protected
//     directory is refused too: the checker cannot tell a directory from a
//     file.
//   - mv: a protected source moves away; a protected destination, or the
//     file of the same name in a destination directory, is overwritten.
//     cp, ln -f, install and rsync overwrite their destination; rsync
//     --delete removes in it.
//   - >, >|, &>, 2> and >& onto a protected file truncate it; tee without
//     -a, truncate and dd of= overwrite it. A file that does not exist yet
//     loses nothing (ask Options.Stat, else every target counts as
//     existing): echo x > specs/new.md is allowed when Stat says the file
//     is new. >> and tee -a append, which is allowed.
//   - find -delete, and find -exec/-execdir/-ok with a command that
//     deletes, when a protected path can match find's tests (-name,
//     -iname, -path, -type, -maxdepth, -mindepth, -prune, !, -o, ( );
//     the others may be true or not): the protected path itself, a file
//     or folder in it (Options.Files; without them, anything it holds),
//     or, for rm -r, a folder that holds it. find . -name '*.pyc' -delete
//     is allowed where no protected file is so named; find . -name
//     '*.md' -delete is refused.
//   - git clean (untracked files; with -x also ignored ones; -X only
//     ignored ones; -n and --dry-run nothing), git rm (tracked files;
//     --cached nothing), git checkout and git restore of paths (lose
//     uncommitted changes; from another commit, overwrite), git checkout -f,
//     git switch --discard-changes, git reset --hard (loses every
//     uncommitted change; to another commit, overwrites tracked files), git
//     stash (uncommitted changes; -u untracked files too; -a ignored ones
//     too), git mv, git worktree remove. With Options.Git, only protected
//     paths git holds in the state the command acts on count; without it,
//     every protected path under the command's reach counts. git clean
//     without -f counts too (clean.requireForce may be off). Plain branch
//     switches (git checkout main, git switch main) are allowed: git
//     refuses to overwrite changes there.
//   - sed -i whose script empties the file or cuts it short (d of every
//     line, a range to $, an address with !, q, -n), and rename (perl's
//     and util-linux's) of a protected path; sed's w writes its file.
//     Deleting the lines an address picks (sed -i '/^- \[x\]/d') is an
//     edit.
//   - Edits (sed -i, perl -i, >>, tee -a) of the paths in Options.ReadOnly.
//     Editing a protected path that is not read-only is allowed: the agent
//     is meant to update its plan, not delete it.
//
// It looks into the commands that run other commands: sudo, doas, env,
// nice, nohup, time, timeout, command, exec, builtin, stdbuf, ionice,
// setsid, busybox, npx, watch, xargs, bash/sh/zsh -c '...', a script given
// to a shell on standard input through a here-document or here-string, or
// through a pipe from echo, printf (its format filled in) or cat of a
// here-document (echo 'rm -rf specs' | sh), eval and trap of literal text, $(...), backquotes, process substitution
// and command substitutions inside here-documents and arithmetic. find's
// output piped into xargs stands for the paths its tests match under its
// starting point, and ls's for the names in the directory.
//
// # What it cannot tell, and refuses
//
// A target that depends on something the checker cannot know is refused,
// with the reason: a variable it has not seen assigned ("cannot tell what
// $DIR holds, so cannot tell what rm -rf would remove"), $(...), backquotes,
// ${X:-default}, $1, ~user, a cd it cannot follow, xargs reading from
// anything but find or ls, eval or bash -c of text it cannot know, a shell
// reading text it cannot know from a pipe (echo "$CMD" | sh), env -S,
// --pathspec-from-file, and loops, functions and $(...) nested past the
// checker's bounds. Expansions where they decide no target are fine:
// echo "$(date)" >> loop.log is allowed.
//
// A command line the shell would reject or wait to complete (an
// unterminated quote, ls &&, an unclosed $( or () is refused: bash runs
// none of a line it cannot parse, or the lines before the broken one, and
// neither outcome is worth the risk of guessing.
//
// # What it cannot see
//
// Only the commands above are judged. Any other program is allowed, even
// though it may delete files itself: make clean, a Makefile target, npm
// scripts, python -c "shutil.rmtree(...)", a script run by path or with
// bash script.sh, an archive extracted over the project, a shell reading
// a program's output (curl ... | sh). Aliases and functions defined outside the command
// line, and source'd scripts, are not seen either (after source, variables
// are unknown). Symbolic links are not followed: rm -rf link/ is judged by
// the link's path. The checker is a first line; the loop's integrity check
// after each iteration (do the protected paths still exist?) is the
// backstop.
package cmdcheck
