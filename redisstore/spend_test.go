package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOneWorkersSpendCountsForTheWholeFleet(t *testing.T) {
	f := newFleet(t)
	ws := f.workers(3, Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCostUSD: 10}}})
	a, b, c := ws[0], ws[1], ws[2]
	require.True(t, a.Check().Allow)
	a.Record(loopbreaker.Iteration{Usage: loopbreaker.Usage{InputTokens: 1000, OutputTokens: 200, CostUSD: 5}})
	require.True(t, b.Check().Allow)
	b.Record(loopbreaker.Iteration{Usage: loopbreaker.Usage{CostUSD: 3.5}})

	d := c.Check()
	require.True(t, d.Allow, "$8.50 of $10.00: a warning, no stop")
	assert.Equal(t, "Spend 85% of the cap: $8.50 of $10.00 over the loop's life, $1.50 left", warningsText(d))
	require.Len(t, d.Warnings, 1)
	assert.Equal(t, loopbreaker.Reason{Kind: loopbreaker.ReasonSpendWarning, CostUSD: 8.5, MaxCostUSD: 10, Message: warningsText(d)}, d.Warnings[0])
	c.RecordSuccess()

	a.AddUsage(loopbreaker.Usage{CostUSD: 1.5}) // as it happens, mid-iteration
	for _, w := range ws {
		d := w.Check()
		require.False(t, d.Allow, "worker %s", w.ID())
		assert.Equal(t, "Spend cap reached: $10.00 over the loop's life (cap: $10.00)", d.Reason.String())
		assert.ErrorIs(t, d.Err(), loopbreaker.ErrSpendCap)
		assert.NotErrorIs(t, d.Err(), loopbreaker.ErrOpen, "a spent cap opens no circuit")
		assert.Zero(t, d.RetryAfter, "no waiting ends it")
		_, err := w.Wait(context.Background())
		assert.ErrorIs(t, err, loopbreaker.ErrSpendCap, "Wait returns at once")
	}
	s := b.Stats().Spend
	assert.Equal(t, loopbreaker.Usage{InputTokens: 1000, OutputTokens: 200, CostUSD: 10}, s.Total)
	assert.Equal(t, 10.0, s.MaxCostUSD)
	assert.Equal(t, 0.0, s.CostLeftUSD())
	assert.Equal(t, loopbreaker.Closed, b.Stats().State)

	c.Resume()
	assert.Equal(t, loopbreaker.ReasonSpendCap, a.Check().Reason.Kind, "Resume gives no spend back")
	c.Reset()
	assert.Equal(t, loopbreaker.ReasonSpendCap, a.Check().Reason.Kind, "nor does Reset")
}

func TestTheFleetsTokenCapCountsInputAndOutputTokens(t *testing.T) {
	f := newFleet(t)
	ws := f.workers(2, Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxTokens: 1000}}})
	ws[0].Record(loopbreaker.Iteration{Usage: loopbreaker.Usage{InputTokens: 600, OutputTokens: 200}})
	d := ws[1].Check()
	require.True(t, d.Allow)
	assert.Equal(t, "Spend 80% of the cap: 800 tokens of 1000 tokens over the loop's life, 200 tokens left", warningsText(d))
	assert.Equal(t, loopbreaker.Reason{Kind: loopbreaker.ReasonSpendWarning, Count: 800, Threshold: 1000, Message: warningsText(d)}, d.Warnings[0])
	ws[1].Record(loopbreaker.Iteration{Usage: loopbreaker.Usage{OutputTokens: 200, CostUSD: -1, InputTokens: -5}})
	d = ws[0].Check()
	require.False(t, d.Allow)
	assert.Equal(t, "Spend cap reached: 1000 tokens over the loop's life (cap: 1000)", d.Reason.String())
	assert.Equal(t, loopbreaker.Reason{Kind: loopbreaker.ReasonSpendCap, Count: 1000, Threshold: 1000}, d.Reason)
	assert.Equal(t, 0, ws[1].Stats().Spend.TokensLeft())
}

func TestSixtyFourWorkersSpendingAtOnceAddUpExactly(t *testing.T) {
	f := newFleet(t)
	ws := f.workers(64, Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxTokensPerHour: 1 << 30, MaxCostUSD: 1000}}})
	each(ws, func(_ int, w *Worker) {
		for range 5 {
			w.AddUsage(loopbreaker.Usage{InputTokens: 7, OutputTokens: 3, CostUSD: 0.25})
			require.True(t, w.Check().Allow)
			w.Record(loopbreaker.Iteration{Usage: loopbreaker.Usage{InputTokens: 1}})
		}
	})
	s := ws[9].Stats().Spend
	assert.Equal(t, loopbreaker.Usage{InputTokens: 64 * 5 * 8, OutputTokens: 64 * 5 * 3, CostUSD: 64 * 5 * 0.25}, s.Total)
	assert.Equal(t, s.Total.Tokens(), s.LastHour.Tokens(), "all of it in the last hour")
}

