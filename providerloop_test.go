package loopbreaker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// errRepetitive is DashScope's refusal of an agent's repeated, identical
// tool calls, as Qwen Code prints it.
var errRepetitive = agentError("✕ [API Error: <400> InternalError.Algo.InvalidParameter: Repetitive tool calls detected in the conversation history. The same tool call with identical name and arguments has been repeated across multiple consecutive rounds.]")

// Not the agent's fault, and not worth a retry: a busy server is waited
// out like a throttle, a refusal under the usage policy stops for a
// person, a provider's refusal of repeated tool calls is a loop.
func TestTheProvidersWordsOnWhatHappened(t *testing.T) {
	runRecognitionCases(t, []recognitionCase{
		{"an SDK's 503", sdkError(503, `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`),
			ProviderLimit, LimitThrottle, "", time.Time{}},
		{"an SDK's 502 with Retry-After", sdkError(502, "<html>Bad Gateway</html>", "Retry-After", "20"),
			ProviderLimit, LimitThrottle, "2026-01-29T16:29:53+02:00", time.Time{}},
		{"an SDK's 504", sdkError(504, ""), ProviderLimit, LimitThrottle, "", time.Time{}},
		{"Claude Code retrying a 503", errors.New("API Error (503 upstream connect error or disconnect/reset before headers. reset reason: connection timeout) · Retrying in 5 seconds… (attempt 4/10)"),
			ProviderLimit, LimitThrottle, "2026-01-29T16:29:38+02:00", time.Time{}},
		{"Claude Code's usage policy", errors.New("API Error: Claude Code is unable to respond to this request, which appears to violate our Usage Policy (https://www.anthropic.com/legal/aup)."),
			ProviderStop, LimitStop, "", time.Time{}},
		{"OpenAI's usage policy, a 400", sdkError(400, `{"error":{"message":"Invalid prompt: your prompt was flagged as potentially violating our usage policy.","code":"invalid_prompt"}}`),
			ProviderStop, LimitStop, "", time.Time{}},
		{"DashScope's loop guard", errRepetitive, ProviderLoop, 0, "", time.Time{}},
		{"the loop guard as an SDK's 500", sdkError(500, `{"error":{"message":"Repetitive tool calls detected in the conversation history."}}`),
			ProviderLoop, 0, "", time.Time{}},
		{"Gemini CLI's loop guard", errors.New("ℹ A potential loop was detected. This can happen due to repetitive tool calls or other model behavior. The request has been halted."),
			ProviderLoop, 0, "", time.Time{}},
		{"a 500 stays a failure", sdkError(500, `{"error":{"message":"Internal error"}}`), Failure, 0, "", time.Time{}},
	})
}

// A busy server is waited out for the throttle's wait, and counts as no
// failure: five of them in a row open nothing.
func TestABusyServerIsWaitedOutBrieflyNotCounted(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	for range 5 {
		b.Record(Iteration{Err: sdkError(503, "upstream connect error")})
		d := b.Check()
		require.Equal(t, ReasonProviderLimit, d.Reason.Kind)
		assert.Equal(t, DefaultConfig().Limits.ThrottleWait, d.RetryAfter, "the throttle's wait, not the usage limit's hour")
		clock.Advance(d.RetryAfter)
	}
	s := b.Stats()
	assert.Equal(t, Closed, s.State)
	assert.Equal(t, 0, s.Failures.Total)
	assert.Equal(t, 5, s.LimitedIterations)
	assert.True(t, b.Check().Allow)
}

// A refusal under the provider's usage policy stops the loop for a person:
// Wait returns at once, and only Resume (or Skip, or Reset) lifts it.
func TestAUsagePolicyRefusalStopsForAPerson(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	b.Record(Iteration{Err: errors.New("  ⎿  API Error: Claude Code is unable to respond to this request, which appears to violate our Usage Policy (https://www.anthropic.com/legal/aup).")})
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	d, err := b.Wait(ctx)
	require.ErrorIs(t, err, ErrProviderStopped)
	assert.Equal(t, "Provider stopped the loop (no waiting ends this): Claude Code is unable to respond to this request, which appears to violate our Usage Policy", d.Reason.String())
	assert.Equal(t, 0, b.Stats().Failures.Total, "not the agent failing")
	b.Resume()
	assert.True(t, b.Check().Allow)
}

// The provider's refusal of repeated tool calls opens the circuit at once,
// on the first, with a reason of its own that quotes it; it counts as a
// failure with its fingerprint. The probe after the cooldown that meets
// it again opens the circuit again for the same reason; one that gets
// past it closes the circuit.
func TestAProviderLoopOpensTheCircuitAtOnce(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	b.Record(Iteration{Err: errRepetitive})

	d := b.Check()
	require.False(t, d.Allow)
	assert.Equal(t, Open, d.State)
	assert.Equal(t, ReasonProviderLoop, d.Reason.Kind)
	assert.Equal(t, "The provider refused the agent's repeated tool calls: a loop: Repetitive tool calls detected in the conversation", d.Reason.String())
	assert.ErrorIs(t, d.Err(), ErrOpen)
	assert.NotEmpty(t, d.Reason.Fingerprint)
	assert.Contains(t, d.Reason.Sample, "Repetitive tool calls detected")
	s := b.Stats()
	assert.Equal(t, 1, s.Failures.Consecutive)
	assert.Equal(t, 1, s.Opens)
	assert.Equal(t, "provider_loop", ReasonProviderLoop.String())
	assert.Equal(t, ClassStop, ReasonProviderLoop.Class())

	clock.Advance(DefaultConfig().Cooldown)
	require.True(t, b.Check().Probe)
	b.Record(Iteration{Err: fmt.Errorf("qwen: exit status 1: %w", errRepetitive)})
	assert.Equal(t, Open, b.State())
	assert.Equal(t, ReasonProviderLoop, b.Check().Reason.Kind, "the probe met the loop again")

	clock.Advance(2 * DefaultConfig().Cooldown)
	require.True(t, b.Check().Probe)
	b.Record(Iteration{})
	assert.Equal(t, Closed, b.State(), "a probe that got past it closes the circuit")
	b.Record(Iteration{Err: errA(1)})
	assert.Equal(t, Closed, b.State(), "an ordinary failure after it opens nothing")
}

// A host's classifier may call its own error a loop; the reason then quotes
// the error's first line.
func TestAHostsClassifierMayCallALoop(t *testing.T) {
	errOwn := errors.New("gateway: identical tool call refused 6 times\nrequest id 42")
	b, _ := newTestBreaker(t, Config{Classify: func(err error) Outcome {
		if errors.Is(err, errOwn) {
			return ProviderLoop
		}
		return DefaultClassify(err)
	}})
	b.Record(Iteration{Err: errOwn})
	assert.Equal(t, "The provider refused the agent's repeated tool calls: a loop: gateway: identical tool call refused 6 times", b.TripReason())
	assert.Equal(t, "provider_loop", ProviderLoop.String())
}
