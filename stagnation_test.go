package loopbreaker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scoring is a config with only the progress score among the progress
// signals, so the stories below hear it alone.
func scoring() Config {
	return Config{Progress: ProgressRules{ScoreWindow: 3, MaxNoProgress: -1, OutputDeclinePercent: -1}}
}

func TestProgressScoreOfOneIteration(t *testing.T) {
	tests := []struct {
		name     string
		prev     *Progress // a measured iteration before, or nil
		prevErr  error
		p        Progress
		err      error
		expected int
	}{
		{"nothing changed", nil, nil, Progress{}, nil, -3},
		{"a file changed", nil, nil, Progress{FilesChanged: 4}, nil, +1},
		{"two tasks completed, files changed", nil, nil, Progress{TasksCompleted: 2, FilesChanged: 1}, nil, 5*2 + 1},
		{"two more tests pass", &Progress{TestsPassing: 10}, nil, Progress{TestsPassing: 12, FilesChanged: 1}, nil, 3*2 + 1},
		{"fewer tests pass", &Progress{TestsPassing: 10}, nil, Progress{TestsPassing: 8, FilesChanged: 1}, nil, +1},
		{"three build errors resolved", nil, nil, Progress{ErrorsResolved: 3, FilesChanged: 1}, nil, 2*3 + 1},
		{"reverted earlier changes", nil, nil, Progress{Reverted: true, FilesChanged: 2}, nil, 0},
		{"the previous iteration's error again", &Progress{FilesChanged: 1}, errA(10), Progress{}, errA(12), -2 - 3},
		{"a different error than before", &Progress{FilesChanged: 1}, errA(10), Progress{}, errB(3), -3},
		{"the first failure", nil, nil, Progress{}, errA(1), -3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newTestBreaker(t, scoring())
			if tt.prev != nil {
				b.Record(Iteration{Progress: tt.prev, Err: tt.prevErr})
			}
			b.Record(Iteration{Progress: &tt.p, Err: tt.err})
			assert.Equal(t, tt.expected, b.Stats().Progress.LastScore)
		})
	}
}

// Seed 003: a file changed (+1), then two iterations changed nothing (-3,
// -3). The three add up to -5: the circuit opens.
func TestProgressScoreBelowZeroOverThreeIterationsOpens(t *testing.T) {
	b, _ := newTestBreaker(t, scoring())
	b.Record(Iteration{Progress: oneFile})
	b.Record(Iteration{Progress: stalled})
	assert.Equal(t, Closed, b.State(), "two iterations are not a window of three")
	assert.Equal(t, -2, b.Stats().Progress.Score)

	b.Record(Iteration{Progress: stalled})
	assert.True(t, b.IsTripped())
	assert.Equal(t, ReasonProgressScore, b.Stats().Reason.Kind)
	assert.Equal(t, "Progress score -5 over the last 3 iterations (threshold: below 0)", b.TripReason())
}

// A completed task (+5 +1) carries two quiet iterations (-3 -3): the sum
// is zero, not below it.
func TestProgressScoreOfZeroKeepsRunning(t *testing.T) {
	b, _ := newTestBreaker(t, scoring())
	b.Record(Iteration{Progress: &Progress{TasksCompleted: 1, FilesChanged: 1}})
	b.Record(Iteration{Progress: stalled})
	b.Record(Iteration{Progress: stalled})
	assert.Equal(t, Closed, b.State())
	assert.Equal(t, 0, b.Stats().Progress.Score)

	// The task drops out of the window: -3 -3 +1.
	b.Record(Iteration{Progress: oneFile})
	assert.True(t, b.IsTripped())
	assert.Equal(t, -5, b.Stats().Reason.Count)
}

// Iterations that do not report Progress are not scored and do not move
// the window.
func TestProgressScoreSkipsUnmeasuredIterations(t *testing.T) {
	b, _ := newTestBreaker(t, scoring())
	b.Record(Iteration{Progress: stalled})
	b.Record(Iteration{})
	b.Record(Iteration{Progress: stalled})
	b.RecordSuccess()
	assert.Equal(t, Closed, b.State())
	b.Record(Iteration{Progress: stalled})
	assert.True(t, b.IsTripped())
	assert.Equal(t, "Progress score -9 over the last 3 iterations (threshold: below 0)", b.TripReason())
}

