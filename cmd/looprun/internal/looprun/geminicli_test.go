package looprun

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/loopbreaker/loopbreaker/internal/geminitest"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests run looprun on the real Gemini CLI (internal/geminitest),
// against a fake Gemini API that the test scripts: what looprun reads of
// Gemini CLI is what the real program prints. Each run of Gemini CLI
// takes a few seconds (Node.js loading its bundle): the tests are few.

// geminiProject is a git repository Gemini CLI works in under looprun,
// and the fake model it talks to.
type geminiProject struct {
	*repo
	env   *geminitest.Env
	clock *loopbreakertest.Clock
}

// newGeminiProject makes a git repository holding files, committed, and
// readies Gemini CLI against a model that answers with answer (settings:
// more of its settings.json, see geminitest.Start).
func newGeminiProject(t testing.TB, answer fakemodel.Answerer, files map[string]string, settings ...map[string]any) *geminiProject {
	t.Helper()
	var more map[string]any
	if len(settings) > 0 {
		more = settings[0]
	}
	env := geminitest.Start(t, answer, more)
	return &geminiProject{repo: agentRepo(t, files), env: env, clock: loopbreakertest.NewClock(start)}
}

// looprun runs looprun in this process on the project, with flags, on
// gemini -m geminitest.Model --approval-mode yolo with args (-p, the
// output format), and returns its output and exit code. Time is the
// project's clock: a wait takes none. Gemini CLI's output is in the
// iterations' logs (-quiet).
func (p *geminiProject) looprun(t testing.TB, flags []string, args ...string) (string, int) {
	t.Helper()
	argv := append(append([]string{"-dir", p.dir, "-interactive", "no", "-quiet"}, flags...),
		"--", p.env.Bin, "-m", geminitest.Model, "--approval-mode", "yolo")
	var out bytes.Buffer
	code := run(context.Background(), p.clock, append(argv, args...), strings.NewReader(""), &out, &out)
	return out.String(), code
}

// sessions counts the sessions the model was asked in: a session's first
// request holds one content, the person's.
func (p *geminiProject) sessions() int {
	n := 0
	for _, turn := range p.env.Model.Turns() {
		if len(turn.Messages) == 1 {
			n++
		}
	}
	return n
}

// runLoginTest is the shell command the model runs: a test that fails
// the same way every time.
var runLoginTest = fakemodel.Use("run_shell_command", map[string]string{"command": "sh login_test.sh"})

// A stuck agent: each Gemini CLI session runs the same failing test and
// says so, and Gemini CLI exits 0, its stream calling the command a
// success. looprun reads the command's exit code in the session's
// transcript and its failure in the stream: the same error each session,
// and the same-error signal stops the loop quoting it.
func TestGeminiFailingTheSameTestTripsSameError(t *testing.T) {
	p := newGeminiProject(t, fakemodel.AfterToolResult(runLoginTest, fakemodel.Say("The login test still fails.")),
		map[string]string{"login_test.sh": loginTest})
	out, code := p.looprun(t, []string{"-preset", "tdd-red-green", "-max-iterations", "6"}, "-p", "fix the tests", "--output-format", "stream-json")
	require.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, `stopped: Same error repeated 3 times (threshold: 3): "--- FAIL: TestLogin (0.00s)\n    login_test.go:12: want 200, got 500" (exit 3)`)
	assert.Contains(t, out, "Gemini CLI can exit 0 with its work failing", "the advice to give -check")
	assert.Equal(t, 3, p.sessions(), "one session an iteration")
	turns := p.env.Model.Turns()
	require.Len(t, turns, 6, "two turns a session")
	assert.Contains(t, turns[1].Last().Text(), "Exit Code: 1", "the model saw the test fail")
}

