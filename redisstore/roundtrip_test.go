package redisstore

import (
	"errors"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every cap and signal on, spend, usage windows and a provider limit in
// the iterations: still one round trip per Check and one per Record, and
// one per report of a window.
func TestCheckAndRecordAreOneRoundTripEachWithSpendAndLimits(t *testing.T) {
	f := newFleet(t)
	counter := &commandCounter{}
	f.client.AddHook(counter)
	w := f.worker("a", Config{Breaker: loopbreaker.Config{
		Failures: loopbreaker.FailureRules{
			MaxConsecutive: 10,
		},
		Spend: loopbreaker.SpendRules{
			MaxCallsPerHour:   1000,
			MaxTokens:         1 << 30,
			MaxCostUSD:        1e6,
			MaxTokensPerHour:  1 << 30,
			MaxCostUSDPerHour: 1e6,

			MaxCostUSDPerMinute: 1e5,
			MaxTokensPerMinute:  1 << 28,
			MaxWindowShare:      80,
		},
	}})
	w.Check() // loads the script: EVALSHA refused, then EVAL
	w.RecordSuccess()

	roundTrips := func(step func()) int64 {
		before := counter.n.Load()
		step()
		return counter.n.Load() - before
	}
	usage := loopbreaker.Usage{InputTokens: 1200, OutputTokens: 300, CostUSD: 0.042}
	window := loopbreaker.Window{Length: 5 * time.Hour, Used: 42, Reset: time.Now().Add(time.Hour), Source: "api.anthropic.com"}
	for i := range 3 {
		assert.Equal(t, int64(1), roundTrips(func() { require.True(t, w.Check().Allow) }), "Check %d", i)
		assert.Equal(t, int64(1), roundTrips(func() { w.ObserveWindow(window) }), "ObserveWindow %d", i)
		assert.Equal(t, int64(1), roundTrips(func() {
			w.Record(loopbreaker.Iteration{Err: errors.New("tool failed"), Usage: usage, Calls: 3})
		}), "Record %d", i)
	}
	assert.Equal(t, int64(1), roundTrips(func() { require.True(t, w.Check().Allow) }))
	limit := &loopbreaker.LimitError{Limit: loopbreaker.Limit{Reset: time.Now().Add(time.Hour)}}
	assert.Equal(t, int64(1), roundTrips(func() { w.Record(loopbreaker.Iteration{Err: limit, Usage: usage}) }),
		"a Record that puts a limit in force")
	assert.Equal(t, int64(1), roundTrips(func() {
		d := w.Check()
		require.Equal(t, loopbreaker.ReasonProviderLimit, d.Reason.Kind)
	}), "a Check that the limit refuses")
}
