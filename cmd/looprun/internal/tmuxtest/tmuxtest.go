//go:build unix

// Package tmuxtest runs a command at a real terminal for a test: a pane of
// tmux, on a tmux server of the test's own, whose output the test reads
// as it comes and to which it types keys.
package tmuxtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Pane is a pane of 200 columns and 50 lines running one shell command.
type Pane struct {
	t                *testing.T
	tmux, name       string
	begin, out, done string
}

// Start starts command (run by sh -c, in dir) in a new pane, where it
// waits until Go. It skips the test when tmux is not installed. The tmux
// server is killed when the test ends, after the test's own cleanups.
func Start(t *testing.T, dir, command string) *Pane {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed")
	}
	fifos := t.TempDir()
	p := &Pane{
		t: t, tmux: tmux, name: fmt.Sprintf("looprun-test-%d-%s", os.Getpid(), filepath.Base(fifos)),
		begin: filepath.Join(fifos, "begin"), out: filepath.Join(fifos, "out"), done: filepath.Join(fifos, "done"),
	}
	for _, f := range []string{p.begin, p.out, p.done} {
		require.NoError(t, syscall.Mkfifo(f, 0o600))
	}
	script := fmt.Sprintf("read go < %q; %s\necho $? > %q", p.begin, command, p.done)
	p.tmuxRun("new-session", "-d", "-s", p.name, "-x", "200", "-y", "50", "-c", dir, "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command(tmux, "-L", p.name, "kill-server").Run() })
	p.tmuxRun("pipe-pane", "-t", p.name, "-o", "cat > "+p.out)
	return p
}

// tmuxRun runs a tmux command on the pane's server, and returns its
// output; an error fails the test.
func (p *Pane) tmuxRun(args ...string) string {
	p.t.Helper()
	out, err := exec.Command(p.tmux, append([]string{"-L", p.name}, args...)...).CombinedOutput()
	require.NoError(p.t, err, "tmux %v: %s", args, out)
	return string(out)
}

// Go lets the command run.
func (p *Pane) Go() {
	p.t.Helper()
	require.NoError(p.t, os.WriteFile(p.begin, []byte("go\n"), 0o600))
}

// Output opens what the pane prints, as it prints it, escape sequences
// and all. It blocks until the pane is ready to write; open it once.
func (p *Pane) Output() (*os.File, error) { return os.Open(p.out) }

// Keys types keys into the pane, as tmux send-keys takes them ("Enter").
func (p *Pane) Keys(keys ...string) {
	p.t.Helper()
	p.tmuxRun(append([]string{"send-keys", "-t", p.name}, keys...)...)
}

// TryKeys types keys as Keys does, and passes over an error: for a
// cleanup, when the pane may be gone.
func (p *Pane) TryKeys(keys ...string) {
	_ = exec.Command(p.tmux, append([]string{"-L", p.name, "send-keys", "-t", p.name}, keys...)...).Run()
}

// Screen returns what the pane shows and the 200 lines above it, its
// wrapped lines joined.
func (p *Pane) Screen() string {
	p.t.Helper()
	return p.tmuxRun("capture-pane", "-p", "-J", "-t", p.name, "-S", "-200")
}

// Exited returns a channel that receives the command's exit status when
// it ends (-1 if it cannot be read). Call it once.
func (p *Pane) Exited() <-chan int {
	c := make(chan int, 1)
	go func() {
		data, _ := os.ReadFile(p.done)
		code, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			code = -1
		}
		c <- code
	}()
	return c
}
