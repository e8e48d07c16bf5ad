package hook

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/loopbreaker/loopbreaker/internal/geminitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxLoopCalls bounds the calls a looping model makes in the head to
// head: past them it gives up and says so.
const maxLoopCalls = 60

// loopModel is a model that makes the calls next gives, one a turn (next
// is given the call's number, from 1), until maxLoopCalls, then ends its
// turn. Gemini CLI's loop-detection judge (its own request, from the
// 30th turn) is answered with judge's confidence that the session loops.
type loopModel struct {
	next  func(n int) string // the command of the n-th call; "" ends the turn
	judge float64
	calls int
	ended bool // the model ended its turn: nothing stopped it
}

func (m *loopModel) answer(r *fakemodel.Request) fakemodel.Reply {
	if strings.HasPrefix(r.System, "You are a diagnostic agent") {
		return fakemodel.Say(fmt.Sprintf(`{"unproductive_state_analysis": "judged by the test", "unproductive_state_confidence": %.2f}`, m.judge))
	}
	cmd := ""
	if m.calls < maxLoopCalls {
		cmd = m.next(m.calls + 1)
	}
	if cmd == "" {
		m.ended = true
		return fakemodel.Say("I stop here.")
	}
	m.calls++
	return fakemodel.Use("run_shell_command", map[string]string{"command": cmd})
}

// loopShape is a shape of session the head to head runs.
type loopShape struct {
	name  string
	next  func(n int) string
	judge float64 // what Gemini CLI's judge answers
	loops bool    // a loop, to be stopped; false: a healthy session
}

// The head to head with Gemini CLI's own loop detection: the same model,
// once with Gemini CLI's detection on and looprun's hooks off, once with
// the hooks on and Gemini CLI's detection off, on each shape of loop and
// on a healthy session. looprun's hooks never stop a loop later than
// Gemini CLI does, stop the same error under new arguments in a handful
// of calls with no model to ask, and never stop the healthy session.
func TestGeminiLoopDetectionHeadToHead(t *testing.T) {
	geminitest.Require(t) // without the binary, skipped here, not only in each run
	shapes := []loopShape{
		{"the same failing call", func(int) string { return "sh login_test.sh" }, 0, true},
		{"a cycle of three calls", func(n int) string { return "cat " + string(rune('a'+(n-1)%3)) + ".txt" }, 0, true},
		{"the same error under new arguments (judge: loop)", func(n int) string { return fmt.Sprintf("sh login_test.sh -run TestLogin%d", n) }, 0.95, true},
		{"the same error under new arguments (judge: no loop)", func(n int) string { return fmt.Sprintf("sh login_test.sh -run TestLogin%d", n) }, 0.1, true},
		{"a healthy session", func(n int) string {
			if n > 20 {
				return ""
			}
			return fmt.Sprintf("echo step %d > step%d.txt", n, n)
		}, 0.1, false},
	}
	var table []string
	for _, shape := range shapes {
		theirs := runLoopShape(t, shape, false)
		ours := runLoopShape(t, shape, true)
		table = append(table, fmt.Sprintf("| %s | %s | %s |", shape.name, theirs, ours))
		if !shape.loops {
			assert.False(t, ours.stopped, "%s: the hooks let it be", shape.name)
			assert.False(t, theirs.stopped, "%s: Gemini CLI lets it be", shape.name)
			continue
		}
		require.True(t, ours.stopped, "%s: the hooks stopped it", shape.name)
		if theirs.stopped {
			assert.LessOrEqual(t, ours.calls, theirs.calls, "%s: never later than Gemini CLI", shape.name)
		}
		if strings.HasPrefix(shape.name, "the same error under new arguments") {
			// A handful: the calls up to the trip, the one refused, the
			// one that ends the session.
			assert.LessOrEqual(t, ours.calls, 7, "%s: in a handful of calls", shape.name)
		}
	}
	t.Logf("| shape | Gemini CLI's detection | looprun's hooks |\n|---|---|---|\n%s", strings.Join(table, "\n"))
}

// loopResult is how a session of a shape went: whether something stopped
// it before the model gave up, after how many calls, and the tokens the
// model's requests spent.
type loopResult struct {
	stopped      bool
	calls, turns int
	tokens       int
}

func (r loopResult) String() string {
	if !r.stopped {
		return fmt.Sprintf("not stopped (%d calls, %d tokens)", r.calls, r.tokens)
	}
	return fmt.Sprintf("stopped after %d calls, %d tokens", r.calls, r.tokens)
}

// runLoopShape runs one session of the shape in Gemini CLI: with
// looprun's hooks (and Gemini CLI's detection off), or with neither but
// Gemini CLI's detection.
func runLoopShape(t *testing.T, shape loopShape, hooks bool) loopResult {
	var res loopResult
	t.Run(fmt.Sprintf("%s, hooks %v", shape.name, hooks), func(t *testing.T) {
		geminitest.Require(t)
		bin := looprunBinary(t)
		m := &loopModel{next: shape.next, judge: shape.judge}
		more := map[string]any{}
		if hooks {
			more["model"] = map[string]any{"disableLoopDetection": true}
		}
		env := geminitest.Start(t, m.answer, more)
		p := &geminiProject{agentProject: newAgentProject(t, bin, map[string]string{
			"login_test.sh": "echo '--- FAIL: TestLogin (0.00s)'\necho '    login_test.go:12: want 200, got 500'\nexit 1\n",
			"a.txt":         "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n",
		}), env: env}
		if hooks {
			p.looprun("hooks", "install", "-agent", "gemini")
		}
		run := p.gemini()
		res.calls = m.calls
		res.turns = len(env.Model.Turns())
		res.tokens = res.turns * (fakemodel.DefaultUsage.InputTokens + fakemodel.DefaultUsage.OutputTokens)
		res.stopped = !m.ended
		t.Logf("%s: exit %d, %s", shape.name, run.code, res)
	})
	return res
}
