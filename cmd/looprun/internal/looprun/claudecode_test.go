package looprun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/claudetest"
	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
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
	clock *loopbreakertest.Clock
}

// newClaudeProject makes a git repository holding files, committed, and
// readies Claude Code against a model that answers with answer.
func newClaudeProject(t testing.TB, answer fakemodel.Answerer, files map[string]string) *claudeProject {
	t.Helper()
	env := claudetest.Start(t, answer)
	return &claudeProject{repo: agentRepo(t, files), env: env, clock: loopbreakertest.NewClock(start)}
}

// agentRepo makes a git repository holding files and a README, committed,
// for an agent to work in.
func agentRepo(t testing.TB, files map[string]string) *repo {
	t.Helper()
	dir := t.TempDir()
	files["README.md"] = "# project\n"
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	for _, args := range [][]string{
		{"init", "-q"}, {"config", "user.email", "looprun@example.com"}, {"config", "user.name", "looprun test"},
		{"add", "."}, {"commit", "-qm", "start"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	return &repo{dir: dir}
}

// claudeFlags run Claude Code as a loop does: printing, with its stream of
// JSON, allowed to run Bash (as root, which the tests may be, Claude Code
// refuses --dangerously-skip-permissions).
var claudeFlags = []string{"--output-format", "stream-json", "--verbose", "--allowedTools", "Bash", "--permission-mode", "acceptEdits"}

// looprun runs looprun in this process on the project, with flags, on
// Claude Code with args, and returns its output and exit code. Time is
// the project's clock: a wait takes none. Claude Code's output is in the
// iterations' logs (-quiet).
func (p *claudeProject) looprun(t testing.TB, flags []string, args ...string) (string, int) {
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
	for _, second := range []int{1, 3, 5} {
		assert.Contains(t, p.env.Model.Turns()[second].Text(), "login_test.go:12: want 200, got 500", "the model saw the test fail")
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
	assert.Contains(t, out, "Provider limit: This request would exceed your account's rate limit (no reset time given: waiting 5m0s)")
	assert.Contains(t, out, "runs refused by the provider: 1 (counted as no iteration)")
	assert.Contains(t, out, "iterations: 1 in this run, 1 in all (0 neutral); failures: 0")
	assert.Len(t, p.env.Model.Turns(), 2, "the refused request, and the iteration run again")
	assert.Len(t, p.sessions(), 2)
	var waited time.Duration
	for _, d := range p.clock.Slept() {
		waited += d
	}
	assert.Equal(t, loopbreaker.DefaultConfig().Limits.ThrottleWait, waited, "a throttle without a reset time: 5 minutes, on looprun's clock")
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

// Session continuity: with --resume {session}, looprun gives the next run
// the session the last one ran in, and Claude Code sends the model the
// earlier conversation; when the circuit opens the session is dropped, and
// the probe starts a new one.
func TestClaudeCodeSessionIsResumedAndDroppedAfterAnOpen(t *testing.T) {
	p := newClaudeProject(t, fakemodel.Script(
		fakemodel.Bash("echo one > step1.txt"), // session 1
		fakemodel.Say("Step one is done."),
		fakemodel.Say("Step two is done."), // session 1, resumed
		fakemodel.Bash("sh login_test.sh"), // resumed again: stuck until --max-turns
		fakemodel.Bash("sh login_test.sh"),
		fakemodel.Say("Starting afresh."), // the probe: a new session
	), map[string]string{"login_test.sh": loginTest})
	out, code := p.looprun(t, []string{"-failures", "1", "-no-progress", "-1", "-wait", "-max-iterations", "4"},
		append([]string{"-p", "go on", "--max-turns", "2", "--resume", "{session}"}, claudeFlags...)...)
	require.Equal(t, exitLimit, code, out)
	assert.Contains(t, out, "circuit OPEN: 1 consecutive failures (threshold: 1)")
	turns := p.env.Model.Turns()
	require.Len(t, turns, 6, out)
	ids := p.sessions()
	require.Len(t, ids, 2, "the first session three runs long, then the probe's")

	resumed := turns[2]
	assert.Contains(t, resumed.Text(), "Step one is done.", "the resumed run carries the conversation")
	assert.JSONEq(t, `{"command":"echo one > step1.txt","description":"Run echo one > step1.txt"}`, string(resumed.ToolUses()[0].Input))
	assert.Contains(t, turns[3].Text(), "Step two is done.")
	probe := turns[5]
	assert.NotContains(t, probe.Text(), "Step one is done.", "the probe starts afresh")
	assert.Equal(t, 1, strings.Count(probe.Text(), "go on"))

	history := readHistory(t, filepath.Join(p.dir, stateDirName, "loop.sessions.jsonl"))
	require.Len(t, history, 1)
	assert.Equal(t, ids[0], history[0].ID)
	assert.Equal(t, endCircuitOpen, history[0].End)
	assert.Equal(t, 3, history[0].Iterations)
	assert.Contains(t, out, "session: "+ids[1]+", offered to the next iteration")
}

// ralphStatus is the status block a Ralph agent ends its answer with.
func ralphStatus(status string, exit bool) string {
	return fmt.Sprintf("---RALPH_STATUS---\nSTATUS: %s\nTASKS_COMPLETED_THIS_LOOP: 1\nFILES_MODIFIED: 0\nTESTS_STATUS: PASSING\n"+
		"WORK_TYPE: IMPLEMENTATION\nEXIT_SIGNAL: %t\nRECOMMENDATION: nothing left\n---END_RALPH_STATUS---", status, exit)
}

// A status block at the end of the model's final text is the agent's
// done signal: two in a row (the default -done-signals) complete the loop.
func TestClaudeCodeStatusBlockInTheFinalTextEndsTheLoop(t *testing.T) {
	p := newClaudeProject(t, fakemodel.AfterToolResult(fakemodel.Bash("sh test.sh"),
		fakemodel.Say("The tests pass.\n\n"+ralphStatus("COMPLETE", true))),
		map[string]string{"test.sh": "echo ok\n"})
	out, code := p.looprun(t, []string{"-max-iterations", "5"}, append([]string{"-p", "finish the work"}, claudeFlags...)...)
	require.Equal(t, exitDone, code, out)
	assert.Contains(t, out, "Complete: the agent reported done 2 times in a row (threshold: 2)")
	assert.Len(t, p.sessions(), 2)
	assert.Contains(t, out, "agent: COMPLETE, tasks done 1, files modified 0, tests PASSING, IMPLEMENTATION, exit signal true; next: nothing left")
}

// The same block only inside a tool's result (the agent printed a file
// that holds one) is no done signal, nor is the done marker in it: the
// loop goes on.
func TestClaudeCodeStatusBlockInAToolResultIsNoDoneSignal(t *testing.T) {
	p := newClaudeProject(t, fakemodel.AfterToolResult(fakemodel.Bash("cat status.txt"),
		fakemodel.Say("I read the status file; the work goes on.")),
		map[string]string{"status.txt": ralphStatus("COMPLETE", true) + "\n"})
	out, code := p.looprun(t, []string{"-max-iterations", "3", "-no-progress", "-1"}, append([]string{"-p", "finish the work"}, claudeFlags...)...)
	require.Equal(t, exitLimit, code, out)
	assert.Len(t, p.sessions(), 3)
	assert.Contains(t, p.env.Model.Turns()[1].ToolResults()[0].Text, "EXIT_SIGNAL: true", "the model did see the block")
	assert.NotContains(t, out, "agent: COMPLETE")
}

// A Bash tool call deletes CLAUDE.md: looprun puts it back, byte for
// byte, and stops with its protected-files exit code.
func TestClaudeCodeDeletingCLAUDEmdIsUndone(t *testing.T) {
	memory := "# Rules\n\n- Never delete this file.\n- Ąžuolas: a rune or two, and no newline at the end"
	p := newClaudeProject(t, fakemodel.AfterToolResult(fakemodel.Bash("rm CLAUDE.md"), fakemodel.Say("Removed it.")),
		map[string]string{"CLAUDE.md": memory})
	out, code := p.looprun(t, []string{"-max-iterations", "3"}, append([]string{"-p", "tidy up"}, claudeFlags...)...)
	require.Equal(t, exitProtected, code, out)
	data, err := os.ReadFile(filepath.Join(p.dir, "CLAUDE.md"))
	require.NoError(t, err)
	assert.Equal(t, memory, string(data))
	assert.Len(t, p.sessions(), 1, "no session after the loss")
	assert.Contains(t, p.env.Model.Turns()[0].System+p.env.Model.Turns()[0].Text(), "Never delete this file.", "Claude Code gave the model CLAUDE.md")
	assert.Contains(t, out, "CLAUDE.md")
}

// ralphPrompt is a ralph-claude-code user's PROMPT.md: take the plan's
// first open item, do it, tick it off, end with the status block.
const ralphPrompt = `# Ralph development instructions

Study fix_plan.md. Take the first item that is not done, implement it,
and mark it done ("- [x]") in fix_plan.md. One item per loop.

End your answer with the RALPH_STATUS block. Set EXIT_SIGNAL: true only
when every item of fix_plan.md is done.
`

// The prompt-file workflow of a ralph-claude-code user runs unchanged:
// PROMPT.md goes to Claude Code on its stdin, the model takes fix_plan.md's
// first open item each loop and ticks it off, and the loop is done when
// the plan is; .ralphrc's settings hold.
func TestClaudeCodeRalphPromptWorkflowRunsUnchanged(t *testing.T) {
	answer := func(r *fakemodel.Request) fakemodel.Reply {
		if len(r.ToolResults()) == 0 { // a session's first turn
			return fakemodel.Bash(`sed -i '0,/- \[ \]/s//- [x]/' fix_plan.md && echo "$(grep -c '\[x\]' fix_plan.md) done" > progress.txt`)
		}
		return fakemodel.Say("Ticked off the first open item.\n\n" + ralphStatus("IN_PROGRESS", false))
	}
	p := newClaudeProject(t, answer, map[string]string{
		"PROMPT.md":   ralphPrompt,
		"fix_plan.md": "# Fix plan\n\n- [ ] login: hash the password\n- [ ] logout: clear the session\n",
		".ralphrc":    "CB_NO_PROGRESS_THRESHOLD=2\nCB_COOLDOWN_MINUTES=30\n",
	})
	out, code := p.looprun(t, []string{"-plan", "fix_plan.md", "-max-iterations", "4"},
		"-p", "--output-format", "json", "--allowedTools", "Bash", "--permission-mode", "acceptEdits")
	require.Equal(t, exitDone, code, out)
	assert.Contains(t, out, "no-progress 2 (.ralphrc CB_NO_PROGRESS_THRESHOLD)")
	assert.Contains(t, out, "stopped: Complete: all 2 tasks of the plan are done (exit 0)")
	assert.Len(t, p.sessions(), 2)
	assert.Contains(t, p.env.Model.Turns()[0].Text(), "Study fix_plan.md", "PROMPT.md, from stdin, is the prompt")
	plan, err := os.ReadFile(filepath.Join(p.dir, "fix_plan.md"))
	require.NoError(t, err)
	assert.Equal(t, "# Fix plan\n\n- [x] login: hash the password\n- [x] logout: clear the session\n", string(plan))
}

// With a prompt on the command line too, Claude Code puts PROMPT.md (its
// stdin) after it, in one message: the model reads both, -p's first.
func TestClaudeCodeReadsThePromptTextThenPROMPTmd(t *testing.T) {
	p := newClaudeProject(t, fakemodel.Script(fakemodel.Say("On it.")), map[string]string{"PROMPT.md": ralphPrompt})
	out, code := p.looprun(t, []string{"-max-iterations", "1"}, append([]string{"-p", "Mind the failing login test."}, claudeFlags...)...)
	require.Equal(t, exitLimit, code, out)
	require.Len(t, p.env.Model.Turns(), 1)
	assert.Contains(t, p.env.Model.Turns()[0].Text(), "Mind the failing login test.\n"+ralphPrompt)
}

// Without credit the API refuses with a 400, which Claude Code shortens to
// "Credit balance is too low": no waiting ends that, and looprun stops at
// once with its provider exit code, having counted no failure.
func TestClaudeCodeWithoutCreditStops(t *testing.T) {
	p := newClaudeProject(t, fakemodel.Always(fakemodel.CreditTooLow()), map[string]string{})
	out, code := p.looprun(t, nil, append([]string{"-p", "fix the tests"}, claudeFlags...)...)
	require.Equal(t, exitProvider, code, out)
	assert.Contains(t, out, "STOP")
	assert.Contains(t, out, "failures: 0")
	assert.Len(t, p.env.Model.Turns(), 1, "one session, one refused request")
}
