package cmdcheck

import (
	"errors"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The project every test works in, and the paths superkit's design
// protects in it, in this order.
const project = "/home/agent/app"

var defaultProtected = []string{
	project + "/.loopbreaker/",
	project + "/.ralphrc",
	project + "/IMPLEMENTATION_PLAN.md",
	project + "/AGENTS.md",
	project + "/specs/",
	project + "/.claude/",
	project + "/CLAUDE.md",
	project + "/memory/",
}

// cannotTell in a row's want means a refusal that names no path.
const cannotTell = "?"

type checkRow struct {
	name string
	cmd  string
	want string // "" allowed; cannotTell; else the protected path, relative to project
	why  string // a part of Refusal.Why, when the row checks it
}

func newChecker(t *testing.T, opt Options) *Checker {
	t.Helper()
	if opt.Env == nil {
		opt.Env = map[string]string{"HOME": "/home/agent"}
	}
	g, err := New(defaultProtected, opt)
	require.NoError(t, err)
	return g
}

func runRows(t *testing.T, g *Checker, rows []checkRow) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			got := g.Check(r.cmd, project)
			switch r.want {
			case "":
				assert.Nil(t, got, "%q was refused: %v", r.cmd, got)
				return
			case cannotTell:
				require.NotNil(t, got, "%q was allowed", r.cmd)
				assert.Empty(t, got.Path, "%q: %s", r.cmd, got.Why)
				assert.Contains(t, got.Why, "cannot")
			default:
				require.NotNil(t, got, "%q was allowed", r.cmd)
				assert.Equal(t, project+"/"+r.want, got.Path, "%q: %s", r.cmd, got.Why)
			}
			assert.Contains(t, got.Why, r.why, r.cmd)
			assert.NotEmpty(t, got.Command)
		})
	}
}

func TestCommandsThatDeleteNothingAreAllowed(t *testing.T) {
	runRows(t, newChecker(t, Options{}), []checkRow{
		{"listing", "ls -la specs/", "", ""},
		{"reading", "cat AGENTS.md IMPLEMENTATION_PLAN.md", "", ""},
		{"searching", "grep -rn TODO specs/ | head -20", "", ""},
		{"testing", "go test ./... 2>&1 | tail -30", "", ""},
		{"npm test", "npm test -- --watch=false", "", ""},
		{"git status and diff", "git status --short && git diff --stat", "", ""},
		{"committing", "git add -A && git commit -m 'Update plan: mark task 3 done'", "", ""},
		{"appending to the plan", "echo '- [x] parser' >> IMPLEMENTATION_PLAN.md", "", ""},
		{"appending through tee -a", "echo done | tee -a IMPLEMENTATION_PLAN.md", "", ""},
		{"editing in place is an edit, not a delete", "sed -i 's/TODO/DONE/' IMPLEMENTATION_PLAN.md", "", ""},
		{"discarding output", "npm run build > /dev/null 2>&1", "", ""},
		{"a substitution where it decides nothing", "echo \"$(date): iteration 4\" >> loop.log", "", ""},
		{"a test with comparison operators", "[[ $count > 3 ]] && echo many", "", ""},
		{"arithmetic", "(( n += 1 )); echo $n", "", ""},
		{"an unknown program", "make clean", "", ""},
		{"a script it cannot see", "bash scripts/cleanup.sh", "", ""},
		{"python deleting files itself", `python -c "import shutil; shutil.rmtree('specs')"`, "", ""},
		{"a program found through $(...)", "$(go env GOPATH)/bin/staticcheck ./...", "", ""},
		{"a here-document to a new file", "cat > notes.md <<'EOF'\nrm -rf specs\nEOF", "", ""},
		{"printing a destructive command", "echo 'rm -rf specs'", "", ""},
		{"a comment", "ls # rm -rf specs", "", ""},
		{"a dry run of git clean", "git clean -n -d", "", ""},
		{"git clean outside protected paths", "git clean -fdx build/", "", ""},
		{"switching branches", "git checkout main && git pull", "", ""},
		{"a new branch", "git checkout -b fix/parser", "", ""},
		{"listing and popping stashes", "git stash list; git stash pop", "", ""},
		{"a mixed reset keeps the work tree", "git reset HEAD~1", "", ""},
		{"git rm --cached keeps the file", "git rm --cached AGENTS.md", "", ""},
		{"git restore --staged keeps the file", "git restore --staged AGENTS.md", "", ""},
		{"git mv --dry-run", "git mv -n AGENTS.md docs/", "", ""},
		{"copying a protected file away", "cp AGENTS.md /tmp/AGENTS.md.bak", "", ""},
		{"a trap cleaning a temporary directory", "trap 'rm -rf /tmp/work' EXIT", "", ""},
		{"ln without -f refuses to replace", "ln -s /tmp/x AGENTS.md", "", ""},
		{"cp -n does not overwrite", "cp -n /tmp/CLAUDE.md .", "", ""},
		{"a commit message from a here-document", "git commit -m \"$(cat <<'EOF'\nfeat: parser\n\nCo-Authored-By: agent\nEOF\n)\"", "", ""},
		{"a pull request body with parentheses", "gh pr create --title x --body \"$(cat <<'EOF'\n- done (really)\nEOF\n)\"", "", ""},
		{"output to a process substitution", "exec > >(tee -a build.log) 2>&1", "", ""},
		{"killing what a pipeline found", "ps aux | grep node | awk '{print $2}' | xargs kill", "", ""},
		{"a case on the platform", "case \"$OSTYPE\" in darwin*) brew install jq;; *) apt-get install -y jq;; esac", "", ""},
		{"cleaning build output", "rm -rf build/ dist/ *.egg-info .pytest_cache __pycache__", "", ""},
		{"cleaning a cache in home", "rm -rf ~/.cache/pip", "", ""},
		{"sed -i on sources, then removing the backups", "sed -i.bak 's/foo/bar/g' src/*.go && rm src/*.go.bak", "", ""},
		{"archiving protected files", "tar -czf /tmp/backup.tgz specs/ AGENTS.md", "", ""},
		{"a cd that cannot be followed, then nothing destructive", "cd \"$(git rev-parse --show-toplevel)\" && make", "", ""},
	})
}

