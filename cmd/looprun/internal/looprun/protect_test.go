package looprun

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The loop's files, as a Ralph loop keeps them.
var loopFiles = map[string]string{
	"CLAUDE.md":              "# Operating manual\nRun the tests before every commit.\n",
	"AGENTS.md":              "# Agents\nreviewer: reads every diff\n",
	"IMPLEMENTATION_PLAN.md": "# Plan\n- [ ] parser\n- [ ] printer\n",
	"specs/parser.md":        "The parser reads Go 1.23.\n",
	"memory/learnings.md":    "go vet catches the shadowed err.\n",
}

// writeLoopFiles writes the loop's files into the repository.
func (r *repo) writeLoopFiles(t *testing.T) {
	t.Helper()
	for p, content := range loopFiles {
		full := filepath.Join(r.dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
}

// requireLoopFiles checks that the loop's files are all there, byte for
// byte.
func (r *repo) requireLoopFiles(t *testing.T) {
	t.Helper()
	for p, content := range loopFiles {
		data, err := os.ReadFile(filepath.Join(r.dir, filepath.FromSlash(p)))
		require.NoError(t, err, p)
		require.Equal(t, content, string(data), p)
	}
}

// The first story: an agent that deletes CLAUDE.md in its second
// iteration is stopped after that iteration (exit 7), with CLAUDE.md
// restored byte for byte and the summary saying so. The next run, with
// nobody to ask, stops at once; at a terminal a person resumes.
func TestAgentThatDeletesClaudeMdIsStoppedAndItComesBack(t *testing.T) {
	r := newRepo(t, `echo "step $n" > "work_$n.txt"
if [ $n -eq 2 ]; then rm CLAUDE.md; echo "removed the stale CLAUDE.md"; fi
`)
	r.writeLoopFiles(t)
	r.git(t, "add", "CLAUDE.md", "AGENTS.md") // one tracked, the rest not
	r.git(t, "commit", "-qm", "manuals")

	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "5")
	assert.Equal(t, exitProtected, code, out)
	assert.Equal(t, 2, r.runs(t), "stopped after the iteration that deleted it")
	r.requireLoopFiles(t)
	assert.Contains(t, out, "stopped: Protected files lost: CLAUDE.md deleted, restored from its copy (exit 7)")
	assert.Contains(t, out, "protected files lost in the last iteration (copies in .loopbreaker/protected/loop):\n  CLAUDE.md deleted, restored from its copy\n")
	assert.Contains(t, out, "held open for the protected files")

	out, code = r.looprun(t, "", "-interactive", "no")
	assert.Equal(t, exitProtected, code, out)
	assert.Equal(t, 2, r.runs(t), "held across the restart: nothing ran")

	out, code = r.looprun(t, "resume\n", "-interactive", "yes", "-max-iterations", "1")
	assert.Equal(t, exitLimit, code, out)
	assert.Equal(t, 3, r.runs(t), "a person resumed")
}

// An agent that moves specs/ away and puts a link to a directory outside
// the repository in its place: the loop stops (exit 7) saying specs/ was
// replaced, and nothing is restored through the link: the outside
// directory stays empty.
func TestAgentThatLinksAFolderOutsideGetsNothingWrittenThere(t *testing.T) {
	outside := t.TempDir()
	r := newRepo(t, `echo "step $n" > "work_$n.txt"
if [ $n -eq 2 ]; then mv specs specs.moved && ln -s "$OUTSIDE" specs; fi
`)
	t.Setenv("OUTSIDE", outside)
	r.writeLoopFiles(t)
	writeFile := func(p, content string) {
		full := filepath.Join(r.dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	writeFile("specs/api/v1.md", "GET /v1/plans\n")

	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "5")
	assert.Equal(t, exitProtected, code, out)
	assert.Equal(t, 2, r.runs(t))
	assert.Contains(t, out, "specs/ replaced")
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing restored through the link:\n%s", out)
}

// The second story: an agent that runs git clean -fdx takes every
// untracked and ignored file, the loop's state and the copies in it too;
// it loses no protected path.
func TestAgentThatRunsGitCleanLosesNoProtectedPath(t *testing.T) {
	r := newRepo(t, `echo "step $n" > "work_$n.txt"
if [ $n -eq 2 ]; then git clean -fdxq; fi
`)
	r.writeLoopFiles(t)
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, ".gitignore"), []byte("memory/\n.loopbreaker/\n"), 0o644))
	r.git(t, "add", ".gitignore", "AGENTS.md")
	r.git(t, "commit", "-qm", "ignores")

	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "5")
	assert.Equal(t, exitProtected, code, out)
	assert.Equal(t, 2, r.runs(t))
	r.requireLoopFiles(t)
	assert.NoFileExists(t, filepath.Join(r.dir, "work_1.txt"), "git clean did run")
	assert.Contains(t, out, "stopped: Protected files lost: .loopbreaker/ deleted, restored; CLAUDE.md deleted, restored from its copy; "+
		"IMPLEMENTATION_PLAN.md deleted, restored from its copy; memory/ deleted with the 1 file in it, restored; specs/ deleted with the 1 file in it, restored (exit 7)")
	assert.FileExists(t, filepath.Join(r.dir, stateDirName, "loop.json"), "the state is saved again")

	out, code = r.looprun(t, "", "-interactive", "no")
	assert.Equal(t, exitProtected, code, out)
	assert.FileExists(t, filepath.Join(r.dir, stateDirName, "protected", "loop", "CLAUDE.md"), "the copies are written again at the start")
}

