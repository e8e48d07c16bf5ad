package hook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The model runs the same failing test again and again. The second
// failure is a warning the model reads; the third trips the tool-steps
// preset's same-action-failed signal, and the model is told why: the rule,
// the call, the error, and what to do.
func TestSameFailingCallTripsAtTheThirdAndTheModelIsToldWhy(t *testing.T) {
	p := newProject(t, nil)
	const test = "go test ./..."
	const failure = "Exit code 1\n--- FAIL: TestLogin (0.00s)\n    login_test.go:12: want 200, got 500\nFAIL"

	a := p.call(bashFailed(test, failure))
	assert.Equal(t, answer{code: 0}, a, "one failure: nothing to say")

	a = p.call(bashFailed(test, failure))
	assert.Contains(t, a.Specific.Context, "loopbreaker warning: this call has failed 2 times in a row")
	assert.Contains(t, a.Specific.Context, `Bash {"command":"go test ./..."}`)
	assert.Empty(t, a.Decision)

	a = p.call(bashFailed(test, failure))
	require.Equal(t, "block", a.Decision, "the trip is the hook's blocking error, which the model reads")
	assert.Contains(t, a.Reason, `loopbreaker stopped your tool calls: Same action failed 3 times in a row (threshold: 3`)
	assert.Contains(t, a.Reason, `Bash {"command":"go test ./..."}`)
	assert.Contains(t, a.Reason, "You made the same call 3 times in a row and it failed each time")
	assert.Contains(t, a.Reason, "  login_test.go:12: want 200, got 500", "the error, quoted")
	assert.Contains(t, a.Reason, "Tool calls are refused for the next 30s")
	assert.False(t, a.ended(), "the model may still stop by itself")
	assert.Equal(t, 1, lines(p.log(), "tripped: Same action failed 3 times"))
}

// Claude Code's Bash calls carry a description the model writes afresh
// each time: it is no part of the action, or a loop would never repeat.
func TestBashDescriptionIsNoPartOfTheAction(t *testing.T) {
	p := newProject(t, nil)
	for i, desc := range []string{"Run the tests", "Run the tests again", "Check the tests once more"} {
		ev := bashFailed("go test ./...", "Exit code 1")
		ev["tool_input"] = map[string]any{"command": "go test ./...", "description": desc}
		a := p.call(ev)
		if i == 2 {
			assert.Equal(t, "block", a.Decision)
		}
	}
}

// After the trip the model calls a tool again: the call is refused, and
// the model is told that one more ends its run; it calls again, and the
// run ends, the person shown why.
func TestCallsWhileOpenAreRefusedAndThenTheRunEnds(t *testing.T) {
	p := newProject(t, nil)
	for range 3 {
		p.call(bashFailed("make", "Exit code 2"))
	}
	a := p.call(preBash("make"))
	why, denied := a.denied()
	require.True(t, denied)
	assert.Contains(t, why, "loopbreaker refused this call: Same action failed 3 times in a row")
	assert.Contains(t, why, "If you call a tool again now, your run ends.")
	assert.False(t, a.ended())

	a = p.call(tool(PreToolUse, "Read", map[string]any{"file_path": "/etc/hosts"}))
	_, denied = a.denied()
	assert.True(t, denied, "any tool, while the circuit is open")
	require.True(t, a.ended())
	assert.Contains(t, a.Stop, "looprun ended the run: Same action failed 3 times in a row")
	assert.Contains(t, a.Stop, "the model went on calling tools after it was refused")
}

// -refusals 0 ends the run at the first call after the trip.
func TestNoRefusalsEndsTheRunAtTheFirstCall(t *testing.T) {
	p := newProject(t, nil, "-refusals", "0")
	for range 3 {
		p.call(bashFailed("make", "Exit code 2"))
	}
	assert.True(t, p.call(preBash("ls")).ended())
}

