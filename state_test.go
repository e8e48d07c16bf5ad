package loopbreaker

import (
	"fmt"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStateStrings(t *testing.T) {
	assert.Equal(t, "CLOSED", Closed.String())
	assert.Equal(t, "OPEN", Open.String())
	assert.Equal(t, "HALF_OPEN", HalfOpen.String())
	assert.Equal(t, "State(7)", State(7).String())
	assert.Equal(t, "CLOSED", fmt.Sprint(Closed))
}

// tripped returns a breaker opened by three consecutive failures.
func tripped(t *testing.T, cfg Config) (*CircuitBreaker, *loopbreakertest.Clock) {
	t.Helper()
	b, clock := newTestBreaker(t, cfg)
	for i := 0; i < 3; i++ {
		b.Record(Iteration{Err: errA(i)})
	}
	require.Equal(t, Open, b.State())
	return b, clock
}

// An open circuit refuses every iteration until the cooldown is over, and
// says how long is left.
func TestOpenCircuitRefusesUntilCooldownPasses(t *testing.T) {
	b, clock := tripped(t, Config{})

	d := b.Check()
	assert.Equal(t, Decision{State: Open, Reason: b.Stats().Reason, RetryAfter: 30 * time.Second}, d)

	clock.Advance(30*time.Second - time.Nanosecond)
	d = b.Check()
	assert.False(t, d.Allow)
	assert.Equal(t, time.Nanosecond, d.RetryAfter)
	assert.True(t, b.IsTripped())
	assert.Equal(t, Open, b.State())
	assert.Equal(t, time.Nanosecond, b.Stats().RetryAfter)
}

// Seed 000: once the cooldown is over IsTripped is false: the circuit is
// half-open.
func TestCooldownOverMakesCircuitHalfOpen(t *testing.T) {
	b, clock := tripped(t, Config{})
	clock.Advance(30 * time.Second)

	assert.False(t, b.IsTripped())
	assert.Equal(t, HalfOpen, b.State())
	assert.Equal(t, "3 consecutive failures (threshold: 3)", b.TripReason(), "the reason stays while half-open")
	s := b.Stats()
	assert.Equal(t, HalfOpen, s.State)
	assert.Equal(t, time.Duration(0), s.RetryAfter)
}

// Half-open lets exactly one probe through; a second Check before its
// outcome is recorded is refused.
func TestHalfOpenAllowsExactlyOneProbe(t *testing.T) {
	b, clock := tripped(t, Config{})
	clock.Advance(time.Hour)

	probe := b.Check()
	assert.True(t, probe.Allow)
	assert.True(t, probe.Probe)
	assert.Equal(t, HalfOpen, probe.State)
	assert.Equal(t, "3 consecutive failures (threshold: 3)", probe.Reason.String())

	second := b.Check()
	assert.False(t, second.Allow)
	assert.False(t, second.Probe)
	assert.Equal(t, HalfOpen, second.State)
	assert.ErrorIs(t, second.Err(), ErrOpen)
	assert.Contains(t, second.Err().Error(), "probe in flight")
}

// A good probe closes the circuit: consecutive counters start again, the
// error history is kept.
func TestSuccessfulProbeClosesAndKeepsHistory(t *testing.T) {
	b, clock := tripped(t, Config{})
	clock.Advance(30 * time.Second)
	require.True(t, b.Check().Allow)
	b.Record(Iteration{})

	s := b.Stats()
	assert.Equal(t, Closed, s.State)
	assert.Equal(t, 0, s.Failures.Consecutive)
	assert.Equal(t, 3, s.Failures.Total)
	assert.Equal(t, 3, s.Failures.Counts[Fingerprint(errA(0).Error())])
	assert.Equal(t, "", b.TripReason())
	assert.True(t, b.Check().Allow)
	assert.True(t, b.Check().Allow, "closed allows every iteration")

	// The kept history still counts: two more of the same error reach 5.
	b.Record(Iteration{Err: errA(7)})
	b.Record(Iteration{})
	b.Record(Iteration{Err: errA(8)})
	assert.Equal(t, "Same error repeated 5 times (threshold: 5)", b.TripReason())
}

// A bad probe opens the circuit again and restarts the cooldown from the
// time of the probe's failure.
func TestFailedProbeReopensAndRestartsCooldown(t *testing.T) {
	b, clock := tripped(t, Config{Cooldown: time.Minute})
	clock.Advance(5 * time.Minute)
	require.True(t, b.Check().Allow)
	clock.Advance(10 * time.Second) // the probe runs for a while
	b.Record(Iteration{Err: errA(50)})

	assert.True(t, b.IsTripped())
	assert.Equal(t, "4 consecutive failures (threshold: 3)", b.TripReason())
	assert.Equal(t, 2, b.Stats().Opens)
	d := b.Check()
	assert.False(t, d.Allow)
	assert.Equal(t, time.Minute, d.RetryAfter)

	clock.Advance(time.Minute)
	assert.True(t, b.Check().Allow, "the new cooldown is over")
}

// A probe that fails with an error that reaches no threshold still opens
// the circuit again, with a reason of its own.
func TestFailedProbeBelowThresholdsHasItsOwnReason(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Failures: FailureRules{MaxConsecutive: -1, MaxSameError: 2}})
	b.Record(Iteration{Err: errA(1)})
	b.Record(Iteration{Err: errA(2)})
	clock.Advance(DefaultConfig().Cooldown)
	require.True(t, b.Check().Allow)
	b.Record(Iteration{Err: errB(9)})
	assert.True(t, b.IsTripped())
	s := b.Stats()
	assert.Equal(t, ReasonProbeFailed, s.Reason.Kind)
	assert.Equal(t, "Half-open probe failed (error "+Fingerprint(errB(0).Error())+")", b.TripReason())
}