// redisNow reads Redis's clock, which the hourly window runs on.
func redisNow(t *testing.T, f *fleet) time.Time {
	t.Helper()
	now, err := f.client.Time(context.Background()).Result()
	require.NoError(t, err)
	return now
}

// spentAgo writes spend into the fleet's hourly window as if it had been
// spent ago before now (by Redis's clock), as the script writes it.
func spentAgo(t *testing.T, f *fleet, seq int, ago time.Duration, tokens int, cost float64) {
	t.Helper()
	ctx := context.Background()
	keys := keysOf(f.name)
	at := redisNow(t, f).Add(-ago).UnixMilli()
	member := fmt.Sprintf("%d:%d:0:%s", seq, tokens, strconv.FormatFloat(cost, 'g', -1, 64))
	require.NoError(t, f.client.ZAdd(ctx, keys[4], redisZ(at, member)).Err())
	require.NoError(t, f.client.HIncrBy(ctx, keys[0], "hin", int64(tokens)).Err())
	require.NoError(t, f.client.HIncrByFloat(ctx, keys[0], "hcost", cost).Err())
	require.NoError(t, f.client.HIncrBy(ctx, keys[0], "sin", int64(tokens)).Err())
	require.NoError(t, f.client.HIncrByFloat(ctx, keys[0], "scost", cost).Err())
	require.NoError(t, f.client.HSet(ctx, keys[0], "sseq", seq).Err())
}

// The hourly cap judges exactly the spend of the last hour: what was spent
// 61 minutes ago has left it, and the refusal lasts until the spend whose
// leaving brings the hour under the cap is an hour old.
func TestTheHourlySpendCapRefusesUntilEnoughSpendLeavesTheRollingHour(t *testing.T) {
	f := newFleet(t)
	ws := f.workers(2, Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxTokensPerHour: 1000, MaxCostUSDPerHour: 100}}})
	require.True(t, ws[0].Check().Allow)        // the fleet's state exists
	spentAgo(t, f, 1, 61*time.Minute, 5000, 90) // gone from the hour
	spentAgo(t, f, 2, 50*time.Minute, 400, 1)
	spentAgo(t, f, 3, 20*time.Minute, 300, 1)

	d := ws[1].Check()
	require.True(t, d.Allow, "700 tokens in the last hour")
	assert.Equal(t, 700, ws[1].Stats().Spend.LastHour.Tokens())
	ws[1].Record(loopbreaker.Iteration{Usage: loopbreaker.Usage{InputTokens: 400}})

	d = ws[0].Check()
	require.False(t, d.Allow)
	assert.Equal(t, "Spend cap reached: 1100 tokens in the last hour (cap: 1000)", d.Reason.String())
	assert.ErrorIs(t, d.Err(), loopbreaker.ErrSpendCap)
	// When the 400 of 50 minutes ago leave, 700 are left: below the cap.
	assert.InDelta(t, 10*time.Minute, d.RetryAfter, float64(5*time.Second))
	s := ws[0].Stats().Spend
	assert.Equal(t, loopbreaker.Usage{InputTokens: 1100, CostUSD: 2}, s.LastHour)
	assert.Equal(t, loopbreaker.Usage{InputTokens: 6100, CostUSD: 92}, s.Total, "the fleet's life keeps what left the hour")
}

func TestStatsShowTheFleetsSpendAndCaps(t *testing.T) {
	f := newFleet(t)
	cfg := loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxTokens: 10000, MaxCostUSD: 20, MaxTokensPerHour: 5000, MaxCostUSDPerHour: 5}}
	a, b := f.worker("a", Config{Breaker: cfg}), f.worker("b", Config{Breaker: cfg})
	a.AddUsage(loopbreaker.Usage{InputTokens: 3000, OutputTokens: 1000, CostUSD: 4.25})
	s := b.Stats()
	assert.Equal(t, loopbreaker.Spend{
		Total:     loopbreaker.Usage{InputTokens: 3000, OutputTokens: 1000, CostUSD: 4.25},
		LastHour:  loopbreaker.Usage{InputTokens: 3000, OutputTokens: 1000, CostUSD: 4.25},
		MaxTokens: 10000, MaxCostUSD: 20, MaxTokensPerHour: 5000, MaxCostUSDPerHour: 5,
	}, s.Spend)
	require.NotEmpty(t, s.Warnings)
	assert.Equal(t, loopbreaker.ReasonSpendWarning, s.Warnings[0].Kind)
	assert.Equal(t, "Spend 85% of the cap: $4.25 of $5.00 in the last hour, $0.75 left", s.Warnings[0].String())
	assert.Equal(t, 1000, s.Spend.TokensLeft())
}

func redisZ(score int64, member string) redis.Z {
	return redis.Z{Score: float64(score), Member: member}
}