func TestRemovingAProtectedPathIsRefused(t *testing.T) {
	runRows(t, newChecker(t, Options{}), []checkRow{
		{"a protected directory", "rm -rf specs", "specs", "rm -rf removes protected " + project + "/specs"},
		{"a protected file", "rm AGENTS.md", "AGENTS.md", "rm removes protected"},
		{"after --", "rm -f -- CLAUDE.md", "CLAUDE.md", ""},
		{"options after the operand, as GNU rm allows", "rm specs -r", "specs", ""},
		{"long options", "rm --recursive --force .", ".loopbreaker", "which holds"},
		{"an abbreviated long option", "rm --recur ..", ".loopbreaker", ""},
		{"a file inside a protected directory", "rm -r specs/old", "specs", "inside protected " + project + "/specs"},
		{"an absolute path", "rm -rf /home/agent/app/.claude", ".claude", ""},
		{"a path through ..", "rm -rf build/../specs", "specs", ""},
		{"a glob matching protected files", "rm *.md", "IMPLEMENTATION_PLAN.md", "may remove " + project + "/*.md, which matches"},
		{"a glob matching a protected directory", "rm -rf spec*", "specs", ""},
		{"a glob in a quoted word stays literal", "rm -f 'spec*'", "", ""},
		{"braces", "rm -rf {build,specs}", "specs", ""},
		{"the current directory", "rm -rf .", ".loopbreaker", "which holds protected"},
		{"the parent directory", "rm -rf ..", ".loopbreaker", "removes /home/agent, which holds"},
		{"the root", "rm -rf /", ".loopbreaker", ""},
		{"everything in the project", "rm -rf *", ".loopbreaker", ""},
		{"dot files", "rm -rf .??*", ".loopbreaker", ""},
		{"rm without -r, on what may be a file", "rm -f specs", "specs", ""},
		{"rmdir", "rmdir memory", "memory", ""},
		{"rmdir -p removes the parents as written", "rmdir -p specs/old/empty", "specs", ""},
		{"unlink", "unlink .ralphrc", ".ralphrc", ""},
		{"shred overwrites", "shred CLAUDE.md", "CLAUDE.md", "shreds"},
		{"shred -u", "shred -u -n 3 CLAUDE.md", "CLAUDE.md", "removes"},
		{"rimraf through npx", "npx rimraf specs", "specs", ""},
		{"trash", "trash .claude", ".claude", ""},
	})
}

func TestTheWorkingDirectoryIsFollowed(t *testing.T) {
	runRows(t, newChecker(t, Options{}), []checkRow{
		{"cd into a build directory first", "cd build && rm -rf *", "", ""},
		{"cd into a protected directory", "cd specs && rm old.md", "specs", ""},
		{"a failed cd leaves rm where it started", "cd build; rm -rf *", ".loopbreaker", ""},
		{"set -e stops after a failed cd", "set -e; cd build; rm -rf *", "", ""},
		{"set -o errexit too", "set -euo pipefail\ncd build\nrm -rf *", "", ""},
		{"cd || exit", "cd /tmp/work || exit 1; rm -rf *", "", ""},
		{"cd in a subshell does not last", "(cd build && make); rm -rf *", ".loopbreaker", ""},
		{"cd in a pipeline does not last", "cd build | cat; rm -f AGENTS.md", "AGENTS.md", ""},
		{"cd ..", "cd build/.. && rm -rf specs", "specs", ""},
		{"cd to an absolute path", "cd /tmp && rm -rf *", "", ""},
		{"cd alone goes home", "cd && rm -rf app/specs", "specs", ""},
		{"git -C", "git -C /tmp/other clean -fdx", "", ""},
		{"sudo -D", "sudo -D /tmp rm -rf *", "", ""},
		{"env -C", "env -C specs rm -f old.md", "specs", ""},
		{"pushd", "pushd /tmp && rm -rf * && popd", "", ""},
		{"after popd the directory is unknown", "pushd /tmp && popd && rm -rf build", cannotTell, "where popd goes"},
		{"a cd the checker cannot follow", "cd $TARGET && rm -rf build", cannotTell, "where cd goes (what $TARGET holds)"},
		{"cd -", "cd - && rm -rf build", cannotTell, ""},
		{"an absolute path needs no directory", "cd $TARGET && rm -rf /tmp/x", "", ""},
		{"if with an else", "if cd build; then rm -rf *; else echo no build; fi", "", ""},
		{"if without a cd", "if [ -d build ]; then rm -rf build; fi", "", ""},
		{"a loop over literal words", "for d in build dist; do rm -rf $d; done", "", ""},
		{"a loop that reaches a protected path", "for d in build specs; do rm -rf \"$d\"; done", "specs", ""},
		{"a loop over a glob", "for f in *.md; do rm \"$f\"; done", "IMPLEMENTATION_PLAN.md", ""},
		{"a variable set before", "X=specs; rm -rf $X", "specs", ""},
		{"export", "export OUT=dist && rm -rf \"$OUT\"", "", ""},
		{"a variable set for the command only does not count", "DIR=build rm -rf $DIR", cannotTell, ""},
		{"$HOME", "rm -rf \"$HOME/.cache/go-build\"", "", ""},
		{"$PWD", "rm -rf $PWD/specs", "specs", ""},
		{"a function", "cleanup() { rm -rf \"$1\"; }; cleanup build", "", ""},
		{"a function given a protected path", "cleanup() { rm -rf \"$1\"; }; cleanup specs", "specs", ""},
		{"a function that returns early", "f() { rm -rf build; return 0; }; f; rm -rf specs", "specs", ""},
		{"code after return in a function does not run", "f() { return; rm -rf specs; }; f", "", ""},
		{"return outside a function does not end the line", "return; rm -rf specs", "specs", ""},
		{"logout in a shell that is not a login shell goes on", "logout; rm -rf specs", "specs", ""},
		{"exit ends the line", "exit 0; rm -rf specs", "", ""},
		{"case", "case $1 in clean) rm -rf build;; all) rm -rf specs;; esac", "specs", ""},
		{"while read", "while read f; do rm \"$f\"; done < files.txt", cannotTell, ""},
	})
}

