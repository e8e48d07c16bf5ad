package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A subscriber's 5-hour window, as Anthropic's headers report it.
func fiveHourWindow(used float64, reset time.Time) loopbreaker.Window {
	return loopbreaker.Window{Length: 5 * time.Hour, Used: used, Reset: reset, Source: "api.anthropic.com"}
}

// The fleet keeps a fifth of the 5-hour window for the person: one worker's
// response says 70% is used, and every worker is warned; another's says
// 90%, and every worker waits until the window resets; then they go on.
func TestOneWorkersWindowAtTheShareMakesEveryWorkerWaitUntilItsReset(t *testing.T) {
	f := newFleet(t)
	var slept sleeps
	ws := f.workers(3, Config{Breaker: loopbreaker.Config{Sleep: slept.Sleep, Spend: loopbreaker.SpendRules{MaxWindowShare: 80}}})
	a, b, c := ws[0], ws[1], ws[2]
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	resets := "resets " + reset.Format("2006-01-02 15:04 MST")

	a.ObserveWindow(fiveHourWindow(70, reset))
	d := c.Check()
	require.True(t, d.Allow, "70% of a cap of 80%: a warning, no stop")
	require.Len(t, d.Warnings, 1)
	assert.Equal(t, loopbreaker.Reason{Kind: loopbreaker.ReasonWindowShareWarning, Count: 70, Threshold: 80, Window: 300, Message: resets}, d.Warnings[0])
	assert.Equal(t, "Window share 70% of the 5-hour window used (cap: 80%); "+resets, d.Warnings[0].String())
	c.RecordSuccess()

	b.ObserveWindow(fiveHourWindow(90, reset)) // the same window, a later report
	for _, w := range ws {
		d := w.Check()
		require.False(t, d.Allow, "worker %s", w.ID())
		assert.Equal(t, "Window share cap reached: 90% of the 5-hour window used (cap: 80%); "+resets, d.Reason.String())
		assert.Equal(t, loopbreaker.Reason{Kind: loopbreaker.ReasonWindowShare, Count: 90, Threshold: 80, Window: 300, Message: resets}, d.Reason)
		assert.ErrorIs(t, d.Err(), loopbreaker.ErrSpendCap)
		assert.NotErrorIs(t, d.Err(), loopbreaker.ErrOpen)
		assert.Equal(t, loopbreaker.Closed, d.State, "the circuit does not open")
		assert.True(t, d.WaitHelps())
		assert.InDelta(t, time.Until(reset).Seconds(), d.RetryAfter.Seconds(), 5, "until the window's reset")
	}
	s := c.Stats()
	require.Len(t, s.Spend.Windows, 1, "one window: the later report counts")
	assert.Equal(t, 90.0, s.Spend.Windows[0].Used)
	assert.Equal(t, reset.UnixMilli(), s.Spend.Windows[0].Reset.UnixMilli(), "the provider's reset, as it gave it")
	assert.Equal(t, 80, s.Spend.MaxWindowShare)
	assert.Zero(t, s.Failures.Total, "no failure counted")

	// A window that resets in a moment: every worker waits it out.
	c.Resume() // forgets the reports
	require.True(t, a.Check().Allow)
	soon := time.Now().Add(1500 * time.Millisecond)
	a.ObserveWindow(fiveHourWindow(95, soon))
	a.RecordSuccess()
	each(ws, func(_ int, w *Worker) {
		d, err := w.Wait(context.Background())
		require.NoError(t, err)
		assert.True(t, d.Allow, "Wait waited for the reset")
		assert.False(t, time.Now().Before(soon.Truncate(time.Millisecond)), "not before the reset")
	})
	for _, p := range slept.pauses {
		assert.LessOrEqual(t, p, 1500*time.Millisecond, "it slept until the reset, at most")
	}
	assert.Empty(t, b.Stats().Spend.Windows, "the window reset: what it said is over")
}

