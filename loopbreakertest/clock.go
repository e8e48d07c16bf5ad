// Package loopbreakertest provides a clock for testing code that runs a
// loopbreaker breaker, as net/http/httptest provides a server for testing
// HTTP code.
//
// A breaker reads time only through its Config.Now and waits only through
// its Config.Sleep, so a test that sets both to a Clock runs cooldowns,
// call budgets and provider limits of hours in no time, and the same way
// every run:
//
//	clock := loopbreakertest.NewClock(time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC))
//	cfg := loopbreaker.DefaultConfig()
//	cfg.Now, cfg.Sleep = clock.Now, clock.Sleep
//	cb, err := loopbreaker.New(cfg)
package loopbreakertest

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Clock is a clock that moves only when told: Advance moves it, and Sleep
// moves it by the time asked instead of waiting. It is safe for concurrent
// use. The zero Clock reads the zero time; make one with NewClock.
type Clock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

// NewClock returns a Clock that reads start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time: a breaker's Config.Now.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d; a negative d moves it back.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Sleep is a breaker's Config.Sleep: it returns at once, with the clock
// moved on by d (not at all for d of zero or less), and records d for
// Slept. When ctx is already done it returns ctx.Err() and neither moves
// the clock nor records d, as a sleep cancelled before it began.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.now = c.now.Add(d)
	}
	c.slept = append(c.slept, d)
	return nil
}

// Slept returns the durations Sleep was asked for, in order; nil before
// the first. The slice is the caller's.
func (c *Clock) Slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.slept)
}