func TestExpansionsThatDecideTheTargetCannotBeTold(t *testing.T) {
	runRows(t, newChecker(t, Options{}), []checkRow{
		{"a variable", `rm -rf "$DIR"`, cannotTell, "cannot tell what $DIR holds, so cannot tell what rm -rf would remove"},
		{"a command substitution", "rm -rf $(cat dirs.txt)", cannotTell, "what $(cat dirs.txt) expands to"},
		{"backquotes", "rm -rf `ls`", cannotTell, ""},
		{"a default value", "rm -rf ${BUILD_DIR:-build}", cannotTell, ""},
		{"a redirection to a variable", "echo hi > $LOG", cannotTell, ""},
		{"a positional parameter", "rm -rf $1", cannotTell, ""},
		{"another user's home", "rm -rf ~bob/tmp", cannotTell, ""},
		{"xargs without a known input", "cat files.txt | xargs rm -f", cannotTell, "what xargs passes to rm"},
		{"xargs reading a file", "xargs rm < list.txt", cannotTell, ""},
		{"eval of a variable", `eval "$CMD"`, cannotTell, "eval"},
		{"bash -c of a variable", `bash -c "$CMD"`, cannotTell, ""},
		{"options that may be hidden in a variable", "rm $FLAGS build", cannotTell, ""},
		{"env -S", "env -S 'rm -rf specs'", cannotTell, ""},
		{"pathspecs from a file", "git rm --pathspec-from-file=paths.txt", cannotTell, ""},
	})
	g := newChecker(t, Options{})
	r := g.Check("rm -rf build", "")
	require.NotNil(t, r)
	assert.Contains(t, r.Why, "cannot tell the working directory (none given)")
	assert.Nil(t, g.Check("rm -rf /tmp/build", "relative/dir"))
}

func TestCommandsThatRunOtherCommandsAreLookedInto(t *testing.T) {
	runRows(t, newChecker(t, Options{}), []checkRow{
		{"sudo", "sudo rm -rf specs", "specs", ""},
		{"sudo with options", "sudo -u root -E rm -rf specs", "specs", ""},
		{"sudo -i starts elsewhere", "sudo -i rm -rf build", cannotTell, ""},
		{"sudo -l runs nothing", "sudo -l rm -rf specs", "", ""},
		{"env", "env FOO=1 rm -rf specs", "specs", ""},
		{"nice", "nice -n 10 rm -rf specs", "specs", ""},
		{"nohup in the background", "nohup rm -rf specs > /dev/null &", "specs", ""},
		{"timeout", "timeout 10 rm -rf specs", "specs", ""},
		{"timeout with options", "timeout -s KILL -k 5 30s rm -rf specs", "specs", ""},
		{"command", "command rm -rf specs", "specs", ""},
		{"command -v runs nothing", "command -v rm", "", ""},
		{"exec", "exec rm -rf specs", "specs", ""},
		{"time", "time rm -rf specs", "specs", ""},
		{"an escaped name", `\rm -rf specs`, "specs", ""},
		{"a full path", "/bin/rm -rf specs", "specs", ""},
		{"busybox", "busybox rm -rf specs", "specs", ""},
		{"xargs rm with find's paths", "find . -name '*.o' | xargs rm", ".loopbreaker", "rm may remove what protected " + project + "/.loopbreaker holds"},
		{"xargs rm with paths from a build directory", "find build -name '*.o' -print0 | xargs -0 rm -f", "", ""},
		{"xargs with ls's names", "ls | xargs rm", ".loopbreaker", ""},
		{"xargs -I", "find build -name '*.tmp' | xargs -I{} mv {} /tmp/", "", ""},
		{"xargs that only reads", "find . -name '*.go' | xargs grep -l TODO", "", ""},
		{"bash -c", "bash -c 'rm -rf specs'", "specs", ""},
		{"sh -c with cd", `sh -c "cd specs && rm -f *"`, "specs", ""},
		{"bash -lc", "bash -lc 'rm -rf build'", "", ""},
		{"bash -c with positional parameters", "bash -c 'rm -rf \"$1\"' _ specs", "specs", ""},
		{"bash -e -c", "bash -ec 'cd build; rm -rf *'", "", ""},
		{"a script on standard input", "bash <<'EOF'\ncd specs\nrm -f *.md\nEOF", "specs", ""},
		{"a here-string", "sh <<< 'rm AGENTS.md'", "AGENTS.md", ""},
		{"eval of literal text", "eval 'rm -rf specs'", "specs", ""},
		{"eval joins its words", "eval rm -rf specs", "specs", ""},
		{"a command substitution runs", "echo $(rm -rf specs)", "specs", ""},
		{"backquotes run", "echo `rm AGENTS.md`", "AGENTS.md", ""},
		{"an assignment's substitution runs", "x=$(rm -rf specs)", "specs", ""},
		{"process substitution runs", "diff <(rm -rf specs) /dev/null", "specs", ""},
		{"a substitution in a here-document runs", "cat <<EOF\n$(rm -rf specs)\nEOF", "specs", ""},
		{"a trap", "trap 'rm -rf specs' EXIT", "specs", ""},
		{"watch", "watch -n 5 rm -rf specs", "specs", ""},
		{"a program that cannot be known, given a protected path", "$RM -rf specs", "specs", "cannot tell what $RM holds (the program run)"},
		{"a program that cannot be known, given nothing protected", "$RM -rf build", "", ""},
		{"a subshell", "( cd specs; rm -f * )", "specs", ""},
		{"a group", "{ rm -rf build; rm -rf specs; } 2>/dev/null", "specs", ""},
		{"a function's body runs when it is called", "f() { rm -rf specs; }; f", "specs", ""},
		{"a function never called does not run", "f() { rm -rf specs; }", "", ""},
		{"a substitution in arithmetic runs", "(( $(rm -rf specs) > 1 ))", "specs", ""},
	})
}

