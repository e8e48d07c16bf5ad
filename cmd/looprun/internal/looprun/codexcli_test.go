package looprun

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/internal/codextest"
	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests run looprun on the real Codex CLI (internal/codextest),
// against a fake Responses API that the test scripts: what looprun reads
// of Codex is what the real binary prints.

// codexProject is a git repository Codex works in under looprun, and the
// fake model it talks to.
type codexProject struct {
	*repo
	env   *codextest.Env
	clock *loopbreakertest.Clock
}

// newCodexProject makes a git repository holding files, committed, and
// readies Codex against a model that answers with answer (config: more
// lines of Codex's config.toml, see codextest.Start).
func newCodexProject(t testing.TB, answer fakemodel.Answerer, files map[string]string, config ...string) *codexProject {
	t.Helper()
	env := codextest.Start(t, answer, config...)
	return &codexProject{repo: agentRepo(t, files), env: env, clock: loopbreakertest.NewClock(start)}
}

// looprun runs looprun in this process on the project, with flags, on
// codex exec --json with args, and returns its output and exit code. Time
// is the project's clock: a wait takes none. Codex's output is in the
// iterations' logs (-quiet).
func (p *codexProject) looprun(t testing.TB, flags []string, args ...string) (string, int) {
	t.Helper()
	argv := append(append([]string{"-dir", p.dir, "-interactive", "no", "-quiet"}, flags...), "--", p.env.Bin, "exec", "--json")
	var out bytes.Buffer
	code := run(context.Background(), p.clock, append(argv, args...), strings.NewReader(""), &out, &out)
	return out.String(), code
}

// threads returns the thread ids of the model's turns, in order, each
// once: Codex sends its thread in a header of every request.
func (p *codexProject) threads() []string {
	var ids []string
	for _, turn := range p.env.Model.Turns() {
		id := turn.Header.Get("Thread-Id")
		if len(ids) == 0 || ids[len(ids)-1] != id {
			ids = append(ids, id)
		}
	}
	return ids
}

// failingTest is the test the model runs: it fails the same way every
// time.
var failingTest = fakemodel.Exec("sh login_test.sh")

// A stuck agent: each Codex session runs the same failing test and says
// so, and Codex exits 0. looprun reads the test's failure out of Codex's
// events, the same error each session, and the same-error signal stops
// the loop quoting it.
func TestCodexFailingTheSameTestTripsSameError(t *testing.T) {
	p := newCodexProject(t, fakemodel.AfterToolResult(failingTest, fakemodel.Say("The login test still fails.")),
		map[string]string{"login_test.sh": loginTest})
	out, code := p.looprun(t, []string{"-preset", "tdd-red-green", "-max-iterations", "6"}, "fix the tests")
	require.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, `stopped: Same error repeated 3 times (threshold: 3): "--- FAIL: TestLogin (0.00s)\n    login_test.go:12: want 200, got 500" (exit 3)`)
	assert.Len(t, p.threads(), 3, "one session an iteration")
	turns := p.env.Model.Turns()
	require.Len(t, turns, 6, "two turns a session")
	for _, second := range []int{1, 3, 5} {
		assert.Contains(t, turns[second].Last().Text(), "login_test.go:12: want 200, got 500", "the model saw the test fail")
	}
}

// The same, while the agent edits a file each session (a patch that adds
// one): every iteration makes progress, so only the error can tell the
// loop is stuck, and with failures in a row switched off it is the
// same-error signal that stops it, after five sessions of it.
func TestCodexStuckWhileEditingFilesTripsOnTheError(t *testing.T) {
	sessions := 0
	answer := func(r *fakemodel.Request) fakemodel.Reply {
		switch len(r.ToolResults()) {
		case 0: // a session's first turn
			sessions++
			return fakemodel.ApplyPatch(fmt.Sprintf("*** Begin Patch\n*** Add File: attempt-%d.txt\n+attempt %d\n*** End Patch\n", sessions, sessions))
		case 1:
			return failingTest
		}
		return fakemodel.Say("Tried another fix; the login test still fails.")
	}
	p := newCodexProject(t, answer, map[string]string{"login_test.sh": loginTest})
	out, code := p.looprun(t, []string{"-failures", "-1", "-max-iterations", "8"}, "fix the tests")
	require.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, `stopped: Same error repeated 5 times (threshold: 5): "--- FAIL: TestLogin (0.00s)`)
	assert.Len(t, p.threads(), 5)
	for i := 1; i <= 5; i++ {
		assert.FileExists(t, filepath.Join(p.dir, fmt.Sprintf("attempt-%d.txt", i)), "Codex applied the patch")
	}
	assert.Equal(t, 5, strings.Count(out, "FAIL        1 "), "each iteration failed, having changed a file:\n%s", out)
}

// The model answers every request with a 429 rate_limit_exceeded: Codex
// retries five times, then gives up and exits 1. looprun takes that for
// a provider limit, no failure: without -limit-wait it stops with the
// provider exit code, the circuit closed.
func TestCodexRetriesExhaustedAreAProviderLimit(t *testing.T) {
	p := newCodexProject(t, fakemodel.Always(fakemodel.RateLimitExceeded(codextest.Model, time.Second)), map[string]string{})
	out, code := p.looprun(t, []string{"-limit-wait", "0"}, "fix the tests")
	require.Equal(t, exitProvider, code, out)
	assert.Contains(t, out, "LIMIT")
	assert.Contains(t, out, "Provider limit: 429 Too Many Requests (no reset time given: waiting 5m0s)")
	assert.Contains(t, out, "-limit-wait 0 never waits (exit 8)")
	assert.Contains(t, out, "failures: 0")
	assert.NotContains(t, out, "OPEN")
	assert.Len(t, p.env.Model.Turns(), 6, "the request, and Codex's five retries")
}

