package loopbreaker

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loopguard flags a loop that burns more than $2 a minute. At that cap,
// over the default 5-minute window ($10 in any 5 minutes), the loop is
// warned from $1.60 a minute, refused at $2, the circuit closed and no
// failure counted, and let go again once enough spend has left the window
// for the rate to fall under the cap.
func TestBurnRateCapRefusesUntilTheRateFalls(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxCostUSDPerMinute: 2}})
	b.Record(Iteration{Usage: Usage{CostUSD: 4}})
	d := b.Check()
	assert.True(t, d.Allow)
	assert.Empty(t, warningsText(d), "$0.80 a minute")

	clock.Advance(time.Minute)
	b.Record(Iteration{Usage: Usage{CostUSD: 4}})
	d = b.Check()
	assert.True(t, d.Allow)
	assert.Equal(t, "Burn rate near the cap: $1.60 a minute over the last 5 minutes (cap: $2.00 a minute)", warningsText(d))
	assert.Equal(t, ReasonBurnRateWarning, d.Warnings[0].Kind)

	clock.Advance(time.Minute)
	b.Record(Iteration{Err: errA(1), Usage: Usage{CostUSD: 3}})
	d = b.Check()
	require.False(t, d.Allow)
	assert.Equal(t, Closed, d.State, "the circuit does not open")
	assert.Equal(t, ReasonBurnRate, d.Reason.Kind)
	assert.Equal(t, "Burn rate cap reached: $2.20 a minute over the last 5 minutes (cap: $2.00 a minute)", d.Reason.String())
	assert.Equal(t, 3*time.Minute, d.RetryAfter, "when the first $4 leaves the window, $7 is left: $1.40 a minute")
	assert.ErrorIs(t, d.Err(), ErrSpendCap)
	assert.NotErrorIs(t, d.Err(), ErrOpen)
	assert.True(t, d.WaitHelps())
	assert.InDelta(t, 2.2, b.Stats().Spend.CostPerMinute(), 1e-9)
	assert.Equal(t, 1, b.Stats().Failures.Total, "the iteration's own failure, none for the cap")

	d, err := b.Wait(context.Background())
	require.NoError(t, err)
	assert.True(t, d.Allow)
	assert.Equal(t, testStart.Add(5*time.Minute), clock.Now())
	assert.InDelta(t, 1.4, b.Stats().Spend.CostPerMinute(), 1e-9)
	assert.Equal(t, 11.0, b.Stats().Spend.Total.CostUSD, "the life total keeps it all")
}

// The burn rate, case by case: dollars and tokens a minute, over windows
// of several lengths, spent at once or spread out.
func TestBurnRate(t *testing.T) {
	type spend struct {
		after time.Duration
		u     Usage
	}
	cases := []struct {
		name   string
		rules  SpendRules
		spends []spend
		want   string // the refusal; "" allows
		warn   string // the warning when it allows; "" none
		wait   time.Duration
	}{
		{"nothing spent", SpendRules{MaxCostUSDPerMinute: 2}, nil, "", "", 0},
		{"below the warning", SpendRules{MaxCostUSDPerMinute: 2}, []spend{{0, Usage{CostUSD: 7.9}}}, "",
			"", 0},
		{"at the warning", SpendRules{MaxCostUSDPerMinute: 2}, []spend{{0, Usage{CostUSD: 8}}}, "",
			"Burn rate near the cap: $1.60 a minute over the last 5 minutes (cap: $2.00 a minute)", 0},
		{"one call at the cap", SpendRules{MaxCostUSDPerMinute: 2}, []spend{{0, Usage{CostUSD: 10}}},
			"Burn rate cap reached: $2.00 a minute over the last 5 minutes (cap: $2.00 a minute)", "", 5 * time.Minute},
		{"spend that left the window", SpendRules{MaxCostUSDPerMinute: 2}, []spend{{0, Usage{CostUSD: 10}}, {5 * time.Minute, Usage{CostUSD: 1}}}, "",
			"", 0},
		{"a window of a minute", SpendRules{MaxCostUSDPerMinute: 2, BurnWindow: time.Minute},
			[]spend{{0, Usage{CostUSD: 1.5}}, {30 * time.Second, Usage{CostUSD: 1}}},
			"Burn rate cap reached: $2.50 a minute over the last minute (cap: $2.00 a minute)", "", 30 * time.Second},
		{"a window of an hour, beside an hourly cap", SpendRules{MaxCostUSDPerMinute: 0.7, BurnWindow: time.Hour, MaxCostUSDPerHour: 100},
			[]spend{{0, Usage{CostUSD: 20}}, {30 * time.Minute, Usage{CostUSD: 15}}}, "",
			"Burn rate near the cap: $0.5833 a minute over the last 60 minutes (cap: $0.70 a minute)", 0},
		{"a short window beside an hourly cap counts only its own", SpendRules{MaxCostUSDPerMinute: 2, MaxCostUSDPerHour: 100},
			[]spend{{0, Usage{CostUSD: 50}}, {10 * time.Minute, Usage{CostUSD: 1}}}, "", "", 0},
		{"tokens a minute", SpendRules{MaxTokensPerMinute: 100_000},
			[]spend{{0, Usage{InputTokens: 300_000, OutputTokens: 20_000}}, {time.Minute, Usage{InputTokens: 200_000}}},
			"Burn rate cap reached: 104000 tokens a minute over the last 5 minutes (cap: 100000)", "", 4 * time.Minute},
		{"tokens near the cap", SpendRules{MaxTokensPerMinute: 100_000}, []spend{{0, Usage{InputTokens: 400_000}}}, "",
			"Burn rate near the cap: 80000 tokens a minute over the last 5 minutes (cap: 100000)", 0},
		{"dollars speak before tokens", SpendRules{MaxTokensPerMinute: 1000, MaxCostUSDPerMinute: 1},
			[]spend{{0, Usage{InputTokens: 10_000, CostUSD: 5}}},
			"Burn rate cap reached: $1.00 a minute over the last 5 minutes (cap: $1.00 a minute)", "", 5 * time.Minute},
		{"the warning names the rate nearest its cap", SpendRules{MaxTokensPerMinute: 1000, MaxCostUSDPerMinute: 1},
			[]spend{{0, Usage{InputTokens: 4500, CostUSD: 4}}}, "",
			"Burn rate near the cap: 900 tokens a minute over the last 5 minutes (cap: 1000)", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, clock := newTestBreaker(t, Config{Spend: tc.rules})
			for _, s := range tc.spends {
				clock.Advance(s.after)
				b.AddUsage(s.u)
			}
			d := b.Check()
			if tc.want != "" {
				require.False(t, d.Allow)
				assert.Equal(t, ReasonBurnRate, d.Reason.Kind)
				assert.Equal(t, tc.want, d.Reason.String())
				assert.Equal(t, tc.wait, d.RetryAfter)
				return
			}
			assert.True(t, d.Allow, "%s", d.Reason)
			assert.Equal(t, tc.warn, warningsText(d))
		})
	}
}