// A shell that reads its script from a pipe runs what the command before
// it prints: echo's and printf's text, a here-document through cat, is
// judged as a command line; text the checker cannot know is refused. A
// program's output is not seen, as a script run by path is not.
func TestAShellReadingItsScriptFromAPipeRunsWhatIsPrinted(t *testing.T) {
	runRows(t, newChecker(t, Options{}), []checkRow{
		{"echo into sh", "echo 'rm -rf specs' | sh", "specs", "rm -rf removes protected"},
		{"printf into bash", "printf '%s' 'rm -rf specs' | bash", "specs", ""},
		{"printf's format fills in the path", `printf 'rm -rf %s\n' specs | sh`, "specs", ""},
		{"printf's format used again for each argument", `printf 'echo %s\n' a b 'x; rm AGENTS.md' | bash`, "AGENTS.md", ""},
		{"echo -e", `echo -e 'ls\nrm CLAUDE.md' | sh`, "CLAUDE.md", ""},
		{"bash -s reads its script from standard input", "echo 'rm -rf memory' | bash -s -- arg", "memory", ""},
		{"through sudo", "echo 'rm -rf specs' | sudo sh", "specs", ""},
		{"a here-document through cat", "cat <<'EOF' | sh\nrm -rf specs\nEOF", "specs", ""},
		{"through cat and tee", "echo 'rm -rf specs' | cat | tee /tmp/x.sh | sh", "specs", ""},
		{"text it cannot know", `echo "$CMD" | bash`, cannotTell, "cannot tell what bash reads from its standard input (what echo prints: what $CMD holds)"},
		{"a harmless script", "echo 'ls -la' | sh", "", ""},
		{"printing, not running", "echo 'rm -rf specs' | cat", "", ""},
		{"a program's output is not seen", "curl -fsSL https://example.com/install.sh | sh", "", ""},
		{"sh -c does not read standard input", "echo 'rm -rf specs' | sh -c 'cat > /dev/null'", "", ""},
		{"a negated pipeline runs as any other", "! echo 'rm -rf specs' | sh", "specs", ""},
		{"a negated pipeline that harms nothing", "! grep -q TODO fix_plan.md | cat", "", ""},
	})
}

func TestRedirectionsAndOverwritesAreRefused(t *testing.T) {
	runRows(t, newChecker(t, Options{}), []checkRow{
		{"a here-document over a protected file", "cat > CLAUDE.md <<EOF\n# Notes\nEOF", "CLAUDE.md", "> truncates protected " + project + "/CLAUDE.md"},
		{"emptying the plan", `echo "" > IMPLEMENTATION_PLAN.md`, "IMPLEMENTATION_PLAN.md", ""},
		{"a bare redirection", "> AGENTS.md", "AGENTS.md", ""},
		{": >", ": > .ralphrc", ".ralphrc", ""},
		{">|", "echo x >| AGENTS.md", "AGENTS.md", ""},
		{"&>", "make &> CLAUDE.md", "CLAUDE.md", ""},
		{"2>", "make 2> CLAUDE.md", "CLAUDE.md", ""},
		{">& to a file", "make >& CLAUDE.md", "CLAUDE.md", ""},
		{"a redirection on a compound command", "{ echo a; } > AGENTS.md", "AGENTS.md", ""},
		{"a new file inside a protected directory", "echo x > specs/new.md", "specs", ""},
		{"tee", "echo x | tee CLAUDE.md", "CLAUDE.md", ""},
		{"truncate", "truncate -s 0 IMPLEMENTATION_PLAN.md", "IMPLEMENTATION_PLAN.md", ""},
		{"dd", "dd if=/dev/zero of=AGENTS.md bs=1k count=1", "AGENTS.md", ""},
		{"mv away", "mv AGENTS.md AGENTS.md.bak", "AGENTS.md", "mv moves protected"},
		{"mv a directory away", "mv specs specs.old", "specs", ""},
		{"mv onto the plan", "mv /tmp/plan.md IMPLEMENTATION_PLAN.md", "IMPLEMENTATION_PLAN.md", "mv overwrites protected"},
		{"mv -t", "mv -t /tmp AGENTS.md CLAUDE.md", "AGENTS.md", ""},
		{"mv into the project", "mv /tmp/AGENTS.md .", "AGENTS.md", ""},
		{"cp onto a protected file", "cp template.md IMPLEMENTATION_PLAN.md", "IMPLEMENTATION_PLAN.md", "cp overwrites"},
		{"cp into the project", "cp /tmp/CLAUDE.md .", "CLAUDE.md", ""},
		{"cp -r over a protected directory", "cp -r /tmp/backup/specs .", "specs", ""},
		{"cp -t", "cp -t . /tmp/CLAUDE.md", "CLAUDE.md", ""},
		{"ln -sf", "ln -sf /tmp/AGENTS.md AGENTS.md", "AGENTS.md", ""},
		{"ln -sf with one operand", "ln -sf /tmp/x/AGENTS.md", "AGENTS.md", ""},
		{"install", "install -m 644 /tmp/CLAUDE.md CLAUDE.md", "CLAUDE.md", ""},
		{"rsync --delete", "rsync -a --delete /tmp/clean/ ./", ".loopbreaker", "rsync -a --delete removes"},
		{"rsync over the project", "rsync -av /tmp/backup/ .", ".loopbreaker", ""},
		{"rsync elsewhere", "rsync -a --delete ./ /backup/app/", "", ""},
		{"rsync --remove-source-files", "rsync -a --remove-source-files specs/ /tmp/specs/", "specs", ""},
		{"find -fprint", "find . -name '*.go' -fprint AGENTS.md", "AGENTS.md", ""},
		{"time -o", "/usr/bin/time -o CLAUDE.md make", "CLAUDE.md", ""},
	})
}

