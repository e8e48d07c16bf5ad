package loopbreaker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Seed 004's Resume: the circuit closes and the counters start again, so
// the error that stopped the loop does not stop it again at once; the
// lifetime totals and the history stay.
func TestResumeClosesAndResetsTheCounters(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Failures: FailureRules{MaxSameError: 3, MaxConsecutive: -1}})
	for i := 0; i < 3; i++ {
		b.Record(Iteration{Err: errA(i), Progress: &Progress{}})
		b.RecordSuccess()
	}
	require.True(t, b.IsTripped())

	b.Resume()
	s := b.Stats()
	assert.Equal(t, Closed, s.State)
	assert.Equal(t, Reason{}, s.Reason)
	assert.Zero(t, s.Failures.Consecutive)
	assert.Zero(t, s.Failures.Unique)
	assert.Empty(t, s.Failures.Counts)
	assert.Zero(t, s.Progress.ConsecutiveNoProgress)
	assert.Equal(t, "", s.Failures.LastFingerprint)
	assert.Equal(t, 3, s.Failures.Total, "totals are kept")
	assert.Equal(t, 6, s.Iterations)
	assert.Equal(t, 1, s.Opens)
	assert.Equal(t, "OPEN -> CLOSED (resume) at iteration 6", s.History[len(s.History)-1].String())

	b.Record(Iteration{Err: errA(9)})
	b.Record(Iteration{Err: errA(9)})
	assert.Equal(t, Closed, b.State(), "the same error counts from one again")
}

// Seed 004's Skip: the same as Resume, recorded as a skip. Two breakers
// that saw the same loop end alike, every counter and window, but for the
// cause of the last transition.
func TestSkipIsResumeRecordedAsASkip(t *testing.T) {
	resumed, _ := busyBreaker(t)
	skipped, _ := busyBreaker(t)
	resumed.Resume()
	skipped.Skip()
	r, s := resumed.Stats(), skipped.Stats()
	assert.Equal(t, Closed, s.State)
	assert.Zero(t, s.Failures.Unique, "the counters start again")
	assert.Equal(t, "OPEN -> CLOSED (resume) at iteration 9", r.History[len(r.History)-1].String())
	assert.Equal(t, "OPEN -> CLOSED (skip) at iteration 9", s.History[len(s.History)-1].String())
	s.History[len(s.History)-1].Cause = CauseResume
	assert.Equal(t, r, s)

	rs, ss := resumed.Snapshot(), skipped.Snapshot()
	ss.data.History[len(ss.data.History)-1].Cause = CauseResume
	assert.Equal(t, rs, ss, "nothing else tells them apart")
}

// A skip on a closed circuit changes no state but is in the history.
func TestSkipOnAClosedCircuitIsRecorded(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	b.Record(Iteration{Err: errA(1)})
	b.Skip()
	assert.Equal(t, []string{"CLOSED -> CLOSED (skip) at iteration 1"}, transitions(b.Stats().History))
	assert.Zero(t, b.Stats().Failures.Consecutive)
}

// Seed 004's Abort: the circuit stays open, and no cooldown ends it; only
// a person (Resume) does.
func TestAbortKeepsTheCircuitOpenUntilResumed(t *testing.T) {
	b, clock := tripped(t, Config{})
	b.Abort()
	clock.Advance(24 * time.Hour)

	d := b.Check()
	assert.False(t, d.Allow)
	assert.Equal(t, Open, d.State)
	assert.Equal(t, ReasonAborted, d.Reason.Kind)
	assert.Zero(t, d.RetryAfter, "no time ends it")
	assert.Equal(t, "Aborted: 3 consecutive failures (threshold: 3)", b.TripReason())
	assert.True(t, b.IsTripped())
	b.RecordSuccess()
	assert.Equal(t, Open, b.State(), "an iteration does not end it either")
	assert.Equal(t, 1, b.Stats().Opens, "already open: no new open")

	b.Resume()
	assert.True(t, b.Check().Allow)
}

