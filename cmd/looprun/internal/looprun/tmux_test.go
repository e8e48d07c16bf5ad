//go:build unix

package looprun

import (
	"bufio"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/tmuxtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// At a real terminal (a tmux pane), a provider limit shows the prompt,
// whose countdown rewrites its line each second, and "t" terminates with
// exit code 8.
func TestLimitPromptAtARealTerminal(t *testing.T) {
	r := newRepo(t, `if [ $n -eq 1 ]; then echo "Claude AI usage limit reached|$(( $(date +%s) + 18000 ))"; exit 1; fi
echo "step $n" > "work_$n.txt"
`)
	pane := tmuxtest.Start(t, r.dir, fmt.Sprintf(`COUNTER=%q %q -dir %q -- ./agent.sh`, r.counter, looprunBin, r.dir))

	// What the pane shows, as it comes.
	lines := make(chan string)
	go func() {
		defer close(lines)
		f, err := pane.Output()
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
	exited := pane.Exited()
	pane.Go()

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
	pane.Keys("t", "Enter")

	select {
	case code := <-exited:
		assert.Equal(t, 8, code, seen.String())
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
