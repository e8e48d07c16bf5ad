package loopbreaker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClock is a hand-driven clock for Config.Now.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Sleep is the fake clock's Config.Sleep: it advances the clock by d at
// once, unless ctx is done.
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}

// newTestBreaker returns a breaker for cfg driven by a fresh fake clock.
func newTestBreaker(t *testing.T, cfg Config) (*CircuitBreaker, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
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