// sed -i, editing in place, is an edit; a script that empties the file or
// cuts it short (d of every line, a range to the end, q, -n keeping only
// what it prints) loses it, as > does, and so does renaming.
func TestTruncatingOrRenamingAProtectedFileIsRefused(t *testing.T) {
	runRows(t, newChecker(t, Options{}), []checkRow{
		{"sed -i d", "sed -i d IMPLEMENTATION_PLAN.md", "IMPLEMENTATION_PLAN.md", "sed -i deletes lines of protected " + project + "/IMPLEMENTATION_PLAN.md (d of every line)"},
		{"sed -i 1,$d", "sed -i '1,$d' CLAUDE.md", "CLAUDE.md", ""},
		{"a range to the end", "sed -i '2,$d' CLAUDE.md", "CLAUDE.md", ""},
		{"every line but those picked", `sed -i '/^#/!d' AGENTS.md`, "AGENTS.md", "(d of every line the address does not pick)"},
		{"one of several scripts", "sed -i -e 's/a/b/' -e d specs/api.md", "specs", ""},
		{"in a block", "sed -i '{s/a/b/;d}' CLAUDE.md", "CLAUDE.md", ""},
		{"q cuts the rest", "sed -i 10q IMPLEMENTATION_PLAN.md", "IMPLEMENTATION_PLAN.md", "(q drops the lines after it)"},
		{"-n keeps only what it prints", "sed -n -i '/keep/p' AGENTS.md", "AGENTS.md", "(-n: only the lines it prints are kept)"},
		{"c of every line", `sed -i 'c\' CLAUDE.md`, "CLAUDE.md", ""},
		{"a script in a file", "sed -i -f fix.sed CLAUDE.md", "CLAUDE.md", "may delete lines of"},
		{"w writes a file", "sed -n '/TODO/w CLAUDE.md' notes.md", "CLAUDE.md", "sed -n truncates protected"},
		{"e runs a command", "sed '1e rm -rf specs' notes.md", "specs", "rm -rf removes protected"},
		{"an edit", "sed -i 's/TODO/DONE/g' IMPLEMENTATION_PLAN.md", "", ""},
		{"deleting the lines picked is an edit", `sed -i '/^- \[x\]/d' IMPLEMENTATION_PLAN.md`, "", ""},
		{"deleting one line is an edit", "sed -i '3d' CLAUDE.md", "", ""},
		{"deleting a range is an edit", "sed -i '10,20d' CLAUDE.md", "", ""},
		{"appending a line", `sed -i '$a\- [ ] docs' IMPLEMENTATION_PLAN.md`, "", ""},
		{"d in a file that is not protected", "sed -i d notes.md", "", ""},
		{"perl's rename", "rename 's/md/bak/' *.md", "IMPLEMENTATION_PLAN.md", "rename may move " + project + "/*.md"},
		{"util-linux's rename", "rename .md .bak CLAUDE.md", "CLAUDE.md", ""},
		{"prename of a folder", "prename 's/specs/old-specs/' specs", "specs", ""},
		{"rename -n changes nothing", "rename -n 's/md/bak/' *.md", "", ""},
		{"rename elsewhere", "rename 's/txt/md/' notes/*.txt", "", ""},
	})
}

// projectFiles are the protected files and folders of the project, as a
// Guard's stock knows them.
func projectFiles() []File {
	var files []File
	for _, f := range []string{".loopbreaker/", ".loopbreaker/loop.json", ".loopbreaker/protected/", ".ralphrc", "IMPLEMENTATION_PLAN.md",
		"AGENTS.md", "specs/", "specs/api.md", "specs/parser.md", ".claude/", ".claude/settings.json", "CLAUDE.md", "memory/", "memory/learnings.md"} {
		kind := byte('f')
		if strings.HasSuffix(f, "/") {
			kind = 'd'
		}
		files = append(files, File{Path: project + "/" + strings.TrimSuffix(f, "/"), Type: kind})
	}
	return files
}

