package loopbreaker

import (
	"errors"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// panicky is host code (a clock, a classifier, a cooldown policy) that
// panics while armed, as a host's bug would.
type panicky struct {
	armed bool
	clock *loopbreakertest.Clock
}

func (p *panicky) now() time.Time {
	if p.armed {
		panic("clock broke")
	}
	return p.clock.Now()
}

// callRecovering calls f and reports whether it panicked, as a host that
// recovers (net/http does for its handlers) sees it.
func callRecovering(f func()) (panicked bool) {
	defer func() { panicked = recover() != nil }()
	f()
	return false
}

// requireUsable fails unless every method of b still works: the lock is
// free, and a failure, a success, a check and the stats go through.
func requireUsable(t *testing.T, b *CircuitBreaker) {
	t.Helper()
	require.True(t, b.mu.TryLock(), "a panic in host code left the breaker's lock held")
	b.mu.Unlock()
	b.Check()
	b.Record(Iteration{Err: errA(1)})
	b.RecordSuccess()
	b.RecordFailure("boom")
	_ = b.Stats()
	_ = b.Snapshot()
	_ = b.TripReason()
	_ = b.State()
	b.Resume()
	b.Reset()
}

// A host that recovers from a panic in its own clock finds the breaker
// working afterwards, whichever call the clock panicked in, and the
// iteration that panicked left unrecorded.
func TestClockPanicLeavesNoLockHeld(t *testing.T) {
	calls := map[string]func(b *CircuitBreaker){
		"Record":         func(b *CircuitBreaker) { b.Record(Iteration{Err: errA(1)}) },
		"RecordSuccess":  func(b *CircuitBreaker) { b.RecordSuccess() },
		"RecordFailure":  func(b *CircuitBreaker) { b.RecordFailure("boom") },
		"Reset":          func(b *CircuitBreaker) { b.Reset() },
		"Check":          func(b *CircuitBreaker) { b.Check() },
		"State":          func(b *CircuitBreaker) { b.State() },
		"Stats":          func(b *CircuitBreaker) { b.Stats() },
		"Snapshot":       func(b *CircuitBreaker) { b.Snapshot() },
		"Resume":         func(b *CircuitBreaker) { b.Resume() },
		"Skip":           func(b *CircuitBreaker) { b.Skip() },
		"Abort":          func(b *CircuitBreaker) { b.Abort() },
		"ForceOpen":      func(b *CircuitBreaker) { b.ForceOpen("look") },
		"AddUsage":       func(b *CircuitBreaker) { b.AddUsage(Usage{CostUSD: 1}) },
		"ObserveLimit":   func(b *CircuitBreaker) { b.ObserveLimit(Limit{Why: "429"}) },
		"Record a limit": func(b *CircuitBreaker) { b.Record(Iteration{Err: errHitLimit}) },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			host := &panicky{clock: newFakeClock()}
			// An open circuit makes every call read the clock.
			b, err := New(Config{Now: host.now})
			require.NoError(t, err)
			for _, msg := range []string{"a", "b", "c"} {
				b.RecordFailure(msg)
			}
			before := b.Stats()
			require.Equal(t, Open, before.State)

			host.armed = true
			require.True(t, callRecovering(func() { call(b) }), "the clock did not panic")
			host.armed = false
			require.True(t, b.mu.TryLock(), "a panic in host code left the breaker's lock held")
			b.mu.Unlock()

			after := b.Stats()
			assert.Equal(t, before.State, after.State)
			assert.Equal(t, before.Iterations, after.Iterations, "the iteration that panicked is left unrecorded")
			assert.Equal(t, before.Failures.Consecutive, after.Failures.Consecutive)
			assert.Equal(t, before.Spend, after.Spend, "nothing spent")
			assert.Equal(t, before.ProviderLimit, after.ProviderLimit, "no limit put in force")
			requireUsable(t, b)
		})
	}
}

// A classifier that panics leaves the iteration unrecorded and the breaker
// working.
func TestClassifierPanicLeavesIterationUnrecorded(t *testing.T) {
	armed := true
	b, _ := newTestBreaker(t, Config{
		Classify: func(err error) Outcome {
			if armed {
				panic("classifier broke")
			}
			return Failure
		},
	})

	require.True(t, callRecovering(func() { b.Record(Iteration{Err: errors.New("x")}) }))
	armed = false

	assert.Zero(t, b.Stats().Iterations)
	requireUsable(t, b)
}

// A cooldown policy that panics as the third failure trips the circuit
// leaves the iteration counted and the circuit closed, every lock free;
// the next failure trips it once the policy works again.
func TestCooldownPolicyPanicLeavesCircuitAsItWas(t *testing.T) {
	for name, third := range map[string]func(b *CircuitBreaker){
		"Record":        func(b *CircuitBreaker) { b.Record(Iteration{Err: errA(3)}) },
		"RecordFailure": func(b *CircuitBreaker) { b.RecordFailure("boom") },
	} {
		t.Run(name, func(t *testing.T) {
			armed := false
			b, _ := newTestBreaker(t, Config{
				CooldownPolicy: func(base time.Duration, opens int) time.Duration {
					if armed {
						panic("policy broke")
					}
					return base
				},
			})
			b.Record(Iteration{Err: errA(1)})
			b.Record(Iteration{Err: errA(2)})

			armed = true
			require.True(t, callRecovering(func() { third(b) }))
			armed = false

			s := b.Stats()
			assert.Equal(t, Closed, s.State, "the circuit did not open")
			assert.Equal(t, 3, s.Failures.Consecutive, "the iteration is counted")
			assert.Zero(t, s.Opens)
			assert.Empty(t, s.History)

			b.Record(Iteration{Err: errA(4)})
			assert.Equal(t, Open, b.State())
			assert.Equal(t, "4 consecutive failures (threshold: 3)", b.TripReason())
			requireUsable(t, b)
		})
	}
}