// With StopAtWindowShare, one worker's report at the share stops every
// worker for a person: no wait ends it, not even the window's reset; a
// Resume on any worker releases them all.
func TestTheWindowShareStopsEveryWorkerUntilAPersonResumesOnAnyWorker(t *testing.T) {
	f := newFleet(t)
	ws := f.workers(3, Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxWindowShare: 50, StopAtWindowShare: true}}})
	a, b, c := ws[0], ws[1], ws[2]
	reset := time.Now().Add(2 * time.Hour)
	weekly := loopbreaker.Window{Length: 7 * 24 * time.Hour, Used: 55, Reset: reset, Source: "Codex"}
	require.True(t, a.Check().Allow)
	a.ObserveWindow(weekly)
	a.RecordSuccess()

	for _, w := range ws {
		d := w.Check()
		require.False(t, d.Allow)
		assert.Equal(t, "Window share cap reached: 55% of the weekly window used (cap: 50%); no waiting ends this: resume the loop, or raise the cap", d.Reason.String())
		assert.Zero(t, d.RetryAfter)
		assert.False(t, d.WaitHelps())
		_, err := w.Wait(context.Background())
		assert.ErrorIs(t, err, loopbreaker.ErrSpendCap, "Wait returns at once")
	}
	weekly.Used, weekly.Reset = 3, time.Now().Add(-time.Minute) // the week started again
	b.ObserveWindow(weekly)
	assert.Equal(t, loopbreaker.ReasonWindowShare, c.Check().Reason.Kind, "still stopped: a person resumes")

	b.Resume()
	for _, w := range ws {
		assert.True(t, w.Check().Allow, "worker %s", w.ID())
		w.RecordSuccess()
	}
}

// The burn rate is the fleet's: the spend of every worker over the burn
// window, against one cap; from 80% of it every worker is warned, at it
// every worker waits until enough spend has left the window.
func TestTheBurnRateIsTheFleetsSpendOverItsWindow(t *testing.T) {
	f := newFleet(t)
	ws := f.workers(3, Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCostUSDPerMinute: 1, BurnWindow: 2 * time.Minute}}})
	for _, w := range ws {
		require.True(t, w.Check().Allow)
		w.AddUsage(loopbreaker.Usage{InputTokens: 1000, CostUSD: 0.5}) // as it happens
		w.RecordSuccess()
	}
	d := ws[0].Check()
	require.True(t, d.Allow, "$1.50 in 2 minutes: $0.75 a minute, of a cap of $1")
	require.Len(t, d.Warnings, 0, "below 80% of the cap")
	ws[0].Record(loopbreaker.Iteration{Usage: loopbreaker.Usage{CostUSD: 0.25}})

	d = ws[1].Check()
	require.True(t, d.Allow)
	require.Len(t, d.Warnings, 1)
	assert.Equal(t, "Burn rate near the cap: $0.875 a minute over the last 2 minutes (cap: $1.00 a minute)", d.Warnings[0].String())
	ws[1].Record(loopbreaker.Iteration{Usage: loopbreaker.Usage{CostUSD: 0.25}})

	for _, w := range ws {
		d := w.Check()
		require.False(t, d.Allow, "worker %s", w.ID())
		assert.Equal(t, loopbreaker.Reason{Kind: loopbreaker.ReasonBurnRate, CostUSD: 1, MaxCostUSD: 1, Window: 2}, d.Reason)
		assert.Equal(t, "Burn rate cap reached: $1.00 a minute over the last 2 minutes (cap: $1.00 a minute)", d.Reason.String())
		assert.ErrorIs(t, d.Err(), loopbreaker.ErrSpendCap)
		assert.True(t, d.WaitHelps())
		assert.Greater(t, d.RetryAfter, time.Duration(0))
		assert.LessOrEqual(t, d.RetryAfter, 2*time.Minute, "until the spend leaves the window")
	}
	s := ws[2].Stats().Spend
	assert.Equal(t, loopbreaker.Usage{InputTokens: 3000, CostUSD: 2}, s.InBurnWindow)
	assert.Equal(t, 2*time.Minute, s.BurnWindow)
	assert.Equal(t, 1.0, s.CostPerMinute())
	assert.Equal(t, 1500.0, s.TokensPerMinute())

	letPass(t, f.client, ws[0], time.Minute)
	assert.Equal(t, loopbreaker.ReasonBurnRate, ws[2].Check().Reason.Kind, "a minute later: all of it still in the window")
	letPass(t, f.client, ws[0], time.Minute)
	for _, w := range ws {
		assert.True(t, w.Check().Allow, "two minutes later: the spend left the window")
		w.RecordSuccess()
	}
	assert.Zero(t, ws[0].Stats().Spend.InBurnWindow)
	assert.Equal(t, 2.0, ws[0].Stats().Spend.Total.CostUSD, "the spend of the fleet's life stays")
}

