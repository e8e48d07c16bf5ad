package loopbreaker

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Progress shorthands for the stories below.
var (
	stalled  = &Progress{OutputLength: 1000}
	oneFile  = &Progress{FilesChanged: 1, OutputLength: 1000}
	oneTask  = &Progress{TasksCompleted: 1, OutputLength: 1000}
	denied   = &Progress{PermissionDenials: 2, OutputLength: 1000}
	progress = func(p Progress) *Progress { return &p }
)

// Seed 001: three iterations that change nothing. After the second the
// circuit is half-open, one more chance; the third opens it.
func TestNoProgressGivesOneMoreChanceThenOpens(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})

	b.Record(Iteration{Progress: stalled})
	assert.Equal(t, Closed, b.State())
	assert.Equal(t, 1, b.Stats().Progress.ConsecutiveNoProgress)

	b.Record(Iteration{Progress: stalled})
	assert.Equal(t, HalfOpen, b.State())
	assert.False(t, b.IsTripped())
	assert.Equal(t, "No progress in 2 consecutive iterations (threshold: 3)", b.TripReason())

	probe := b.Check()
	require.True(t, probe.Allow, "one more chance")
	assert.True(t, probe.Probe)
	assert.False(t, b.Check().Allow, "and only one")

	b.Record(Iteration{Progress: stalled})
	assert.True(t, b.IsTripped())
	assert.Equal(t, "No progress in 3 consecutive iterations (threshold: 3)", b.TripReason())
	assert.Equal(t, ReasonNoProgress, b.Stats().Reason.Kind)
}

// Progress during the one more chance closes the circuit and resets the
// count.
func TestProgressInHalfOpenCloses(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	b.Record(Iteration{Progress: stalled})
	b.Record(Iteration{Progress: stalled})
	require.Equal(t, HalfOpen, b.State())

	clock.Advance(time.Minute)
	require.True(t, b.Check().Allow)
	b.Record(Iteration{Progress: oneFile})

	s := b.Stats()
	assert.Equal(t, Closed, s.State)
	assert.Equal(t, 0, s.Progress.ConsecutiveNoProgress)
	assert.Equal(t, clock.Now(), s.Progress.LastProgress)
	assert.Equal(t, "", b.TripReason())
	// The count starts again from zero.
	b.Record(Iteration{Progress: stalled})
	assert.Equal(t, Closed, b.State())
}

func TestWhatCountsAsProgress(t *testing.T) {
	tests := []struct {
		name string
		prev *Progress // a measured iteration before, or nil
		p    Progress
		made bool
	}{
		{"nothing", nil, Progress{OutputLength: 500}, false},
		{"a file changed", nil, Progress{FilesChanged: 1}, true},
		{"a task completed", nil, Progress{TasksCompleted: 1}, true},
		{"more tests pass than before", &Progress{TestsPassing: 10}, Progress{TestsPassing: 11}, true},
		{"as many tests pass as before", &Progress{TestsPassing: 10}, Progress{TestsPassing: 10}, false},
		{"fewer tests pass than before", &Progress{TestsPassing: 10}, Progress{TestsPassing: 9}, false},
		{"the first measured tests only set the baseline", nil, Progress{TestsPassing: 10}, false},
		{"output alone is not progress", &Progress{OutputLength: 10}, Progress{OutputLength: 5000}, false},
		{"permission denials are not progress", nil, Progress{PermissionDenials: 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newTestBreaker(t, Config{Progress: ProgressRules{MaxNoProgress: 10}})
			if tt.prev != nil {
				b.Record(Iteration{Progress: tt.prev})
			}
			before := b.Stats().Progress.ConsecutiveNoProgress
			b.Record(Iteration{Progress: &tt.p})
			after := b.Stats().Progress.ConsecutiveNoProgress
			if tt.made {
				assert.Equal(t, 0, after)
			} else {
				assert.Equal(t, before+1, after)
			}
		})
	}
}