// The probe after a progress-score trip is judged on its own score, as
// seed 003 says: "if successful (positive progress score): close".
func TestProgressScoreJudgesTheProbeOnItsOwn(t *testing.T) {
	tests := []struct {
		name  string
		probe *Progress
		state State
	}{
		{"a file changed: +1", oneFile, Closed},
		{"nothing changed: -3", stalled, Open},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, clock := newTestBreaker(t, scoring())
			for range 3 {
				b.Record(Iteration{Progress: stalled})
			}
			require.True(t, b.IsTripped())
			clock.Advance(DefaultConfig().Cooldown)
			require.True(t, b.Check().Probe)
			b.Record(Iteration{Progress: tt.probe})
			assert.Equal(t, tt.state, b.State())
			if tt.state == Open {
				assert.Equal(t, "Progress score -3 over the last 1 iterations (threshold: below 0)", b.TripReason())
			}
		})
	}
}

// With the progress score on, seed 001's "one more chance" still comes
// before the no-progress trip: two quiet iterations are not yet a window.
func TestProgressScoreKeepsTheNoProgressChance(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Progress: ProgressRules{ScoreWindow: 3}})
	b.Record(Iteration{Progress: stalled})
	b.Record(Iteration{Progress: stalled})
	assert.Equal(t, HalfOpen, b.State())
	assert.Equal(t, ReasonNoProgress, b.Stats().Reason.Kind)
}

func TestProgressScoreIsOffUnlessConfigured(t *testing.T) {
	for _, window := range []int{0, -1} {
		b, _ := newTestBreaker(t, Config{Progress: ProgressRules{ScoreWindow: window, MaxNoProgress: -1, OutputDeclinePercent: -1}})
		for range 10 {
			b.Record(Iteration{Progress: stalled})
		}
		assert.Equal(t, Closed, b.State(), "window %d", window)
		assert.Equal(t, 0, b.Stats().Progress.Score)
		assert.Equal(t, -3, b.Stats().Progress.LastScore, "the score is still reported")
	}
}

func TestProgressScoreWeightsAreConfigurable(t *testing.T) {
	cfg := scoring()
	cfg.Progress.ScoreWeights = DefaultScoreWeights()
	cfg.Progress.ScoreWeights.NoFilesChanged = 0 // quiet iterations are not held against the loop
	b, _ := newTestBreaker(t, cfg)
	for range 5 {
		b.Record(Iteration{Progress: stalled})
	}
	assert.Equal(t, Closed, b.State())

	cfg.Progress.ScoreWeights.Reverted = -10
	b, _ = newTestBreaker(t, cfg)
	b.Record(Iteration{Progress: &Progress{TasksCompleted: 1}})
	b.Record(Iteration{Progress: &Progress{FilesChanged: 1}})
	b.Record(Iteration{Progress: &Progress{FilesChanged: 3, Reverted: true}})
	assert.True(t, b.IsTripped(), "5 + 1 + (1 - 10) = -3")
}

// The same fingerprint five times in a row, as ralph-claude-code counts it.
func TestSameErrorInARowTripsAtThreshold(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Failures: FailureRules{MaxSameErrorInARow: 3, MaxConsecutive: -1, MaxSameError: -1}})
	b.Record(Iteration{Err: errA(10)})
	b.Record(Iteration{Err: errA(11)})
	assert.Equal(t, Closed, b.State())
	assert.Equal(t, 2, b.Stats().Failures.SameErrorInARow)

	b.Record(Iteration{Err: errA(12)})
	assert.True(t, b.IsTripped())
	s := b.Stats()
	assert.Equal(t, ReasonSameErrorInARow, s.Reason.Kind)
	assert.Equal(t, Fingerprint(errA(12).Error()), s.Reason.Fingerprint)
	assert.Equal(t, "Same error repeated 3 times in a row (threshold: 3)", b.TripReason())
}

func TestSameErrorInARowStartsAgain(t *testing.T) {
	ok := error(nil)
	tests := []struct {
		name  string
		errs  []error
		state State
		count int
	}{
		{"a success between", []error{errA(1), errA(2), ok, errA(3), errA(4)}, Closed, 2},
		{"another error between", []error{errA(1), errA(2), errB(1), errA(3), errA(4)}, Closed, 2},
		{"the other error three times", []error{errA(1), errB(1), errB(2), errB(3)}, Open, 3},
		{"a cancelled iteration between does not count", []error{errA(1), errA(2), errCanceled, errA(3)}, Open, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newTestBreaker(t, Config{Failures: FailureRules{MaxSameErrorInARow: 3, MaxConsecutive: -1, MaxSameError: -1}})
			for _, err := range tt.errs {
				b.Record(Iteration{Err: err})
			}
			assert.Equal(t, tt.state, b.State())
			assert.Equal(t, tt.count, b.Stats().Failures.SameErrorInARow)
		})
	}
}