// The third story: plans are meant to be updated. An agent that
// edits IMPLEMENTATION_PLAN.md every iteration keeps running; looprun's
// own logs and state, which change every iteration, are no loss either.
func TestAgentThatEditsThePlanEveryIterationKeepsRunning(t *testing.T) {
	r := newRepo(t, `echo "- [x] task $n" >> IMPLEMENTATION_PLAN.md
echo "spec $n" > specs/generated.md
`)
	r.writeLoopFiles(t)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "5")
	assert.Equal(t, exitLimit, code, out)
	assert.Equal(t, 5, r.runs(t))
	assert.NotContains(t, out, "protected files lost")
}

// looprun checks its own command line before the loop starts: one that
// would delete a protected path is refused (exit 2), nothing is created,
// nothing runs. One the checker cannot judge runs, with a note.
func TestOwnCommandThatWouldDeleteAProtectedPathIsRefused(t *testing.T) {
	r := newRepo(t, "echo working\n")
	r.writeLoopFiles(t)
	stdout, stderr, code := runSplit(t, r.dir, "-dir", r.dir, "--", "sh", "-c", "rm -rf specs && ./agent.sh")
	assert.Equal(t, exitUsage, code, stdout+stderr)
	assert.Contains(t, stderr, "looprun: refusing to run the command: rm -rf specs: rm -rf removes protected ")
	assert.Contains(t, stderr, "leave specs out of -protect")
	assert.Empty(t, stdout)
	assert.NoDirExists(t, filepath.Join(r.dir, stateDirName), "nothing is created")
	assert.Equal(t, 0, r.runs(t))
	r.requireLoopFiles(t)

	stdout, stderr, code = runSplit(t, r.dir, "-dir", r.dir, "-max-iterations", "1", "--", "sh", "-c", `./agent.sh > "$AGENT_LOG"`)
	assert.Equal(t, exitLimit, code, stdout+stderr)
	assert.Contains(t, stdout, "looprun: note: ./agent.sh > \"$AGENT_LOG\": cannot tell what $AGENT_LOG holds")
}

// -protect replaces the default list (the state directory stays): the
// manual is the agent's to delete here, the docs are not.
func TestProtectFlagReplacesTheDefaults(t *testing.T) {
	r := newRepo(t, `echo "step $n" > "work_$n.txt"
if [ $n -eq 1 ]; then rm CLAUDE.md; fi
if [ $n -eq 2 ]; then rm docs/guide.md; fi
`)
	r.writeLoopFiles(t)
	require.NoError(t, os.MkdirAll(filepath.Join(r.dir, "docs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, "docs", "guide.md"), []byte("# Guide\n"), 0o644))

	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "5", "-protect", "docs/*.md")
	assert.Equal(t, exitProtected, code, out)
	assert.Equal(t, 2, r.runs(t))
	assert.Contains(t, out, "stopped: Protected files lost: docs/guide.md deleted, restored from its copy")
	assert.NoFileExists(t, filepath.Join(r.dir, "CLAUDE.md"))

	out, code = r.looprun(t, "", "-protect", "../outside")
	assert.Equal(t, exitUsage, code, out)
	assert.Contains(t, out, "looprun: -protect ../outside: not inside the root")
}