// The cooldown passes: one probe goes through, and its success closes the
// circuit; the refusals are forgotten.
func TestAfterTheCooldownAProbeGoesThroughAndClosesTheCircuit(t *testing.T) {
	p := newProject(t, nil)
	for range 3 {
		p.call(bashFailed("make", "Exit code 2"))
	}
	_, denied := p.call(preBash("make")).denied()
	require.True(t, denied)

	p.clock.now = p.clock.now.Add(31 * time.Second)
	a := p.call(preBash("make clean"))
	_, denied = a.denied()
	assert.False(t, denied, "the probe")
	assert.Zero(t, p.state().Refused)
	assert.Equal(t, answer{code: 0}, p.call(bashDone("make clean", "removed")))
	assert.Equal(t, answer{code: 0}, p.call(preBash("go build")), "closed again")
	why, denied := p.call(preBash("make")).denied()
	assert.True(t, denied, "the failing call once more would be its 4th with the same result: refused before it runs")
	assert.Contains(t, why, "the 4th call was refused before it ran")
}

// The same call returning the same result: a warning at 3, a trip at 4.
func TestSameResultAgainAndAgainTripsAtTheFourth(t *testing.T) {
	p := newProject(t, nil)
	for i := 1; i <= 4; i++ {
		a := p.call(bashDone("ls out/", ""))
		switch i {
		case 3:
			assert.Contains(t, a.Specific.Context, "this call has returned the same result 3 times in a row")
		case 4:
			assert.Contains(t, a.Reason, "Same action with the same observation 4 times in a row (threshold: 4)")
			assert.Contains(t, a.Reason, "it will not change")
		default:
			assert.Empty(t, a.out)
		}
	}
}

// A warning is given once while it holds, and again when it comes back.
func TestAWarningIsGivenOnceWhileItHolds(t *testing.T) {
	p := newProject(t, nil, "-failures", "3")
	assert.Empty(t, p.call(bashFailed("a", "Exit code 1")).out)
	assert.Contains(t, p.call(bashFailed("b", "Exit code 1")).Specific.Context, "your last 2 tool calls failed")
	assert.Empty(t, p.call(bashDone("c", "ok")).out)
	assert.Empty(t, p.call(bashFailed("d", "Exit code 1")).out)
	assert.Contains(t, p.call(bashFailed("e", "Exit code 1")).Specific.Context, "your last 2 tool calls failed", "it came back")
}

// A call the person interrupted is no failure.
func TestAnInterruptedCallIsNoFailure(t *testing.T) {
	p := newProject(t, nil)
	for range 5 {
		ev := bashFailed("sleep 100", "Interrupted by user")
		ev["is_interrupt"] = true
		assert.Empty(t, p.call(ev).out)
	}
	assert.Equal(t, loopbreaker.Closed, loopbreakerState(t, p))
}

// A tool's error that reads like the model provider's limit is a tool's
// failure all the same: the model's limits are not the tools'.
func TestAToolErrorThatMentionsARateLimitIsAFailure(t *testing.T) {
	p := newProject(t, nil)
	for range 2 {
		p.call(bashFailed("curl api", "Exit code 22\nHTTP 429 Too Many Requests: rate limit exceeded, retry after 3600 seconds"))
	}
	a := p.call(bashFailed("curl api", "Exit code 22\nHTTP 429 Too Many Requests: rate limit exceeded, retry after 3600 seconds"))
	assert.Contains(t, a.Reason, "Same action failed 3 times in a row")
}

// A new prompt from the person closes the open circuit.
func TestANewPromptClosesTheCircuit(t *testing.T) {
	p := newProject(t, nil)
	for range 3 {
		p.call(bashFailed("make", "Exit code 2"))
	}
	p.call(preBash("make"))
	a := p.call(event(UserPromptSubmit, "prompt", "try the other target"))
	assert.Contains(t, a.Notice, "the circuit was open (Same action failed 3 times in a row")
	assert.Equal(t, answer{code: 0}, p.call(preBash("make other")))
	assert.Zero(t, p.state().Refused)
}

