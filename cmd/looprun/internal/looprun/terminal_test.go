//go:build unix

package looprun

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pane is looprun at a real terminal: a tmux session of its own, 200
// columns by 50 lines, whose screen the test reads (capture-pane) and
// types into (send-keys).
type pane struct {
	t    *testing.T
	tmux string
	name string
	done string // the file the shell writes looprun's exit code to
}

var paneCount atomic.Int32

// startPane runs looprun with args in a new tmux session, with env set.
func startPane(t *testing.T, dir string, env []string, args ...string) *pane {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed") // .ci/run installs it
	}
	p := &pane{t: t, tmux: tmux, name: fmt.Sprintf("looprun-%d-%d", os.Getpid(), paneCount.Add(1)),
		done: filepath.Join(t.TempDir(), "exit")}
	quoted := []string{shellQuote(looprunBin)}
	for _, a := range args {
		quoted = append(quoted, shellQuote(a))
	}
	// The shell outlives a Ctrl+C the test types (a trap, not an ignored
	// signal, which looprun would inherit), to write looprun's exit code.
	script := fmt.Sprintf("trap : INT; cd %s && env %s %s; echo \"exit=$?\" > %s.tmp && mv %s.tmp %s; sleep 600",
		shellQuote(dir), shellLine(env), strings.Join(quoted, " "), p.done, p.done, p.done)
	p.run("new-session", "-d", "-s", p.name, "-x", "200", "-y", "50", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command(tmux, "-L", p.name, "kill-server").Run() })
	return p
}

func (p *pane) run(args ...string) string {
	p.t.Helper()
	out, err := exec.Command(p.tmux, append([]string{"-L", p.name}, args...)...).CombinedOutput()
	require.NoError(p.t, err, "tmux %v: %s", args, out)
	return string(out)
}

// screen is what the terminal shows now.
func (p *pane) screen() string { return p.run("capture-pane", "-p", "-t", p.name) }

// waitFor polls the screen until ok says yes, up to sessionBound: a bound
// on a hang, not a timing.
func (p *pane) waitFor(what string, ok func(screen string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(sessionBound)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		screen := p.screen()
		if ok(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the terminal did not show %s:\n%s", what, screen)
		}
		<-tick.C
	}
}

// waitForText polls the screen until it shows text.
func (p *pane) waitForText(text string) string {
	p.t.Helper()
	return p.waitFor(fmt.Sprintf("%q", text), func(s string) bool { return strings.Contains(s, text) })
}

// keys types keys into the terminal.
func (p *pane) keys(keys ...string) { p.run(append([]string{"send-keys", "-t", p.name}, keys...)...) }

// exitCode waits for looprun to end and returns its exit code.
func (p *pane) exitCode() int {
	p.t.Helper()
	deadline := time.Now().Add(sessionBound)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if data, err := os.ReadFile(p.done); err == nil {
			var code int
			_, err := fmt.Sscanf(string(data), "exit=%d", &code)
			require.NoError(p.t, err, "%q", data)
			return code
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("looprun did not end:\n%s", p.screen())
		}
		<-tick.C
	}
}

// gate is a named pipe an agent script blocks on ("cat $GATE") until the
// test opens it: the test looks at the terminal while the iteration runs.
func gate(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gate")
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	return path
}

// open lets the script blocked on the gate go on.
func openGate(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// At a terminal the command's output shows as it comes, and below it a
// status line says which iteration runs, for how long, and the circuit
// and the budget: redrawn in place each second, not a line a second.
func TestOutputAndStatusLineShowLiveAtATerminal(t *testing.T) {
	g := gate(t)
	r := newRepo(t, `echo "agent says: working on step $n"
cat "$GATE" > /dev/null
echo "step $n" > work.txt
echo "agent says: done with step $n"
`)
	p := startPane(t, r.dir, []string{"COUNTER=" + r.counter, "GATE=" + g},
		"-max-iterations", "1", "-calls-per-hour", "10", "--", "./agent.sh")

	screen := p.waitForText("running 2s")
	assert.Contains(t, screen, "agent says: working on step 1", "the output shows before the iteration ends")
	assert.Contains(t, screen, "... iteration 1 running 2s, circuit CLOSED, calls 1/10 this hour", "the running call counts")
	assert.Equal(t, 1, strings.Count(screen, "iteration 1 running"), "the status line is redrawn in place:\n%s", screen)
	assert.Contains(t, screen, "thresholds (preset feature): failures 3,", "the banner says the thresholds in force")

	openGate(t, g)
	assert.Equal(t, exitLimit, p.exitCode())
	screen = p.screen()
	assert.Contains(t, screen, "agent says: done with step 1")
	assert.NotContains(t, screen, "iteration 1 running", "the status line is wiped when the iteration ends")
	assert.Regexp(t, `(?m)^\s+1\s+\S+\s+CLOSED\s+ok\s+1\s`, screen)
}

// When the circuit opens at a terminal, the prompt shows why, the error
// the last iteration ended with, and where its whole output is.
func TestPromptShowsTheErrorAndTheLogAtATerminal(t *testing.T) {
	r := newRepo(t, `echo "compiling..."
echo "src/app.js:12: Error: Cannot find module 'left-pad'" >&2
exit 1
`)
	p := startPane(t, r.dir, []string{"COUNTER=" + r.counter}, "-dir", r.dir, "-cooldown", "1h", "--", "./agent.sh")
	screen := p.waitForText(strings.TrimSpace(prompt)) // the terminal keeps no trailing space
	assert.Contains(t, screen, "circuit OPEN: 3 consecutive failures (threshold: 3)")
	assert.Contains(t, screen, "last error (iteration 3, from the command):")
	assert.Contains(t, screen, "Error: Cannot find module 'left-pad'")
	assert.Contains(t, screen, "its output: "+filepath.Join(r.dir, stateDirName, logsDirName, "loop-3.log"))
	p.keys("a", "Enter")
	assert.Equal(t, exitAborted, p.exitCode())
}

// At a spent call budget, -wait shows a countdown to the time a call is
// free again, rewritten in place each second.
func TestSpentBudgetCountsDownAtATerminal(t *testing.T) {
	r := newRepo(t, `echo "step $n" > "work_$n.txt"
`)
	p := startPane(t, r.dir, []string{"COUNTER=" + r.counter}, "-calls-per-hour", "1", "-wait", "--", "./agent.sh")
	screen := p.waitFor("the countdown a second on", func(s string) bool {
		return strings.Contains(s, "waiting for the call budget: 59m58s left") || strings.Contains(s, "waiting for the call budget: 59m57s left")
	})
	assert.Contains(t, screen, "Call budget exhausted: 1 calls in the last hour (limit: 1); waiting 1h0m0s, until ")
	assert.Equal(t, 1, strings.Count(screen, "waiting for the call budget"), "one line, rewritten:\n%s", screen)
	p.keys("C-c")
	assert.Equal(t, exitInterrupted, p.exitCode())
	assert.Equal(t, 1, r.runs(t))
}