func TestProgressSignalBoundaries(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		iters  []*Progress
		state  State
		reason string
	}{
		{"no progress: below threshold-1", Config{Progress: ProgressRules{MaxNoProgress: 4}}, []*Progress{stalled, stalled}, Closed, ""},
		{"no progress: threshold-1 is half-open", Config{Progress: ProgressRules{MaxNoProgress: 4}}, []*Progress{stalled, stalled, stalled}, HalfOpen, "No progress in 3 consecutive iterations (threshold: 4)"},
		{"no progress: threshold opens", Config{Progress: ProgressRules{MaxNoProgress: 4}}, []*Progress{stalled, stalled, stalled, stalled}, Open, "No progress in 4 consecutive iterations (threshold: 4)"},
		{"no progress: threshold 1 opens at once", Config{Progress: ProgressRules{MaxNoProgress: 1}}, []*Progress{stalled}, Open, "No progress in 1 consecutive iterations (threshold: 1)"},
		{"no progress: switched off", Config{Progress: ProgressRules{MaxNoProgress: -1}}, []*Progress{stalled, stalled, stalled, stalled, stalled}, Closed, ""},
		{"no progress: progress resets the count", Config{}, []*Progress{stalled, oneTask, stalled, oneFile, stalled}, Closed, ""},
		{"denials: one below threshold", Config{Progress: ProgressRules{MaxNoProgress: -1}}, []*Progress{denied, denied}, Closed, ""},
		{"denials: at threshold", Config{Progress: ProgressRules{MaxNoProgress: -1}}, []*Progress{denied, denied, denied}, Open, "Permission denied in 3 consecutive iterations (threshold: 3)"},
		{"denials: interrupted", Config{Progress: ProgressRules{MaxNoProgress: -1}}, []*Progress{denied, denied, stalled, denied, denied}, Closed, ""},
		{"denials: with progress still count", Config{}, []*Progress{progress(Progress{FilesChanged: 1, PermissionDenials: 1}), progress(Progress{FilesChanged: 1, PermissionDenials: 1}), progress(Progress{FilesChanged: 1, PermissionDenials: 1})}, Open, "Permission denied in 3 consecutive iterations (threshold: 3)"},
		{"denials: custom threshold", Config{Progress: ProgressRules{MaxPermissionDenials: 1}}, []*Progress{denied}, Open, "Permission denied in 1 consecutive iterations (threshold: 1)"},
		{"denials: switched off", Config{Progress: ProgressRules{MaxNoProgress: -1, MaxPermissionDenials: -1}}, []*Progress{denied, denied, denied, denied}, Closed, ""},
		{"unmeasured iterations keep the signals idle", Config{}, []*Progress{stalled, nil, nil, nil, nil}, Closed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newTestBreaker(t, tt.cfg)
			for _, p := range tt.iters {
				b.Record(Iteration{Progress: p})
			}
			assert.Equal(t, tt.state, b.State())
			assert.Equal(t, tt.reason, b.TripReason())
		})
	}
}

// Both ralph projects document an output-decline signal; here it is real.
// The baseline is the mean of up to three previous outputs.
func TestOutputDecline(t *testing.T) {
	out := func(n int) *Progress { return &Progress{OutputLength: n} }
	tests := []struct {
		name    string
		cfg     Config
		outputs []*Progress
		state   State
		reason  string
	}{
		{"more than 70% below the mean of three", Config{}, []*Progress{out(900), out(1200), out(1500), out(359)}, Open,
			"Output declined 70.1% below baseline (current: 359, baseline: 1200, threshold: 70%)"},
		{"exactly 70% below is not more than 70%", Config{}, []*Progress{out(900), out(1200), out(1500), out(360)}, Closed, ""},
		{"only the last three make the baseline", Config{}, []*Progress{out(1000), out(400), out(400), out(400), out(130)}, Closed, ""},
		{"a fractional baseline", Config{}, []*Progress{out(1000), out(1001), out(1001), out(300)}, Open,
			"Output declined 70.0% below baseline (current: 300, baseline: 1001, threshold: 70%)"},
		{"one previous output is a baseline", Config{}, []*Progress{out(1000), out(100)}, Open,
			"Output declined 90.0% below baseline (current: 100, baseline: 1000, threshold: 70%)"},
		{"down to nothing", Config{}, []*Progress{out(800), out(0)}, Open,
			"Output declined 100.0% below baseline (current: 0, baseline: 800, threshold: 70%)"},
		{"no previous output, no baseline", Config{}, []*Progress{out(0)}, Closed, ""},
		{"a zero baseline cannot decline", Config{}, []*Progress{out(0), out(0), out(0)}, Closed, ""},
		{"progress excuses a short output", Config{}, []*Progress{out(1000), {FilesChanged: 3, OutputLength: 10}}, Closed, ""},
		{"custom percent", Config{Progress: ProgressRules{OutputDeclinePercent: 20}}, []*Progress{out(1000), out(790)}, Open,
			"Output declined 21.0% below baseline (current: 790, baseline: 1000, threshold: 20%)"},
		{"switched off", Config{Progress: ProgressRules{OutputDeclinePercent: -1}}, []*Progress{out(1000), out(0), out(0)}, Closed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Progress.MaxNoProgress = -1 // outputs alone never make progress
			b, _ := newTestBreaker(t, tt.cfg)
			for _, p := range tt.outputs {
				b.Record(Iteration{Progress: p})
			}
			assert.Equal(t, tt.state, b.State())
			assert.Equal(t, tt.reason, b.TripReason())
			if tt.state == Open {
				r := b.Stats().Reason
				assert.Equal(t, ReasonOutputDecline, r.Kind)
				assert.Positive(t, r.Baseline)
				assert.GreaterOrEqual(t, r.Count, r.Threshold)
			}
		})
	}
}

