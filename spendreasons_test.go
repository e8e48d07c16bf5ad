package loopbreaker

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// burning is a Spend of $cost and tokens in a burn window of minutes,
// against the burn-rate caps rules.
func burning(minutes int, cost float64, tokens int, rules SpendRules) Spend {
	return Spend{
		InBurnWindow:        Usage{CostUSD: cost, InputTokens: tokens},
		BurnWindow:          time.Duration(minutes) * time.Minute,
		MaxCostUSDPerMinute: rules.MaxCostUSDPerMinute,
		MaxTokensPerMinute:  rules.MaxTokensPerMinute,
	}
}

// A fleet worker that keeps the spend elsewhere asks the fleet's Spend
// whether its burn rate warns, from 80% of a cap and naming the rate
// nearer its cap, or refuses the loop, case by case.
func TestSpendBurnRateWarningAndRefusal(t *testing.T) {
	dollars := SpendRules{MaxCostUSDPerMinute: 2}
	tokens := SpendRules{MaxTokensPerMinute: 1000}
	both := SpendRules{MaxCostUSDPerMinute: 1, MaxTokensPerMinute: 1000}
	cases := []struct {
		name   string
		spend  Spend
		warn   string // the warning's text; "" for none
		refuse string // the refusal's text; "" for none
	}{
		{"no burn-rate cap", Spend{InBurnWindow: Usage{CostUSD: 1e6}, BurnWindow: 5 * time.Minute}, "", ""},
		{"a cap but no burn window", Spend{InBurnWindow: Usage{CostUSD: 1e6}, MaxCostUSDPerMinute: 2}, "", ""},
		{"nothing spent", burning(5, 0, 0, dollars), "", ""},
		{"just below 80%", burning(5, 7.99, 0, dollars), "", ""},
		{"at 80%", burning(5, 8, 0, dollars),
			"Burn rate near the cap: $1.60 a minute over the last 5 minutes (cap: $2.00 a minute)", ""},
		{"just below the dollars' cap", burning(5, 9.99, 0, dollars),
			"Burn rate near the cap: $1.998 a minute over the last 5 minutes (cap: $2.00 a minute)", ""},
		{"at the dollars' cap, still warned", burning(5, 10, 0, dollars),
			"Burn rate near the cap: $2.00 a minute over the last 5 minutes (cap: $2.00 a minute)",
			"Burn rate cap reached: $2.00 a minute over the last 5 minutes (cap: $2.00 a minute)"},
		{"over it, in a window of a minute", burning(1, 2.5, 0, dollars),
			"Burn rate near the cap: $2.50 a minute over the last minute (cap: $2.00 a minute)",
			"Burn rate cap reached: $2.50 a minute over the last minute (cap: $2.00 a minute)"},
		{"at the tokens' cap", burning(5, 0, 5200, tokens),
			"Burn rate near the cap: 1040 tokens a minute over the last 5 minutes (cap: 1000)",
			"Burn rate cap reached: 1040 tokens a minute over the last 5 minutes (cap: 1000)"},
		{"tokens nearer their cap than dollars", burning(5, 4, 4500, both),
			"Burn rate near the cap: 900 tokens a minute over the last 5 minutes (cap: 1000)", ""},
		{"dollars nearer their cap than tokens", burning(5, 4.5, 4000, both),
			"Burn rate near the cap: $0.90 a minute over the last 5 minutes (cap: $1.00 a minute)", ""},
		{"a tie: the dollars speak", burning(5, 4, 4000, both),
			"Burn rate near the cap: $0.80 a minute over the last 5 minutes (cap: $1.00 a minute)", ""},
		{"tokens at their cap, dollars below theirs", burning(5, 4, 5000, both),
			"Burn rate near the cap: 1000 tokens a minute over the last 5 minutes (cap: 1000)",
			"Burn rate cap reached: 1000 tokens a minute over the last 5 minutes (cap: 1000)"},
		{"both at their caps: the dollars' refuses, the nearer warns", burning(5, 5, 50_000, both),
			"Burn rate near the cap: 10000 tokens a minute over the last 5 minutes (cap: 1000)",
			"Burn rate cap reached: $1.00 a minute over the last 5 minutes (cap: $1.00 a minute)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assertReason(t, ReasonBurnRateWarning, tc.warn)(tc.spend.BurnRateWarning())
			assertReason(t, ReasonBurnRate, tc.refuse)(tc.spend.BurnRateRefusal())
		})
	}
}

// assertReason returns a check that a reason and its ok are a reason of
// kind whose text is want, or for a want of "", no reason.
func assertReason(t *testing.T, kind ReasonKind, want string) func(Reason, bool) {
	t.Helper()
	return func(r Reason, ok bool) {
		t.Helper()
		if want == "" {
			assert.False(t, ok, "%s", r)
			assert.Equal(t, Reason{}, r)
			return
		}
		if assert.True(t, ok, "no %s", kind) {
			assert.Equal(t, kind, r.Kind)
			assert.Equal(t, want, r.String())
		}
	}
}

