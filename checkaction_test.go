package loopbreaker

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toolStepsBreaker is a breaker of the tool-steps preset on a test clock.
func toolStepsBreaker(t *testing.T) (*CircuitBreaker, func(time.Duration)) {
	t.Helper()
	cfg, err := Preset("tool-steps")
	require.NoError(t, err)
	cb, clock := newTestBreaker(t, cfg)
	return cb, clock.Advance
}

// A call that failed twice in a row runs a third time (it may pass: a
// flaky test, a service back); a third failure opens the circuit after it
// ran.
func TestTheThirdFailingCallRunsAndItsFailureTrips(t *testing.T) {
	cb, _ := toolStepsBreaker(t)
	edit := Action{Tool: "edit_file", Args: `{"path":"a.go","old":"x := 1"}`}
	for range 3 {
		require.True(t, cb.CheckAction(edit).Allow)
		cb.Record(failedCall(edit.Tool, edit.Args, "old text not found in a.go"))
	}
	d := cb.CheckAction(edit)
	require.False(t, d.Allow)
	assert.Equal(t, Open, d.State)
	assert.ErrorIs(t, d.Err(), ErrOpen)
	assert.Equal(t, ReasonRepeatedActionError, d.Reason.Kind)
	assert.False(t, d.Reason.Proposed)
	assert.Equal(t, "old text not found in a.go", d.Reason.Sample)
	assert.Equal(t, 30*time.Second, d.RetryAfter)
}

// One more of the same step with others between is refused before it
// runs: the file read the fourth time in a few steps, with nothing changed.
func TestTheFourthScatteredRepeatIsRefusedBeforeItRuns(t *testing.T) {
	cb, _ := toolStepsBreaker(t)
	read := Action{Tool: "read_file", Args: `{"path":"config.yaml"}`}
	for i := range 3 {
		require.True(t, cb.CheckAction(read).Allow)
		cb.Record(call(read.Tool, read.Args, "port: 8080"))
		cb.Record(call("grep", fmt.Sprintf(`{"pattern":"port%d"}`, i), "no match"))
	}
	d := cb.CheckAction(read)
	require.False(t, d.Allow)
	assert.Equal(t, ReasonRepeatedStep, d.Reason.Kind)
	assert.True(t, d.Reason.Proposed)
	assert.Equal(t, 3, d.Reason.Count, "the calls that ran")
	assert.Equal(t, `Same action with the same observation 3 times in the last 30 steps; the 4th call was refused before it ran (threshold: 4): read_file {"path":"config.yaml"}`, d.Reason.String())
	assert.Equal(t, 6, cb.Stats().Iterations, "the refused call is no iteration")
	assert.Equal(t, Open, cb.State())
}

// Another call, after two failures of one, runs: only the call that would
// complete the repeat is refused.
func TestAnotherCallAfterTwoFailuresRuns(t *testing.T) {
	cb, _ := toolStepsBreaker(t)
	for range 2 {
		cb.Record(failedCall("edit_file", `{"old":"x := 1"}`, "old text not found"))
	}
	assert.True(t, cb.CheckAction(Action{Tool: "read_file", Args: `{"path":"a.go"}`}).Allow)
	assert.True(t, cb.CheckAction(Action{Tool: "edit_file", Args: `{"old":"x := 2"}`}).Allow)
	assert.Equal(t, Closed, cb.State())
}

// A call that returned the same result three times in a row runs a
// fourth time: a success may have done what its result does not show (a
// browser going back, page after page). Its fourth same result opens the
// circuit after it ran.
func TestTheFourthIdenticalResultIsJudgedAfterItRuns(t *testing.T) {
	cb, _ := toolStepsBreaker(t)
	back := Action{Tool: "browser_go_back", Args: "{}"}
	for range 3 {
		cb.Record(call(back.Tool, back.Args, "Navigated back"))
	}
	require.True(t, cb.CheckAction(back).Allow)
	cb.Record(call(back.Tool, back.Args, "Navigated back"))
	d := cb.Check()
	require.False(t, d.Allow)
	assert.Equal(t, ReasonRepeatedActionObservation, d.Reason.Kind)
	assert.False(t, d.Reason.Proposed)
}

