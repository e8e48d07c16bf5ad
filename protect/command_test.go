package protect

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitProject is aProject in a git repository, as a loop finds it midway:
// the plan modified since the last commit, the loop's state and memory
// ignored, a local settings file untracked, a build directory.
func gitProject(t testing.TB) string {
	t.Helper()
	requireGit(t)
	root := aProject(t)
	writeFile(t, root, ".gitignore", ".loopbreaker/\nmemory/\nbuild/\n")
	writeFile(t, root, "build/app", "binary")
	gitInit(t, root)
	gitRun(t, root, "add", ".")
	gitRun(t, root, "commit", "-qm", "start")
	writeFile(t, root, "IMPLEMENTATION_PLAN.md", "# Plan\n- [x] parser\n- [x] printer\n")
	writeFile(t, root, ".claude/settings.local.json", "{}")
	writeFile(t, root, ".loopbreaker/loop.json", "{}")
	return root
}

type commandRow struct {
	name string
	cmd  string
	path string // "" allowed; "?" refused without a path; else the protected path refused for
	why  string // a part of the reason, when the row checks it
}

func runCommandRows(t *testing.T, g *Guard, dir string, rows []commandRow) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			err := g.CheckCommand(r.cmd, dir)
			if r.path == "" {
				assert.NoError(t, err, "%q was refused", r.cmd)
				return
			}
			var refusal *RefusalError
			require.ErrorAs(t, err, &refusal, "%q was allowed", r.cmd)
			assert.ErrorIs(t, err, ErrProtected)
			if r.path == "?" {
				assert.Empty(t, refusal.Path)
			} else {
				assert.Equal(t, r.path, refusal.Path)
			}
			assert.Contains(t, refusal.Reason, r.why)
		})
	}
}

// Commands that agents ran, as their users reported them (the issue
// numbers say where), and everyday commands of agent transcripts, checked
// in a real repository: git itself says which protected paths are
// tracked, modified, untracked or ignored.
func TestCommandsFromAgentTranscripts(t *testing.T) {
	root := gitProject(t)
	g := newTestGuard(t, root, Config{ReadOnly: []string{"AGENTS.md"}})
	runCommandRows(t, g, "", []commandRow{
		// Everyday work.
		{"running the tests", "go test ./... 2>&1 | tail -30", "", ""},
		{"a commit of the plan", "git add -A && git commit -m 'Mark the printer done'", "", ""},
		{"a rebuild", "rm -rf node_modules dist build && npm ci", "", ""},
		{"a ticked task appended", "echo '- [x] printer' >> IMPLEMENTATION_PLAN.md", "", ""},
		{"a new spec", "cat > specs/lexer.md <<'EOF'\n# Lexer\nEOF", "", ""},
		{"cd into the build first", "cd build && rm -rf *", "", ""},
		{"git clean of a tracked directory", "git clean -fd specs/", "", ""},
		{"git checkout of an unmodified file", "git checkout -- CLAUDE.md", "", ""},
		{"git rm --cached keeps the file", "git rm -r --cached specs", "", ""},

		// kirodotdev/Kiro#6049: reverting its own changes, and the user's.
		{"git checkout .", "git checkout .", "IMPLEMENTATION_PLAN.md", "(modified)"},
		// AndyMik90/Aperant#1477: git clean -fd on a QA rejection.
		{"git clean -fd", "git clean -fd", ".claude", "(untracked)"},
		// GoogleCloudPlatform/scion#884: git clean -fdx took the agent's
		// ignored state directory.
		{"git clean -fdx", "git clean -fdx", ".loopbreaker", "(ignored)"},
		{"git clean -X of a file in an ignored directory", "git clean -fX memory/learnings.md", "memory", "(ignored)"},
		// laurigates/claude-plugins#225: resetting after pushing.
		{"git reset --hard", "git reset --hard", "IMPLEMENTATION_PLAN.md", "(modified)"},
		{"git stash -u", "git stash -u", "IMPLEMENTATION_PLAN.md", ""},
		{"git rm of the manual", "git rm CLAUDE.md", "CLAUDE.md", "(tracked)"},
		// anthropics/claude-code#55205: rm -rf of a directory assumed empty.
		{"rm -rf of memory", "rm -rf " + filepath.Join(root, "memory") + " 2>/dev/null", "memory", ""},
		// disler/claude-code-hooks-mastery#4: ways around a hook that blocked rm.
		{"rm inside bash -c", `bash -c "rm -rf specs"`, "specs", ""},
		{"rm echoed into sh", "echo 'rm -rf specs' | sh", "specs", ""},
		{"rm printed into bash", "printf '%s' 'rm -rf specs' | bash", "specs", ""},
		{"the plan emptied by sed", "sed -i d IMPLEMENTATION_PLAN.md", "IMPLEMENTATION_PLAN.md", "d of every line"},
		{"the manual emptied by sed", "sed -i '1,$d' CLAUDE.md", "CLAUDE.md", ""},
		{"the manuals renamed", "rename 's/md/bak/' *.md", "IMPLEMENTATION_PLAN.md", "rename may move"},
		{"a task line deleted from the plan", `sed -i '/^- \[x\] parser/d' IMPLEMENTATION_PLAN.md`, "", ""},
		{"rm through find -delete", "find . -name AGENTS.md -delete", "AGENTS.md", "find -delete removes protected"},
		{"compiled Python files through find -delete", "find . -name '*.pyc' -delete", "", ""},
		{"caches through find -exec", "find . -type d -name __pycache__ -exec rm -rf {} +", "", ""},
		{"Markdown through find -delete", "find . -name '*.md' -delete", "IMPLEMENTATION_PLAN.md", ""},
		{"the loop's state through find", "find .loopbreaker -type f -delete", ".loopbreaker", ""},
		{"the copies through find", "find .loopbreaker/protected -delete", ".loopbreaker", ""},
		{"truncating instead", "> CLAUDE.md", "CLAUDE.md", ""},
		{"through sudo", "sudo rm -rf memory", "memory", ""},
		{"through xargs", "ls | xargs rm -f", ".loopbreaker", ""},
		{"a glob", "rm *.md", "IMPLEMENTATION_PLAN.md", ""},
		{"moved away", "mv AGENTS.md AGENTS.md.bak", "AGENTS.md", ""},
		{"cd that may fail", "cd build; rm -rf *", ".loopbreaker", ""},
		{"the copies", "rm -rf .loopbreaker/protected", ".loopbreaker", ""},
		{"a read-only file edited", "sed -i 's/approves/reads/' AGENTS.md", "AGENTS.md", "read-only"},
		{"a variable it cannot know", `rm -rf "$OUT"`, "?", "cannot tell what $OUT holds"},
		{"a line it cannot parse", "echo 'unterminated", "?", "cannot read the command line"},
	})
}

