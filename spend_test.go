package loopbreaker

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Iterations report what they spent; at the cap over the loop's life,
// Check refuses with a stop of its own that no waiting ends, and that is
// not a failure.
func TestSpendCapStopsTheLoop(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxCostUSD: 1}})
	b.Record(Iteration{Usage: Usage{InputTokens: 12000, OutputTokens: 800, CostUSD: 0.45}})
	d := b.Check()
	assert.True(t, d.Allow)
	assert.Empty(t, warningsText(d), "45% spent")

	b.Record(Iteration{Usage: Usage{InputTokens: 9000, OutputTokens: 600, CostUSD: 0.40}})
	d = b.Check()
	assert.True(t, d.Allow)
	assert.Equal(t, "Spend 85% of the cap: $0.85 of $1.00 over the loop's life, $0.15 left", warningsText(d))

	b.Record(Iteration{Err: errA(1), Usage: Usage{CostUSD: 0.2}})
	d = b.Check()
	assert.False(t, d.Allow)
	assert.Equal(t, Closed, d.State, "the circuit does not open")
	assert.Equal(t, ReasonSpendCap, d.Reason.Kind)
	assert.Equal(t, "Spend cap reached: $1.05 over the loop's life (cap: $1.00)", d.Reason.String())
	assert.Zero(t, d.RetryAfter)
	assert.ErrorIs(t, d.Err(), ErrSpendCap)
	assert.NotErrorIs(t, d.Err(), ErrOpen)
	var refused *RefusedError
	require.ErrorAs(t, d.Err(), &refused)

	clock.Advance(48 * time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	_, err := b.Wait(ctx)
	assert.ErrorIs(t, err, ErrSpendCap, "no waiting ends it")

	s := b.Stats()
	assert.Equal(t, Usage{InputTokens: 21000, OutputTokens: 1400, CostUSD: 1.05}, roundUsage(s.Spend.Total))
	assert.Equal(t, 0.0, s.Spend.CostLeftUSD())
	assert.Equal(t, -1, s.Spend.TokensLeft(), "no token cap")
}

// roundUsage rounds the cost to a micro-dollar, as floats add up with
// dust.
func roundUsage(u Usage) Usage {
	u.CostUSD = math.Round(u.CostUSD*1e6) / 1e6
	return u
}

// Neither Reset nor Resume gives the spend back: it was spent.
func TestResetAndResumeDoNotGiveTheSpendBack(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxTokens: 1000}})
	b.Record(Iteration{Usage: Usage{InputTokens: 900, OutputTokens: 100}})
	require.Equal(t, ReasonSpendCap, b.Check().Reason.Kind)
	assert.Equal(t, "Spend cap reached: 1000 tokens over the loop's life (cap: 1000)", b.Check().Reason.String())

	b.Resume()
	assert.Equal(t, ReasonSpendCap, b.Check().Reason.Kind)
	b.Skip()
	assert.Equal(t, ReasonSpendCap, b.Check().Reason.Kind)
	b.Reset()
	assert.Equal(t, ReasonSpendCap, b.Check().Reason.Kind)
	assert.Equal(t, 1000, b.Stats().Spend.Total.Tokens())
}

// An hourly cap refuses until enough spend has left the rolling hour,
// which Wait waits out.
func TestHourlySpendCapWaitsForTheHour(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxTokensPerHour: 10000}})
	b.Record(Iteration{Usage: Usage{InputTokens: 4000}})
	clock.Advance(20 * time.Minute)
	b.Record(Iteration{Usage: Usage{InputTokens: 4000}})
	d := b.Check()
	assert.Equal(t, "Spend 80% of the cap: 8000 tokens of 10000 tokens in the last hour, 2000 tokens left", warningsText(d))
	clock.Advance(10 * time.Minute)
	b.Record(Iteration{Usage: Usage{InputTokens: 3000}})

	d = b.Check()
	assert.Equal(t, ReasonHourlySpendCap, d.Reason.Kind)
	assert.Equal(t, "Spend cap reached: 11000 tokens in the last hour (cap: 10000)", d.Reason.String())
	assert.Equal(t, 30*time.Minute, d.RetryAfter, "when the first 4000 leave the hour, 7000 are left")
	assert.ErrorIs(t, d.Err(), ErrSpendCap)
	s := b.Stats()
	assert.Equal(t, 11000, s.Spend.LastHour.Tokens())
	assert.Equal(t, 0, s.Spend.TokensLeft())

	d, err := b.Wait(context.Background())
	require.NoError(t, err)
	assert.True(t, d.Allow)
	assert.Equal(t, 7000, b.Stats().Spend.LastHour.Tokens())
	assert.Equal(t, 3000, b.Stats().Spend.TokensLeft())
	assert.Equal(t, 11000, b.Stats().Spend.Total.Tokens(), "the life total keeps it all")
}

// The hourly cap on cost, with several entries leaving the hour before it
// allows again.
func TestHourlyCostCapRetriesWhenEnoughHasLeft(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxCostUSDPerHour: 2}})
	for range 4 {
		b.Record(Iteration{Usage: Usage{CostUSD: 0.6}})
		clock.Advance(10 * time.Minute)
	}
	d := b.Check()
	assert.Equal(t, ReasonHourlySpendCap, d.Reason.Kind)
	assert.Equal(t, "Spend cap reached: $2.40 in the last hour (cap: $2.00)", d.Reason.String())
	assert.Equal(t, 20*time.Minute, d.RetryAfter, "the first leaves the hour 20 minutes from now, and $1.80 is left")
}

