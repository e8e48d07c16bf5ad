package redisstore

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A fleet's state written by workers from before the window share and the
// burn rate (their script, kept in testdata as it was) is read by today's
// workers as it was: the counts, the calls and the spend; the spend of the
// hour that the old workers kept is the burn window's start. And an old
// worker still reads the state today's workers write, so that a fleet can
// be upgraded worker by worker.
func TestAFleetsStateFromBeforeTheWindowShareIsRead(t *testing.T) {
	f := newFleet(t)
	source, err := os.ReadFile("testdata/fleet-before-the-window-share.lua")
	require.NoError(t, err)
	old := redis.NewScript(string(source))
	keys := keysOf(f.name)
	oldCall := func(op string, args ...any) []any {
		t.Helper()
		// op, worker, idle expiry, cooldowns, lease, calls an hour, failures,
		// same error, in a row, fingerprints, tokens, dollars, tokens an hour,
		// dollars an hour, opens
		all := append([]any{op, "old", DefaultIdleTTL.Milliseconds(), "30000", DefaultProbeLease.Milliseconds(),
			100, 3, 5, 0, 20, 0, "10", 0, "5", 0}, args...)
		v, err := old.Run(context.Background(), f.client, keys, all...).Slice()
		require.NoError(t, err)
		return v
	}
	noLimit := []any{"", 0, 0, ""}
	for range 2 {
		oldCall("check", "0")
		oldCall("record", append([]any{"", "f", "0badf00d", 0, "", "deploy: connection refused", "", 1000, 200, "0.75"}, noLimit...)...)
	}

	w := f.worker("new", Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{
		MaxCallsPerHour: 100, MaxCostUSD: 10, MaxCostUSDPerHour: 5,
		MaxCostUSDPerMinute: 0.25, BurnWindow: 5 * time.Minute, MaxWindowShare: 80,
	}}})
	s := w.Stats()
	assert.Equal(t, 2, s.Failures.Consecutive)
	assert.Equal(t, map[string]int{"0badf00d": 2}, s.Failures.Counts)
	assert.Equal(t, 2, s.Budget.Used)
	assert.Equal(t, loopbreaker.Usage{InputTokens: 2000, OutputTokens: 400, CostUSD: 1.5}, s.Spend.Total)
	assert.Equal(t, s.Spend.Total, s.Spend.LastHour)
	assert.Equal(t, s.Spend.Total, s.Spend.InBurnWindow, "the hour's spend the old workers kept, in the burn window")
	assert.Empty(t, s.Spend.Windows)

	d := w.Check()
	require.False(t, d.Allow, "$1.50 in 5 minutes: above $0.25 a minute")
	assert.Equal(t, "Burn rate cap reached: $0.30 a minute over the last 5 minutes (cap: $0.25 a minute)", d.Reason.String())

	// Today's worker writes its reports; the old one reads on.
	w.ObserveWindow(loopbreaker.Window{Length: 5 * time.Hour, Used: 30, Reset: time.Now().Add(time.Hour), Source: "api.anthropic.com"})
	w.AddUsage(loopbreaker.Usage{CostUSD: 0.5})
	v := oldCall("stats")
	assert.Equal(t, int64(2), v[12], "the old worker's consecutive failures")
	assert.Equal(t, "2", v[18], "and its spend over the fleet's life")
	oldCall("record", append([]any{"", "s", "", 0, "", "", "", 0, 0, "0.25"}, noLimit...)...)
	s = w.Stats()
	assert.Zero(t, s.Failures.Consecutive, "the old worker's success")
	assert.Equal(t, 2.25, s.Spend.Total.CostUSD)
	assert.Equal(t, 2.25, s.Spend.InBurnWindow.CostUSD, "the old worker's spend is in the burn window too")
	assert.Len(t, s.Spend.Windows, 1)
}
