//go:build unix

package looprun

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fifo makes a named pipe the script writes "started" to, so that a test
// acts only once the script has got that far.
func fifo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "started")
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	return path
}

// awaitStarted blocks until the script writes its line to the fifo.
func awaitStarted(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path) // blocks until the script opens it to write
	require.NoError(t, err)
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "started\n", line)
}

// startBin starts the runner on the repository's script with env added.
func (r *repo) startBin(t *testing.T, env []string, flags ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := r.command(env, flags...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	return cmd, &out
}

// exitCode waits for the runner and returns its exit code.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	return exited(t, cmd, cmd.Wait())
}

// grandchild reads the pid the script wrote of the process it started in
// the background, and kills that process when the test ends if it is
// still there.
func grandchild(t *testing.T, pidFile string) int {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	require.NoError(t, err, "the script started its grandchild")
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	t.Cleanup(func() {
		if !processGone(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return pid
}

// processGone reports whether pid has ended: there is no such process, or
// (where /proc tells) only its zombie is left, for its new parent to reap.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false // no /proc here, or the process just ended: ask again
	}
	// "pid (command) state ...": the state follows the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}

// requireGone waits, up to a generous bound, for pid to end: the runner
// kills it before it exits, and the kernel takes a moment to carry the
// kill out.
func requireGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !processGone(pid) {
		select {
		case <-deadline.C:
			t.Fatalf("process %d, started by the command, is still running", pid)
		case <-tick.C:
		}
	}
}

// Ctrl+C while the agent runs: the runner stops it, records a neutral
// iteration, saves the state and exits 130.
func TestInterruptStopsCleanlyAndSaves(t *testing.T) {
	started := fifo(t)
	r := newRepo(t, `echo started > "$FIFO"
sleep 60
`)
	cmd, out := r.startBin(t, []string{"FIFO=" + started}, "-interactive", "no")
	awaitStarted(t, started)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))

	assert.Equal(t, exitInterrupted, exitCode(t, cmd), out.String())
	assert.Contains(t, out.String(), "stopped: interrupted")
	assert.Contains(t, out.String(), "(1 neutral)")
	_, err := os.Stat(filepath.Join(r.dir, stateDirName, "loop.json"))
	assert.NoError(t, err, "the state was saved")
}

// Ctrl+C is passed on to the command as an interrupt, so it can stop
// cleanly (its trap runs), and what the command started in the background,
// which ignores the interrupt as a shell's background jobs do, is killed.
func TestInterruptReachesTheCommandAndKillsWhatItStarted(t *testing.T) {
	started := fifo(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	mark := filepath.Join(t.TempDir(), "interrupted")
	r := newRepo(t, `sleep 1000 &
echo $! > "$PIDFILE"
trap 'echo interrupted > "$MARK"; exit 130' INT
echo started > "$FIFO"
wait
`)
	cmd, out := r.startBin(t, []string{"FIFO=" + started, "PIDFILE=" + pidFile, "MARK=" + mark}, "-interactive", "no")
	awaitStarted(t, started)
	pid := grandchild(t, pidFile)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))

	assert.Equal(t, exitInterrupted, exitCode(t, cmd), out.String())
	_, err := os.Stat(mark)
	assert.NoError(t, err, "the command's trap ran on the interrupt")
	requireGone(t, pid)
}

// A command that runs past -timeout is killed with everything it started,
// not only the command itself.
func TestTimeoutKillsWhatTheCommandStarted(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	r := newRepo(t, `sleep 1000 &
echo $! > "$PIDFILE"
wait
`)
	// The script reports its grandchild at once; a second is ample.
	cmd, out := r.startBin(t, []string{"PIDFILE=" + pidFile}, "-interactive", "no", "-timeout", "1s", "-max-iterations", "1")
	code := exitCode(t, cmd)
	assert.Contains(t, out.String(), "timed out after 1s")
	assert.Equal(t, exitLimit, code, out.String())
	requireGone(t, grandchild(t, pidFile))
}

