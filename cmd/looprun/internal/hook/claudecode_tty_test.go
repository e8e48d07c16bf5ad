//go:build unix

package hook

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/tmuxtest"
	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// At a terminal, where a person works with Claude Code, the person sees
// the trip as the hook's problem, and why the run ended: Claude Code
// prints the hook's stopReason under the call.
func TestClaudeCodeAtATerminalThePersonSeesWhyTheRunEnded(t *testing.T) {
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

	pane := tmuxtest.Start(t, p.dir, fmt.Sprintf(`%q --permission-mode acceptEdits --allowedTools Bash -- "run the login test"`, p.env.Bin))
	exited := pane.Exited()
	t.Cleanup(func() {
		// Claude Code leaves as a person makes it leave, and writes its
		// last files before the test's directories go.
		pane.TryKeys("/exit", "Enter")
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
		}
	})

	// Each time the pane changes, its screen is read again.
	changed := make(chan struct{}, 1)
	go func() {
		f, err := pane.Output()
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
	pane.Go()
	deadline := time.After(90 * time.Second)
	screen := ""
	for !strings.Contains(screen, "went on calling tools after it was refused.") {
		select {
		case <-changed:
			screen = strings.Join(strings.Fields(pane.Screen()), " ")
		case <-deadline:
			t.Fatalf("the screen never showed why the run ended:\n%s", pane.Screen())
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
