package loopbreaker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a breaker is told as it happens, during an iteration: calls, and
// limits lifted (package transport tests what an SDK's transport tells it).

// A breaker without a transport counts an iteration that does not say as
// one call, as before.
func TestWithoutTransportAnIterationIsOneCall(t *testing.T) {
	cb, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 10}})
	cb.Record(Iteration{})
	cb.RecordSuccess()
	cb.RecordFailure("x")
	assert.Equal(t, 3, cb.Stats().Budget.Used)
}

// A host that counts its calls itself as they happen (a gRPC SDK, a CLI
// agent's log) calls CountCall; from then on an iteration counts only the
// calls it states.
func TestCountCallCountsAsItHappensAndRecordCountsNoneAgain(t *testing.T) {
	cb, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 3}})
	cb.CountCall()
	cb.CountCall()
	cb.Record(Iteration{})
	assert.Equal(t, Budget{Limit: 3, Used: 2}, cb.Stats().Budget)
	cb.CountCall()
	d := cb.Check()
	assert.False(t, d.Allow, "the third call spent the budget")
	assert.Equal(t, ReasonCallBudget, d.Reason.Kind)
	clock.Advance(callBudgetWindow)
	assert.True(t, cb.Check().Allow, "the calls left the rolling hour")
}

// LiftLimit lifts only a wait or throttle of the source named: not one of
// another source, not one an iteration's error put in force (it names no
// source), not a stop.
func TestLiftLimitLiftsOnlyTheSourcesWait(t *testing.T) {
	tests := []struct {
		name   string
		limit  func(b *CircuitBreaker)
		source string
		lifted bool
	}{
		{"the source's throttle", func(b *CircuitBreaker) {
			b.ObserveLimit(Limit{Kind: LimitThrottle, Source: "api.anthropic.com"})
		}, "api.anthropic.com", true},
		{"the source's usage limit", func(b *CircuitBreaker) {
			b.ObserveLimit(Limit{Kind: LimitWait, Source: "api.openai.com"})
		}, "api.openai.com", true},
		{"another source's", func(b *CircuitBreaker) {
			b.ObserveLimit(Limit{Kind: LimitThrottle, Source: "api.openai.com"})
		}, "api.anthropic.com", false},
		{"an iteration's", func(b *CircuitBreaker) {
			b.Record(Iteration{Err: &LimitError{Limit: Limit{Kind: LimitThrottle}}})
		}, "api.anthropic.com", false},
		{"a stop", func(b *CircuitBreaker) {
			b.ObserveLimit(Limit{Kind: LimitStop, Source: "api.openai.com"})
		}, "api.openai.com", false},
		{"no source named", func(b *CircuitBreaker) {
			b.ObserveLimit(Limit{Kind: LimitThrottle})
		}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newTestBreaker(t, Config{})
			tt.limit(b)
			require.False(t, b.Check().Allow)
			b.LiftLimit(tt.source)
			assert.Equal(t, tt.lifted, b.Check().Allow)
		})
	}
}

// A limit's source survives a restart: the retry that succeeds after it
// still lifts it.
func TestALimitsSourceSurvivesARestart(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	b.ObserveLimit(Limit{Kind: LimitThrottle, Source: "api.anthropic.com"})
	restored, _ := newTestBreaker(t, Config{})
	require.NoError(t, restored.Restore(roundTrip(t, b.Snapshot())))
	require.False(t, restored.Check().Allow)
	restored.LiftLimit("api.anthropic.com")
	assert.True(t, restored.Check().Allow)
}
