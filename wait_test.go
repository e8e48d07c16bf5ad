package loopbreaker

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A closed circuit lets Wait through at once, without sleeping.
func TestWaitOnAClosedCircuitReturnsAtOnce(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	start := clock.Now()

	d, err := b.Wait(context.Background())
	require.NoError(t, err)
	assert.True(t, d.Allow)
	assert.Equal(t, start, clock.Now())
}

// Three failures open the circuit; Wait sleeps out the 30-second cooldown
// and comes back with the probe.
func TestWaitSleepsOutTheCooldownAndGetsTheProbe(t *testing.T) {
	b, clock := tripped(t, Config{})
	start := clock.Now()

	d, err := b.Wait(context.Background())
	require.NoError(t, err)
	assert.True(t, d.Allow)
	assert.True(t, d.Probe)
	assert.Equal(t, HalfOpen, d.State)
	assert.Equal(t, 30*time.Second, clock.Now().Sub(start))
}

// A spent call budget: Wait sleeps until a call leaves the rolling hour.
func TestWaitSleepsUntilTheCallBudgetHasRoom(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 2}})
	b.Record(Iteration{})
	clock.Advance(10 * time.Minute)
	b.Record(Iteration{})
	start := clock.Now()

	d, err := b.Wait(context.Background())
	require.NoError(t, err)
	assert.True(t, d.Allow)
	assert.Equal(t, 50*time.Minute, clock.Now().Sub(start), "until the first call is an hour old")
	assert.Equal(t, 1, d.Budget.Used)
}

// When no waiting can end the refusal, Wait returns it at once with its
// error: a complete loop, and a circuit a person or the host holds open.
func TestWaitReturnsARefusalNoWaitingEnds(t *testing.T) {
	cases := map[string]struct {
		stop func(b *CircuitBreaker)
		want error
	}{
		"complete": {func(b *CircuitBreaker) {
			b.Record(Iteration{Done: true})
			b.Record(Iteration{Done: true})
		}, ErrComplete},
		"aborted":     {func(b *CircuitBreaker) { b.Abort() }, ErrOpen},
		"forced open": {func(b *CircuitBreaker) { b.ForceOpen("disk full") }, ErrOpen},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			b, clock := newTestBreaker(t, Config{})
			c.stop(b)
			start := clock.Now()

			d, err := b.Wait(context.Background())
			require.ErrorIs(t, err, c.want)
			assert.False(t, d.Allow)
			assert.Equal(t, d.Err(), err)
			assert.Equal(t, start, clock.Now(), "no sleeping")
		})
	}
}

// A context that ends while Wait sleeps ends the wait with its error and
// the refused decision.
func TestWaitEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b, _ := tripped(t, Config{
		Sleep: func(ctx context.Context, d time.Duration) error {
			cancel() // the host gives up while the breaker waits
			<-ctx.Done()
			return ctx.Err()
		},
	})

	d, err := b.Wait(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, d.Allow)
	assert.Equal(t, Open, d.State)
}

// A Sleep of the host's that fails for its own reasons ends the wait with
// that error.
func TestWaitReturnsTheErrorOfAFailingSleep(t *testing.T) {
	broken := errors.New("clock unplugged")
	b, _ := tripped(t, Config{Sleep: func(context.Context, time.Duration) error { return broken }})

	_, err := b.Wait(context.Background())
	assert.ErrorIs(t, err, broken)
}

// waitersOf returns how many calls of Wait are waiting on b.
func waitersOf(b *CircuitBreaker) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiters)
}

// untilWaiting spins until one Wait is waiting on b.
func untilWaiting(t *testing.T, b *CircuitBreaker) {
	t.Helper()
	for waitersOf(b) == 0 {
		runtime.Gosched()
	}
}

// Two workers share a breaker. The first gets the half-open probe; the
// second Waits, and wakes when the probe's success is recorded, to find
// the circuit closed.
func TestWaitForTheProbeOfAnotherWorkerWakesOnItsOutcome(t *testing.T) {
	b, clock := tripped(t, Config{})
	clock.Advance(30 * time.Second)
	require.True(t, b.Check().Probe, "the first worker runs the probe")

	result := make(chan Decision)
	go func() {
		d, err := b.Wait(context.Background())
		assert.NoError(t, err)
		result <- d
	}()
	untilWaiting(t, b)
	b.RecordSuccess() // the probe succeeded

	d := <-result
	assert.True(t, d.Allow)
	assert.Equal(t, Closed, d.State)
	assert.False(t, d.Probe)
}

// A person resumes the loop during a long cooldown: the Wait that sleeps
// it out wakes at once.
func TestWaitWakesWhenAPersonResumes(t *testing.T) {
	b, _ := tripped(t, Config{
		Sleep: func(ctx context.Context, d time.Duration) error {
			<-ctx.Done() // a cooldown that would take long
			return ctx.Err()
		},
	})

	result := make(chan Decision)
	go func() {
		d, err := b.Wait(context.Background())
		assert.NoError(t, err)
		result <- d
	}()
	untilWaiting(t, b)
	b.Resume()

	d := <-result
	assert.True(t, d.Allow)
	assert.Equal(t, Closed, d.State)
	assert.Zero(t, waitersOf(b), "the waiter is released")
}

// Every change a host makes wakes a waiting Wait, and reading the breaker
// does not.
func TestWaitWakesOnChangesNotOnReads(t *testing.T) {
	changes := map[string]func(b *CircuitBreaker){
		"Record":        func(b *CircuitBreaker) { b.Record(Iteration{Err: errA(9)}) },
		"RecordSuccess": func(b *CircuitBreaker) { b.RecordSuccess() },
		"RecordFailure": func(b *CircuitBreaker) { b.RecordFailure("x") },
		"Reset":         func(b *CircuitBreaker) { b.Reset() },
		"Resume":        func(b *CircuitBreaker) { b.Resume() },
		"Skip":          func(b *CircuitBreaker) { b.Skip() },
		"Abort":         func(b *CircuitBreaker) { b.Abort() },
		"ForceOpen":     func(b *CircuitBreaker) { b.ForceOpen("") },
		"Restore":       func(b *CircuitBreaker) { require.NoError(t, b.Restore(b.Snapshot())) },
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			b, _ := tripped(t, Config{})
			woken, done := b.waitForChange(context.Background())
			defer done()
			b.Check()
			b.Stats()
			b.State()
			b.Snapshot()
			require.NoError(t, woken.Err(), "a read woke the waiter")
			change(b)
			assert.ErrorIs(t, woken.Err(), context.Canceled)
		})
	}
}

// A real sleep stops its timer: no goroutine outlives Wait.
func TestWaitWithARealTimerLeavesNothingRunning(t *testing.T) {
	before := runtime.NumGoroutine()
	b, err := New(Config{Cooldown: time.Millisecond})
	require.NoError(t, err)
	for range 3 {
		b.RecordFailure("boom")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	d, err := b.Wait(ctx)
	require.NoError(t, err)
	assert.True(t, d.Probe)
	cancel()
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "a goroutine outlived Wait")
	assert.Zero(t, waitersOf(b))
}
