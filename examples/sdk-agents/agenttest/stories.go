package agenttest

import (
	"net/http"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/examples/sdk-agents/agent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Run runs every story through api, each a subtest named after what it
// proves.
func Run(t *testing.T, api API) {
	stories := []struct {
		name  string
		story func(*testing.T, API)
	}{
		{"StuckAlternationIsGivenUpOn", stuckAlternationIsGivenUpOn},
		{"AProbeThatGetsOnFinishes", aProbeThatGetsOnFinishes},
		{"StuckRepeatedCallIsGivenUpOn", stuckRepeatedCallIsGivenUpOn},
		{"SameFailingCallIsGivenUpOn", sameFailingCallIsGivenUpOn},
		{"HealthyTaskFinishes", healthyTaskFinishes},
		{"ARefusalWithRetryAfterIsWaitedOut", aRefusalWithRetryAfterIsWaitedOut},
		{"ARefusalTheSDKRetriedAwayDoesNotHoldTheLoop", aRefusalTheSDKRetriedAwayDoesNotHoldTheLoop},
		{"ARateLimitTheSDKGaveUpOnHoldsTheLoopUntilItsReset", aRateLimitTheSDKGaveUpOnHoldsTheLoopUntilItsReset},
		{"ADollarCapStopsTheAgent", aDollarCapStopsTheAgent},
		{"ABusyServerIsWaitedOutBriefly", aBusyServerIsWaitedOutBriefly},
		{"AUsagePolicyRefusalStopsTheAgentForAPerson", aUsagePolicyRefusalStopsTheAgentForAPerson},
		{"TheProvidersRefusalOfRepeatedCallsIsGivenUpOn", theProvidersRefusalOfRepeatedCallsIsGivenUpOn},
	}
	for _, s := range stories {
		t.Run(s.name, func(t *testing.T) { s.story(t, api) })
	}
}

// The model runs the tests and reads the same file in turn, and nothing
// changes: the breaker opens once the two steps have alternated three
// times, OpenHands' "action, observation pattern". After each cooldown one
// probe turn runs, and alternates again; at the third opening in a row the
// breaker gives up, and the agent stops with the reason.
func stuckAlternationIsGivenUpOn(t *testing.T, api API) {
	runTests, readParse := calls("run_tests", `{}`), calls("read_file", `{"path":"parse.go"}`)
	s := setup(t, api, runTests, readParse, runTests, readParse, runTests, readParse, runTests, readParse)
	_, err := s.run("Make the tests pass.")
	require.ErrorIs(t, err, agent.ErrStopped)
	require.ErrorIs(t, err, loopbreaker.ErrGaveUp)
	assert.Contains(t, err.Error(), "Gave up: the circuit opened 3 times in a row without recovering (threshold: 3): Cycle")
	assert.Contains(t, err.Error(), `run_tests {} → read_file {"path":"parse.go"}`)
	assert.Equal(t, 6+2, s.server.requests(), "six steps, then a probe after each of two cooldowns")
	assert.Equal(t, []time.Duration{30 * time.Second, 30 * time.Second}, s.clock.Slept())
	h := s.cb.Stats().History
	require.NotEmpty(t, h)
	assert.Equal(t, loopbreaker.ReasonCycle, h[0].Reason.Kind, "the first opening")
}

// The same alternation, but the probe after the cooldown answers: the
// circuit closes and the agent finishes.
func aProbeThatGetsOnFinishes(t *testing.T, api API) {
	runTests, readParse := calls("run_tests", `{}`), calls("read_file", `{"path":"parse.go"}`)
	s := setup(t, api, runTests, readParse, runTests, readParse, runTests, readParse, answer("parse.go is fine."))
	got, err := s.run("Make the tests pass.")
	require.NoError(t, err)
	assert.Equal(t, "parse.go is fine.", got)
	assert.Equal(t, 7, s.server.requests())
	assert.Equal(t, []time.Duration{30 * time.Second}, s.clock.Slept())
	assert.Equal(t, loopbreaker.Closed, s.cb.Stats().State)
}

// The model lists an empty output directory again and again: the breaker
// opens before its fifth turn, as the same call with the same result four
// times in a row is OpenHands' first kind of stuck. After each cooldown one
// probe turn lists it again; at the third opening in a row the breaker
// gives up, and the agent stops with the reason.
func stuckRepeatedCallIsGivenUpOn(t *testing.T, api API) {
	s := setup(t, api, calls("list_files", `{"dir":"out"}`))
	s.tools["list_files"] = func(string) (string, error) { return "", nil }
	_, err := s.run("Summarise the report in out/.")
	require.ErrorIs(t, err, agent.ErrStopped)
	require.ErrorIs(t, err, loopbreaker.ErrGaveUp)
	assert.Contains(t, err.Error(), `Gave up: the circuit opened 3 times in a row without recovering (threshold: 3): Same action with the same observation 6 times in a row (threshold: 4): list_files {"dir":"out"}`)
	assert.Equal(t, 4+2, s.server.requests(), "four turns, then a probe after each of two cooldowns")
	assert.Equal(t, []time.Duration{30 * time.Second, 30 * time.Second}, s.clock.Slept())
	stats := s.cb.Stats()
	assert.Equal(t, loopbreaker.ReasonGaveUp, stats.Reason.Kind)
	assert.Equal(t, loopbreaker.ReasonRepeatedActionObservation, stats.Reason.Last)
	assert.Equal(t, 6, stats.Budget.Used, "each request counted once, by the transport")
}

// The model reads a file that is not there: the third failure opens the
// circuit, the two probes read it again, and the breaker gives up.
func sameFailingCallIsGivenUpOn(t *testing.T, api API) {
	s := setup(t, api, calls("read_file", `{"path":"report.csv"}`))
	_, err := s.run("Summarise report.csv.")
	require.ErrorIs(t, err, loopbreaker.ErrGaveUp)
	assert.Contains(t, err.Error(), `read_file {"path":"report.csv"}`)
	assert.Equal(t, 3+2, s.server.requests())
	h := s.cb.Stats().History
	require.NotEmpty(t, h)
	assert.Equal(t, `Same action failed 3 times in a row (threshold: 3, error 8d08d11a): read_file {"path":"report.csv"}`, h[0].Reason.String())
}

// A healthy task: list, read two files in one turn, a failed read of a
// file that is not there, run the tests, answer. The breaker lets it
// finish.
func healthyTaskFinishes(t *testing.T, api API) {
	s := setup(t, api,
		calls("list_files", `{}`),
		calls("read_file", `{"path":"parse.go"}`, "read_file", `{"path":"parse_test.go"}`),
		calls("read_file", `{"path":"parse_fuzz_test.go"}`),
		calls("run_tests", `{}`),
		answer("The tests pass; parse.go is fine."),
	)
	got, err := s.run("Do the tests pass?")
	require.NoError(t, err)
	assert.Equal(t, "The tests pass; parse.go is fine.", got)
	assert.Equal(t, 5, s.server.requests())
	stats := s.cb.Stats()
	assert.Equal(t, loopbreaker.Closed, stats.State)
	assert.Equal(t, 5, stats.Budget.Used)
}

// The API refuses (OpenAI's 429, Anthropic's 529 overloaded) with a
// Retry-After: the transport counts the call and reports the limit, the
// agent waits on the breaker's clock and goes on to finish.
func aRefusalWithRetryAfterIsWaitedOut(t *testing.T, api API) {
	s := setup(t, api,
		refuse(api.Busy.withHeader("Retry-After", "15")),
		calls("list_files", `{}`),
		answer("Two files."),
	)
	got, err := s.run("How many files?")
	require.NoError(t, err)
	assert.Equal(t, "Two files.", got)
	assert.Equal(t, 3, s.server.requests())
	assert.Equal(t, 3, s.cb.Stats().Budget.Used, "the refused request counted too")
	assert.Equal(t, []time.Duration{15 * time.Second}, s.clock.Slept(), "the breaker waited out the Retry-After, on its clock")
	h := s.cb.Stats().History
	require.NotEmpty(t, h)
	assert.Equal(t, loopbreaker.CauseProviderLimit, h[0].Cause, "the transport reported the limit as it happened")
}

// The API refuses with no Retry-After. The SDK, with its default retries,
// tries again after half a second or so and gets its answer: the
// transport reported the limit as it happened, and lifted it when the
// retry succeeded, so the loop goes on at once.
func aRefusalTheSDKRetriedAwayDoesNotHoldTheLoop(t *testing.T, api API) {
	s := setupWith(t, api, 2, 2, refuse(api.Busy), calls("list_files", `{}`), answer("Two files."))
	got, err := s.run("How many files?")
	require.NoError(t, err)
	assert.Equal(t, "Two files.", got)
	assert.Equal(t, 3, s.server.requests(), "the SDK's own retry is the second request")
	assert.Empty(t, s.clock.Slept(), "nothing was waited out")
	assert.Equal(t, []loopbreaker.Cause{loopbreaker.CauseProviderLimit, loopbreaker.CauseLimitLifted}, s.causes())
	d := s.cb.Check()
	assert.True(t, d.Allow, "%v", d.Reason)
}

// The API refuses with a 429 and its rate-limit headers, a reset 30
// seconds off, every time: the SDK retries twice and gives up, and its
// error reaches the agent. That limit is in force until its reset: the
// loop waits it out, on the breaker's clock, then goes on.
func aRateLimitTheSDKGaveUpOnHoldsTheLoopUntilItsReset(t *testing.T, api API) {
	// retry-after-ms is both SDKs' pause between their tries.
	limited := refuse(api.RateLimited(start, 30*time.Second).withHeader("retry-after-ms", "1"))
	s := setupWith(t, api, 2, 2, limited, limited, limited, calls("list_files", `{}`), answer("Two files."))
	got, err := s.run("How many files?")
	require.NoError(t, err)
	assert.Equal(t, "Two files.", got)
	assert.Equal(t, 5, s.server.requests(), "three tries of the SDK, then two turns")
	assert.Equal(t, []time.Duration{30 * time.Second}, s.clock.Slept(), "the loop waited for the reset")
	assert.NotContains(t, s.causes(), loopbreaker.CauseLimitLifted)
}

// Each turn costs what the model charges for the usage the response
// reports: with a cap between what the first turn and the first two cost,
// the second turn spends it, and the agent stops before the third.
func aDollarCapStopsTheAgent(t *testing.T, api API) {
	turnCost := func(inputTokens int) float64 {
		return (float64(inputTokens)*api.InputPrice + 20*api.OutputPrice) / 1e6
	}
	first, second := turnCost(100), turnCost(200)
	s := setupWith(t, api, first+second/2, 0,
		calls("list_files", `{}`),
		calls("read_file", `{"path":"parse.go"}`),
		calls("run_tests", `{}`),
		answer("never reached"),
	)
	_, err := s.run("Do the tests pass?")
	require.ErrorIs(t, err, loopbreaker.ErrSpendCap)
	assert.Regexp(t, `Spend cap reached: \$[0-9.]+ over the loop's life \(cap: \$[0-9.]+\)`, err.Error())
	assert.Equal(t, 2, s.server.requests())
	assert.InDelta(t, first+second, s.cb.Stats().Spend.Total.CostUSD, 1e-12)
}

// The model's server is busy: a 503 the SDK gives up on (it does not
// retry here). It is the agent's failure no more than a 529 is: the loop
// waits it out briefly, for the throttle's wait, and goes on to finish.
func aBusyServerIsWaitedOutBriefly(t *testing.T, api API) {
	s := setup(t, api,
		refuse(Refusal{Status: 503, Body: "upstream connect error or disconnect/reset before headers. reset reason: connection timeout"}),
		calls("list_files", `{}`),
		answer("Two files."),
	)
	got, err := s.run("How many files?")
	require.NoError(t, err)
	assert.Equal(t, "Two files.", got)
	assert.Equal(t, 3, s.server.requests())
	assert.Equal(t, []time.Duration{loopbreaker.DefaultConfig().Limits.ThrottleWait}, s.clock.Slept(), "a throttle's wait, not a usage limit's hour")
	assert.Equal(t, 0, s.cb.Stats().Failures.Total, "the server's trouble is no failure of the agent")
}

// The provider refuses the request under its usage policy: no retry gets
// past that, so the agent stops at once for a person, without waiting.
func aUsagePolicyRefusalStopsTheAgentForAPerson(t *testing.T, api API) {
	s := setup(t, api, refuse(Refusal{Status: http.StatusBadRequest,
		Body: `{"error":{"message":"Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again with a different prompt.","type":"invalid_request_error","param":null,"code":"invalid_prompt"}}`}))
	_, err := s.run("How many files?")
	require.ErrorIs(t, err, agent.ErrStopped)
	require.ErrorIs(t, err, loopbreaker.ErrProviderStopped)
	assert.Contains(t, err.Error(), "Invalid prompt: your prompt was flagged as potentially violating our usage policy")
	assert.Equal(t, 1, s.server.requests())
	assert.Empty(t, s.clock.Slept())
}

// The provider refuses the conversation because the model repeated the
// same tool call round after round (DashScope's guard): the agent is
// looping. The circuit opens on the first refusal; each probe after a
// cooldown meets it again, and at the third opening in a row the breaker
// gives up.
func theProvidersRefusalOfRepeatedCallsIsGivenUpOn(t *testing.T, api API) {
	s := setup(t, api, refuse(Refusal{Status: http.StatusBadRequest,
		Body: `{"error":{"message":"<400> InternalError.Algo.InvalidParameter: Repetitive tool calls detected in the conversation history. The same tool call with identical name and arguments has been repeated across multiple consecutive rounds.","type":"invalid_request_error","code":"invalid_parameter_error"}}`}))
	_, err := s.run("How many files?")
	require.ErrorIs(t, err, agent.ErrStopped)
	require.ErrorIs(t, err, loopbreaker.ErrGaveUp)
	assert.Contains(t, err.Error(), "The provider refused the agent's repeated tool calls: a loop: HTTP 400: Repetitive tool calls detected in the conversation")
	assert.Equal(t, 3, s.server.requests(), "one request, then a probe after each of two cooldowns")
	h := s.cb.Stats().History
	require.NotEmpty(t, h)
	assert.Equal(t, loopbreaker.ReasonProviderLoop, h[0].Reason.Kind, "the first opening, on the first refusal")
}