// ForceOpen opens a healthy circuit with the host's reason, and no
// cooldown ends it; Skip or Reset do.
func TestForceOpenHoldsTheCircuitUntilSkipOrReset(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	b.ForceOpen("disk full")
	clock.Advance(time.Hour)
	s := b.Stats()
	assert.Equal(t, Open, s.State)
	assert.Equal(t, Reason{Kind: ReasonForcedOpen, Message: "disk full"}, s.Reason)
	assert.Equal(t, "Forced open: disk full", b.TripReason())
	assert.Zero(t, s.RetryAfter)
	assert.Equal(t, 1, s.Opens)
	assert.Equal(t, "CLOSED -> OPEN (force_open: Forced open: disk full) at iteration 0", s.History[0].String())

	b.Skip()
	assert.Equal(t, Closed, b.State())
	b.ForceOpen("")
	assert.Equal(t, "Forced open", b.TripReason())
	b.Reset()
	assert.Equal(t, Closed, b.State())
}

// Forcing open a half-open circuit takes the probe slot away.
func TestForceOpenDuringHalfOpenRefusesTheProbe(t *testing.T) {
	b, clock := tripped(t, Config{})
	clock.Advance(30 * time.Second)
	require.Equal(t, HalfOpen, b.State())
	b.ForceOpen("look at this first")
	assert.False(t, b.Check().Allow)
	assert.Equal(t, 2, b.Stats().Opens)
}

// The callback hears every manual control.
func TestManualControlsReachOnStateChange(t *testing.T) {
	var seen []string
	b, _ := newTestBreaker(t, Config{OnStateChange: func(tr Transition) { seen = append(seen, tr.String()) }})
	b.ForceOpen("maintenance")
	b.Abort()
	b.Resume()
	assert.Equal(t, []string{
		"CLOSED -> OPEN (force_open: Forced open: maintenance) at iteration 0",
		"OPEN -> OPEN (abort: Aborted: Forced open: maintenance) at iteration 0",
		"OPEN -> CLOSED (resume) at iteration 0",
	}, seen)
}

// A person aborts a loop that has just completed (two done signals): the
// circuit is held open with the completion as the aborted reason, the
// snapshot of that state is valid, so it can be saved, and after Resume
// the loop runs again.
func TestAbortOnACompleteLoopHoldsItOpenAndSaves(t *testing.T) {
	for _, control := range []struct {
		name string
		do   func(*CircuitBreaker)
		kind ReasonKind
		msg  string
	}{
		{"abort", (*CircuitBreaker).Abort, ReasonAborted, "Complete: the agent reported done 2 times in a row (threshold: 2)"},
		{"force open", func(b *CircuitBreaker) { b.ForceOpen("checking the diff") }, ReasonForcedOpen, "checking the diff"},
	} {
		t.Run(control.name, func(t *testing.T) {
			b, _ := newTestBreaker(t, Config{})
			b.Record(Iteration{Done: true})
			b.Record(Iteration{Done: true})
			require.True(t, b.Check().Complete)

			control.do(b)
			d := b.Check()
			assert.False(t, d.Allow)
			assert.False(t, d.Complete, "held, not complete")
			assert.Equal(t, Open, d.State)
			assert.Equal(t, control.kind, d.Reason.Kind)
			assert.Equal(t, control.msg, d.Reason.Message)
			assert.Equal(t, Reason{}, b.Stats().Complete)

			snap := b.Snapshot()
			require.NoError(t, snap.Validate(), "the held state must be savable")
			restored, _ := newTestBreaker(t, Config{})
			require.NoError(t, restored.Restore(roundTrip(t, snap)))
			assert.Equal(t, control.kind, restored.Check().Reason.Kind)

			b.Resume()
			assert.True(t, b.Check().Allow)
		})
	}
}

// A second abort keeps what the first one said came before it: the reason
// does not grow into "Aborted: Aborted: ...".
func TestAbortingAnAbortedCircuitKeepsItsReason(t *testing.T) {
	cb, _ := newTestBreaker(t, Config{})
	for range 3 {
		cb.RecordFailure("boom")
	}
	cb.Abort()
	first := cb.Stats().Reason
	cb.Abort()
	cb.Abort()
	assert.Equal(t, first, cb.Stats().Reason)
	assert.Equal(t, "Aborted: 3 consecutive failures (threshold: 3)", first.String())
}