// geminiTurn is a turn that costs $0.06 at gemini-2.5-flash's list price:
// 150,000 input tokens at $0.30 per million, 50,000 of them cached at
// $0.03, and 9,000 output and 1,000 thinking tokens at $2.50.
var geminiTurn = fakemodel.Say("Done for now.").WithUsage(fakemodel.Usage{InputTokens: 100_000, CacheReadInputTokens: 50_000, OutputTokens: 9_000, ThoughtsTokens: 1_000})

// Sessions and spend: with --resume {session}, looprun gives the next run
// the session the last one ran in, and Gemini CLI sends the model the
// earlier conversation; its tokens, thinking included, are priced at the
// model its output names, and a cap of $0.10 is reached by the second
// session, with the json format as with stream-json.
func TestGeminiResumeHandsTheSessionOnAndSpendReachesTheCap(t *testing.T) {
	for _, format := range []string{"stream-json", "json"} {
		t.Run(format, func(t *testing.T) {
			p := newGeminiProject(t, fakemodel.Always(geminiTurn), map[string]string{})
			out, code := p.looprun(t, []string{"-max-cost", "0.10", "-no-progress", "-1", "-max-iterations", "4"},
				"-p", "go on", "--output-format", format, "--resume", "{session}")
			require.Equal(t, exitBudget, code, out)
			turns := p.env.Model.Turns()
			require.Len(t, turns, 2, out)
			assert.Equal(t, 1, p.sessions(), "one session, resumed")
			assert.Contains(t, turns[1].Text(), "Done for now.", "the resumed run carries the conversation")
			assert.Equal(t, 2, strings.Count(out, "$0.0565, 160000 tokens"), "each run's own cost and tokens:\n%s", out)
			assert.Contains(t, out, "spent: $0.1130 and 320000 tokens")
		})
	}
}

// Gemini CLI's provider limits: a 429 per minute it gave up on (its
// general.maxAttempts spent) is a throttle, waited out for 5 minutes on
// looprun's clock before the iteration runs again; a per-day quota is
// waited out too. Neither is a failure.
func TestGeminiQuotasAreWaitedOut(t *testing.T) {
	p := newGeminiProject(t, fakemodel.Script(
		fakemodel.QuotaPerMinute(geminitest.Model, 30*time.Second),
		fakemodel.Say("Fixed the login test."),
		fakemodel.QuotaPerDay(geminitest.Model, 0),
		fakemodel.Say("Fixed the logout test."),
	), map[string]string{})
	out, code := p.looprun(t, []string{"-no-progress", "-1", "-max-iterations", "2"}, "-p", "fix the tests", "--output-format", "stream-json")
	require.Equal(t, exitLimit, code, out)
	assert.Equal(t, 2, strings.Count(out, "LIMIT"), out)
	assert.Contains(t, out, "failures: 0")
	assert.Len(t, p.env.Model.Turns(), 4, "each iteration refused once, and run again")
	var waited time.Duration
	for _, d := range p.clock.Slept() {
		waited += d
	}
	assert.Positive(t, waited, "waited on looprun's clock")
}

// A status block at the end of the agent's last message is its done
// signal: two in a row complete the loop. The same block in a command's
// output is not its word.
func TestGeminiStatusBlockInTheLastMessageEndsTheLoop(t *testing.T) {
	p := newGeminiProject(t, fakemodel.AfterToolResult(fakemodel.Use("run_shell_command", map[string]string{"command": "cat status.txt"}),
		fakemodel.Say("The tests pass.\n\n"+ralphStatus("COMPLETE", true))),
		map[string]string{"status.txt": ralphStatus("IN_PROGRESS", false) + "\n"})
	out, code := p.looprun(t, []string{"-max-iterations", "5"}, "-p", "finish the work", "--output-format", "stream-json")
	require.Equal(t, exitDone, code, out)
	assert.Contains(t, out, "Complete: the agent reported done 2 times in a row (threshold: 2)")
	assert.Equal(t, 2, p.sessions())
	assert.NotContains(t, out, "agent: IN_PROGRESS")
}
