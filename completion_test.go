package loopbreaker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Seed 002: the agent says it is done twice in a row. The loop is
// complete; nothing failed.
func TestTwoDoneSignalsCompleteTheLoop(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	b.Record(Iteration{Done: true})
	require.True(t, b.Check().Allow, "one done signal is not enough")
	b.Record(Iteration{Done: true})

	d := b.Check()
	assert.False(t, d.Allow)
	assert.True(t, d.Complete)
	assert.Equal(t, Closed, d.State)
	assert.Equal(t, ReasonDoneSignals, d.Reason.Kind)
	assert.Equal(t, "Complete: the agent reported done 2 times in a row (threshold: 2)", d.Reason.String())
	assert.False(t, b.IsTripped())
	assert.Empty(t, b.TripReason(), "a complete loop did not trip")

	err := d.Err()
	require.ErrorIs(t, err, ErrComplete)
	assert.NotErrorIs(t, err, ErrOpen)
	assert.Equal(t, "loopbreaker: Complete: the agent reported done 2 times in a row (threshold: 2)", err.Error())

	s := b.Stats()
	assert.Equal(t, d.Reason, s.Complete)
	assert.Equal(t, 0, s.Opens)
	assert.Equal(t, 0, s.Failures.Total)
}

func TestCompletionSignals(t *testing.T) {
	tests := []struct {
		name       string
		cfg        Config
		iterations []Iteration
		kind       ReasonKind // ReasonNone: not complete
	}{
		{"done, not done, done", Config{}, []Iteration{{Done: true}, {}, {Done: true}}, ReasonNone},
		{"a failed done signal does not count", Config{}, []Iteration{{Done: true, Err: errA(1)}, {Done: true}}, ReasonNone},
		{"done signals switched off", Config{Progress: ProgressRules{DoneSignals: -1}}, []Iteration{{Done: true}, {Done: true}, {Done: true}}, ReasonNone},
		{"three done signals asked for", Config{Progress: ProgressRules{DoneSignals: 3}}, []Iteration{{Done: true}, {Done: true}, {Done: true}}, ReasonDoneSignals},
		{"three test-only iterations", Config{}, []Iteration{{Work: WorkTestsOnly}, {Work: WorkTestsOnly}, {Work: WorkTestsOnly}}, ReasonTestOnlyLoops},
		{"two test-only iterations", Config{}, []Iteration{{Work: WorkTestsOnly}, {Work: WorkTestsOnly}}, ReasonNone},
		{"implementation between", Config{}, []Iteration{{Work: WorkTestsOnly}, {Work: WorkTestsOnly}, {Work: WorkImplementation}, {Work: WorkTestsOnly}}, ReasonNone},
		{"unlabelled iterations are left out", Config{}, []Iteration{{Work: WorkTestsOnly}, {}, {Work: WorkTestsOnly}, {}, {Work: WorkTestsOnly}}, ReasonTestOnlyLoops},
		{"a failing test run is not done", Config{}, []Iteration{{Work: WorkTestsOnly}, {Work: WorkTestsOnly}, {Work: WorkTestsOnly, Err: errA(1)}}, ReasonNone},
		{"test-only switched off", Config{Progress: ProgressRules{TestOnly: -1}}, []Iteration{{Work: WorkTestsOnly}, {Work: WorkTestsOnly}, {Work: WorkTestsOnly}}, ReasonNone},
		{"every task done", Config{}, []Iteration{{Plan: &Plan{Done: 4, Remaining: 1}}, {Plan: &Plan{Done: 5}}}, ReasonPlanComplete},
		{"tasks remain", Config{}, []Iteration{{Plan: &Plan{Done: 4, Remaining: 1}}}, ReasonNone},
		{"an empty plan is not a finished one", Config{}, []Iteration{{Plan: &Plan{}}}, ReasonNone},
		{"a finished plan on a failed iteration", Config{}, []Iteration{{Plan: &Plan{Done: 5}, Err: errA(1)}}, ReasonNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newTestBreaker(t, tt.cfg)
			for _, it := range tt.iterations {
				b.Record(it)
			}
			s := b.Stats()
			assert.Equal(t, tt.kind, s.Complete.Kind)
			assert.Equal(t, tt.kind == ReasonNone, b.Check().Allow)
		})
	}
}

func TestPlanCompleteReason(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	b.Record(Iteration{Plan: &Plan{Done: 12}})
	assert.Equal(t, "Complete: all 12 tasks of the plan are done", b.Check().Reason.String())
	assert.Equal(t, Plan{Done: 12}, b.Stats().Progress.Plan)
}

