package looprun

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// promptedRepo is a repository whose agent keeps each prompt it is given
// on stdin, and the notes file LOOPRUN_NOTES names, in the directory
// prompts, and fails its first three runs with the same test failure.
func promptedRepo(t *testing.T) (r *repo, prompts string) {
	t.Helper()
	prompts = t.TempDir()
	r = newRepo(t, `cat > "`+prompts+`/prompt-$n.txt"
if [ -n "$LOOPRUN_NOTES" ]; then cp "$LOOPRUN_NOTES" "`+prompts+`/notes-$n.txt"; fi
echo "attempt $n" > work.txt
if [ $n -le 3 ]; then echo "--- FAIL: TestLogin (0.01s)"; echo "    login_test.go:12: want 200, got 500"; exit 1; fi
echo "logged in"
`)
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, "PROMPT.md"), []byte("Fix the login.\n\n{looprun_notes}\nEnd.\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, "fix_plan.md"), []byte("- [ ] login form\n- [ ] logout\n"), 0o644))
	r.git(t, "add", ".")
	r.git(t, "commit", "-qm", "prompt and plan")
	return r, prompts
}

// promptOf returns the prompt of the agent's run n, and the notes file it
// was given ("" for none).
func promptOf(t *testing.T, prompts string, n int) (text, notes string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(prompts, fmt.Sprintf("prompt-%d.txt", n)))
	require.NoError(t, err)
	file, err := os.ReadFile(filepath.Join(prompts, fmt.Sprintf("notes-%d.txt", n)))
	if err != nil {
		require.ErrorIs(t, err, os.ErrNotExist)
	}
	return string(data), string(file)
}

// After a person skips the stuck task, the next iteration works on the
// plan's next item, and its agent is told what happened: why the loop
// stopped, the error, what to try (for a task that keeps failing, GSD's
// exit.sh and superkit's strategies), the skipped task and the one to
// take, in place of {looprun_notes} in its prompt and in the file
// LOOPRUN_NOTES names. Before anything happened it is told nothing.
func TestAfterASkipTheAgentIsToldAndTakesTheNextTask(t *testing.T) {
	r, prompts := promptedRepo(t)
	out, code := r.looprun(t, "s\n", "-interactive", "yes", "-plan", "fix_plan.md", "-max-iterations", "4")
	require.Equal(t, exitLimit, code, out)
	assert.Contains(t, out, "----- iteration 4: logout\n")

	first, notes := promptOf(t, prompts, 1)
	assert.Equal(t, "Fix the login.\n\n\nEnd.\n", first)
	assert.Empty(t, notes)

	fourth, notes := promptOf(t, prompts, 4)
	for _, want := range []string{
		"Fix the login.\n\n## What looprun saw before this iteration\n",
		`The loop was stopped: Stuck on task "login form": 3 failed iterations in a row (threshold: 3).`,
		"The error it kept meeting (seen 3 times, from the command):\n\n    --- FAIL: TestLogin (0.01s)\n        login_test.go:12: want 200, got 500\n",
		"(GSD's exit.sh, then superkit's recovery strategies for no progress):\n\n1. Check what the task needs first",
		"4. If none works, stop and say so: STATUS: BLOCKED, with what you tried\n",
		"## Skipped tasks\n\nA person chose to skip these tasks; leave them alone:\n\n- login form\n\nWork on this task now: logout\n",
	} {
		assert.Contains(t, fourth, want)
	}
	assert.Equal(t, fourth, "Fix the login.\n\n"+notes+"\nEnd.\n", "the file holds what the placeholder does")
}

// After a stop and a resume in another run, the agent is told what the
// loop was stuck on and what to try, until an iteration gets past it: then
// the notes are gone, the file too.
func TestAfterAStopAndAResumeTheAgentIsTold(t *testing.T) {
	r, prompts := promptedRepo(t)
	out, code := r.looprun(t, "", "-interactive", "no")
	require.Equal(t, exitTripped, code, out)

	out, code = r.looprun(t, "r\n", "-interactive", "yes", "-max-iterations", "2")
	require.Equal(t, exitLimit, code, out)
	fourth, notes := promptOf(t, prompts, 4)
	assert.Contains(t, fourth, "The loop was stopped: 3 consecutive failures (threshold: 3).")
	assert.Contains(t, fourth, "    --- FAIL: TestLogin (0.01s)\n        login_test.go:12: want 200, got 500\n")
	assert.Contains(t, fourth, "Try instead, in this order (superkit's recovery strategies for the same error):\n\n1. Change the approach entirely\n")
	assert.NotEmpty(t, notes)

	fifth, notes := promptOf(t, prompts, 5)
	assert.Equal(t, "Fix the login.\n\n\nEnd.\n", fifth, "the fourth got past it")
	assert.Empty(t, notes)
	assert.NoFileExists(t, filepath.Join(r.dir, stateDirName, "loop"+notesSuffix))
}

// The probe after the cooldown is told too, with nobody at the terminal.
func TestTheProbeIsToldWhatWasStuck(t *testing.T) {
	r, prompts := promptedRepo(t)
	out, code := r.looprun(t, "", "-interactive", "no", "-cooldown", "1h")
	require.Equal(t, exitTripped, code, out)

	out, code = r.runOnClock(t, loopbreakertest.NewClock(time.Now()), "-interactive", "no", "-wait", "-max-iterations", "1", "-cooldown", "1h")
	require.Equal(t, exitLimit, code, out)
	fourth, _ := promptOf(t, prompts, 4)
	assert.Contains(t, fourth, "The loop was stopped: 3 consecutive failures (threshold: 3).")
}