// The burn rate is judged before the call budget and after the hourly cap.
func TestBurnRateAmongTheOtherRefusals(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxCostUSDPerMinute: 1, MaxCostUSDPerHour: 5, MaxCallsPerHour: 1}})
	b.AddUsage(Usage{CostUSD: 5})
	b.CountCall()
	assert.Equal(t, ReasonHourlySpendCap, b.Check().Reason.Kind)

	b, _ = newTestBreaker(t, Config{Spend: SpendRules{MaxCostUSDPerMinute: 1, MaxCallsPerHour: 1}})
	b.AddUsage(Usage{CostUSD: 5})
	b.CountCall()
	assert.Equal(t, ReasonBurnRate, b.Check().Reason.Kind)
}

// The burn window is whole minutes from 1 to 60, and the dollar cap a
// number.
func TestBurnRateConfig(t *testing.T) {
	for _, w := range []time.Duration{0, time.Minute, 5 * time.Minute, time.Hour} {
		assert.NoError(t, Config{Spend: SpendRules{BurnWindow: w}}.Validate(), "%s", w)
	}
	for _, w := range []time.Duration{-time.Minute, 30 * time.Second, 90 * time.Second, 61 * time.Minute} {
		requireFieldError(t, Config{Spend: SpendRules{BurnWindow: w}}.Validate(), "Spend.BurnWindow")
	}
	for _, v := range []float64{math.NaN(), math.Inf(1)} {
		requireFieldError(t, Config{Spend: SpendRules{MaxCostUSDPerMinute: v}}.Validate(), "Spend.MaxCostUSDPerMinute")
	}
	assert.Equal(t, 5*time.Minute, DefaultConfig().Spend.BurnWindow)
	b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxCostUSDPerMinute: 2}})
	assert.Equal(t, 5*time.Minute, b.Stats().Spend.BurnWindow)
	b, _ = newTestBreaker(t, Config{})
	assert.Zero(t, b.Stats().Spend.BurnWindow, "no burn-rate cap, no window")
	assert.Zero(t, b.Stats().Spend.CostPerMinute())
}

// What the burn window holds is kept across a restart.
func TestBurnWindowSurvivesARestart(t *testing.T) {
	cfg := Config{Spend: SpendRules{MaxCostUSDPerMinute: 2}}
	b, clock := newTestBreaker(t, cfg)
	b.AddUsage(Usage{CostUSD: 6})
	clock.Advance(2 * time.Minute)
	b.AddUsage(Usage{CostUSD: 5})
	snap := roundTrip(t, b.Snapshot())

	clock.Advance(time.Minute)
	cfg.Now = clock.Now
	again, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, again.Restore(snap))
	d := again.Check()
	assert.Equal(t, ReasonBurnRate, d.Reason.Kind)
	assert.Equal(t, 2*time.Minute, d.RetryAfter, "the $6 leaves the window 5 minutes after it was spent")
}