// The lifetime count (seed 000) and the in-a-row count live side by side;
// when both are reached at once, the in-a-row reason is given.
func TestSameErrorInARowComesBeforeTheLifetimeCount(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Failures: FailureRules{MaxSameErrorInARow: 2, MaxSameError: 3, MaxConsecutive: -1}})
	b.Record(Iteration{Err: errA(1)})
	b.RecordSuccess()
	b.Record(Iteration{Err: errA(2)})
	b.Record(Iteration{Err: errA(3)})
	assert.Equal(t, ReasonSameErrorInARow, b.Stats().Reason.Kind)
}

// circling is a config where only the circular-approach signal speaks.
func circling() Config {
	return Config{Progress: ProgressRules{MaxNoProgress: -1, OutputDeclinePercent: -1}}
}

func TestCircularApproach(t *testing.T) {
	tests := []struct {
		name       string
		approaches []string
		progress   []*Progress // per iteration; nil: stalled
		period     int         // 0: the circuit stays closed
	}{
		{"A B A B A B", []string{"A", "B", "A", "B", "A", "B"}, nil, 2},
		{"A B C A B C", []string{"A", "B", "C", "A", "B", "C"}, nil, 3},
		{"A B A B A: not yet a window", []string{"A", "B", "A", "B", "A"}, nil, 0},
		{"one approach repeated", []string{"A", "A", "A", "A", "A", "A"}, nil, 0},
		{"one approach repeated, completing tasks", []string{"A", "A", "A", "A", "A", "A"},
			[]*Progress{oneTask, oneTask, oneTask, oneTask, oneTask, oneTask}, 0},
		{"files change every time, nothing resolved", []string{"A", "B", "A", "B", "A", "B"},
			[]*Progress{oneFile, oneFile, oneFile, oneFile, oneFile, oneFile}, 2},
		{"A B A B A B, one of them passed more tests", []string{"A", "B", "A", "B", "A", "B"},
			[]*Progress{{TestsPassing: 3}, {TestsPassing: 3}, {TestsPassing: 4}}, 0},
		{"A B A B A B, one of them resolved a build error", []string{"A", "B", "A", "B", "A", "B"},
			[]*Progress{nil, nil, nil, nil, {ErrorsResolved: 1}}, 0},
		{"A B A B A B, one of them made progress", []string{"A", "B", "A", "B", "A", "B"},
			[]*Progress{nil, nil, oneTask}, 0},
		{"A B A C A B: no cycle", []string{"A", "B", "A", "C", "A", "B"}, nil, 0},
		{"A B C D A B: four approaches", []string{"A", "B", "C", "D", "A", "B"}, nil, 0},
		{"unlabelled iterations are left out", []string{"A", "", "B", "A", "", "B", "A", "B"}, nil, 2},
		{"the same approach in other words", []string{
			"retry the request with backoff (attempt 1)", "raise the timeout to 30s",
			"retry the request with backoff (attempt 2)", "raise the timeout to 60s",
			"retry the request with backoff (attempt 3)", "raise the timeout to 90s",
		}, nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newTestBreaker(t, circling())
			for i, a := range tt.approaches {
				p := stalled
				if i < len(tt.progress) && tt.progress[i] != nil {
					p = tt.progress[i]
				}
				b.Record(Iteration{Approach: a, Progress: p})
			}
			s := b.Stats()
			if tt.period == 0 {
				assert.Equal(t, Closed, s.State)
				return
			}
			require.Equal(t, Open, s.State)
			assert.Equal(t, ReasonCircularApproach, s.Reason.Kind)
			assert.Equal(t, tt.period, s.Reason.Count)
			assert.Equal(t, 6, s.Reason.Window)
		})
	}
}