// dir is where the command runs: relative to the root, or absolute.
func TestCommandRunsInTheDirectoryGiven(t *testing.T) {
	root := aProject(t)
	writeFile(t, root, "build/app", "binary")
	g := newTestGuard(t, root, Config{})
	assert.NoError(t, g.CheckCommand("rm -rf *", "build"))
	assert.NoError(t, g.CheckCommand("rm -rf *", filepath.Join(root, "build")))
	assert.Error(t, g.CheckCommand("rm -rf ../specs", "build"))
	assert.Error(t, g.CheckCommand("rm -rf *", ""))
}

// A command may name the root through a link or by its real path (macOS's
// /tmp is /private/tmp): either way it is the same project.
func TestCommandNamingTheRootThroughALink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("links need privileges on Windows")
	}
	real := aProject(t)
	link := filepath.Join(t.TempDir(), "project")
	require.NoError(t, os.Symlink(real, link))
	g := newTestGuard(t, link, Config{})
	for _, cmd := range []string{"rm -rf " + real + "/specs", "rm -rf " + link + "/specs"} {
		var refusal *RefusalError
		require.ErrorAs(t, g.CheckCommand(cmd, ""), &refusal, cmd)
		assert.Equal(t, "specs", refusal.Path)
	}
}

// Outside a git repository git commands touch nothing (git refuses to
// run); without git, the checker cannot tell, and refuses.
func TestGitCommandsOutsideARepositoryAndWithoutGit(t *testing.T) {
	root := aProject(t)
	g := newTestGuard(t, root, Config{})
	assert.NoError(t, g.CheckCommand("git clean -fdx", ""))
	assert.Error(t, g.CheckCommand("rm -rf specs", ""))

	t.Setenv("PATH", t.TempDir()) // no git on it
	err := g.CheckCommand("git clean -fdx", "")
	var refusal *RefusalError
	require.ErrorAs(t, err, &refusal)
	assert.Contains(t, refusal.Reason, "(git cannot tell: ")
	assert.NoError(t, g.CheckCommand("go test ./...", ""), "no git command, no git asked")
}

