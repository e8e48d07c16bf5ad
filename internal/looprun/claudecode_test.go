package looprun

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/claudetest"
	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests run looprun on the real Claude Code (internal/claudetest),
// against a fake model that the test scripts: what looprun reads of
// Claude Code is what the real binary prints.

// claudeProject is a git repository Claude Code works in under looprun,
// and the fake model it talks to.
type claudeProject struct {
	*repo
	env   *claudetest.Env
	clock *fakeClock
}

// newClaudeProject makes a git repository holding files, committed, and
// readies Claude Code against a model that answers with answer.
func newClaudeProject(t *testing.T, answer fakemodel.Answerer, files map[string]string) *claudeProject {
	t.Helper()
	env := claudetest.Start(t, answer)
	r := &repo{dir: t.TempDir()}
	r.git(t, "init", "-q")
	r.git(t, "config", "user.email", "looprun@example.com")
	r.git(t, "config", "user.name", "looprun test")
	files["README.md"] = "# project\n"
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(r.dir, name), []byte(data), 0o644))
	}
	r.git(t, "add", ".")
	r.git(t, "commit", "-qm", "start")
	return &claudeProject{repo: r, env: env, clock: &fakeClock{now: start}}
}

// claudeFlags run Claude Code as a loop does: printing, with its stream of
// JSON, allowed to run Bash (as root, which the tests may be, Claude Code
// refuses --dangerously-skip-permissions).
var claudeFlags = []string{"--output-format", "stream-json", "--verbose", "--allowedTools", "Bash", "--permission-mode", "acceptEdits"}

// looprun runs looprun in this process on the project, with flags, on
// Claude Code with args, and returns its output and exit code. Time is
// the project's clock: a wait takes none. Claude Code's output is in the
// iterations' logs (-quiet).
func (p *claudeProject) looprun(t *testing.T, flags []string, args ...string) (string, int) {
	t.Helper()
	argv := append(append([]string{"-dir", p.dir, "-interactive", "no", "-quiet"}, flags...), "--", p.env.Bin)
	var out bytes.Buffer
	code := run(context.Background(), p.clock, append(argv, args...), strings.NewReader(""), &out, &out)
	return out.String(), code
}

// sessions returns the session ids of the model's turns, in order, each
// once.
func (p *claudeProject) sessions() []string {
	var ids []string
	for _, turn := range p.env.Model.Turns() {
		id := turn.Header.Get("X-Claude-Code-Session-Id")
		if len(ids) == 0 || ids[len(ids)-1] != id {
			ids = append(ids, id)
		}
	}
	return ids
}

// opens reports whether a request opens a session's prompt: its last
// message is the person's, not a tool's result.
func opens(r *fakemodel.Request) bool {
	return len(r.ToolResults()) == 0 || r.Last().Content[0].Type != "tool_result"
}

// loginTest is a test that fails the same way every time it runs.
const loginTest = `echo '--- FAIL: TestLogin (0.00s)'
echo '    login_test.go:12: want 200, got 500'
echo FAIL
exit 1
`

// A stuck agent: the model runs the same failing test turn after turn,
// and each session ends at --max-turns as an error. looprun reads the
// test's failure out of Claude Code's stream of JSON, the same error each
// session, and the same-error signal stops the loop quoting it.
func TestClaudeCodeFailingTheSameTestTripsSameError(t *testing.T) {
	p := newClaudeProject(t, fakemodel.Always(fakemodel.Bash("sh login_test.sh")), map[string]string{"login_test.sh": loginTest})
	out, code := p.looprun(t, []string{"-preset", "tdd-red-green", "-max-iterations", "6"},
		append([]string{"-p", "fix the tests", "--max-turns", "2"}, claudeFlags...)...)
	require.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, `stopped: Same error repeated 3 times (threshold: 3): "--- FAIL: TestLogin (0.00s)\n    login_test.go:12: want 200, got 500" (exit 3)`)
	assert.Len(t, p.sessions(), 3, "one session an iteration")
	assert.Len(t, p.env.Model.Turns(), 6, "two turns a session")
	for _, turn := range p.env.Model.Turns()[1:2] {
		assert.Contains(t, turn.Text(), "login_test.go:12: want 200, got 500", "the model saw the test fail")
	}
}

