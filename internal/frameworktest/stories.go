package frameworktest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/sessions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// calls is a turn of tool calls, each a tool's name and its JSON
// arguments.
func calls(toolAndArgs ...string) Turn {
	var t Turn
	for i := 0; i+1 < len(toolAndArgs); i += 2 {
		t.Calls = append(t.Calls, Call{Tool: toolAndArgs[i], Args: toolAndArgs[i+1]})
	}
	return t
}

// answer is a turn with the final text.
func answer(text string) Turn { return Turn{Text: text} }

// Warned is how the warning the model reads one step short begins.
const Warned = "loopbreaker warning: this call has failed 2 times in a row"

// Stories returns the stories, in order.
func Stories() []Story {
	var newArgs []Turn
	for i := range 12 {
		newArgs = append(newArgs, calls("edit", fmt.Sprintf(`{"old":"return %d","path":"parse.go"}`, i)))
	}
	var cycle []Turn
	for range 15 {
		cycle = append(cycle, calls("read_file", `{"path":"parse.go"}`), calls("edit", `{"old":"return 0","path":"parse.go"}`), calls("run_tests", `{}`))
	}
	cycle = append(cycle, answer("I could not make the test pass."))
	readBoth := calls("read_file", `{"path":"parse.go"}`, "read_file", `{"path":"parse_test.go"}`)

	return []Story{
		{
			Name:   "ACallFailingAgainAndAgainIsStoppedWhereTheHandWrittenLoopStops",
			Script: []Turn{calls("read_file", `{"path":"report.csv"}`)},
			Check: func(t *testing.T, got Result, ref Reference) {
				stoppedLikeTheHandWrittenLoop(t, got, ref, 0)
				assert.Equal(t, loopbreaker.ReasonRepeatedActionError, ref.Stop.Kind)
				require.ErrorIs(t, got.Err(), loopbreaker.ErrOpen)
				assert.Contains(t, got.Err().Error(), `Same action failed 3 times in a row`)
				assert.Len(t, got.Ran, 3, "a call that failed twice may pass the third time: it runs")
				require.Len(t, got.Requests, 3, "the third failure opened the circuit: no fourth model call")
				assert.Contains(t, got.Requests[2], Warned+` (read_file {"path":"report.csv"})`)
			},
		},
		{
			Name:   "TheSameErrorUnderNewArgumentsIsStoppedWhereTheHandWrittenLoopStops",
			Script: newArgs,
			Check: func(t *testing.T, got Result, ref Reference) {
				stoppedLikeTheHandWrittenLoop(t, got, ref, 0)
				require.ErrorIs(t, got.Err(), loopbreaker.ErrOpen)
			},
		},
		{
			Name:   "ACycleOfThreeCallsIsStoppedWhereTheHandWrittenLoopStops",
			Script: cycle,
			Check: func(t *testing.T, got Result, ref Reference) {
				stoppedLikeTheHandWrittenLoop(t, got, ref, 0)
			},
		},
		{
			Name: "AHealthyRunIsNeverStopped",
			Script: []Turn{
				calls("list_files", `{}`),
				calls("read_file", `{"path":"parse.go"}`),
				calls("run_tests", `{}`),
				calls("patch", `{"diff":"return len(s)","path":"parse.go"}`),
				calls("run_tests", `{}`),
				answer("Fixed: Parse returns the length; the tests pass."),
			},
			Check: func(t *testing.T, got Result, ref Reference) {
				require.NoError(t, got.Err())
				assert.Equal(t, loopbreaker.ReasonNone, ref.Stop.Kind)
				assert.Len(t, got.Ran, 5)
				assert.Equal(t, ref.Steps, len(got.Ran))
				st := got.Session.Breaker().Stats()
				assert.Equal(t, loopbreaker.Closed, st.State)
				assert.Equal(t, 6, st.Budget.Used, "one call per model turn")
			},
		},
		{
			Name:     "ParallelCallsAreRecordedOnceEachInTheModelsOrder",
			Script:   []Turn{readBoth},
			Parallel: true,
			Check: func(t *testing.T, got Result, ref Reference) {
				stoppedLikeTheHandWrittenLoop(t, got, ref, 1)
				assert.Equal(t, loopbreaker.ReasonCycle, ref.Stop.Kind)
				assert.True(t, ref.Stop.Proposed, "the hand-written loop refused the cycle's last call before it ran")
				st := got.Session.Breaker().Stats()
				assert.Equal(t, len(got.Ran), st.Iterations, "each call that ran, once")
				assert.Equal(t, 3, st.Budget.Used, "one call per model turn, not per tool call")
			},
		},
		{
			Name:   "A429IsWaitedOutThenServed",
			Script: []Turn{{Err: ErrRateLimited}, calls("list_files", `{}`), answer("Two files.")},
			Runs:   2,
			Check: func(t *testing.T, got Result, _ Reference) {
				require.NoError(t, got.Err(), "served")
				assert.Equal(t, []time.Duration{20 * time.Second}, got.Slept, "the limit waited out on the breaker's clock")
				assert.Len(t, got.Ran, 1)
				for _, err := range got.Errs {
					assert.False(t, sessions.IsStop(err), "a limit is no stop: %v", err)
				}
				h := got.Session.Breaker().Stats().History
				require.NotEmpty(t, h)
				assert.Equal(t, loopbreaker.CauseProviderLimit, h[0].Cause)
			},
		},
		{
			Name: "ADollarCapEndsTheRun",
			Script: []Turn{
				calls("list_files", `{}`),
				calls("read_file", `{"path":"parse.go"}`),
				calls("read_file", `{"path":"parse_test.go"}`),
				calls("run_tests", `{}`),
				answer("Done."),
			},
			Config: func(cfg *loopbreaker.Config) { cfg.Spend.MaxCostUSD = 0.005 }, // each turn costs $0.002
			Check: func(t *testing.T, got Result, ref Reference) {
				stoppedLikeTheHandWrittenLoop(t, got, ref, 0)
				require.ErrorIs(t, got.Err(), loopbreaker.ErrSpendCap)
				assert.Len(t, got.Ran, 2, "the third model call spent the last cents: its call is refused")
			},
		},
		{
			Name: "TheModelsNextRequestCarriesTheReason",
			Script: []Turn{
				calls("read_file", `{"path":"report.csv"}`),
				calls("read_file", `{"path":"report.csv"}`),
				answer("report.csv is not there; I cannot summarise it."),
			},
			Check: func(t *testing.T, got Result, _ Reference) {
				require.NoError(t, got.Err(), "the model read why and answered")
				assert.Len(t, got.Ran, 2)
				require.Len(t, got.Requests, 3)
				assert.NotContains(t, got.Requests[1], Warned)
				assert.Contains(t, got.Requests[2], Warned+` (read_file {"path":"report.csv"}); if it fails once more, your tool calls are stopped`)
				assert.Equal(t, loopbreaker.Closed, got.Session.Breaker().State())
			},
		},
		{
			Name:   "AnAnswerIsNoDoneSignalSoTheNextMessageRuns",
			Script: []Turn{answer("Hello."), answer("parse.go and parse_test.go."), answer("Parse returns 0."), answer("Goodbye.")},
			Runs:   4,
			Check: func(t *testing.T, got Result, _ Reference) {
				require.Len(t, got.Errs, 4)
				for _, err := range got.Errs {
					assert.NoError(t, err)
				}
			},
		},
	}
}