func TestCircularApproachReasonNamesTheApproaches(t *testing.T) {
	b, _ := newTestBreaker(t, circling())
	for _, a := range []string{"mock the clock", "add a retry", "mock the clock", "add a retry", "mock the clock", "add a retry"} {
		b.Record(Iteration{Approach: a, Progress: stalled})
	}
	assert.Equal(t, "Circular approach: 2 approaches alternating over the last 6 iterations without progress (approaches: "+
		Fingerprint("mock the clock")+"/"+Fingerprint("add a retry")+"): mock the clock | add a retry", b.TripReason())
	assert.Equal(t, "mock the clock | add a retry", b.Stats().Reason.Action)

	// A restart between the fifth and the sixth iteration keeps the texts.
	before, _ := newTestBreaker(t, circling())
	for _, a := range []string{"mock the clock", "add a retry", "mock the clock", "add a retry", "mock the clock"} {
		before.Record(Iteration{Approach: a, Progress: stalled})
	}
	restored, _ := newTestBreaker(t, circling())
	require.NoError(t, restored.Restore(roundTrip(t, before.Snapshot())))
	restored.Record(Iteration{Approach: "add a retry", Progress: stalled})
	assert.Equal(t, b.TripReason(), restored.TripReason())
}

// A host that labels approaches but does not measure progress: a success
// counts as progress, a failure does not.
func TestCircularApproachWithoutProgressMeasured(t *testing.T) {
	cfg := circling()
	cfg.Failures.MaxConsecutive, cfg.Failures.MaxSameError = -1, -1
	b, _ := newTestBreaker(t, cfg)
	for i, a := range []string{"A", "B", "A", "B", "A", "B"} {
		b.Record(Iteration{Approach: a, Err: errA(i)})
	}
	assert.Equal(t, ReasonCircularApproach, b.Stats().Reason.Kind)

	b, _ = newTestBreaker(t, cfg)
	for _, a := range []string{"A", "B", "A", "B", "A", "B"} {
		b.Record(Iteration{Approach: a})
	}
	assert.Equal(t, Closed, b.State())
}

func TestCircularApproachWindowIsConfigurable(t *testing.T) {
	cfg := circling()
	cfg.Progress.CircularApproachWindow = 4
	b, _ := newTestBreaker(t, cfg)
	for _, a := range []string{"A", "B", "A", "B"} {
		b.Record(Iteration{Approach: a, Progress: stalled})
	}
	assert.Equal(t, "Circular approach: 2 approaches alternating over the last 4 iterations without progress (approaches: "+
		Fingerprint("A")+"/"+Fingerprint("B")+"): A | B", b.TripReason())

	cfg.Progress.CircularApproachWindow = -1
	b, _ = newTestBreaker(t, cfg)
	for range 5 {
		for _, a := range []string{"A", "B"} {
			b.Record(Iteration{Approach: a, Progress: stalled})
		}
	}
	assert.Equal(t, Closed, b.State(), "switched off")
}

// After the cooldown, a probe that tries the same approach again opens
// the circuit again; one that tries something new and makes progress
// closes it.
func TestCircularApproachProbe(t *testing.T) {
	tests := []struct {
		name     string
		approach string
		progress *Progress
		state    State
	}{
		{"the same cycle again", "A", stalled, Open},
		{"a new approach that completes the task", "C", oneTask, Closed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, clock := newTestBreaker(t, circling())
			for _, a := range []string{"A", "B", "A", "B", "A", "B"} {
				b.Record(Iteration{Approach: a, Progress: stalled})
			}
			require.True(t, b.IsTripped())
			clock.Advance(DefaultConfig().Cooldown)
			require.True(t, b.Check().Probe)
			b.Record(Iteration{Approach: tt.approach, Progress: tt.progress})
			assert.Equal(t, tt.state, b.State())
		})
	}
}

func TestTestFixLoop(t *testing.T) {
	I, T, O, U := WorkImplementation, WorkTestFix, WorkOther, WorkUnlabelled
	tests := []struct {
		name  string
		cfg   Config
		work  []WorkKind
		state State
		count int
	}{
		{"five test fixes in five: 100% > 80%", Config{}, []WorkKind{T, T, T, T, T}, Open, 5},
		{"four in five: 80% is not more than 80%", Config{}, []WorkKind{T, T, I, T, T}, Closed, 0},
		{"four test fixes: not yet a window", Config{}, []WorkKind{T, T, T, T}, Closed, 0},
		{"unlabelled iterations are left out", Config{}, []WorkKind{T, U, T, T, U, T, T}, Open, 5},
		{"the window rolls on", Config{}, []WorkKind{I, O, T, T, T, T, T}, Open, 5},
		{"a 50% limit", Config{Progress: ProgressRules{TestFixPercent: 50}}, []WorkKind{T, I, T, O, T}, Open, 3},
		{"a window of 10", Config{Progress: ProgressRules{TestFixWindow: 10}}, []WorkKind{T, T, T, T, T, T, T, T, T, T}, Open, 10},
		{"a window of 10, not full", Config{Progress: ProgressRules{TestFixWindow: 10}}, []WorkKind{T, T, T, T, T, T, T, T, T}, Closed, 0},
		{"window switched off", Config{Progress: ProgressRules{TestFixWindow: -1}}, []WorkKind{T, T, T, T, T, T}, Closed, 0},
		{"percent switched off", Config{Progress: ProgressRules{TestFixPercent: -1}}, []WorkKind{T, T, T, T, T, T}, Closed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newTestBreaker(t, tt.cfg)
			for _, w := range tt.work {
				b.Record(Iteration{Work: w})
			}
			s := b.Stats()
			require.Equal(t, tt.state, s.State)
			if tt.state == Open {
				assert.Equal(t, ReasonTestFixLoop, s.Reason.Kind)
				assert.Equal(t, tt.count, s.Reason.Count)
			}
		})
	}
}