// An iteration that was allowed before the circuit opened and finishes
// while it is open is counted, but does not close the circuit.
func TestLateIterationWhileOpenOnlyCounts(t *testing.T) {
	b, _ := tripped(t, Config{})
	b.Record(Iteration{})
	s := b.Stats()
	assert.Equal(t, Open, s.State)
	assert.Equal(t, 4, s.Iterations)
	assert.Equal(t, 0, s.Failures.Consecutive)
}

// A host that never calls Check (the seed style: IsTripped, then Record)
// gets the same probe semantics: the first outcome after the cooldown
// decides.
func TestSeedStyleLoopWithoutCheck(t *testing.T) {
	b, clock := tripped(t, Config{})
	clock.Advance(DefaultConfig().Cooldown)
	require.False(t, b.IsTripped())
	b.RecordSuccess()
	assert.Equal(t, Closed, b.State())
}

func TestZeroCooldownMeansDefault(t *testing.T) {
	b, clock := tripped(t, Config{Cooldown: 0})
	clock.Advance(DefaultConfig().Cooldown - time.Millisecond)
	assert.True(t, b.IsTripped())
	clock.Advance(time.Millisecond)
	assert.False(t, b.IsTripped())
}

func TestRealClockIsTheDefault(t *testing.T) {
	b, err := New(Config{Failures: FailureRules{MaxConsecutive: 1}})
	require.NoError(t, err)
	before := time.Now()
	b.Record(Iteration{Err: errA(1)})
	s := b.Stats()
	assert.False(t, s.OpenedAt.Before(before))
	assert.False(t, s.OpenedAt.After(time.Now()))
}

// The machine's clock is set back two hours while the circuit is open
// (a 30-minute cooldown). The circuit stays open, for one full cooldown
// from the moment the clock was read, not for two and a half hours.
func TestClockSetBackWhileOpenWaitsOneFullCooldown(t *testing.T) {
	b, clock := tripped(t, Config{Cooldown: 30 * time.Minute})
	clock.Advance(10 * time.Minute)
	clock.Advance(-2 * time.Hour)

	d := b.Check()
	assert.False(t, d.Allow)
	assert.Equal(t, Open, d.State)
	assert.Equal(t, 30*time.Minute, d.RetryAfter)

	clock.Advance(29 * time.Minute)
	assert.False(t, b.Check().Allow)
	clock.Advance(time.Minute)
	d = b.Check()
	assert.True(t, d.Allow)
	assert.True(t, d.Probe)
}

// A clock set back 10 minutes during a cooldown and then forward again
// to a second after the opening does not end the cooldown early: the
// circuit stays open until 30 seconds after it opened.
func TestClockBackThenForwardNeverShortensACooldown(t *testing.T) {
	b, clock := tripped(t, Config{})

	clock.Advance(-10 * time.Minute)
	d := b.Check()
	assert.False(t, d.Allow)
	assert.Equal(t, 30*time.Second, d.RetryAfter, "set back: a full cooldown from now")

	clock.Advance(10*time.Minute + time.Second)
	d = b.Check()
	assert.False(t, d.Allow, "forward again: one second after the opening")
	assert.Equal(t, Open, d.State)
	assert.Equal(t, 29*time.Second, d.RetryAfter)

	clock.Advance(29 * time.Second)
	assert.True(t, b.Check().Allow, "the probe, 30 seconds after the opening")
}

// A clock set back for good during a cooldown lets the probe through after
// a full cooldown on the clock's new reading, not after the cooldown plus
// the step back.
func TestClockSetBackForGoodRestartsTheCooldown(t *testing.T) {
	b, clock := tripped(t, Config{})
	clock.Advance(-time.Hour)
	assert.False(t, b.Check().Allow)

	clock.Advance(30*time.Second - time.Nanosecond)
	assert.False(t, b.Check().Allow)
	clock.Advance(time.Nanosecond)
	d := b.Check()
	assert.True(t, d.Allow)
	assert.True(t, d.Probe)
}

func TestHeldKindsAreTheOnesOnlyAPersonEnds(t *testing.T) {
	for k := ReasonNone; int(k) < len(rules); k++ {
		want := k == ReasonForcedOpen || k == ReasonAborted || k == ReasonProtectedFiles || k == ReasonGaveUp
		assert.Equal(t, want, k.Held(), "%s", k)
	}
}