// Ctrl+C while looprun waits for an answer at its prompt: it stops at once
// with exit 130, and the open circuit is saved as it was, neither aborted
// nor resumed, so the next run goes on with its cooldown.
func TestInterruptAtThePromptStopsAndSaves(t *testing.T) {
	r := newRepo(t, `echo "Error: Cannot find module 'left-pad'" >&2
exit 1
`)
	s := r.startSession(t, "-interactive", "yes", "-cooldown", "1h")
	s.waitFor(t, prompt)
	require.NoError(t, s.cmd.Process.Signal(os.Interrupt))
	out, code := s.wait(t)
	assert.Equal(t, exitInterrupted, code, out)
	assert.Contains(t, out, "stopped: interrupted")
	assert.Equal(t, 3, r.runs(t))

	out, code = r.looprun(t, "", "-interactive", "no")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "resuming")
	assert.Contains(t, out, "circuit OPEN: 3 consecutive failures (threshold: 3); probe in")
	assert.Equal(t, 3, r.runs(t), "the script did not run again")
}

// A command that exits and leaves a process running that holds its output
// open (a server it started, say) has still run: the iteration is its
// exit status and output, not an error that stops the loop. The process
// does not outlive the iteration.
func TestCommandThatLeavesAProcessRunningHasRunAndTheProcessIsKilled(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	r := newRepo(t, `sleep 1000 &
echo $! > "$PIDFILE"
echo "step $n" > work.txt
echo "started the server"
`)
	cmd, out := r.startBin(t, []string{"PIDFILE=" + pidFile}, "-interactive", "no", "-max-iterations", "1")
	code := exitCode(t, cmd)
	pid := grandchild(t, pidFile)
	assert.Equal(t, exitLimit, code, out.String())
	assert.Regexp(t, `(?m)^\s+1\s+\S+\s+CLOSED\s+ok\s+1\s`, out.String())
	requireGone(t, pid)
}

// A person's resume is saved at once: a runner killed (kill -9) during the
// next iteration leaves the circuit closed, as the person left it, not
// open as the last iteration before the prompt did.
func TestResumeIsSavedBeforeTheNextIteration(t *testing.T) {
	r := newRepo(t, `if [ $n -eq 4 ]; then kill -KILL $PPID; exit 0; fi
echo "Error: Cannot find module 'left-pad'" >&2
exit 1
`)
	s := r.startSession(t, "-interactive", "yes", "-cooldown", "1h")
	s.waitFor(t, prompt)
	_, err := io.WriteString(s.stdin, "r\n")
	require.NoError(t, err)
	out, _ := s.wait(t)
	require.Equal(t, 4, r.runs(t), out)

	data, err := os.ReadFile(filepath.Join(r.dir, stateDirName, "loop.json"))
	require.NoError(t, err)
	var state struct {
		State string `json:"state"`
	}
	require.NoError(t, json.Unmarshal(data, &state))
	assert.Equal(t, "CLOSED", state.State)
}

// A probe that takes the runner down with it (kill -9) is not run again at
// the next start: looprun saved that the probe was running, so the
// restarted breaker counts it as a failed probe and waits a new cooldown.
func TestProbeThatKillsTheRunnerIsNotRunAgainAtOnce(t *testing.T) {
	r := newRepo(t, `if [ $n -eq 4 ]; then kill -KILL $PPID; exit 0; fi
echo "Error: Cannot find module 'left-pad'" >&2
exit 1
`)
	out, code := r.looprun(t, "", "-interactive", "no", "-cooldown", "1h")
	require.Equal(t, exitTripped, code, out)
	require.Equal(t, 3, r.runs(t))

	// Two hours pass: the state was saved that long ago. The next start
	// finds the cooldown over; the fourth run is the probe, and it kills
	// the runner.
	r.moveStateBack(t, 2*time.Hour)
	out, _ = r.looprun(t, "", "-interactive", "no", "-cooldown", "1h")
	require.Equal(t, 4, r.runs(t), out)

	out, code = r.looprun(t, "", "-interactive", "no", "-cooldown", "1h")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "Half-open probe lost")
	assert.Regexp(t, `probe in 59m\d+s|probe in 1h0m0s`, out, "a new cooldown from the restart")
	assert.Equal(t, 4, r.runs(t), "the probe did not run again")
}

// moveStateBack rewrites the saved state as if it had been saved d
// earlier: when the circuit opened and when the state was saved.
func (r *repo) moveStateBack(t *testing.T, d time.Duration) {
	t.Helper()
	path := filepath.Join(r.dir, stateDirName, "loop.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var state map[string]any
	require.NoError(t, json.Unmarshal(data, &state))
	for _, key := range []string{"saved_at", "opened_at"} {
		at, err := time.Parse(time.RFC3339Nano, state[key].(string))
		require.NoError(t, err, key)
		state[key] = at.Add(-d).Format(time.RFC3339Nano)
	}
	data, err = json.Marshal(state)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
}