func TestTestFixLoopReasonAndProbe(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	for range 5 {
		b.Record(Iteration{Work: WorkTestFix})
	}
	assert.Equal(t, "Test-fix loop: 5 of the last 5 iterations only fixed tests (threshold: more than 80%)", b.TripReason())

	// The probe fixes tests again: open again.
	clock.Advance(DefaultConfig().Cooldown)
	require.True(t, b.Check().Probe)
	b.Record(Iteration{Work: WorkTestFix})
	require.True(t, b.IsTripped())

	// The next probe works on the implementation: four in five, closed.
	clock.Advance(DefaultConfig().Cooldown)
	require.True(t, b.Check().Probe)
	b.Record(Iteration{Work: WorkImplementation})
	assert.Equal(t, Closed, b.State())
}

func TestWorkKindStrings(t *testing.T) {
	assert.Equal(t, "unlabelled", WorkUnlabelled.String())
	assert.Equal(t, "implementation", WorkImplementation.String())
	assert.Equal(t, "test_fix", WorkTestFix.String())
	assert.Equal(t, "other", WorkOther.String())
	assert.Equal(t, "WorkKind(9)", WorkKind(9).String())
}

// Every kind added by the stagnation signals has a name of its own.
func TestStagnationReasonKindNames(t *testing.T) {
	assert.Equal(t, "same_error_in_a_row", ReasonSameErrorInARow.String())
	assert.Equal(t, "progress_score", ReasonProgressScore.String())
	assert.Equal(t, "circular_approach", ReasonCircularApproach.String())
	assert.Equal(t, "test_fix_loop", ReasonTestFixLoop.String())
}

// The window signals judge only an iteration that brings them a label.
// After a circular-approach or test-fix trip, a probe the host did not
// label is judged on its outcome: it succeeds and the circuit closes. The
// old window is no new evidence, so the next unlabelled iterations do not
// open it again either; the next labelled one is judged on the window.
func TestUnlabelledProbeIsJudgedOnItsOutcome(t *testing.T) {
	tests := []struct {
		name    string
		trip    func(*CircuitBreaker)
		kind    ReasonKind
		relapse Iteration
	}{
		{"circular approach", func(b *CircuitBreaker) {
			for _, a := range []string{"A", "B", "A", "B", "A", "B"} {
				b.Record(Iteration{Approach: a, Progress: stalled})
			}
		}, ReasonCircularApproach, Iteration{Approach: "A", Progress: stalled}},
		{"test-fix loop", func(b *CircuitBreaker) {
			for range 5 {
				b.Record(Iteration{Work: WorkTestFix})
			}
		}, ReasonTestFixLoop, Iteration{Work: WorkTestFix}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, clock := newTestBreaker(t, circling())
			tt.trip(b)
			require.Equal(t, tt.kind, b.Stats().Reason.Kind)

			clock.Advance(DefaultConfig().Cooldown)
			require.True(t, b.Check().Probe)
			b.Record(Iteration{Progress: oneTask})
			assert.Equal(t, Closed, b.State(), "the unlabelled probe succeeded")

			b.Record(Iteration{Progress: stalled})
			b.RecordSuccess()
			assert.Equal(t, Closed, b.State(), "unlabelled iterations bring no new evidence")

			b.Record(tt.relapse)
			assert.Equal(t, Open, b.State(), "the same pattern again")
			assert.Equal(t, tt.kind, b.Stats().Reason.Kind)
		})
	}
}
