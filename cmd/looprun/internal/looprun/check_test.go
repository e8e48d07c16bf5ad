package looprun

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkScript is a -check that fails like a test suite once work.txt
// says "broken".
const checkScript = `if grep -q broken work.txt; then echo "--- FAIL: TestLogin (0.01s)"; echo "    login_test.go:12: want 200, got 500"; echo FAIL; exit 1; fi; echo ok`

// The agent exits 0 every time, but the check fails: each of those
// iterations fails, with the check's error, and the same error opens the
// circuit. The check's output is in the iteration's log, after the
// command's.
func TestFailingCheckFailsTheIteration(t *testing.T) {
	r := newRepo(t, `if [ $n -eq 1 ]; then echo "good $n" > work.txt; else echo "broken $n" > work.txt; fi
echo "I fixed everything."
`)
	out, code := r.looprun(t, "", "-interactive", "no", "-check", checkScript, "-failures", "-1", "-same-errors", "3")
	assert.Equal(t, exitTripped, code, out)
	assert.Regexp(t, `(?m)^\s+1\s+\S+\s+CLOSED\s+ok\s`, out)
	assert.Regexp(t, `(?m)^\s+2\s+\S+\s+CLOSED\s+FAIL\s`, out)
	assert.Contains(t, out, "check failed: --- FAIL: TestLogin (0.01s)")
	assert.Contains(t, out, "last error (iteration 4, from the check, "+checkScript+"):\n        --- FAIL: TestLogin (0.01s)\n            login_test.go:12: want 200, got 500\n")
	assert.Contains(t, out, "Same error repeated 3 times (threshold: 3)")
	assert.Equal(t, 4, r.runs(t))

	log, err := os.ReadFile(filepath.Join(r.dir, stateDirName, logsDirName, "loop-2.log"))
	require.NoError(t, err)
	assert.Equal(t, "I fixed everything.\n\n[looprun: check: "+checkScript+"]\n--- FAIL: TestLogin (0.01s)\n    login_test.go:12: want 200, got 500\nFAIL\n", string(log))
}

// ralph-starter's --validate is -check; it takes the command, and a flag
// where the command should be is a usage error that says so.
func TestValidateIsTheCheck(t *testing.T) {
	r := newRepo(t, `echo "broken $n" > work.txt
`)
	out, code := r.looprun(t, "", "-interactive", "no", "--validate", checkScript)
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "3 consecutive failures (threshold: 3)")

	out, code = r.looprun(t, "", "--validate", "-interactive", "no")
	assert.Equal(t, exitUsage, code, out)
	assert.Contains(t, out, "-check (--validate) takes the command to run after each iteration")
}

// An agent that prints an error and exits 0 has not failed by its exit
// status: without a check it is a success, with a note; with a check that
// fails it is a failure. A check that passes is not run after a command
// that failed.
func TestCleanExitWithAnErrorFailsOnlyWithAFailingCheck(t *testing.T) {
	script := `echo "step $n" > "work_$n.txt"
echo "Error: Cannot find module 'left-pad'"
exit 0
`
	r := newRepo(t, script)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "2")
	assert.Equal(t, exitLimit, code, out)
	assert.Regexp(t, `(?m)^\s+2\s+\S+\s+CLOSED\s+ok\s`, out)
	assert.Contains(t, out, "note: the command exited 0, and its output has an error, which counts toward the same error (no -check to tell): Error: Cannot find module 'left-pad'")

	r = newRepo(t, script)
	out, code = r.looprun(t, "", "-interactive", "no", "-max-iterations", "2", "-check", "echo \"Error: Cannot find module 'left-pad'\"; exit 1")
	assert.Equal(t, exitLimit, code, out)
	assert.Regexp(t, `(?m)^\s+2\s+\S+\s+CLOSED\s+FAIL\s`, out)
	assert.Contains(t, out, "check failed: Error: Cannot find module 'left-pad'")

	ran := filepath.Join(t.TempDir(), "check-ran")
	r = newRepo(t, "exit 3\n")
	out, code = r.looprun(t, "", "-interactive", "no", "-max-iterations", "1", "-check", "touch "+ran)
	assert.Equal(t, exitLimit, code, out)
	assert.NoFileExists(t, ran, "the check runs after a command that passed")
}

// A command that timeout(1) stopped (exit 124) or a signal ended timed
// out or was killed: the iteration fails under that name, whatever its
// output says.
func TestExit124AndSignalsAreNamedTimeouts(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no signals")
	}
	for _, tc := range []struct{ script, says string }{
		{"echo 'Error: connection reset'\nexit 124\n", "error: timed out (exit 124)"},
		{"echo 'Error: connection reset'\nkill -KILL $$\n", "error: killed by signal 9 (SIGKILL)"},
		{"kill -SEGV $$\n", "error: killed by signal 11 (SIGSEGV)"},
	} {
		r := newRepo(t, tc.script)
		out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "1")
		assert.Equal(t, exitLimit, code, out)
		assert.Regexp(t, `(?m)^\s+1\s+\S+\s+CLOSED\s+FAIL\s`, out)
		assert.Contains(t, out, tc.says)
	}
}

// Without -check, an error in the output of runs that exit 0 (an agent's
// command line after tool calls that failed inside it) counts toward the
// same error: the fifth opens the circuit, though no iteration failed and
// the consecutive failures stay at 0.
func TestErrorsOfCleanExitsCountTowardTheSameError(t *testing.T) {
	r := newRepo(t, `echo "step $n" > "work_$n.txt"
echo "Error: Cannot find module 'left-pad' (attempt $n)"
exit 0
`)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "8")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, `Same error repeated 5 times (threshold: 5): "Error: Cannot find module 'left-pad' (attempt 5)"`)
	assert.Regexp(t, `(?m)^\s+5\s+\S+\s+OPEN\s+ok\s+1\s+-\s+\S+\s+HIGH\s+0\s+0\s+0\s+[0-9a-f]{8}\s`, out, "no failure: consec and total stay at 0")
	assert.Equal(t, 5, r.runs(t))
}
