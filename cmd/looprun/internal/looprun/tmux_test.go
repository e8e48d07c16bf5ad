//go:build unix

package looprun

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// At a real terminal (a tmux pane), a provider limit shows the prompt,
// whose countdown rewrites its line each second, and "t" terminates with
// exit code 7.
func TestLimitPromptAtARealTerminal(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed")
	}
	r := newRepo(t, `if [ $n -eq 1 ]; then echo "Claude AI usage limit reached|$(( $(date +%s) + 18000 ))"; exit 1; fi
echo "step $n" > "work_$n.txt"
`)
	fifos := t.TempDir()
	begin, pane, done := filepath.Join(fifos, "begin"), filepath.Join(fifos, "pane"), filepath.Join(fifos, "done")
	for _, f := range []string{begin, pane, done} {
		require.NoError(t, syscall.Mkfifo(f, 0o600))
	}
	name := fmt.Sprintf("looprun-test-%d", os.Getpid())
	script := fmt.Sprintf(`read go < %q; COUNTER=%q %q -dir %q -- ./agent.sh; echo "exit=$?" > %q`,
		begin, r.counter, looprunBin, r.dir, done)
	tm := func(args ...string) {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-L", name}, args...)...).CombinedOutput()
		require.NoError(t, err, "tmux %v: %s", args, out)
	}
	tm("new-session", "-d", "-s", name, "-x", "200", "-y", "50", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command(tmux, "-L", name, "kill-server").Run() })
	tm("pipe-pane", "-t", name, "-o", "cat > "+pane)

	// What the pane shows, as it comes.
	lines := make(chan string)
	go func() {
		defer close(lines)
		f, err := os.Open(pane)
		if err != nil {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Split(splitAtCarriageReturns)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	go func() {
		if f, err := os.OpenFile(begin, os.O_WRONLY, 0); err == nil {
			fmt.Fprintln(f, "go")
			f.Close()
		}
	}()

	deadline := time.NewTimer(sessionBound)
	defer deadline.Stop()
	var seen strings.Builder
	waitFor := func(text string) {
		t.Helper()
		for !strings.Contains(seen.String(), text) {
			select {
			case l, ok := <-lines:
				require.True(t, ok, "the pane closed before %q:\n%s", text, seen.String())
				seen.WriteString(l + "\n")
			case <-deadline.C:
				t.Fatalf("the pane did not show %q:\n%s", text, seen.String())
			}
		}
	}
	waitFor("or [t]erminate? (terminating in 30s)")
	waitFor("(terminating in 29s)") // a second later, the same line, rewritten
	tm("send-keys", "-t", name, "t", "Enter")

	exitLine := make(chan string, 1)
	go func() {
		data, _ := os.ReadFile(done)
		exitLine <- strings.TrimSpace(string(data))
	}()
	select {
	case got := <-exitLine:
		assert.Equal(t, "exit=8", got, seen.String())
	case <-deadline.C:
		t.Fatalf("looprun did not end:\n%s", seen.String())
	}
	assert.Equal(t, 1, r.runs(t))
}

// splitAtCarriageReturns splits a terminal's output at line feeds and at
// carriage returns, which rewrite a line.
func splitAtCarriageReturns(data []byte, atEOF bool) (int, []byte, error) {
	for i, b := range data {
		if b == '\n' || b == '\r' {
			return i + 1, data[:i], nil
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}