// The session's spend is read from its transcript as it grows, each
// message once (Claude Code writes one line per content block), priced,
// and held to -max-cost: the 80% warning, then the run ends at the cap.
func TestTheSpendCapEndsTheRun(t *testing.T) {
	// claude-sonnet-4-5: $3 per million input tokens, $15 per million
	// output tokens; a message of 100,000 in and 10,000 out costs $0.45.
	p := newProject(t, nil, "-max-cost", "1")
	p.said("msg_1", "claude-sonnet-4-5", 100_000, 10_000, 2)
	assert.Empty(t, p.call(bashDone("ls", "a")).out, "$0.45")
	p.said("msg_2", "claude-sonnet-4-5", 100_000, 10_000, 3)
	a := p.call(bashDone("ls", "b"))
	assert.Contains(t, a.Specific.Context, "Spend", "$0.90: the warning")
	assert.False(t, a.ended())
	p.said("msg_3", "claude-sonnet-4-5", 100_000, 10_000, 1)
	a = p.call(bashDone("ls", "c"))
	require.True(t, a.ended(), "$1.35")
	assert.Contains(t, a.Stop, "looprun ended the run: Spend cap reached")

	_, denied := p.call(preBash("ls")).denied()
	assert.True(t, denied, "and a call after it is refused")
	assert.True(t, p.call(preBash("ls")).ended())
}

// A Bash command that would destroy a protected path is refused before it
// runs, with the reason; the model reads it as the tool's error.
func TestACommandThatWouldDestroyAProtectedPathIsRefused(t *testing.T) {
	p := newProject(t, map[string]string{"specs/login.md": "# login\n", "CLAUDE.md": "rules\n", "src/app.go": "package app\n"})
	for _, tc := range []struct {
		command string
		refused string // "" when allowed
	}{
		{"rm -rf specs", "rm -rf removes protected"},
		{"cd src && rm -rf ../specs", "rm -rf removes protected"},
		{"echo > CLAUDE.md", "truncates protected"},
		{"mv CLAUDE.md /tmp/rules.md", "protected"},
		{"rm -rf .loopbreaker", "rm -rf removes protected"},
		{"rm -rf src/build && go build ./...", ""},
		{"echo '- [x] login' >> CLAUDE.md", ""},
	} {
		why, denied := p.call(preBash(tc.command)).denied()
		if tc.refused == "" {
			assert.False(t, denied, "%s: %s", tc.command, why)
			continue
		}
		require.True(t, denied, tc.command)
		assert.Contains(t, why, "loopbreaker refused this call: ", tc.command)
		assert.Contains(t, why, tc.refused, tc.command)
	}
	assert.Equal(t, loopbreaker.Closed, loopbreakerState(t, p), "a refused command is no failure")
}

// The agent's editing tools may edit a protected file (a plan is meant to
// be updated), but neither empty it nor change a read-only one: Claude
// Code's settings, which hold these hooks, are read-only by default.
func TestEditsOfProtectedAndReadOnlyFiles(t *testing.T) {
	p := newProject(t, map[string]string{"IMPLEMENTATION_PLAN.md": "- [ ] login\n", ".claude/settings.json": "{}\n", "LOCKED.md": "x\n"})
	plan := filepath.Join(p.dir, "IMPLEMENTATION_PLAN.md")
	settings := filepath.Join(p.dir, ".claude", "settings.json")
	for _, tc := range []struct {
		tool    string
		input   map[string]any
		refused string
	}{
		{"Edit", map[string]any{"file_path": plan, "old_string": "[ ]", "new_string": "[x]"}, ""},
		{"Write", map[string]any{"file_path": plan, "content": "- [x] login\n"}, ""},
		{"Write", map[string]any{"file_path": plan, "content": ""}, "truncates protected"},
		{"Edit", map[string]any{"file_path": settings, "old_string": "{", "new_string": "{\"hooks\":{}"}, "edits read-only"},
		{"MultiEdit", map[string]any{"file_path": settings, "edits": []any{}}, "edits read-only"},
		{"Write", map[string]any{"file_path": filepath.Join(p.dir, "new.go"), "content": "package x\n"}, ""},
		{"Read", map[string]any{"file_path": settings}, ""},
	} {
		why, denied := p.call(tool(PreToolUse, tc.tool, tc.input)).denied()
		if tc.refused == "" {
			assert.False(t, denied, "%s %v: %s", tc.tool, tc.input, why)
			continue
		}
		assert.True(t, denied, "%s %v", tc.tool, tc.input)
		assert.Contains(t, why, tc.refused)
	}

	p.flags = []string{"-read-only", "LOCKED.md"}
	why, denied := p.call(tool(PreToolUse, "Write", map[string]any{"file_path": filepath.Join(p.dir, "LOCKED.md"), "content": "y"})).denied()
	assert.True(t, denied)
	assert.Contains(t, why, "LOCKED.md")
	_, denied = p.call(tool(PreToolUse, "Edit", map[string]any{"file_path": settings})).denied()
	assert.False(t, denied, "-read-only replaces the default list")
}