// The model refuses at a spent usage limit, with a 429 and the unified
// rate-limit headers: Claude Code gives up and says so, looprun reads it
// as a provider limit (no failure, no iteration), waits it out on its
// clock, and runs the iteration again.
func TestClaudeCodeRateLimitIsWaitedOut(t *testing.T) {
	p := newClaudeProject(t, fakemodel.Script(
		fakemodel.RateLimited(time.Hour, start.Add(time.Hour)),
		fakemodel.Say("Fixed the login test."),
	), map[string]string{})
	out, code := p.looprun(t, []string{"-limit-wait", "10m", "-max-iterations", "1"},
		append([]string{"-p", "fix the tests"}, claudeFlags...)...)
	require.Equal(t, exitLimit, code, out)
	assert.Contains(t, out, "LIMIT")
	assert.Contains(t, out, "Provider limit: Request rejected (429) (no reset time given: waiting 5m0s)")
	assert.Contains(t, out, "runs refused by the provider: 1 (counted as no iteration)")
	assert.Contains(t, out, "iterations: 1 in this run, 1 in all (0 neutral); failures: 0")
	assert.Len(t, p.env.Model.Turns(), 2, "the refused request, and the iteration run again")
	assert.Len(t, p.sessions(), 2)
	var waited time.Duration
	for _, d := range p.clock.slept {
		waited += d
	}
	assert.Equal(t, loopbreaker.DefaultProviderThrottleWait, waited, "a throttle without a reset time: 5 minutes, on looprun's clock")
}

// pricedTurn is a turn that costs $0.45 at claude-sonnet-4-5's list
// price ($3 per million input tokens, $15 per million output tokens),
// which Claude Code applies to the model it asked for, though the answer
// names another.
var pricedTurn = fakemodel.Say("Done for now.").WithUsage(fakemodel.Usage{InputTokens: 100_000, OutputTokens: 10_000})

// Claude Code's total_cost_usd drives -max-cost: at $0.45 a session a cap
// of $1 is reached by the third, and looprun stops there with exit 5,
// having warned at 80%.
func TestClaudeCodeCostDrivesMaxCost(t *testing.T) {
	turn := pricedTurn
	turn.Model = "claude-haiku-4-5" // Claude Code prices what it asked for
	p := newClaudeProject(t, fakemodel.Always(turn), map[string]string{})
	out, code := p.looprun(t, []string{"-max-cost", "1", "-no-progress", "-1"},
		append([]string{"-p", "go on", "--model", "claude-sonnet-4-5"}, claudeFlags...)...)
	require.Equal(t, exitBudget, code, out)
	assert.Len(t, p.sessions(), 3)
	assert.Equal(t, 3, strings.Count(out, "$0.4500, 110000 tokens"), "each run's own cost and tokens:\n%s", out)
	assert.Contains(t, out, "warning: Spend")
	assert.Contains(t, out, "spent: $1.3500 and 330000 tokens")
}

// On --resume, Claude Code's total_cost_usd is the whole session's, not
// the run's: looprun counts each run's own cost, the difference from the
// session's total it saw last, and the same cap stops the loop at the
// same session as fresh sessions do.
func TestClaudeCodeResumedSessionsCostTheirOwnRun(t *testing.T) {
	p := newClaudeProject(t, fakemodel.Always(pricedTurn), map[string]string{})
	out, code := p.looprun(t, []string{"-max-cost", "1", "-no-progress", "-1"},
		append([]string{"-p", "go on", "--model", "claude-sonnet-4-5", "--resume", "{session}"}, claudeFlags...)...)
	require.Equal(t, exitBudget, code, out)
	assert.Len(t, p.sessions(), 1, "one session, resumed")
	assert.Len(t, p.env.Model.Turns(), 3, "three runs")
	assert.Equal(t, 3, strings.Count(out, "$0.4500, 110000 tokens"), "each run's own cost and tokens:\n%s", out)
	assert.Contains(t, out, "spent: $1.3500 and 330000 tokens")
}