// Codex's usage limit (the ChatGPT backend's usage_limit_reached, which
// Codex says as "You’ve hit your usage limit. ... try again at ...") is
// waited out until its reset, on looprun's clock, and the iteration runs
// again; a spent quota stops the loop with the provider exit code. Codex
// does not retry either.
func TestCodexUsageLimitIsWaitedOutAndNoQuotaStops(t *testing.T) {
	reset := start.Add(2 * time.Hour)
	p := newCodexProject(t, fakemodel.Script(
		fakemodel.UsageLimitReached("plus", reset),
		fakemodel.Say("Fixed the login test."),
		fakemodel.InsufficientQuota(),
	), map[string]string{})
	out, code := p.looprun(t, []string{"-no-progress", "-1", "-max-iterations", "2"}, "fix the tests")
	require.Equal(t, exitProvider, code, out)
	assert.Contains(t, out, "Provider limit: You’ve hit your usage limit (resets 2027-01-15 10:00 UTC)")
	assert.Contains(t, out, "Provider stopped the loop (no waiting ends this): Quota exceeded. Check your plan and billing details")
	assert.Contains(t, out, "STOP")
	assert.Contains(t, out, "failures: 0")
	assert.Len(t, p.env.Model.Turns(), 3, "the refused request, the iteration run again, and the one refused for good")
	var waited time.Duration
	for _, d := range p.clock.Slept() {
		waited += d
	}
	assert.Equal(t, 2*time.Hour, waited.Round(time.Minute), "until the reset Codex named")
}

// codexTurn is a turn that costs $0.62 at gpt-5.5's list price: 60,000
// input tokens at $5 per million, 40,000 cached at $0.50, 10,000 output
// at $30.
var codexTurn = fakemodel.Say("Done for now.").WithUsage(fakemodel.Usage{InputTokens: 60_000, CacheReadInputTokens: 40_000, OutputTokens: 10_000})

// Codex reports tokens, no cost: looprun hands them to the breaker named
// by the model (codextest.Model, from CODEX_HOME's config.toml), which
// prices them, cached tokens at their own price; at $0.62 a session a cap
// of $1 is reached by the second, and looprun stops with exit 5.
func TestCodexUsageReachesTheSpendCaps(t *testing.T) {
	p := newCodexProject(t, fakemodel.Always(codexTurn), map[string]string{})
	out, code := p.looprun(t, []string{"-max-cost", "1", "-no-progress", "-1", "-max-iterations", "4"}, "go on")
	require.Equal(t, exitBudget, code, out)
	assert.Len(t, p.threads(), 2)
	assert.Equal(t, 2, strings.Count(out, "$0.6200, 110000 tokens"), "each run's cost and tokens:\n%s", out)
	assert.Contains(t, out, "spent: $1.2400 and 220000 tokens")

	p = newCodexProject(t, fakemodel.Always(codexTurn), map[string]string{})
	out, code = p.looprun(t, []string{"-max-tokens", "300000", "-no-progress", "-1", "-max-iterations", "4"}, "-m", "gpt-5.4", "go on")
	require.Equal(t, exitBudget, code, out)
	assert.Len(t, p.threads(), 3)
	assert.Equal(t, "gpt-5.4", p.env.Model.Turns()[0].Model)
	assert.Equal(t, 3, strings.Count(out, "$0.3100, 110000 tokens"), "-m's model, at its price:\n%s", out)
}

// Sessions: with codex exec resume {session}, looprun gives the next run
// the thread the last one ran in, and Codex sends the model the earlier
// conversation; the first run, with no thread yet, starts one.
func TestCodexResumeHandsTheThreadOn(t *testing.T) {
	p := newCodexProject(t, fakemodel.Script(
		fakemodel.Say("Step one is done."),
		fakemodel.Say("Step two is done."),
	), map[string]string{})
	out, code := p.looprun(t, []string{"-no-progress", "-1", "-max-iterations", "2"}, "resume", "{session}", "go on")
	require.Equal(t, exitLimit, code, out)
	turns := p.env.Model.Turns()
	require.Len(t, turns, 2, out)
	ids := p.threads()
	require.Len(t, ids, 1, "one thread, resumed")
	assert.Contains(t, turns[1].Text(), "Step one is done.", "the resumed run carries the conversation")
	assert.Equal(t, 2, strings.Count(turns[1].Text(), "go on"))
	assert.Contains(t, out, "session: "+ids[0]+", offered to the next iteration")
}

// A status block at the end of the agent's last message is its done
// signal: two in a row complete the loop. The same block in a command's
// output is not its word.
func TestCodexStatusBlockInTheLastMessageEndsTheLoop(t *testing.T) {
	p := newCodexProject(t, fakemodel.AfterToolResult(fakemodel.Exec("cat status.txt"),
		fakemodel.Say("The tests pass.\n\n"+ralphStatus("COMPLETE", true))),
		map[string]string{"status.txt": ralphStatus("IN_PROGRESS", false) + "\n"})
	out, code := p.looprun(t, []string{"-max-iterations", "5"}, "finish the work")
	require.Equal(t, exitDone, code, out)
	assert.Contains(t, out, "Complete: the agent reported done 2 times in a row (threshold: 2)")
	assert.Len(t, p.threads(), 2)
	assert.Contains(t, out, "agent: COMPLETE, tasks done 1, files modified 0, tests PASSING, IMPLEMENTATION, exit signal true; next: nothing left")
	assert.NotContains(t, out, "agent: IN_PROGRESS")
}