// stoppedLikeTheHandWrittenLoop says that the framework's run stopped at
// the step where the hand-written loop stopped, for the same reason: the
// same tool calls ran, and the same refusal ended it. A framework that runs
// a turn's calls at once asks about each before its siblings have run: a
// loop its last calls complete is stopped after them, up to late calls
// later, the reason judged after they ran rather than before.
func stoppedLikeTheHandWrittenLoop(t *testing.T, got Result, ref Reference, late int) {
	t.Helper()
	err := got.Err()
	if ref.Stop.Kind == loopbreaker.ReasonNone {
		require.NoError(t, err, "the hand-written loop was not stopped")
		assert.Equal(t, ref.Steps, len(got.Ran))
		return
	}
	require.Error(t, err, "the hand-written loop stopped: %s", ref.Stop)
	var refused *loopbreaker.RefusedError
	require.True(t, errors.As(err, &refused), "a breaker's refusal: %v", err)
	assert.Equal(t, ref.Stop.Kind, refused.Reason.Kind, "%v", err)
	if len(got.Ran) > ref.Steps && len(got.Ran) <= ref.Steps+late {
		return // the siblings ran before the loop was seen
	}
	assert.Equal(t, ref.Steps, len(got.Ran), "stopped at the hand-written loop's step")
	assert.Equal(t, ref.Stop.Count, refused.Reason.Count)
	assert.Equal(t, ref.Stop.Action, refused.Reason.Action)
	assert.Equal(t, ref.Stop.Proposed, refused.Reason.Proposed)
}
