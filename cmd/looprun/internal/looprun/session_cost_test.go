package looprun

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run's own cost is what Claude Code's total for the session adds to
// the total looprun last saw for it, kept with the session across
// restarts of looprun; a run in another session costs its whole total,
// and a total lower than the one seen (no running total after all) is
// the run's.
func TestARunCostsWhatItAddsToItsSessionsTotal(t *testing.T) {
	dir := t.TempDir()
	clk := &sessionClock{now: time.Date(2026, 1, 29, 9, 0, 0, 0, time.UTC)}
	s := openSessions(dir, "loop", clk.Now)
	steps := []struct {
		session string
		total   float64
		want    float64
	}{
		{"s-1", 0.45, 0.45}, // a new session
		{"s-1", 0.90, 0.45}, // resumed: the running total
		{"", 0.30, 0.30},    // no session named: nothing to go by
		{"s-1", 1.80, 0.90}, // a run cut short before (no cost seen) is in this one's
		{"s-2", 0.20, 0.20}, // another session
		{"s-2", 0.15, 0.15}, // lower than seen: the run's own
	}
	for i, st := range steps {
		if i == 3 {
			require.NoError(t, s.ran("s-1", 0, false), "a run that reported no cost leaves the total")
			s = openSessions(dir, "loop", clk.Now) // looprun started again
			require.NoError(t, s.load())
		}
		assert.InDelta(t, st.want, s.runCost(st.session, st.total), 1e-9, "step %d", i)
		require.NoError(t, s.ran(st.session, st.total, true))
	}
}
