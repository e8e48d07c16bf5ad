package loopbreaker

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The names the providers' APIs, routers and clouds give a model all find
// its price; a name that only begins like a known one finds none.
func TestLookupFindsAModelByTheNamesItGoesBy(t *testing.T) {
	prices := DefaultPrices()
	sonnet := prices["claude-sonnet-4-5"]
	tests := []struct {
		model string
		want  string // the entry it finds; "" for none
	}{
		{"claude-sonnet-4-5", "claude-sonnet-4-5"},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"Claude-Sonnet-4-5", "claude-sonnet-4-5"},
		{"anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"},
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"},
		{"claude-sonnet-4-5@20250929", "claude-sonnet-4-5"},
		{"claude-sonnet-5-5[1m]", "claude-sonnet-5-5"},
		{"claude-3-5-haiku-20241022", "claude-3-5-haiku"},
		{"claude-opus-4-20250514", "claude-opus-4"},
		{"gpt-4o-2024-08-06", "gpt-4o"},
		{"gpt-4o-2024-05-13", "gpt-4o-2024-05-13"},
		{"gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"},
		{"gpt-5.2-chat-latest", "gpt-5.2-chat-latest"},
		{"openai/gpt-5-mini", "gpt-5-mini"},
		{"models/gemini-2.5-pro", "gemini-2.5-pro"},
		{"gemini-2.0-flash-001", "gemini-2.0-flash"},
		{"gemini-2.5-flash-preview-09-2025", "gemini-2.5-flash"},
		{"gpt-5-turbo", ""},
		{"claude-sonnet-4-5-experimental", ""},
		{"", ""},
		{"-", ""},
		{"@", ""},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			got, ok := prices.Lookup(tt.model)
			if tt.want == "" {
				assert.False(t, ok, "%+v", got)
				return
			}
			require.True(t, ok)
			assert.Equal(t, prices[tt.want], got)
		})
	}
	assert.Equal(t, Price{Input: 3, Output: 15, CacheWrite: 3.75, CacheRead: 0.30}, sonnet)
}

// A price prices each kind of token at its own rate, and a long request
// at the long tier's, for all its tokens.
func TestCostPricesEachKindOfToken(t *testing.T) {
	prices := DefaultPrices()
	tests := []struct {
		name  string
		model string
		u     Usage
		want  float64
	}{
		{"input and output", "claude-sonnet-4-5", Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, 3 + 15},
		{"Anthropic's cache reads and writes", "claude-sonnet-4-5",
			Usage{InputTokens: 3_000_000, CacheReadTokens: 1_000_000, CacheWriteTokens: 1_000_000}, 3 + 0.30 + 3.75},
		{"OpenAI's cached input", "gpt-5", Usage{InputTokens: 2_000_000, CacheReadTokens: 1_000_000, OutputTokens: 100_000}, 1.25 + 0.125 + 1},
		{"a zero cache rate is the input's", "gemini-2.0-flash-lite", Usage{InputTokens: 1_000_000, CacheReadTokens: 1_000_000}, 0.075},
		{"Gemini 2.5 Pro at 200,000 tokens", "gemini-2.5-pro", Usage{InputTokens: 200_000, OutputTokens: 10_000}, 0.25 + 0.1},
		{"Gemini 2.5 Pro above 200,000 tokens: all at the long rate", "gemini-2.5-pro", Usage{InputTokens: 200_001, OutputTokens: 10_000}, 200_001*2.5/1e6 + 0.15},
		{"GPT-5.4 above 272,000 tokens", "gpt-5.4", Usage{InputTokens: 300_000, OutputTokens: 1000}, 300_000*5/1e6 + 1000*22.5/1e6},
		{"Claude Haiku 5.5 above 100,000 tokens", "claude-haiku-5-5", Usage{InputTokens: 100_001, OutputTokens: 1000}, 100_001*0.5/1e6 + 1000*2.5/1e6},
		{"negative counts are zero", "gpt-5", Usage{InputTokens: -5, OutputTokens: -1, CacheReadTokens: -3}, 0},
		{"a cache count above the input is cut to it", "gpt-5", Usage{InputTokens: 1_000_000, CacheReadTokens: 5_000_000, CacheWriteTokens: 5_000_000}, 0.125},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.u.Model = tt.model
			got, ok := prices.Cost(tt.u)
			require.True(t, ok)
			assert.InDelta(t, tt.want, got, 1e-9)
		})
	}
	_, ok := prices.Cost(Usage{InputTokens: 10, Model: "gpt-9"})
	assert.False(t, ok)
	_, ok = prices.Cost(Usage{InputTokens: 10})
	assert.False(t, ok, "no model, no price")
}