// A loop that stalls is stopped as stalled, never as complete.
func TestStallIsNeverCompletion(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	for range 3 {
		b.Record(Iteration{Progress: stalled})
	}
	d := b.Check()
	assert.False(t, d.Allow)
	assert.False(t, d.Complete)
	assert.Equal(t, ReasonNoProgress, d.Reason.Kind)
	assert.ErrorIs(t, d.Err(), ErrOpen)
	assert.NotErrorIs(t, d.Err(), ErrComplete)
	assert.Equal(t, Reason{}, b.Stats().Complete)
}

// Test-only iterations change no files, so the no-progress signal gives
// its one more chance after the second; the third completes the loop, and
// the half-open circuit closes.
func TestTestOnlyLoopsCompleteThroughTheOneMoreChance(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	b.Record(Iteration{Work: WorkTestsOnly, Progress: stalled})
	b.Record(Iteration{Work: WorkTestsOnly, Progress: stalled})
	require.Equal(t, HalfOpen, b.State())
	require.True(t, b.Check().Probe)
	b.Record(Iteration{Work: WorkTestsOnly, Progress: stalled})

	s := b.Stats()
	assert.Equal(t, Closed, s.State)
	assert.Equal(t, ReasonTestOnlyLoops, s.Complete.Kind)
	assert.Equal(t, 0, s.Opens)
}

// A complete loop stays complete: later iterations are counted and change
// nothing, until Reset.
func TestCompleteLoopStaysCompleteUntilReset(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	b.Record(Iteration{Done: true})
	b.Record(Iteration{Done: true})
	for i := range 5 {
		b.Record(Iteration{Err: errA(i)})
	}
	s := b.Stats()
	assert.Equal(t, ReasonDoneSignals, s.Complete.Kind)
	assert.Equal(t, Closed, s.State)
	assert.Equal(t, 5, s.Failures.Total)

	b.Reset()
	assert.True(t, b.Check().Allow)
	assert.Equal(t, Reason{}, b.Stats().Complete)
}

func TestCompletionReasonKindNames(t *testing.T) {
	assert.Equal(t, "call_budget", ReasonCallBudget.String())
	assert.Equal(t, "done_signals", ReasonDoneSignals.String())
	assert.Equal(t, "test_only_loops", ReasonTestOnlyLoops.String())
	assert.Equal(t, "plan_complete", ReasonPlanComplete.String())
	assert.Equal(t, "tests_only", WorkTestsOnly.String())
}

// The completion is a transition of its own in the history, with the
// completion reason, even when the circuit stays closed.
func TestCompletionIsInTheHistory(t *testing.T) {
	var seen []Transition
	b, _ := newTestBreaker(t, Config{OnStateChange: func(tr Transition) { seen = append(seen, tr) }})
	b.Record(Iteration{Done: true})
	b.Record(Iteration{Done: true})
	h := b.Stats().History
	require.Len(t, h, 1)
	assert.Equal(t, CauseComplete, h[0].Cause)
	assert.Equal(t, Closed, h[0].From)
	assert.Equal(t, Closed, h[0].To)
	assert.Equal(t, ReasonDoneSignals, h[0].Reason.Kind)
	assert.Equal(t, h, seen)
	assert.Equal(t, "complete", CauseComplete.String())
}

// A person who resumes a complete loop wants it to go on.
func TestResumeGoesOnAfterCompletion(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	b.Record(Iteration{Done: true})
	b.Record(Iteration{Done: true})
	require.True(t, b.Check().Complete)
	b.Resume()
	assert.True(t, b.Check().Allow)
	b.Record(Iteration{Done: true})
	assert.True(t, b.Check().Allow, "the done streak starts again")
}

// A restarted loop remembers that it was complete, and how far its
// completion streaks had got.
func TestCompletionSurvivesARestart(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	b.Record(Iteration{Work: WorkTestsOnly, Plan: &Plan{Done: 2, Remaining: 3}})
	b.Record(Iteration{Work: WorkTestsOnly, Done: true})
	restarted, _ := newTestBreaker(t, Config{})
	require.NoError(t, restarted.Restore(roundTrip(t, b.Snapshot())))
	s := restarted.Stats()
	assert.Equal(t, 2, s.Progress.ConsecutiveTestOnly)
	assert.Equal(t, 1, s.Progress.ConsecutiveDoneSignals)
	assert.Equal(t, Plan{Done: 2, Remaining: 3}, s.Progress.Plan)

	restarted.Record(Iteration{Work: WorkTestsOnly})
	done := restarted.Stats().Complete
	assert.Equal(t, ReasonTestOnlyLoops, done.Kind)

	again, _ := newTestBreaker(t, Config{})
	require.NoError(t, again.Restore(roundTrip(t, restarted.Snapshot())))
	assert.True(t, again.Check().Complete)
	assert.Equal(t, done, again.Stats().Complete)
}