// One more round of a cycle is refused before it runs: read, patch, test,
// each with the same result, twice round and once more but the last step.
func TestTheCallThatClosesTheThirdRoundOfACycleIsRefused(t *testing.T) {
	cb, _ := toolStepsBreaker(t)
	read := call("read_file", `{"path":"a.go"}`, "package a")
	patch := call("apply_patch", `{"patch":"--- a.go"}`, "patch applied")
	test := failedCall("go_test", `{"pkg":"./a"}`, "--- FAIL: TestA")
	for round := range 3 {
		for i, it := range []Iteration{read, patch, test} {
			if round == 2 && i == 2 {
				break
			}
			require.True(t, cb.CheckAction(*it.Action).Allow, "round %d step %d", round, i)
			cb.Record(it)
		}
	}
	d := cb.CheckAction(*test.Action)
	require.False(t, d.Allow)
	assert.Equal(t, ReasonCycle, d.Reason.Kind)
	assert.True(t, d.Reason.Proposed)
	assert.Equal(t, `read_file {"path":"a.go"} → apply_patch {"patch":"--- a.go"} → go_test {"pkg":"./a"}`, d.Reason.Action, "the cycle's steps in order")
	assert.Contains(t, d.Reason.String(), "Cycle: the same 3 steps with the same observations, 3 times over the last 9 steps; its last call was refused before it ran")
}

// CheckAction takes no probe: after the cooldown, Check lets the probe's
// model turn through, and each of its tool calls is judged on its own.
// While the circuit is open, every call is refused with the opening's
// reason.
func TestCheckActionTakesNoProbe(t *testing.T) {
	cb, advance := toolStepsBreaker(t)
	cb.ForceOpen("maintenance")
	d := cb.CheckAction(Action{Tool: "read_file"})
	require.False(t, d.Allow)
	assert.Equal(t, ReasonForcedOpen, d.Reason.Kind)

	cb.Resume()
	for range 3 {
		cb.Record(failedCall("go_test", "", "FAIL"))
	}
	require.False(t, cb.CheckAction(Action{Tool: "go_test"}).Allow)
	assert.False(t, cb.CheckAction(Action{Tool: "read_file"}).Allow, "open: every call waits")
	advance(30 * time.Second)

	probe := cb.Check()
	require.True(t, probe.Allow)
	require.True(t, probe.Probe)
	assert.True(t, cb.CheckAction(Action{Tool: "read_file"}).Allow, "the probe's turn calls a tool")
	assert.True(t, cb.CheckAction(Action{Tool: "write_file"}).Allow, "and another")
	assert.False(t, cb.Check().Allow, "the probe is still out")
}

// CheckAction refuses what Check refuses: a spend cap, for one.
func TestCheckActionRefusesAtASpendCap(t *testing.T) {
	cfg, _ := Preset("tool-steps")
	cfg.Spend.MaxTokens = 100
	cb, _ := newTestBreaker(t, cfg)
	cb.Record(Iteration{Action: &Action{Tool: "read_file"}, Usage: Usage{InputTokens: 100}})
	d := cb.CheckAction(Action{Tool: "read_file", Args: "b"})
	require.False(t, d.Allow)
	assert.ErrorIs(t, d.Err(), ErrSpendCap)
	assert.Equal(t, Closed, cb.State(), "a cap opens no circuit")
}