// Every entry of the built-in table is a price New accepts, and the
// table is the caller's to change.
func TestTheDefaultPricesAreValid(t *testing.T) {
	prices := DefaultPrices()
	assert.Greater(t, len(prices), 60)
	require.NoError(t, Config{Spend: SpendRules{Prices: prices}}.Validate())
	for name, p := range prices {
		assert.Positive(t, p.Input, name)
		assert.GreaterOrEqual(t, p.Output, p.Input, "%s: output costs at least what input does", name)
	}
	prices["claude-sonnet-4-5"] = Price{Input: 1}
	assert.Equal(t, 3.0, DefaultPrices()["claude-sonnet-4-5"].Input, "a new map each time")
}

func TestABadPriceIsRejected(t *testing.T) {
	for name, p := range map[string]Price{
		"negative":                      {Input: -1},
		"NaN":                           {Output: math.NaN()},
		"infinite":                      {CacheRead: math.Inf(1)},
		"a long tier with no threshold": {Input: 1, Long: &Price{Input: 2}},
		"a long tier's own tier":        {Input: 1, LongAbove: 10, Long: &Price{Input: 2, LongAbove: 20, Long: &Price{}}},
		"a bad long tier":               {Input: 1, LongAbove: 10, Long: &Price{Input: -2}},
		"a negative threshold":          {Input: 1, LongAbove: -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(Config{Spend: SpendRules{Prices: Prices{"my-model": p}}})
			require.ErrorIs(t, err, ErrInvalidConfig)
			assert.ErrorContains(t, err, `Prices["my-model"]`)
		})
	}
}

// A model with no price spends no dollars: while a dollar cap is set, a
// warning names it, once however often it comes, and never silently.
// Without a dollar cap there is nothing to warn of.
func TestAModelWithNoPriceIsWarnedOfUnderADollarCap(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxCostUSD: 5}})
	for range 3 {
		b.Record(Iteration{Usage: Usage{InputTokens: 100, OutputTokens: 10, Model: "gpt-9-preview"}})
	}
	b.AddUsage(Usage{InputTokens: 100, Model: "my-finetune"})
	b.AddUsage(Usage{Model: "no-tokens"})
	d := b.Check()
	require.True(t, d.Allow)
	require.Len(t, d.Warnings, 1)
	assert.Equal(t, ReasonUnpricedModel, d.Warnings[0].Kind)
	assert.Equal(t, `No price for models "gpt-9-preview", "my-finetune": their calls count no dollars toward the spend cap (add them to Config.Spend.Prices)`, warningsText(d))
	assert.Equal(t, d.Warnings, b.Stats().Warnings)
	assert.Zero(t, b.Stats().Spend.Total.CostUSD)
	assert.Equal(t, 400, b.Stats().Spend.Total.InputTokens, "the tokens count")

	b.Reset()
	assert.Len(t, b.Check().Warnings, 1, "the table still lacks them after a Reset")

	b, _ = newTestBreaker(t, Config{Spend: SpendRules{MaxTokens: 1_000_000}})
	b.AddUsage(Usage{InputTokens: 100, Model: "gpt-9-preview"})
	assert.Empty(t, b.Check().Warnings, "no dollar cap: nothing is wrong")

	b, _ = newTestBreaker(t, Config{Spend: SpendRules{MaxCostUSDPerHour: 1}})
	b.AddUsage(Usage{InputTokens: 100, Model: "gpt-9-preview"})
	assert.Equal(t, `No price for model "gpt-9-preview": its calls count no dollars toward the spend cap (add it to Config.Spend.Prices)`, warningsText(b.Check()))
}

// A cost the host gives is taken as it is, model or not.
func TestAGivenCostIsNotPricedAgain(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxCostUSD: 5}})
	b.AddUsage(Usage{InputTokens: 1_000_000, Model: "claude-sonnet-4-5", CostUSD: 0.5})
	b.AddUsage(Usage{InputTokens: 1_000_000, Model: "gpt-9", CostUSD: 0.25})
	s := b.Stats()
	assert.InDelta(t, 0.75, s.Spend.Total.CostUSD, 1e-12)
	assert.Empty(t, s.Warnings)
	assert.Empty(t, s.Spend.Total.Model, "totals name no model")
}

func FuzzLookup(f *testing.F) {
	for _, s := range []string{"claude-sonnet-4-5-20250929", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "gpt-4o-2024-08-06", "@", "-", "--", "a.b.c", "[1m]", "claude-1.2.3", strings.Repeat("-1", 100)} {
		f.Add(s)
	}
	prices := DefaultPrices()
	f.Fuzz(func(t *testing.T, model string) {
		p, ok := prices.Lookup(model)
		if !ok {
			require.Equal(t, Price{}, p)
			return
		}
		cost := p.Cost(Usage{InputTokens: 1000, OutputTokens: 1000})
		require.False(t, math.IsNaN(cost) || cost < 0)
	})
}