// A failed iteration that made progress is a failure for the failure rules
// and progress for the progress signals.
func TestFailureAndProgressAreIndependent(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	for i := 0; i < 3; i++ {
		b.Record(Iteration{Err: errA(i), Progress: oneFile})
	}
	s := b.Stats()
	assert.Equal(t, Open, s.State)
	assert.Equal(t, "3 consecutive failures (threshold: 3)", b.TripReason())
	assert.Equal(t, 0, s.Progress.ConsecutiveNoProgress)

	// And successes that change nothing still stall.
	b2, _ := newTestBreaker(t, Config{})
	for i := 0; i < 3; i++ {
		b2.Record(Iteration{Progress: stalled})
	}
	assert.Equal(t, "No progress in 3 consecutive iterations (threshold: 3)", b2.TripReason())
	assert.Equal(t, 0, b2.Stats().Failures.Total)
}

// The one more chance is a half-open probe: if it fails, the circuit opens
// even though it made progress.
func TestFailedChanceOpensWithProbeReason(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	b.Record(Iteration{Progress: stalled})
	b.Record(Iteration{Progress: stalled})
	require.True(t, b.Check().Probe)
	b.Record(Iteration{Err: errors.New("build failed"), Progress: oneFile})

	assert.True(t, b.IsTripped())
	assert.Equal(t, "Half-open probe failed (error "+Fingerprint("build failed")+")", b.TripReason())
	clock.Advance(DefaultConfig().Cooldown)
	assert.True(t, b.Check().Allow, "the cooldown applies")
}

// A probe after a cooldown that succeeds but changes nothing, at
// threshold-1, gets one more chance rather than closing.
func TestStalledProbeStaysHalfOpen(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Progress: ProgressRules{MaxNoProgress: 2}})
	b.Record(Iteration{Err: errA(1)})
	b.Record(Iteration{Err: errA(2)})
	b.Record(Iteration{Err: errA(3)})
	require.Equal(t, Open, b.State())
	clock.Advance(DefaultConfig().Cooldown)

	require.True(t, b.Check().Allow)
	b.Record(Iteration{Progress: stalled})
	assert.Equal(t, HalfOpen, b.State())
	assert.Equal(t, "No progress in 1 consecutive iterations (threshold: 2)", b.TripReason())
	assert.True(t, b.Check().Allow, "a new probe")
	b.Record(Iteration{Progress: oneTask})
	assert.Equal(t, Closed, b.State())
}

func TestStatsShowProgressEvidence(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Progress: ProgressRules{MaxNoProgress: -1, OutputDeclinePercent: -1}})
	assert.Nil(t, b.Stats().Progress.OutputTrend)
	assert.True(t, b.Stats().Progress.LastProgress.IsZero())

	for i := 1; i <= 12; i++ {
		clock.Advance(time.Minute)
		p := &Progress{OutputLength: i * 100}
		if i == 5 {
			p.FilesChanged = 2
		}
		if i >= 11 {
			p.PermissionDenials = 1
		}
		b.Record(Iteration{Progress: p})
	}
	b.Record(Iteration{}) // unmeasured: changes nothing below

	s := b.Stats()
	assert.Equal(t, []int{300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1200}, s.Progress.OutputTrend)
	assert.Equal(t, 7, s.Progress.ConsecutiveNoProgress)
	assert.Equal(t, 2, s.Progress.ConsecutivePermissionDenials)
	assert.Equal(t, testStart.Add(5*time.Minute), s.Progress.LastProgress)

	s.Progress.OutputTrend[0] = -1
	assert.Equal(t, 300, b.Stats().Progress.OutputTrend[0], "a copy")
}