// The cap over the loop's life speaks before the hourly one: no waiting
// ends it.
func TestLifeCapOutranksTheHourlyCap(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxTokens: 100, MaxTokensPerHour: 50}})
	b.Record(Iteration{Usage: Usage{OutputTokens: 200}})
	d := b.Check()
	assert.Equal(t, ReasonSpendCap, d.Reason.Kind)
	assert.Zero(t, d.RetryAfter)
}

// Spend reported as it happens (a transport's AddUsage) counts like an
// iteration's, and so does the spend of an iteration the provider refused
// or the host cancelled.
func TestSpendCountsHoweverItIsReported(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxCostUSD: 10}})
	b.AddUsage(Usage{InputTokens: 100, CostUSD: 1})
	b.Record(Iteration{Err: errHitLimit, Usage: Usage{CostUSD: 2}})
	b.Record(Iteration{Err: errCanceled, Usage: Usage{CostUSD: 3}})
	b.RecordSuccess()
	s := b.Stats()
	assert.Equal(t, Usage{InputTokens: 100, CostUSD: 6}, s.Spend.Total)
	assert.Equal(t, 4.0, s.Spend.CostLeftUSD())
}

// A broken report never spoils the totals: negative counts and a cost that
// is negative, NaN or infinite count as zero, and sums saturate.
func TestBrokenUsageReportsCountAsNothing(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxCostUSD: 5, MaxTokensPerHour: 1000}})
	for _, u := range []Usage{
		{InputTokens: -5, OutputTokens: -1, CostUSD: -2},
		{CostUSD: math.NaN()},
		{CostUSD: math.Inf(1)},
		{CostUSD: math.Inf(-1)},
	} {
		b.AddUsage(u)
	}
	assert.Equal(t, Usage{}, b.Stats().Spend.Total)
	assert.True(t, b.Check().Allow)

	b.AddUsage(Usage{InputTokens: math.MaxInt, CostUSD: math.MaxFloat64})
	b.AddUsage(Usage{InputTokens: math.MaxInt, OutputTokens: 1, CostUSD: math.MaxFloat64})
	s := b.Stats()
	assert.Equal(t, math.MaxInt, s.Spend.Total.Tokens())
	assert.Equal(t, math.MaxFloat64, s.Spend.Total.CostUSD, "saturated, not infinite")
	assert.Equal(t, ReasonSpendCap, b.Check().Reason.Kind)
	_, err := b.Snapshot().MarshalJSON()
	assert.NoError(t, err, "a saturated spend is still JSON")
}

// Without caps, the spend is still counted for Stats, and Check does not
// speak of it.
func TestSpendWithoutCapsIsCounted(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	b.Record(Iteration{Usage: Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.01}})
	d := b.Check()
	assert.True(t, d.Allow)
	assert.Empty(t, warningsText(d))
	s := b.Stats()
	assert.Equal(t, 15, s.Spend.Total.Tokens())
	assert.Zero(t, s.Spend.LastHour, "no hourly cap: no window kept")
	assert.Equal(t, -1, s.Spend.TokensLeft())
	assert.Equal(t, -1.0, s.Spend.CostLeftUSD())
	assert.Empty(t, s.Spend.Warning())
}

// The call budget's warning and the spend warning speak together.
func TestWarningsOfBudgetAndSpendAreJoined(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 10, MaxTokens: 100}})
	b.Record(Iteration{Calls: 9, Usage: Usage{OutputTokens: 90}})
	assert.Equal(t, "Call budget 90% used: 9 of 10 calls in the last hour, 1 left; Spend 90% of the cap: 90 tokens of 100 tokens over the loop's life, 10 tokens left",
		warningsText(b.Check()))
}

// The Spend value's arithmetic: the least any cap leaves, the warning of
// the cap most spent.
func TestSpendLeftAndWarning(t *testing.T) {
	s := Spend{
		Total:             Usage{InputTokens: 500, CostUSD: 3},
		LastHour:          Usage{InputTokens: 450, CostUSD: 0.5},
		MaxTokens:         1000,
		MaxCostUSD:        10,
		MaxTokensPerHour:  500,
		MaxCostUSDPerHour: 0.6,
	}
	assert.Equal(t, 50, s.TokensLeft())
	assert.InDelta(t, 0.1, s.CostLeftUSD(), 1e-9)
	assert.Equal(t, "Spend 90% of the cap: 450 tokens of 500 tokens in the last hour, 50 tokens left", s.Warning())
	s.LastHour.CostUSD = 0.59
	assert.Equal(t, "Spend 98% of the cap: $0.59 of $0.60 in the last hour, $0.01 left", s.Warning())
	assert.Equal(t, "$0.0523", formatUSD(0.0523))
	assert.Equal(t, "$12.50", formatUSD(12.5))
	assert.Equal(t, "$3.125", formatUSD(3.125))
}

func TestSpendCapsAreValidated(t *testing.T) {
	for _, cfg := range []Config{
		{Spend: SpendRules{MaxCostUSD: math.NaN()}},
		{Spend: SpendRules{MaxCostUSD: math.Inf(1)}},
		{Spend: SpendRules{MaxCostUSDPerHour: math.Inf(-1)}},
	} {
		assert.ErrorIs(t, cfg.Validate(), ErrInvalidConfig, "%+v", cfg)
	}
	assert.NoError(t, Config{Spend: SpendRules{MaxCostUSD: -1, MaxTokens: -1}}.Validate(), "negative: no cap")
	b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxCostUSD: -1, MaxTokens: -1}})
	b.AddUsage(Usage{OutputTokens: 5, CostUSD: 5})
	assert.True(t, b.Check().Allow)
}
