package redisstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// each runs fn on every worker at once and waits for them all.
func each(ws []*Worker, fn func(i int, w *Worker)) {
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(i, w)
		}()
	}
	wg.Wait()
}

func TestWorkersGoOnUnderTheirLocalBreakersWhileRedisIsDownAndRejoinWhenItIsBack(t *testing.T) {
	f := newFleet(t)
	ws := f.workers(16, Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCallsPerHour: 1000}}})
	iterate := func(w *Worker, err error) loopbreaker.Decision {
		d := w.Check()
		if d.Allow {
			w.Record(loopbreaker.Iteration{Err: err, Calls: 1})
		}
		return d
	}
	each(ws, func(_ int, w *Worker) {
		for range 2 {
			require.True(t, iterate(w, nil).Allow)
		}
	})
	require.Equal(t, 32, ws[0].Stats().Budget.Used)

	f.srv.stop() // killed mid-run
	each(ws, func(i int, w *Worker) {
		for range 3 {
			var err error
			if i == 0 {
				err = errors.New("worker 0's tool fails")
			}
			d := iterate(w, err)
			if i == 0 && !d.Allow {
				return
			}
			assert.True(t, d.Allow, "worker %d goes on under its local breaker", i)
		}
	})
	assert.Equal(t, 16, strings.Count(f.logged(), "out of reach"), "one warning per worker per outage, not per call")
	d := ws[0].Check()
	assert.False(t, d.Allow, "worker 0's local breaker opened on its own three failures")
	assert.Equal(t, "3 consecutive failures (threshold: 3)", d.Reason.String())
	assert.Equal(t, loopbreaker.Open, ws[0].Stats().State)

	f.srv.start() // back, empty: nothing was saved
	each(ws[1:], func(_ int, w *Worker) {
		assert.True(t, w.Check().Allow, "not yet tried again: the local breaker still decides")
	})
	f.clock.Advance(DefaultRetryInterval)
	each(ws[1:], func(_ int, w *Worker) {
		d := w.Check()
		assert.True(t, d.Allow)
		w.Record(loopbreaker.Iteration{Calls: 1})
	})
	assert.Equal(t, 15, strings.Count(f.logged(), "rejoined"))
	// Redis came back empty. The 15 workers made 3 calls each during the
	// outage, added once when they rejoined, and one each since.
	assert.Equal(t, 15*3+15, ws[1].Stats().Budget.Used)

	ws[3].Abort()
	each(ws[1:], func(i int, w *Worker) {
		assert.Equal(t, loopbreaker.ReasonAborted, w.Check().Reason.Kind, "worker %d is back in the fleet", i+1)
	})
}

func TestARejoinAddsTheOutagesCallsAndSpendOnceHoweverOftenItIsSent(t *testing.T) {
	f := newFleet(t)
	w := f.worker("a", Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCallsPerHour: 100, MaxCostUSDPerHour: 100}}})
	for _, step := range []struct {
		outage, calls, used int
		tokens              int
		cost, spent         float64
	}{
		{1, 5, 5, 100, 0.5, 0.5},   // the first attempt; its answer is lost
		{1, 5, 5, 100, 0.5, 0.5},   // the same attempt again
		{1, 7, 7, 150, 0.75, 0.75}, // two more calls since, and more spend
		{2, 3, 10, 10, 0.25, 1},    // the next outage
	} {
		r, err := w.call("rejoin", step.outage, step.calls, step.tokens, 0, formatCost(step.cost), "", 0, 0, "")
		require.NoError(t, err)
		assert.Equal(t, step.used, r.used, "outage %d, %d calls", step.outage, step.calls)
		assert.InDelta(t, step.spent, r.spend.CostUSD, 1e-12, "outage %d", step.outage)
		assert.Equal(t, r.spend, r.hour, "stamped at the rejoin, in the hour")
	}
	assert.Equal(t, 160, w.Stats().Spend.Total.InputTokens)
}

func TestFailClosedRefusesWithItsOwnErrorWhileRedisIsDown(t *testing.T) {
	f := newFleet(t)
	w := f.worker("a", Config{FailClosed: true, RetryInterval: 5 * time.Second})
	require.True(t, w.Check().Allow)
	w.RecordSuccess()

	f.srv.stop()
	d := w.Check()
	require.False(t, d.Allow)
	err := d.Err()
	require.ErrorIs(t, err, loopbreaker.ErrUnavailable)
	assert.NotErrorIs(t, err, loopbreaker.ErrOpen)
	assert.Equal(t, loopbreaker.ReasonUnavailable, d.Reason.Kind)
	assert.Equal(t, 5*time.Second, d.RetryAfter)
	f.clock.Advance(2 * time.Second)
	assert.Equal(t, 3*time.Second, w.Check().RetryAfter)

	f.srv.start()
	assert.False(t, w.Check().Allow, "not tried again before RetryInterval")
	f.clock.Advance(3 * time.Second)
	assert.True(t, w.Check().Allow)
}

func TestAHeldFleetStaysHeldForAWorkerThatLosesRedis(t *testing.T) {
	f := newFleet(t)
	a, b := f.worker("a", Config{}), f.worker("b", Config{})
	a.Abort()
	assert.False(t, b.Check().Allow)
	f.srv.stop()
	d := b.Check()
	assert.False(t, d.Allow, "the abort was the last word b heard")
	assert.Equal(t, loopbreaker.ReasonAborted, d.Reason.Kind)
}

