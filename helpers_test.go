package loopbreaker

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/require"
)

// testStart is when a test's clock starts.
var testStart = time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)

// newFakeClock returns a hand-driven clock for Config.Now and Config.Sleep.
func newFakeClock() *loopbreakertest.Clock { return loopbreakertest.NewClock(testStart) }

// newTestBreaker returns a breaker for cfg driven by a fresh fake clock.
func newTestBreaker(t *testing.T, cfg Config) (*CircuitBreaker, *loopbreakertest.Clock) {
	t.Helper()
	return newTestBreakerAt(t, cfg, testStart)
}

// newTestBreakerAt is newTestBreaker with a clock that starts at start.
func newTestBreakerAt(t *testing.T, cfg Config, start time.Time) (*CircuitBreaker, *loopbreakertest.Clock) {
	t.Helper()
	clock := loopbreakertest.NewClock(start)
	cfg.Now = clock.Now
	if cfg.Sleep == nil {
		cfg.Sleep = clock.Sleep
	}
	b, err := New(cfg)
	require.NoError(t, err)
	return b, clock
}

// errA and errB are two distinct failures, each with a detail that changes
// between iterations (the line number), as real errors do.
func errA(line int) error {
	return fmt.Errorf("TypeError: Cannot read property 'id' of undefined at UserController (/src/controllers/user.ts:%d:15)", line)
}

func errB(line int) error {
	return fmt.Errorf("ReferenceError: config is not defined at loadConfig (/src/config.ts:%d:3)", line)
}

// roundTrip writes s as JSON and reads it back, as a restart does.
func roundTrip(t *testing.T, s Snapshot) Snapshot {
	t.Helper()
	data, err := json.Marshal(s)
	require.NoError(t, err)
	back, err := ParseSnapshot(data)
	require.NoError(t, err)
	return back
}

// warningsText returns the texts of d's warnings joined with "; ", as a
// host that prints them on one line would.
func warningsText(d Decision) string {
	texts := make([]string, len(d.Warnings))
	for i, w := range d.Warnings {
		texts[i] = w.String()
	}
	return strings.Join(texts, "; ")
}