// From 80% of the window share's cap the fleet's Spend warns, for the
// most used window.
func TestSpendWindowShareWarning(t *testing.T) {
	reset := time.Date(2026, 1, 19, 12, 0, 0, 0, time.UTC)
	five := Window{Length: fiveHours, Used: 64, Reset: reset, Source: "api.anthropic.com"}
	weekly := Window{Length: aWeek, Used: 70, Source: "Claude Code"}
	cases := []struct {
		name    string
		windows []Window
		limit   int
		want    string // the warning's text; "" for none
	}{
		{"no cap", []Window{{Length: fiveHours, Used: 100}}, 0, ""},
		{"no windows", nil, 80, ""},
		{"below 80% of the cap", []Window{{Length: fiveHours, Used: 63.9}}, 80, ""},
		{"at 80% of the cap, with its reset", []Window{five}, 80,
			"Window share 64% of the 5-hour window used (cap: 80%); resets 2026-01-19 12:00 UTC"},
		{"over the cap it still warns", []Window{{Length: fiveHours, Used: 100}}, 80,
			"Window share 100% of the 5-hour window used (cap: 80%)"},
		{"the most used window, without a reset", []Window{five, weekly}, 80,
			"Window share 70% of the weekly window used (cap: 80%)"},
		{"of two used alike, the older report", []Window{{Length: fiveHours, Used: 70}, weekly}, 80,
			"Window share 70% of the 5-hour window used (cap: 80%)"},
		{"a window of a length not known", []Window{{Used: 50}}, 50,
			"Window share 50% of the usage window used (cap: 50%)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assertReason(t, ReasonWindowShareWarning, tc.want)(Spend{Windows: tc.windows, MaxWindowShare: tc.limit}.WindowShareWarning())
		})
	}
}

// A window used up to the cap refuses: it waits for its reset, or with
// StopAtWindowShare, for a person.
func TestWindowShareRefusalAndStop(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	reset := time.Date(2026, 1, 19, 12, 0, 0, 0, cet)
	until := time.Date(2026, 1, 19, 14, 30, 0, 0, time.UTC)
	cases := []struct {
		name   string
		w      Window
		limit  int
		refuse string // ShareRefusal's text; "" for none
		stop   string // ShareStop's text; "" for none
	}{
		{"no cap", Window{Length: fiveHours, Used: 100, Reset: reset}, 0, "", ""},
		{"a negative cap", Window{Length: fiveHours, Used: 100, Reset: reset}, -1, "", ""},
		{"below the cap", Window{Length: fiveHours, Used: 79.9, Reset: reset}, 80, "", ""},
		{"a share not a number", Window{Length: fiveHours, Used: math.NaN(), Reset: reset}, 80, "", ""},
		{"at the cap, with its reset in its own zone", Window{Length: fiveHours, Used: 80, Reset: reset}, 80,
			"Window share cap reached: 80% of the 5-hour window used (cap: 80%); resets 2026-01-19 12:00 CET",
			"Window share cap reached: 80% of the 5-hour window used (cap: 80%); no waiting ends this: resume the loop, or raise the cap"},
		{"over the cap, without a reset: counted until until", Window{Length: aWeek, Used: 93.5}, 90,
			"Window share cap reached: 93% of the weekly window used (cap: 90%); no reset time given: counted until 2026-01-19 14:30 UTC",
			"Window share cap reached: 93% of the weekly window used (cap: 90%); no waiting ends this: resume the loop, or raise the cap"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assertReason(t, ReasonWindowShare, tc.refuse)(tc.w.ShareRefusal(tc.limit, until))
			assertReason(t, ReasonWindowShare, tc.stop)(tc.w.ShareStop(tc.limit))
		})
	}
}

// The reasons a fleet worker makes from a Spend are the ones a breaker
// gives from the same spend: its Stats' Spend warns as its Decision does,
// and refuses as it does.
func TestASpendsReasonsAreTheBreakersOwn(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxCostUSDPerMinute: 2, MaxWindowShare: 80}})
	b.ObserveWindow(Window{Length: fiveHours, Used: 70, Reset: testStart.Add(2 * time.Hour)})
	b.AddUsage(Usage{CostUSD: 9})
	d := b.Check()
	require.True(t, d.Allow)
	s := b.Stats().Spend
	share, ok := s.WindowShareWarning()
	require.True(t, ok)
	burn, ok := s.BurnRateWarning()
	require.True(t, ok)
	assert.Equal(t, []Reason{share, burn}, d.Warnings)

	clock.Advance(time.Minute)
	b.AddUsage(Usage{CostUSD: 2})
	d = b.Check()
	require.False(t, d.Allow)
	refusal, ok := b.Stats().Spend.BurnRateRefusal()
	require.True(t, ok)
	assert.Equal(t, d.Reason, refusal)

	clock.Advance(5 * time.Minute) // the spend left the burn window
	w := Window{Length: fiveHours, Used: 85, Reset: clock.Now().Add(time.Hour)}
	b.ObserveWindow(w)
	d = b.Check()
	require.False(t, d.Allow)
	refusal, ok = w.ShareRefusal(80, time.Time{})
	require.True(t, ok)
	assert.Equal(t, d.Reason, refusal)
}