// find's tests say what it deletes, or hands to -exec or xargs: it is
// refused only when a protected file or folder, or a folder that holds
// one, can match them.
func TestFindRemovesOnlyWhatItsTestsMatch(t *testing.T) {
	runRows(t, newChecker(t, Options{Files: projectFiles}), []checkRow{
		{"compiled Python files", "find . -name '*.pyc' -delete", "", ""},
		{"caches", "find . -type d -name __pycache__ -exec rm -rf {} +", "", ""},
		{"-exec sh -c on temporary files", "find . -name '*.tmp' -exec sh -c 'rm \"$1\"' _ {} \\;", "", ""},
		{"logs from .", "find -name '*.log' -delete", "", ""},
		{"object files through xargs", "find . -name '*.o' | xargs rm", "", ""},
		{"the manual by name", "find . -name AGENTS.md -delete", "AGENTS.md", "find -delete removes protected " + project + "/AGENTS.md"},
		{"Markdown", "find . -name '*.md' -delete", "IMPLEMENTATION_PLAN.md", ""},
		{"Markdown through xargs", "find . -name '*.md' -print0 | xargs -0 rm -f", "IMPLEMENTATION_PLAN.md", ""},
		{"case-insensitive names", "find . -iname 'claude.MD' -delete", "CLAUDE.md", ""},
		{"a bracket that excludes", "find . -maxdepth 1 -name '[!A-Z]*' -delete", ".loopbreaker", ""},
		{"a bracket that excludes every protected name", "find . -maxdepth 1 -name '[!.A-Za-z]*' -delete", "", ""},
		{"every file", "find . -type f -delete", ".loopbreaker", "find -delete removes " + project + "/.loopbreaker/loop.json, inside protected"},
		{"a folder by name, with what it holds", "find . -maxdepth 1 -name 'spec*' -exec rm -rf {} +", "specs", ""},
		{"a folder holding protected ones", "find /home -name agent -type d -exec rm -rf {} +", ".loopbreaker", "which holds protected"},
		{"by path", "find . -path './.claude/*' -delete", ".claude", ""},
		{"below a depth", "find . -mindepth 2 -name '*.md' -delete", "specs", ""},
		{"above a depth", "find . -maxdepth 1 -name '*.json' -delete", "", ""},
		{"either name", "find . \\( -name '*.pyc' -o -name '*.md' \\) -delete", "IMPLEMENTATION_PLAN.md", ""},
		{"-o binds looser than the implicit -a", "find . -name '*.md' -o -name '*.pyc' -delete", "", ""},
		{"everything but Go files", "find . ! -name '*.go' -delete", ".loopbreaker", ""},
		{"a test it does not read", "find . -newer go.mod -delete", ".loopbreaker", "may remove"},
		{"a pruned folder is not entered", "find . -path ./.claude -prune -o -name '*.json' -exec rm {} +", ".loopbreaker", ""},
		{"prune and a folder with no protected json", "find . \\( -path ./.claude -o -path ./.loopbreaker \\) -prune -o -name '*.json' -exec rm {} +", "", ""},
		{"-delete ignores -prune", "find . -path ./.claude -prune -o -name '*.json' -delete", ".loopbreaker", ""},
		{"a protected folder itself", "find " + project + "/memory -delete", "memory", "find -delete removes protected " + project + "/memory"},
		{"inside a protected folder, nothing of it matches", "find specs -name '*.bak' -delete", "", ""},
		{"a build directory", "find build -name '*.o' -delete", "", ""},
		{"a starting point that cannot be known", "find $OUT -delete", cannotTell, ""},
		{"a name that cannot be known", "find . -name \"$PAT\" -delete", cannotTell, "cannot tell what $PAT holds"},
	})
}

// Without the protected files (Options.Files), what a protected folder
// holds may be named anything: a find whose tests can match some name
// there is refused.
func TestFindWithoutTheProtectedFilesTakesAnyNameInAProtectedFolder(t *testing.T) {
	runRows(t, newChecker(t, Options{}), []checkRow{
		{"-delete from the project", "find . -name '*.pyc' -delete", ".loopbreaker", "find -delete may remove what protected " + project + "/.loopbreaker holds (its files are not known)"},
		{"-exec rm from the project", "find . -type d -name __pycache__ -exec rm -rf {} +", ".loopbreaker", ""},
		{"-delete of a protected directory", "find specs -name '*.bak' -delete", "specs", "what protected " + project + "/specs holds"},
		{"-delete inside a protected directory", "find specs/old -delete", "specs", ""},
		{"-delete from a protected directory itself", "find " + project + "/memory -delete", "memory", "find -delete removes protected " + project + "/memory"},
		{"-delete of a protected file by name", "find . -maxdepth 1 -name CLAUDE.md -delete", "CLAUDE.md", ""},
		{"-delete in a build directory", "find build -name '*.o' -delete", "", ""},
		{"-exec that only reads", "find . -name '*.md' -exec grep -l TODO {} \\;", "", ""},
		{"-exec sh -c", "find . -name '*.tmp' -exec sh -c 'rm \"$1\"' _ {} \\;", ".loopbreaker", ""},
		{"-execdir", "find build -name '*.o' -execdir rm {} \\;", "", ""},
		{"no starting point is .", "find -name '*.log' -delete", ".loopbreaker", ""},
		{"a starting point that cannot be known", "find $OUT -delete", cannotTell, ""},
	})
}

func TestGitCommandsWithoutGitStateAssumeTheWorst(t *testing.T) {
	runRows(t, newChecker(t, Options{}), []checkRow{
		{"git clean -fdx", "git clean -fdx", ".loopbreaker", "git clean -fdx cleans " + project + ", which holds protected " + project + "/.loopbreaker (its git state is not known)"},
		{"git clean -fd under a protected directory", "git clean -fd specs/", "specs", ""},
		{"git clean without -f may still run", "git clean -d", ".loopbreaker", ""},
		{"git checkout .", "git checkout .", ".loopbreaker", "discards changes in"},
		{"git checkout -- .", "git checkout -- .", ".loopbreaker", ""},
		{"git checkout -- file", "git checkout -- AGENTS.md", "AGENTS.md", ""},
		{"git checkout file", "git checkout IMPLEMENTATION_PLAN.md", "IMPLEMENTATION_PLAN.md", ""},
		{"git checkout HEAD -- file", "git checkout HEAD -- IMPLEMENTATION_PLAN.md", "IMPLEMENTATION_PLAN.md", "discards changes in"},
		{"git checkout another commit -- file", "git checkout origin/main -- specs/api.md", "specs", "overwrites"},
		{"git checkout -f", "git checkout -f main", ".loopbreaker", ""},
		{"git checkout with a glob pathspec", "git checkout -- '*.md'", ".loopbreaker", ""},
		{"git checkout with a glob pathspec in a directory", "git checkout -- 'docs/*.md'", "", ""},
		{"git checkout with :/", "git checkout -- :/", ".loopbreaker", ""},
		{"git restore", "git restore IMPLEMENTATION_PLAN.md", "IMPLEMENTATION_PLAN.md", ""},
		{"git restore --source", "git restore --source=HEAD~3 .", ".loopbreaker", "overwrites"},
		{"git reset --hard", "git reset --hard", ".loopbreaker", "git reset --hard discards changes in protected"},
		{"git reset --hard to another commit", "git reset --hard HEAD~1", ".loopbreaker", "git reset --hard HEAD~1 overwrites protected"},
		{"git stash", "git stash", ".loopbreaker", "stashes"},
		{"git stash -u", "git stash -u", ".loopbreaker", ""},
		{"git stash push with a pathspec", "git stash push -m wip -- specs", "specs", ""},
		{"git stash save takes a message", "git stash save 'try something'", ".loopbreaker", ""},
		{"git rm -r", "git rm -r specs", "specs", ""},
		{"git rm", "git rm -q AGENTS.md", "AGENTS.md", ""},
		{"git rm of a glob", "git rm '*.md'", ".loopbreaker", ""},
		{"git switch --discard-changes", "git switch --discard-changes main", ".loopbreaker", ""},
		{"git mv", "git mv AGENTS.md docs/", "AGENTS.md", ""},
		{"git worktree remove", "git worktree remove --force .", ".loopbreaker", ""},
		{"git with global options", "git -c core.quotepath=off --no-pager clean -f specs", "specs", ""},
	})
}