// The hooks of parallel tool calls run at the same time: each records its
// step under the session's lock, and none is lost.
func TestParallelHooksLoseNoStep(t *testing.T) {
	p := newProject(t, nil, "-failures", "-1")
	const calls = 40
	var wg sync.WaitGroup
	codes := make([]int, calls)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev := bashDone("echo "+strings.Repeat("x", i), "x")
			if i%2 == 1 {
				ev = bashFailed("false "+strings.Repeat("y", i), "Exit code 1")
			}
			codes[i] = p.call(ev).code
		}()
	}
	wg.Wait()
	assert.Equal(t, make([]int, calls), codes)
	st := loopbreakerStats(t, p)
	assert.Equal(t, calls, st.Iterations, "every step recorded")
	assert.Equal(t, calls/2, st.Failures.Total)
}

// What goes wrong in the hook itself never breaks the session: it is said
// on stderr, and the call goes on (exit code 1, Claude Code's non-blocking
// error).
func TestTheHookFailsOpen(t *testing.T) {
	p := newProject(t, nil)
	for _, tc := range []struct {
		name, stdin, event, says string
	}{
		{"bad JSON", `{"hook_event_name": "PreToolUse", `, "PreToolUse", "not Claude Code's hook JSON"},
		{"no event", `{"session_id":"s"}`, "", "no hook_event_name"},
		{"an unknown event", `{"hook_event_name":"Teleport","session_id":"s"}`, "", `unknown hook event "Teleport"`},
		{"another event than the command line's", `{"hook_event_name":"PostToolUse","session_id":"s"}`, "PreToolUse", "the command line says PreToolUse, and the event is PostToolUse"},
		{"no session", `{"hook_event_name":"PreToolUse","tool_name":"Bash"}`, "", "no session_id"},
	} {
		a := p.raw([]byte(tc.stdin), tc.event)
		assert.Equal(t, 1, a.code, tc.name)
		assert.Empty(t, a.out, tc.name)
		assert.Contains(t, a.stderr, "looprun hook: ", tc.name)
		assert.Contains(t, a.stderr, tc.says, tc.name)
		assert.Contains(t, a.stderr, "the call goes on", tc.name)
	}
	p.flags = []string{"-max-cost", "-3"}
	a := p.call(preBash("ls"))
	assert.Equal(t, 1, a.code, "a bad flag")
	assert.Contains(t, a.stderr, "-max-cost")
}

// A corrupt state is said once, moved aside for a person to look at, and
// the session's breaker starts afresh.
func TestACorruptStateIsMovedAsideAndTheSessionStartsAfresh(t *testing.T) {
	p := newProject(t, nil)
	p.call(bashFailed("make", "Exit code 2"))
	statePath := filepath.Join(p.hooksDir(), p.session+".json")
	require.NoError(t, os.WriteFile(statePath, []byte(`{"version":1,"steps":{"state":"SIDEWAYS"`), 0o600))

	a := p.call(bashFailed("make", "Exit code 2"))
	assert.Equal(t, 1, a.code)
	assert.Contains(t, a.stderr, "corrupt state "+statePath)
	assert.Contains(t, a.stderr, "moved aside to "+statePath+".corrupt-20261126T100000")
	aside, _ := filepath.Glob(statePath + ".corrupt-*")
	assert.Len(t, aside, 1)

	assert.Equal(t, answer{code: 0}, p.call(bashFailed("make", "Exit code 2")), "afresh: one failure")
	assert.Equal(t, 1, loopbreakerStats(t, p).Failures.Total)
}

// With -fail-closed the hook's own failure refuses the call and ends the
// run, and a corrupt state stays where it is.
func TestFailClosedRefusesAndEnds(t *testing.T) {
	p := newProject(t, nil, "-fail-closed")
	a := p.raw([]byte(`not json`), PreToolUse)
	assert.Equal(t, 0, a.code)
	why, denied := a.denied()
	assert.True(t, denied)
	assert.Contains(t, why, "looprun hook failed, and fails closed")
	assert.True(t, a.ended())

	statePath := filepath.Join(p.hooksDir(), p.session+".json")
	require.NoError(t, os.MkdirAll(p.hooksDir(), 0o755))
	require.NoError(t, os.WriteFile(statePath, []byte(`garbage`), 0o600))
	a = p.call(bashDone("ls", ""))
	assert.True(t, a.ended())
	assert.Contains(t, a.Stop, "corrupt state")
	data, err := os.ReadFile(statePath)
	require.NoError(t, err)
	assert.Equal(t, "garbage", string(data), "kept for a person")
}

