package loopbreaker

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A provider limit and the spend survive a restart: the limit still
// refuses until its reset, by the wall clock, and the spend is still
// spent.
func TestProviderLimitAndSpendSurviveARestart(t *testing.T) {
	cfg := Config{Spend: SpendRules{MaxCostUSD: 5, MaxTokensPerHour: 100000}}
	b, clock := newTestBreaker(t, cfg)
	b.Record(Iteration{Err: errHitLimit, Usage: Usage{InputTokens: 30000, OutputTokens: 2000, CostUSD: 1.25}})
	clock.Advance(time.Hour)
	before := b.Stats()

	nb, nclock := restart(t, b, cfg, clock.Now().Add(2*time.Hour))
	after := nb.Stats()
	assert.Equal(t, before.ProviderLimit, after.ProviderLimit)
	assert.Equal(t, before.ProviderLimitUntil, after.ProviderLimitUntil, "a wall-clock reset stays as it is")
	assert.Equal(t, before.Spend.Total, after.Spend.Total)
	assert.Equal(t, 1, after.LimitedIterations)
	assert.Zero(t, after.Spend.LastHour, "the hour's spend left the window while the process was down")

	d := nb.Check()
	assert.Equal(t, ReasonProviderLimit, d.Reason.Kind)
	assert.Equal(t, 5*time.Hour, d.RetryAfter, "17:00 is five hours after noon")
	nclock.Advance(5 * time.Hour)
	assert.True(t, nb.Check().Allow)

	// Spend restored within the hour still counts in it.
	b, clock = newTestBreaker(t, cfg)
	b.AddUsage(Usage{OutputTokens: 90000})
	nb, _ = restart(t, b, cfg, clock.Now().Add(10*time.Minute))
	assert.Equal(t, 90000, nb.Stats().Spend.LastHour.Tokens())
	assert.Equal(t, "Spend 90% of the cap: 90000 tokens of 100000 tokens in the last hour, 10000 tokens left", warningsText(nb.Check()))
}

// A provider stop survives a restart too: no waiting ends it there either.
func TestProviderStopSurvivesARestart(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	b.Record(Iteration{Err: errDisabled})
	nb, _ := restart(t, b, Config{}, clock.Now().AddDate(0, 2, 0))
	d := nb.Check()
	assert.Equal(t, ReasonProviderStopped, d.Reason.Kind)
	assert.ErrorIs(t, d.Err(), ErrProviderStopped)
}

// A limit that lifted before the snapshot was taken is not written; one
// that lifts while the process is down is over when it starts again.
func TestALiftedLimitIsGoneAfterARestart(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	b.Record(Iteration{Err: errHitLimit})
	nb, _ := restart(t, b, Config{}, clock.Now().Add(9*time.Hour))
	assert.True(t, nb.Check().Allow)

	clock.Advance(9 * time.Hour)
	data, err := json.Marshal(b.Snapshot())
	require.NoError(t, err)
	assert.NotContains(t, string(data), "provider_limit\":{", "a lifted limit is not written")
}

// A clock set back does not make a wait longer than any provider's: a
// reset restored further off than maxProviderLimitWait from the restoring
// clock counts as that far.
func TestARestoredResetIsNeverFurtherOffThanTheCeiling(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	b.ObserveLimit(Limit{Reset: clock.Now().Add(30 * 24 * time.Hour)})
	back := clock.Now().AddDate(-1, 0, 0)
	nb, _ := restart(t, b, Config{}, back)
	assert.Equal(t, back.Add(maxProviderLimitWait), nb.Stats().ProviderLimitUntil)
}

// Spend saved at a time this clock has not reached counts as spent now:
// it leaves the hour an hour from now at the latest.
func TestSpendFromTheFutureCountsAsSpentNow(t *testing.T) {
	cfg := Config{Spend: SpendRules{MaxTokensPerHour: 100}}
	b, clock := newTestBreaker(t, cfg)
	b.AddUsage(Usage{OutputTokens: 100})
	nb, nclock := restart(t, b, cfg, clock.Now().Add(-24*time.Hour))
	d := nb.Check()
	assert.Equal(t, ReasonHourlySpendCap, d.Reason.Kind)
	assert.Equal(t, time.Hour, d.RetryAfter)
	nclock.Advance(time.Hour)
	assert.True(t, nb.Check().Allow)

	// The same when the clock is set back while the breaker runs.
	b, clock = newTestBreaker(t, cfg)
	b.AddUsage(Usage{OutputTokens: 100})
	clock.Advance(-24 * time.Hour)
	assert.Equal(t, time.Hour, b.Check().RetryAfter)
}

// A version 1 state, written before provider limits and spend existed,
// reads as a breaker without either.
func TestAVersion1StateReadsWithoutLimitOrSpend(t *testing.T) {
	b, _ := busyBreaker(t)
	data, err := json.Marshal(b.Snapshot())
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	m["version"] = 1
	delete(m, "limited_iterations")
	data, err = json.Marshal(m)
	require.NoError(t, err)
	snap, err := ParseSnapshot(data)
	require.NoError(t, err)
	nb, _ := newTestBreaker(t, richConfig())
	require.NoError(t, nb.Restore(snap))
	s := nb.Stats()
	assert.Zero(t, s.ProviderLimit)
	assert.Zero(t, s.Spend.Total)
	assert.Zero(t, s.LimitedIterations)
}

// The snapshot names the limit's kind; the spend is in plain numbers.
func TestSnapshotOfALimitAndSpendIsReadable(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxTokensPerHour: 1000}})
	b.Record(Iteration{Err: errHitLimit, Usage: Usage{InputTokens: 10, OutputTokens: 2, CostUSD: 0.5}})
	data, err := json.Marshal(b.Snapshot())
	require.NoError(t, err)
	text := string(data)
	for _, want := range []string{
		`"provider_limit":{"reason":{"kind":"provider_limit","message":"You've hit your limit (resets 2026-01-19 17:00 UTC)"},"until":"2026-01-19T17:00:00Z"}`,
		`"spend":{"total":{"input_tokens":10,"output_tokens":2,"cost_usd":0.5},"hour":[{"at":"2026-01-19T09:00:00Z","input_tokens":10,"output_tokens":2,"cost_usd":0.5}]}`,
		`"limited_iterations":1`,
		`"cause":"provider_limit"`,
	} {
		assert.Contains(t, text, want)
	}
	assert.False(t, strings.Contains(text, `"cost_usd":0,"max_cost_usd"`), "a reason's cost is left out when zero")
}