// One failure short of the trip, Check's Decision says so, with the
// evidence, and the model's words say what one more does; a success
// clears it.
func TestDecisionSaysWhichSignalIsOneStepShort(t *testing.T) {
	cb, _ := toolStepsBreaker(t)
	cb.Record(failedCall("go_test", `{"pkg":"./..."}`, "--- FAIL: TestLogin"))
	assert.Empty(t, cb.Check().Short)
	cb.Record(failedCall("go_test", `{"pkg":"./..."}`, "--- FAIL: TestLogin"))

	d := cb.Check()
	require.True(t, d.Allow)
	require.Len(t, d.Short, 1)
	s := d.Short[0]
	assert.Equal(t, ReasonRepeatedActionError, s.Kind)
	assert.True(t, s.Short)
	assert.Equal(t, 2, s.Count)
	assert.Equal(t, 3, s.Threshold)
	assert.Equal(t, `loopbreaker warning: this call has failed 2 times in a row (go_test {"pkg":"./..."}); if it fails once more, your tool calls are stopped. Try something different.`, d.ForModel())
	assert.Equal(t, RiskHigh, cb.Stats().Risk, "one step from the trip")

	cb.Record(call("go_test", `{"pkg":"./..."}`, "ok"))
	assert.Nil(t, cb.Check().Short)
}

// The words for a stopped model name the rule, the call, its error and
// what to do instead; the refused Decision adds how long calls wait.
func TestTheModelReadsTheRuleTheCallTheErrorAndWhatToTry(t *testing.T) {
	cb, _ := toolStepsBreaker(t)
	for range 3 {
		cb.Record(failedCall("bash", `{"command":"make"}`, "make: *** No rule to make target 'all'.  Stop."))
	}
	d := cb.Check()
	require.False(t, d.Allow)
	want := "loopbreaker stopped your tool calls: Same action failed 3 times in a row (threshold: 3, error " + d.Reason.Fingerprint +
		`): bash {"command":"make"}. You made the same call 3 times in a row and it failed each time: it will fail again.` + "\n" +
		"Its error:\n  make: *** No rule to make target 'all'.  Stop.\n" +
		"Do not make this call again: read the error and change your approach (another fix, another command), or end your turn and tell the user what blocks you."
	assert.Equal(t, want, d.Reason.ForModel())
	assert.Equal(t, want+"\nTool calls are refused for the next 30s.", d.ForModel())
}

// Every kind has words for the model, and the zero Reason none.
func TestEveryKindHasWordsForTheModel(t *testing.T) {
	assert.Empty(t, Reason{}.ForModel())
	for k := ReasonKind(1); int(k) < len(rules); k++ {
		r := Reason{Kind: k, Count: 2, Threshold: 3, Action: "tool {}", Message: "m"}
		assert.NotEmpty(t, r.ForModel(), "%s", k)
		r.Short = true
		assert.Contains(t, r.ForModel(), "loopbreaker warning: ", "%s", k)
	}
}

// Short says what Decision.Short says, without a Check: no probe is taken.
func TestShortNeedsNoCheck(t *testing.T) {
	cb, advance := toolStepsBreaker(t)
	for range 2 {
		cb.Record(failedCall("go_test", "{}", "FAIL"))
	}
	require.Len(t, cb.Short(), 1)
	assert.Equal(t, ReasonRepeatedActionError, cb.Short()[0].Kind)
	cb.Record(failedCall("go_test", "{}", "FAIL"))
	assert.Nil(t, cb.Short(), "open: nothing is short of it")
	advance(30 * time.Second)
	cb.Short()
	assert.True(t, cb.Check().Probe, "Short took no probe")
}

// A person's new prompt starts the step signals afresh: the same short
// answer to three new questions is no monologue, and the calls before it
// count toward no repeat after it. The failures are kept.
func TestANewPromptStartsTheStepsAfresh(t *testing.T) {
	cb, _ := toolStepsBreaker(t)
	for range 3 {
		cb.Record(say("Done."))
		require.True(t, cb.Check().Allow || cb.Stats().Reason.Kind != ReasonMonologue)
		cb.NewPrompt()
	}
	assert.True(t, cb.Check().Allow, "three answers to three prompts")
	for range 3 {
		cb.Record(call("read_file", `{"p":"a"}`, "A"))
	}
	cb.Record(failedCall("run", "{}", "boom"))
	cb.NewPrompt()
	cb.Record(call("read_file", `{"p":"a"}`, "A"))
	assert.True(t, cb.Check().Allow, "the read before the prompt is no repeat of this one")
	assert.Equal(t, 0, cb.Stats().Steps.SameStepInARow-1)
	assert.Equal(t, 1, cb.Stats().Failures.Total, "failures are kept")
}