// The burn rate in tokens, summed over workers, with an hourly cap beside
// it: the spend's entries serve both windows.
func TestTheFleetsBurnRateInTokensBesideAnHourlyCap(t *testing.T) {
	f := newFleet(t)
	ws := f.workers(2, Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxTokensPerMinute: 1000, MaxTokensPerHour: 100000}}})
	for _, w := range ws {
		require.True(t, w.Check().Allow)
		w.Record(loopbreaker.Iteration{Usage: loopbreaker.Usage{InputTokens: 2000, OutputTokens: 500}})
	}
	d := ws[0].Check()
	require.False(t, d.Allow)
	assert.Equal(t, "Burn rate cap reached: 1000 tokens a minute over the last 5 minutes (cap: 1000)", d.Reason.String(),
		"5000 tokens over the default 5-minute window")
	s := ws[1].Stats().Spend
	assert.Equal(t, 5000, s.InBurnWindow.Tokens())
	assert.Equal(t, 5000, s.LastHour.Tokens())

	letPass(t, f.client, ws[0], 5*time.Minute)
	assert.True(t, ws[1].Check().Allow, "the spend left the burn window")
	s = ws[1].Stats().Spend
	assert.Zero(t, s.InBurnWindow.Tokens())
	assert.Equal(t, 5000, s.LastHour.Tokens(), "and is still in the hour")
}

// A fleet keeps the latest report of at most 8 windows, whichever worker
// made it; a reset already past forgets a window.
func TestTheFleetKeepsTheLatestReportOfEachWindow(t *testing.T) {
	f := newFleet(t)
	a, b := f.worker("a", Config{}), f.worker("b", Config{})
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	for i := range maxWindows + 1 {
		w := a
		if i%2 == 1 {
			w = b
		}
		w.ObserveWindow(loopbreaker.Window{Length: time.Duration(i+1) * time.Hour, Used: float64(i), Reset: reset, Source: "api.anthropic.com"})
	}
	ws := a.Stats().Spend.Windows
	require.Len(t, ws, maxWindows)
	assert.Equal(t, "2-hour window", ws[0].Name(), "the oldest report went")
	assert.Equal(t, "9-hour window", ws[maxWindows-1].Name())

	b.ObserveWindow(loopbreaker.Window{Length: 2 * time.Hour, Used: 99, Reset: time.Now().Add(-time.Second), Source: "api.anthropic.com"})
	ws = a.Stats().Spend.Windows
	require.Len(t, ws, maxWindows-1, "the 2-hour window started again")
	assert.Equal(t, "3-hour window", ws[0].Name())

	// Without a reset a report counts for its window's length.
	b.ObserveWindow(loopbreaker.Window{Length: 5 * time.Hour, Used: 40, Source: "Claude Code"})
	ws = a.Stats().Spend.Windows
	assert.Equal(t, loopbreaker.Window{Length: 5 * time.Hour, Used: 40, Source: "Claude Code"}, ws[len(ws)-1])
	for _, bad := range []float64{-1, nanValue()} {
		b.ObserveWindow(loopbreaker.Window{Length: time.Hour, Used: bad})
	}
	assert.Len(t, a.Stats().Spend.Windows, len(ws), "a share negative or not a number is ignored")
}

func nanValue() float64 {
	zero := 0.0
	return zero / zero
}