// LOOPRUN_HOOKS=off turns the hooks off: nothing is read, nothing answered.
func TestHooksOffAnswerNothing(t *testing.T) {
	p := newProject(t, nil)
	p.env[OffEnv] = "off"
	for range 5 {
		assert.Equal(t, answer{code: 0}, p.call(bashFailed("make", "Exit code 2")))
	}
	assert.Equal(t, answer{code: 0}, p.call(preBash("rm -rf specs")))
	assert.NoDirExists(t, p.hooksDir())
}

// The session's end removes its state; its start prunes the state of
// sessions no hook has touched for a day.
func TestEndedAndStaleSessionsArePruned(t *testing.T) {
	p := newProject(t, nil)
	p.call(bashDone("ls", "a"))
	other := *p
	other.session = "gone-without-its-end"
	other.call(bashDone("ls", "a"))
	statePath := func(id string) string { return filepath.Join(p.hooksDir(), id+".json") }
	require.FileExists(t, statePath(other.session))

	old := start.Add(-25 * time.Hour)
	for _, ext := range []string{".json", ".lock"} {
		require.NoError(t, os.Chtimes(filepath.Join(p.hooksDir(), other.session+ext), old, old))
	}
	assert.Equal(t, answer{code: 0}, p.call(event(SessionStart, "source", "startup")))
	assert.NoFileExists(t, statePath(other.session))
	assert.NoFileExists(t, filepath.Join(p.hooksDir(), other.session+".lock"))
	assert.FileExists(t, statePath(p.session), "a day is not over for this one")

	assert.Equal(t, answer{code: 0}, p.call(event(SessionEnd, "reason", "other")))
	assert.NoFileExists(t, statePath(p.session))
	assert.NoFileExists(t, filepath.Join(p.hooksDir(), p.session+".lock"))
	assert.FileExists(t, filepath.Join(p.hooksDir(), ".gitignore"), "the state stays out of git")
}

// A session id that cannot name a file names one by its hash.
func TestASessionIdThatIsNoFileNameIsHashed(t *testing.T) {
	assert.Equal(t, "0b5e7f1c-session", fileName("0b5e7f1c-session"))
	for _, id := range []string{"../../etc/passwd", ".hidden", "a/b", strings.Repeat("x", 200), ""} {
		name := fileName(id)
		assert.Regexp(t, `^session-[0-9a-f]{32}$`, name, id)
	}
}

func loopbreakerStats(t *testing.T, p *project) loopbreaker.Stats {
	t.Helper()
	st := p.state()
	require.NotNil(t, st.Steps)
	cb, err := loopbreaker.New(loopbreaker.Config{Now: p.clock.Now})
	require.NoError(t, err)
	require.NoError(t, cb.Restore(*st.Steps))
	return cb.Stats()
}

func loopbreakerState(t *testing.T, p *project) loopbreaker.State {
	t.Helper()
	if p.state().Steps == nil {
		return loopbreaker.Closed
	}
	return loopbreakerStats(t, p).State
}

// With a call budget, the model is warned at 80% of it, and refused when
// it is spent: waiting ends that, so the run goes on being refused, and
// then ends, as at an open circuit.
func TestTheCallBudgetWarnsThenRefuses(t *testing.T) {
	p := newProject(t, nil, "-calls-per-hour", "5")
	for i := 1; i <= 5; i++ {
		a := p.call(bashDone(fmt.Sprintf("ls %d", i), "a"))
		if i == 4 {
			assert.Contains(t, a.Specific.Context, "loopbreaker warning: Call budget 80% used: 4 of 5 calls in the last hour")
		}
	}
	why, denied := p.call(preBash("ls 6")).denied()
	require.True(t, denied)
	assert.Contains(t, why, "Call budget")
	assert.True(t, p.call(preBash("ls 6")).ended())
}