// gitStates answers Options.Git from a table; paths not in it hold nothing.
func gitStates(states map[string]GitState) func(string) (GitState, error) {
	return func(p string) (GitState, error) {
		for k, s := range states {
			if p == project+"/"+k || strings.HasPrefix(p, project+"/"+k+"/") {
				return s, nil
			}
		}
		return 0, nil
	}
}

func TestGitCommandsCountOnlyTheFilesGitWouldTouch(t *testing.T) {
	// The loop's state is ignored, the plan is modified, the rest are tracked.
	g := newChecker(t, Options{Git: gitStates(map[string]GitState{
		".loopbreaker":           Ignored,
		"IMPLEMENTATION_PLAN.md": Tracked | Modified,
		"AGENTS.md":              Tracked,
		"specs":                  Tracked,
		"CLAUDE.md":              Tracked,
		".claude":                Tracked | Untracked,
	})})
	runRows(t, g, []checkRow{
		{"git clean -f leaves tracked and ignored files", "git clean -f", ".claude", "(untracked)"},
		{"git clean -fd in a tracked directory", "git clean -fd specs/", "", ""},
		{"git clean -fdX removes ignored files", "git clean -fdX", ".loopbreaker", "(ignored)"},
		{"git clean -fdx removes both", "git clean -fdx", ".loopbreaker", ""},
		{"git checkout . loses the plan's changes", "git checkout .", "IMPLEMENTATION_PLAN.md", "(modified)"},
		{"git checkout -- of an unmodified file", "git checkout -- AGENTS.md", "", ""},
		{"git checkout of another commit overwrites tracked files", "git checkout HEAD~2 -- AGENTS.md", "AGENTS.md", "(tracked)"},
		{"git stash takes the plan's changes", "git stash", "IMPLEMENTATION_PLAN.md", ""},
		{"git stash -u takes untracked files too", "git stash push -u -- .claude", ".claude", ""},
		{"git stash of unmodified paths", "git stash push -- specs AGENTS.md", "", ""},
		{"git reset --hard loses the plan's changes", "git reset --hard", "IMPLEMENTATION_PLAN.md", ""},
		{"git rm of an untracked path does nothing", "git rm -r .loopbreaker", "", ""},
		{"git rm of a tracked file", "git rm CLAUDE.md", "CLAUDE.md", "(tracked)"},
		{"git restore of an unmodified directory", "git restore specs", "", ""},
	})

	clean := newChecker(t, Options{Git: gitStates(map[string]GitState{".loopbreaker": Ignored})})
	assert.Nil(t, clean.Check("git stash -u && git reset --hard HEAD && git clean -fd", project),
		"nothing modified or untracked: nothing to lose")

	failing := newChecker(t, Options{Git: func(string) (GitState, error) { return 0, errors.New("not a git repository") }})
	r := failing.Check("git clean -fd", project)
	require.NotNil(t, r)
	assert.Contains(t, r.Why, "(git cannot tell: not a git repository)")
}

// fakeStat answers Options.Stat: dirs are directories, files files, the
// rest do not exist.
func fakeStat(dirs, files []string) func(string) (fs.FileInfo, error) {
	return func(p string) (fs.FileInfo, error) {
		for _, d := range dirs {
			if p == project+"/"+d || p == d {
				return fakeInfo{dir: true}, nil
			}
		}
		for _, f := range files {
			if p == project+"/"+f {
				return fakeInfo{}, nil
			}
		}
		return nil, fs.ErrNotExist
	}
}

type fakeInfo struct{ dir bool }

func (f fakeInfo) Name() string       { return "" }
func (f fakeInfo) Size() int64        { return 0 }
func (f fakeInfo) Mode() fs.FileMode  { return 0 }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.dir }
func (f fakeInfo) Sys() any           { return nil }

func TestWritingANewFileLosesNothing(t *testing.T) {
	g := newChecker(t, Options{Stat: fakeStat(
		[]string{"specs", "docs", "/tmp", project},
		[]string{"AGENTS.md", "IMPLEMENTATION_PLAN.md", "specs/api.md", "docs/AGENTS.md"})})
	runRows(t, g, []checkRow{
		{"a new spec", "cp draft.md specs/search.md", "", ""},
		{"a new spec through >", "cat > specs/search.md <<'EOF'\n# Search\nEOF", "", ""},
		{"an existing spec", "cp draft.md specs/api.md", "specs", "cp overwrites " + project + "/specs/api.md, inside protected"},
		{"mv into a protected directory, no file of that name", "mv draft.md specs/", "", ""},
		{"mv into a directory that holds a file of that name", "mv docs/AGENTS.md .", "AGENTS.md", ""},
		{"cp onto a directory goes into it", "cp notes.md docs", "", ""},
		{"a new CLAUDE.md", "echo '# Notes' > CLAUDE.md", "", ""},
		{"the existing plan", "echo '' > IMPLEMENTATION_PLAN.md", "IMPLEMENTATION_PLAN.md", ""},
		{"a glob cannot be asked about", "echo x > spec?/api.md", "specs", ""},
	})
}