func TestAnOpenFleetStaysOpenUntilItsCooldownForAWorkerThatLosesRedis(t *testing.T) {
	f := newFleet(t)
	a, b := f.worker("a", Config{}), f.worker("b", Config{})
	for range 3 {
		a.RecordFailure("boom")
	}
	require.False(t, b.Check().Allow)
	f.srv.stop()
	d := b.Check()
	assert.False(t, d.Allow)
	assert.Equal(t, loopbreaker.ReasonConsecutiveFailures, d.Reason.Kind)
	f.clock.Advance(30 * time.Second)
	assert.True(t, b.Check().Allow, "then b's local breaker decides alone")
}

// During an outage a worker may spend what the fleet had left of its cap
// over its life when it last heard from Redis; on rejoin its spend is added
// to the fleet's, once.
func TestSpendDuringAnOutageIsJudgedLocallyAndAddedOnceOnRejoin(t *testing.T) {
	f := newFleet(t)
	cfg := Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCostUSD: 10}}}
	a, b := f.worker("a", cfg), f.worker("b", cfg)
	require.True(t, a.Check().Allow)
	a.Record(loopbreaker.Iteration{Usage: loopbreaker.Usage{CostUSD: 6}})
	require.True(t, b.Check().Allow, "b hears that the fleet spent $6")
	b.RecordSuccess()

	require.NoError(t, f.client.Save(context.Background()).Err())
	f.srv.stop()
	require.True(t, b.Check().Allow, "b's local breaker decides")
	b.Record(loopbreaker.Iteration{Usage: loopbreaker.Usage{CostUSD: 3}})
	require.True(t, b.Check().Allow, "$3 of the $4 the fleet had left")
	b.Record(loopbreaker.Iteration{Usage: loopbreaker.Usage{CostUSD: 1.5}})
	d := b.Check()
	require.False(t, d.Allow, "$4.50: more than the fleet had left")
	assert.Equal(t, loopbreaker.ReasonSpendCap, d.Reason.Kind)

	f.srv.start() // back, with the fleet's $6 it saved
	f.clock.Advance(DefaultRetryInterval)
	for _, w := range []*Worker{b, a} {
		d := w.Check()
		require.False(t, d.Allow)
		assert.Equal(t, "Spend cap reached: $10.50 over the loop's life (cap: $10.00)", d.Reason.String(), "worker %s", w.ID())
	}
	assert.Equal(t, 1, strings.Count(f.logged(), "rejoined"))
	assert.Equal(t, loopbreaker.Usage{CostUSD: 10.5}, a.Stats().Spend.Total, "b's $4.50 added once")
}

// A limit a worker hits while Redis is out of reach stops it at once, and
// the whole fleet when it rejoins.
func TestALimitHitDuringAnOutageReachesTheFleetOnRejoin(t *testing.T) {
	f := newFleet(t)
	a, b := f.worker("a", Config{}), f.worker("b", Config{})
	require.True(t, a.Check().Allow)
	f.srv.stop()
	require.True(t, b.Check().Allow)
	reset := time.Now().Add(10 * time.Minute)
	b.Record(loopbreaker.Iteration{Err: limited(loopbreaker.Limit{Reset: reset, Why: "weekly limit"})})
	d := b.Check()
	require.False(t, d.Allow, "b's local breaker keeps the limit")
	assert.Equal(t, "Provider limit: weekly limit", d.Reason.String())

	f.srv.start() // back, empty
	f.clock.Advance(DefaultRetryInterval)
	assert.Equal(t, loopbreaker.ReasonProviderLimit, b.Check().Reason.Kind)
	d = a.Check()
	require.False(t, d.Allow, "b told the fleet when it rejoined")
	assert.Equal(t, "Provider limit: weekly limit", d.Reason.String())
	assert.InDelta(t, time.Until(reset), d.RetryAfter, float64(2*time.Second))

	a.Resume()
	assert.True(t, b.Check().Allow, "the fleet keeps the limit now: b's local breaker let it go")
}

// A worker that loses Redis keeps the fleet's limit in force until it was
// due to lift, and a stop until Redis is back.
func TestAFleetLimitStaysInForceForAWorkerThatLosesRedis(t *testing.T) {
	f := newFleet(t)
	a, b := f.worker("a", Config{}), f.worker("b", Config{})
	a.ObserveLimit(loopbreaker.Limit{Reset: time.Now().Add(10 * time.Minute), Why: "usage limit"})
	require.False(t, b.Check().Allow)
	f.srv.stop()
	d := b.Check()
	require.False(t, d.Allow)
	assert.Equal(t, "Provider limit: usage limit", d.Reason.String())
	assert.InDelta(t, 10*time.Minute, d.RetryAfter, float64(2*time.Second))
	f.clock.Advance(10 * time.Minute)
	assert.True(t, b.Check().Allow, "lifted: b's local breaker decides alone")

	f.srv.start()
	f.clock.Advance(DefaultRetryInterval)
	a.ObserveLimit(loopbreaker.Limit{Kind: loopbreaker.LimitStop, Why: "credit balance is too low"})
	require.False(t, b.Check().Allow)
	f.srv.stop()
	f.clock.Advance(time.Hour)
	d = b.Check()
	assert.Equal(t, loopbreaker.ReasonProviderStopped, d.Reason.Kind, "no time ends a stop")
}
