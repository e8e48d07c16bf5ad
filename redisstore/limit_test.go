package redisstore

import (
	"context"
	"errors"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/timer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// limited returns an iteration's error that is the limit l, as an SDK
// wrapper or a host would report it.
func limited(l loopbreaker.Limit) error {
	return &loopbreaker.LimitError{Limit: l, Err: errors.New("HTTP 429")}
}

// sleeps records the pauses of a worker's Wait, and takes them on the
// real clock (Redis's clock is the machine's).
type sleeps struct {
	mu     sync.Mutex
	pauses []time.Duration
}

func (s *sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.pauses = append(s.pauses, d)
	s.mu.Unlock()
	return timer.Sleep(ctx, d)
}

func TestOneWorkerHittingAProviderLimitMakesEveryWorkerWaitUntilItsReset(t *testing.T) {
	f := newFleet(t)
	var slept sleeps
	ws := f.workers(3, Config{Breaker: loopbreaker.Config{Sleep: slept.Sleep}})
	hitter, waiter := ws[0], ws[1]
	require.True(t, hitter.Check().Allow)
	reset := time.Now().Add(time.Second)
	hitter.Record(loopbreaker.Iteration{Err: limited(loopbreaker.Limit{Reset: reset, Why: "You've hit your limit"})})

	for _, w := range ws {
		d := w.Check()
		require.False(t, d.Allow, "worker %s", w.ID())
		assert.Equal(t, "Provider limit: You've hit your limit", d.Reason.String())
		assert.ErrorIs(t, d.Err(), loopbreaker.ErrProviderLimit)
		assert.NotErrorIs(t, d.Err(), loopbreaker.ErrOpen)
		assert.Equal(t, loopbreaker.Closed, d.State, "a limit opens no circuit")
		assert.Greater(t, d.RetryAfter, time.Duration(0))
		assert.LessOrEqual(t, d.RetryAfter, time.Second, "until the provider's reset")
	}
	s := waiter.Stats()
	assert.Equal(t, loopbreaker.ReasonProviderLimit, s.ProviderLimit.Kind)
	assert.Equal(t, reset.UnixMilli(), s.ProviderLimitUntil.UnixMilli(), "the provider's reset, as it gave it")
	assert.Equal(t, 1, hitter.Stats().LimitedIterations)
	assert.Zero(t, hitter.Stats().NeutralIterations)
	assert.Zero(t, hitter.Stats().Failures.Consecutive, "a limit is no failure")

	d, err := waiter.Wait(context.Background())
	require.NoError(t, err)
	assert.True(t, d.Allow, "Wait waited the limit out")
	assert.False(t, time.Now().Before(reset))
	require.NotEmpty(t, slept.pauses)
	assert.LessOrEqual(t, slept.pauses[0], time.Second, "it slept until the reset")
	assert.Zero(t, waiter.Stats().ProviderLimit, "lifted")
}

func TestAProviderStopHoldsTheFleetUntilAPersonResumesOnAnyWorker(t *testing.T) {
	f := newFleet(t)
	ws := f.workers(3, Config{})
	require.True(t, ws[0].Check().Allow)
	ws[0].Record(loopbreaker.Iteration{Err: errors.New(`Error: 429 {"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`)})
	for _, w := range ws {
		d := w.Check()
		require.False(t, d.Allow)
		assert.Equal(t, loopbreaker.ReasonProviderStopped, d.Reason.Kind)
		assert.Zero(t, d.RetryAfter)
		_, err := w.Wait(context.Background())
		assert.ErrorIs(t, err, loopbreaker.ErrProviderStopped, "Wait returns at once: no waiting ends a stop")
	}
	ctx := context.Background()
	for _, k := range keysOf(f.name)[:1] {
		ttl, err := f.client.PTTL(ctx, k).Result()
		require.NoError(t, err)
		assert.Equal(t, time.Duration(-1), ttl, "no expiry while the provider stopped the fleet")
	}
	ws[2].Resume() // a person topped up the credit
	for _, w := range ws {
		assert.True(t, w.Check().Allow, "worker %s", w.ID())
	}
}

func TestALimitWithoutAResetLastsTheDefaultWaitAndKeepsTheKeysUntilThen(t *testing.T) {
	f := newFleet(t)
	a, b := f.worker("a", Config{IdleTTL: 2 * time.Hour}), f.worker("b", Config{IdleTTL: 2 * time.Hour})
	a.ObserveLimit(loopbreaker.Limit{Kind: loopbreaker.LimitWait, Why: "Claude usage limit reached"})
	d := b.Check()
	require.False(t, d.Allow)
	assert.Equal(t, "Provider limit: Claude usage limit reached (no reset time given: waiting 1h0m0s)", d.Reason.String())
	assert.InDelta(t, time.Hour, d.RetryAfter, float64(5*time.Second))
	for _, k := range keysOf(f.name)[:1] {
		ttl, err := f.client.PTTL(context.Background(), k).Result()
		require.NoError(t, err)
		assert.InDelta(t, 3*time.Hour, ttl, float64(time.Minute), "the idle expiry runs from the limit's reset")
	}

	a.ObserveLimit(loopbreaker.Limit{Kind: loopbreaker.LimitThrottle, Why: "HTTP 429"})
	d = b.Check()
	assert.Equal(t, "Provider limit: Claude usage limit reached (no reset time given: waiting 1h0m0s)", d.Reason.String(),
		"a throttle of 5 minutes changes nothing: the hour in force outlasts it")
	a.ObserveLimit(loopbreaker.Limit{Reset: time.Now().Add(-time.Minute)})
	assert.InDelta(t, time.Hour, b.Check().RetryAfter, float64(5*time.Second), "a reset already past changes nothing")
	a.ObserveLimit(loopbreaker.Limit{Reset: time.Now().Add(3 * time.Hour), Why: "weekly limit"})
	d = b.Check()
	assert.Equal(t, "Provider limit: weekly limit", d.Reason.String(), "the later reset wins")
	assert.InDelta(t, 3*time.Hour, d.RetryAfter, float64(5*time.Second))
	a.ObserveLimit(loopbreaker.Limit{Kind: loopbreaker.LimitStop, Why: "credit balance is too low"})
	d = b.Check()
	assert.Equal(t, loopbreaker.ReasonProviderStopped, d.Reason.Kind, "a stop outlasts every wait")
	assert.Zero(t, b.Stats().ProviderLimitUntil)
}

func TestAProbeThatHitsALimitGivesTheProbeBack(t *testing.T) {
	f := newFleet(t)
	cfg := Config{Breaker: loopbreaker.Config{Failures: loopbreaker.FailureRules{MaxConsecutive: 1}, Cooldown: 50 * time.Millisecond}}
	a, b := f.worker("a", cfg), f.worker("b", cfg)
	a.RecordFailure("boom")
	require.Eventually(t, func() bool { return a.Check().Probe }, 5*time.Second, 5*time.Millisecond)
	a.ObserveLimit(loopbreaker.Limit{Kind: loopbreaker.LimitThrottle, Reset: time.Now().Add(300 * time.Millisecond)})
	d := b.Check()
	require.False(t, d.Allow)
	assert.Equal(t, loopbreaker.ReasonProviderLimit, d.Reason.Kind, "the limit refuses first")
	a.Record(loopbreaker.Iteration{Err: limited(loopbreaker.Limit{Kind: loopbreaker.LimitThrottle, Reset: time.Now().Add(300 * time.Millisecond)})})
	require.Eventually(t, func() bool {
		d = b.Check()
		return d.Allow
	}, 5*time.Second, 5*time.Millisecond)
	assert.True(t, d.Probe, "after the reset, another worker gets the probe a gave back")
}

// The worker's default classifier tries the host's limit patterns, as a
// breaker's own does.
func TestAHostsLimitPatternStopsTheFleet(t *testing.T) {
	f := newFleet(t)
	cfg := Config{Breaker: loopbreaker.Config{
		Limits: loopbreaker.LimitRules{
			Patterns: []loopbreaker.LimitPattern{
				{Match: regexp.MustCompile(`tenant suspended`), Kind: loopbreaker.LimitStop, Why: "tenant suspended"},
			},
		},
	}}
	a, b := f.worker("a", cfg), f.worker("b", cfg)
	require.True(t, a.Check().Allow)
	a.Record(loopbreaker.Iteration{Err: errors.New("gateway: tenant suspended")})
	d := b.Check()
	require.False(t, d.Allow)
	assert.Equal(t, "Provider stopped the loop (no waiting ends this): tenant suspended", d.Reason.String())
	assert.Zero(t, a.Stats().Failures.Total, "no failure")
}

// A provider that says to retry at once is waited out for a second by the
// whole fleet, as by one breaker: workers that hit it again and again do
// not spin.
func TestAResetAtOnceIsWaitedOutForASecondByTheFleet(t *testing.T) {
	f := newFleet(t)
	ws := f.workers(2, Config{})
	require.True(t, ws[0].Check().Allow)
	ws[0].Record(loopbreaker.Iteration{Err: limited(loopbreaker.Limit{Kind: loopbreaker.LimitThrottle, Reset: time.Now().Add(-time.Minute), Why: "rate limited"})})
	d := ws[1].Check()
	require.False(t, d.Allow, "the limit is in force")
	assert.Equal(t, loopbreaker.ReasonProviderLimit, d.Reason.Kind)
	assert.Greater(t, d.RetryAfter, time.Duration(0))
	assert.LessOrEqual(t, d.RetryAfter, time.Second)
}

// The provider's refusal of the agent's repeated tool calls on one worker
// is a loop: the fleet counts it as a failure and its circuit opens at
// once, for every worker.
func TestAProviderLoopOpensTheFleetsCircuit(t *testing.T) {
	f := newFleet(t)
	ws := f.workers(2, Config{})
	require.True(t, ws[0].Check().Allow)
	ws[0].Record(loopbreaker.Iteration{Err: errors.New("[API Error: <400> InternalError.Algo.InvalidParameter: Repetitive tool calls detected in the conversation history.]")})
	for _, w := range ws {
		d := w.Check()
		require.False(t, d.Allow, "worker %s", w.ID())
		assert.Equal(t, loopbreaker.Open, d.State)
		assert.Equal(t, loopbreaker.ReasonProviderLoop, d.Reason.Kind)
	}
	assert.Equal(t, 1, ws[1].Stats().Failures.Total, "counted as a failure of the fleet")
}
