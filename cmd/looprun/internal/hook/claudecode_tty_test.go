//go:build unix

package hook

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// At a terminal, where a person works with Claude Code, the person sees
// the trip as the hook's problem, and why the run ended: Claude Code
// prints the hook's stopReason under the call.
func TestClaudeCodeAtATerminalThePersonSeesWhyTheRunEnded(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed")
	}
	p := newClaudeProject(t, fakemodel.Always(fakemodel.Bash("sh login_test.sh")), map[string]string{
		"login_test.sh":         failingTest,
		".claude/settings.json": `{"permissions": {"allow": ["Bash"]}}` + "\n",
	})
	p.looprun("hooks", "install")
	// A person who has used Claude Code before, and trusts the project.
	key := os.Getenv("ANTHROPIC_API_KEY")
	state := map[string]any{
		"hasCompletedOnboarding": true, "theme": "dark",
		"customApiKeyResponses": map[string]any{"approved": []string{key[len(key)-20:]}, "rejected": []string{}},
		"projects":              map[string]any{p.dir: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}},
	}
	data, err := json.Marshal(state)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(p.env.Home, ".claude.json"), data, 0o600))

	fifos := t.TempDir()
	begin, pane, done := filepath.Join(fifos, "begin"), filepath.Join(fifos, "pane"), filepath.Join(fifos, "done")
	for _, f := range []string{begin, pane, done} {
		require.NoError(t, syscall.Mkfifo(f, 0o600))
	}
	name := fmt.Sprintf("looprun-hook-test-%d", os.Getpid())
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-L", name}, args...)...).CombinedOutput()
		require.NoError(t, err, "tmux %v: %s", args, out)
		return string(out)
	}
	tm("new-session", "-d", "-s", name, "-x", "200", "-y", "50", "-c", p.dir,
		"sh", "-c", fmt.Sprintf(`read go < %q; %q --permission-mode acceptEdits --allowedTools Bash -- "run the login test"; echo $? > %q`, begin, p.env.Bin, done))
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		_, _ = os.ReadFile(done) // until Claude Code has exited
	}()
	t.Cleanup(func() {
		// Claude Code leaves as a person makes it leave, and writes its
		// last files before the test's directories go.
		_ = exec.Command(tmux, "-L", name, "send-keys", "-t", name, "/exit", "Enter").Run()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
		}
		_ = exec.Command(tmux, "-L", name, "kill-server").Run()
	})
	tm("pipe-pane", "-t", name, "-o", "cat > "+pane)

	// Each time the pane changes, its screen is read again.
	changed := make(chan struct{}, 1)
	go func() {
		f, err := os.Open(pane)
		if err != nil {
			return
		}
		defer f.Close()
		buf := make([]byte, 4096)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	}()
	require.NoError(t, os.WriteFile(begin, []byte("go\n"), 0o600))
	deadline := time.After(90 * time.Second)
	screen := ""
	for !strings.Contains(screen, "went on calling tools after it was refused.") {
		select {
		case <-changed:
			screen = strings.Join(strings.Fields(tm("capture-pane", "-p", "-J", "-t", name, "-S", "-200")), " ")
		case <-deadline:
			t.Fatalf("the screen never showed why the run ended:\n%s", tm("capture-pane", "-p", "-t", name))
		}
	}
	assert.Contains(t, screen, "PostToolUseFailure:Bash hook reported a problem loopbreaker stopped your tool calls: Same action failed 3 times in a row",
		"the trip, as Claude Code shows a hook's block")
	assert.Contains(t, screen, "PreToolUse:Bash hook stopped Claude looprun ended the run: Same action failed 3 times in a row (threshold: 3",
		"the end, and why")
	runs, err := os.ReadFile(filepath.Join(p.dir, "runs.txt"))
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(string(runs), "run"))
}