func TestReadOnlyPathsRefuseEditsToo(t *testing.T) {
	g, err := New(defaultProtected, Options{ReadOnly: []string{project + "/AGENTS.md"}})
	require.NoError(t, err)
	runRows(t, g, []checkRow{
		{"sed -i", "sed -i 's/a/b/' AGENTS.md", "AGENTS.md", "sed -i edits read-only " + project + "/AGENTS.md"},
		{"BSD sed -i ''", "sed -i '' -e 's/a/b/' AGENTS.md", "AGENTS.md", ""},
		{"sed --in-place", "sed --in-place=.bak -E 's/a/b/' README.md AGENTS.md", "AGENTS.md", ""},
		{"sed without -i only reads", "sed -n '1,10p' AGENTS.md", "", ""},
		{"perl -pi -e", "perl -pi -e 's/a/b/' AGENTS.md", "AGENTS.md", ""},
		{"perl without -i", "perl -ne 'print' AGENTS.md", "", ""},
		{">>", "echo rule >> AGENTS.md", "AGENTS.md", ""},
		{"tee -a", "echo rule | tee -a AGENTS.md", "AGENTS.md", ""},
		{"an edit of a protected but not read-only file", "sed -i 's/a/b/' CLAUDE.md", "", ""},
		{"deleting is still refused", "rm AGENTS.md", "AGENTS.md", "protected"},
	})
}

func TestOptionsChangeHowPathsCompare(t *testing.T) {
	fold := newChecker(t, Options{IgnoreCase: true})
	r := fold.Check("rm agents.md", project)
	require.NotNil(t, r, "on a case-insensitive file system agents.md is AGENTS.md")
	assert.Equal(t, project+"/AGENTS.md", r.Path)
	assert.Nil(t, newChecker(t, Options{}).Check("rm agents.md", project))

	noHome := newChecker(t, Options{Env: map[string]string{}})
	r = noHome.Check("rm -rf ~/app", project)
	require.NotNil(t, r)
	assert.Contains(t, r.Why, "what ~ stands for (no HOME given)")

	patterns, err := New([]string{project + "/specs/*.md", project + "/[A-Z]*.md"}, Options{})
	require.NoError(t, err)
	assert.NotNil(t, patterns.Check("rm specs/api.md", project))
	assert.Nil(t, patterns.Check("rm specs/api.txt", project))
	assert.NotNil(t, patterns.Check("rm -r specs", project), "specs holds files the pattern protects")
	assert.NotNil(t, patterns.Check("rm README.md", project))
	assert.Nil(t, patterns.Check("rm notes.md", project))
}

func TestNewRejectsRelativePaths(t *testing.T) {
	_, err := New([]string{"specs/"}, Options{})
	assert.ErrorContains(t, err, `"specs/" is not absolute`)
	_, err = New(nil, Options{ReadOnly: []string{""}})
	assert.Error(t, err)
}

func TestCommandLinesTheShellWouldRejectAreRefused(t *testing.T) {
	g := newChecker(t, Options{})
	for _, cmd := range []string{
		"echo 'unterminated",
		`rm -rf "specs`,
		"ls &&",
		"(cd build",
		"echo $(rm -rf specs",
		"rm -rf build\necho \"oops",
	} {
		r := g.Check(cmd, project)
		require.NotNil(t, r, cmd)
		assert.Empty(t, r.Path)
		assert.Contains(t, r.Why, "cannot read the command line", cmd)
	}
}

func TestRefusalNamesTheCommandAsWritten(t *testing.T) {
	g := newChecker(t, Options{})
	tests := []struct{ cmd, command string }{
		{"cd build; rm -rf *", "rm -rf *"},
		{"go test ./... && rm -rf specs && git commit -am x", "rm -rf specs"},
		{"bash -c 'ls; rm -rf specs'", "rm -rf specs"},
		{"cat > CLAUDE.md <<EOF\nx\nEOF", "cat > CLAUDE.md <<EOF"},
		{"sudo -u root rm -rf specs", "sudo -u root rm -rf specs"},
		{"rm -rf $DIR", "rm -rf $DIR"},
		{"echo 'oops", "echo 'oops"},
	}
	for _, tt := range tests {
		r := g.Check(tt.cmd, project)
		require.NotNil(t, r, tt.cmd)
		assert.Equal(t, tt.command, r.Command, tt.cmd)
	}
	assert.Equal(t, "rm -rf specs: rm -rf removes protected "+project+"/specs", g.Check("rm -rf specs", project).String())
}

func TestCheckIsBoundedOnHugeInput(t *testing.T) {
	g := newChecker(t, Options{})
	nested := strings.Repeat("bash -c '", 1) + strings.Repeat("eval ", 40) + "rm -rf specs'"
	assert.NotNil(t, g.Check(nested, project))
	loops := strings.Repeat("for a in 1 2 3 4 5 6 7 8; do ", 8) + "rm -rf build" + strings.Repeat("; done", 8)
	r := g.Check(loops, project)
	require.NotNil(t, r, "8 nested loops of 8 values are more commands than the checker looks at")
	assert.Contains(t, r.Why, "too many commands")
	deep := strings.Repeat("$(", maxNest+2) + strings.Repeat(")", maxNest+2)
	assert.NotNil(t, g.Check("echo "+deep, project))
	funcs := "f() { f; }; f"
	r = g.Check(funcs, project)
	require.NotNil(t, r)
	assert.Contains(t, r.Why, "nested too deeply")
}

func TestGuardIsSafeForConcurrentUse(t *testing.T) {
	g := newChecker(t, Options{Git: gitStates(map[string]GitState{"IMPLEMENTATION_PLAN.md": Tracked | Modified})})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				assert.NotNil(t, g.Check("git stash && rm -rf specs", project))
				assert.Nil(t, g.Check("cd build && rm -rf *", project))
			}
		}()
	}
	wg.Wait()
}