// A report without a reset says until when it counts, by Redis's clock.
func TestAWindowWithoutAResetCountsForItsLength(t *testing.T) {
	f := newFleet(t)
	a := f.worker("a", Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxWindowShare: 90}}})
	before := time.Now()
	a.ObserveWindow(loopbreaker.Window{Length: 5 * time.Hour, Used: 100, Source: "Claude Code"})
	d := a.Check()
	require.False(t, d.Allow)
	assert.Equal(t, loopbreaker.ReasonWindowShare, d.Reason.Kind)
	assert.InDelta(t, (5 * time.Hour).Seconds(), d.RetryAfter.Seconds(), 5)
	assert.Contains(t, []string{
		"no reset time given: counted until " + before.Add(5*time.Hour).Format("2006-01-02 15:04 MST"),
		"no reset time given: counted until " + before.Add(5*time.Hour+time.Minute).Format("2006-01-02 15:04 MST"),
	}, d.Reason.Message)
}

// While Redis is out of reach, a window share that refused stays in force
// for the worker; what the worker hears meanwhile its local breaker
// judges, and the fleet is told when the worker rejoins: a stop at the
// share the outage put in force stops every worker.
func TestWindowsHeardDuringAnOutageReachTheFleetWhenTheWorkerRejoins(t *testing.T) {
	f := newFleet(t)
	cfg := Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxWindowShare: 80}}}
	a, b := f.worker("a", cfg), f.worker("b", cfg)
	reset := time.Now().Add(time.Hour)
	b.ObserveWindow(fiveHourWindow(85, reset))
	require.Equal(t, loopbreaker.ReasonWindowShare, a.Check().Reason.Kind)

	f.srv.stop()
	d := a.Check() // the outage begins
	require.False(t, d.Allow)
	assert.Equal(t, loopbreaker.ReasonWindowShare, d.Reason.Kind, "the share the fleet had in force stays for the worker")
	assert.InDelta(t, time.Until(reset).Seconds(), d.RetryAfter.Seconds(), 5)

	weekly := loopbreaker.Window{Length: 7 * 24 * time.Hour, Used: 60, Reset: time.Now().Add(48 * time.Hour).Truncate(time.Second), Source: "api.anthropic.com"}
	a.ObserveWindow(weekly)
	f.srv.start() // back, empty
	f.clock.Advance(DefaultRetryInterval)
	d = a.Check()
	require.True(t, d.Allow, "rejoined: the new Redis knows no 5-hour report")
	a.RecordSuccess()
	ws := b.Stats().Spend.Windows
	require.Len(t, ws, 1, "the report heard during the outage reached the fleet")
	assert.Equal(t, weekly.Used, ws[0].Used)
	assert.Equal(t, weekly.Reset.UnixMilli(), ws[0].Reset.UnixMilli())
}

func TestAWindowShareStopOfAnOutageStopsTheFleetWhenTheWorkerRejoins(t *testing.T) {
	f := newFleet(t)
	cfg := Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxWindowShare: 80, StopAtWindowShare: true}}}
	a, b := f.worker("a", cfg), f.worker("b", cfg)
	require.True(t, a.Check().Allow)
	f.srv.stop()
	a.RecordSuccess() // the outage begins
	a.ObserveWindow(fiveHourWindow(90, time.Now().Add(time.Hour)))
	a.ObserveWindow(fiveHourWindow(10, time.Now().Add(time.Hour))) // lower again: the stop holds
	d := a.Check()
	require.False(t, d.Allow)
	assert.Equal(t, loopbreaker.ReasonWindowShare, d.Reason.Kind, "the local breaker stops the worker")
	assert.False(t, d.WaitHelps())

	f.srv.start()
	f.clock.Advance(DefaultRetryInterval)
	a.Check() // rejoins
	d = b.Check()
	require.False(t, d.Allow)
	assert.Equal(t, "Window share cap reached: 90% of the 5-hour window used (cap: 80%); no waiting ends this: resume the loop, or raise the cap", d.Reason.String(),
		"the stop reached the fleet")
	b.Resume()
	assert.True(t, a.Check().Allow)
}