// Each line is judged on git's state when it is checked: a plan committed
// since can be checked out again.
func TestGitStateIsReadForEachCommandLine(t *testing.T) {
	root := gitProject(t)
	g := newTestGuard(t, root, Config{})
	require.Error(t, g.CheckCommand("git checkout .", ""))
	gitRun(t, root, "commit", "-qam", "printer done")
	assert.NoError(t, g.CheckCommand("git checkout .", ""))
}

// The root in a subdirectory of the work tree: git reports paths from the
// top, the check finds the root's own in them.
func TestRootInASubdirectoryOfTheWorkTree(t *testing.T) {
	requireGit(t)
	top := newProject(t, map[string]string{"README.md": "# monorepo\n", "agent/.gitignore": ".loopbreaker/\n", "agent/CLAUDE.md": "manual\n", "agent/specs/a.md": "a\n"})
	gitInit(t, top)
	gitRun(t, top, "add", ".")
	gitRun(t, top, "commit", "-qm", "start")
	writeFile(t, top, "agent/specs/b.md", "b, untracked\n")
	g := newTestGuard(t, filepath.Join(top, "agent"), Config{})
	var refusal *RefusalError
	require.ErrorAs(t, g.CheckCommand("git clean -f", ""), &refusal)
	assert.Equal(t, "specs", refusal.Path)
	assert.NoError(t, g.CheckCommand("git checkout .", ""), "nothing protected is modified")
}

// FuzzCheckCommand feeds CheckCommand any bytes: it must not panic, must
// give the same answer twice, must explain every refusal with a path from
// its config (or none), and must refuse a line that starts by removing a
// protected directory whatever follows.
func FuzzCheckCommand(f *testing.F) {
	for _, s := range []string{
		"rm -rf node_modules dist && npm ci",
		"git clean -fdx",
		"git checkout -- .",
		"git stash -u && git reset --hard HEAD~1",
		"find . -name '*.pyc' -delete",
		"sudo rm -rf /tmp/build",
		"ls | xargs rm",
		"cat > CLAUDE.md <<EOF\n# Notes\nEOF",
		`echo "" > IMPLEMENTATION_PLAN.md`,
		"mv AGENTS.md AGENTS.md.bak",
		"cd build; rm -rf *",
		"for f in *.md; do rm \"$f\"; done",
		"bash -c 'eval \"rm -rf $(pwd)/specs\"'",
		"echo 'unterminated",
		"\x00\xff\xfe rm -rf \xc3\x28",
	} {
		f.Add(s)
	}
	root := aProject(f)
	g, err := New(root, Config{ReadOnly: []string{"AGENTS.md"}})
	require.NoError(f, err)
	names := []string{".loopbreaker/protected"}
	for _, sp := range g.specs {
		names = append(names, sp.path)
	}
	f.Fuzz(func(t *testing.T, cmdline string) {
		err := g.CheckCommand(cmdline, "")
		require.Equal(t, err, g.CheckCommand(cmdline, ""), "the same line, another answer")
		if err != nil {
			var refusal *RefusalError
			require.True(t, errors.As(err, &refusal), "not a refusal: %v", err)
			require.NotEmpty(t, refusal.Reason)
			require.True(t, refusal.Path == "" || slices.Contains(names, refusal.Path), "refused for %q, which is not protected", refusal.Path)
		}
		require.Error(t, g.CheckCommand("rm -rf specs\n"+cmdline, ""), "a removed protected directory went unnoticed")
	})
}

// FuzzNew feeds New any protected path: it is either refused as
// invalid config or makes a Guard that verifies and checks without
// panicking.
func FuzzNew(f *testing.F) {
	for _, s := range []string{"specs/", "specs/*.md", "../x", "/abs", "[", ".", "a\\*b", "", "x/../../y", "**/*.md"} {
		f.Add(s)
	}
	root := aProject(f)
	f.Fuzz(func(t *testing.T, p string) {
		g, err := New(root, Config{Protected: []string{p}, MaxBackupBytes: -1})
		if err != nil {
			require.ErrorIs(t, err, loopbreaker.ErrInvalidConfig)
			return
		}
		require.NoError(t, g.Verify())
		_ = g.CheckCommand("rm -rf *", "")
	})
}
