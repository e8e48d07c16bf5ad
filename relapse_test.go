package loopbreaker

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// relapsing watches the 3 iterations after a recovery, as superkit does,
// with superkit's doubling cooldown, so that a relapse shows in the wait.
func relapsing(cfg Config) Config {
	cfg.RelapseWindow = 3
	cfg.CooldownPolicy = DoublingCooldown(0)
	return cfg
}

// recovered opens the circuit with trip, waits out the cooldown, and
// records probe, which must close it.
func recovered(t *testing.T, cfg Config, trip []Iteration, probe Iteration) (*CircuitBreaker, *loopbreakertest.Clock) {
	t.Helper()
	b, clock := newTestBreaker(t, cfg)
	for _, it := range trip {
		b.Record(it)
	}
	require.Equal(t, Open, b.State(), "tripped")
	clock.Advance(b.Stats().RetryAfter)
	require.True(t, b.Check().Probe)
	b.Record(probe)
	require.Equal(t, Closed, b.State(), "recovered")
	return b, clock
}

func times(n int, it Iteration) []Iteration {
	its := make([]Iteration, n)
	for i := range its {
		its[i] = it
	}
	return its
}

var (
	noProgress = &Progress{OutputLength: 100}
	progressed = &Progress{FilesChanged: 1, OutputLength: 100}
	denials    = &Progress{FilesChanged: 1, PermissionDenials: 1, OutputLength: 100}
)

// superkit: after a recovery, watch the next 3 iterations; if the
// stagnation recurs, the circuit opens again at once, with the cooldown
// doubled as after a failed probe, and the reason says "relapse". Each
// signal has its own test of what showing again means.
func TestRelapseReopensAtOnce(t *testing.T) {
	sameErrorTrip := []Iteration{}
	for i := range 5 {
		sameErrorTrip = append(sameErrorTrip, Iteration{Err: errA(i)}, Iteration{})
	}
	tests := []struct {
		name  string
		cfg   Config
		trip  []Iteration
		probe Iteration
		after []Iteration // the last one relapses, the others do not
		kind  ReasonKind  // the signal that relapsed
		text  string
	}{
		{"one failure after consecutive failures", Config{},
			times(3, Iteration{Err: errB(1)}), Iteration{},
			[]Iteration{{Err: errA(1)}},
			ReasonConsecutiveFailures,
			"Relapse: consecutive_failures again (error " + Fingerprint(errA(0).Error()) + ") 1 iteration after recovery (watching 3)"},
		{"the same error again, not another", Config{},
			sameErrorTrip[:9], Iteration{},
			[]Iteration{{Err: errB(1)}, {}, {Err: errA(9)}},
			ReasonSameError,
			"Relapse: same_error again (error " + Fingerprint(errA(0).Error()) + ") 3 iterations after recovery (watching 3)"},
		{"the same error in a row", Config{Failures: FailureRules{MaxSameErrorInARow: 3, MaxConsecutive: 5}},
			times(3, Iteration{Err: errA(1)}), Iteration{},
			[]Iteration{{Err: errB(1)}, {Err: errA(2)}},
			ReasonSameErrorInARow,
			"Relapse: same_error_in_a_row again (error " + Fingerprint(errA(0).Error()) + ") 2 iterations after recovery (watching 3)"},
		{"one iteration without progress", Config{},
			times(3, Iteration{Progress: noProgress}), Iteration{Progress: progressed},
			[]Iteration{{}, {Progress: noProgress}},
			ReasonNoProgress,
			"Relapse: no_progress again 2 iterations after recovery (watching 3)"},
		{"permission deniedAgain again", Config{},
			times(3, Iteration{Progress: denials}), Iteration{Progress: progressed},
			[]Iteration{{Progress: denials}},
			ReasonPermissionDenials,
			"Relapse: permission_denials again 1 iteration after recovery (watching 3)"},
		{"a failure on the stuck task, not on another", Config{Failures: FailureRules{MaxConsecutive: 5}},
			times(3, Iteration{Task: "05-01", Err: errA(1)}), Iteration{Task: "05-01"},
			[]Iteration{{Task: "05-02", Err: errB(1)}, {Task: "05-01", Err: errA(2)}},
			ReasonSameTask,
			`Relapse: same_task again on task "05-01" (error ` + Fingerprint(errA(0).Error()) + ") 2 iterations after recovery (watching 3)"},
		{"a negative score again", Config{Progress: ProgressRules{ScoreWindow: 3, MaxNoProgress: -1}},
			times(3, Iteration{Progress: noProgress}),
			Iteration{Progress: &Progress{FilesChanged: 1, TasksCompleted: 1, OutputLength: 100}},
			[]Iteration{{Progress: &Progress{FilesChanged: 1, OutputLength: 100}}, {Progress: noProgress}},
			ReasonProgressScore,
			"Relapse: progress_score again 2 iterations after recovery (watching 3)"},
		{"a test fix again", Config{},
			times(5, Iteration{Work: WorkTestFix}), Iteration{Work: WorkImplementation},
			[]Iteration{{Work: WorkOther}, {Work: WorkTestFix}},
			ReasonTestFixLoop,
			"Relapse: test_fix_loop again 2 iterations after recovery (watching 3)"},
		{"one of the circle's approaches again", Config{Failures: FailureRules{MaxConsecutive: 10, MaxSameError: 10}},
			[]Iteration{
				{Approach: "mock", Err: errA(1)}, {Approach: "retry", Err: errA(2)}, {Approach: "mock", Err: errA(3)},
				{Approach: "retry", Err: errA(4)}, {Approach: "mock", Err: errA(5)}, {Approach: "retry", Err: errA(6)},
			}, Iteration{Approach: "rewrite"},
			[]Iteration{{Approach: "rewrite"}, {Approach: "retry", Err: errA(7)}},
			ReasonCircularApproach,
			"Relapse: circular_approach again (error " + Fingerprint("mock") + "/" + Fingerprint("retry") + ") 2 iterations after recovery (watching 3)"},
		{"the output declining again", Config{},
			[]Iteration{{Progress: &Progress{FilesChanged: 1, OutputLength: 1000}}, {Progress: &Progress{OutputLength: 100}}},
			Iteration{Progress: &Progress{FilesChanged: 1, OutputLength: 1000}},
			[]Iteration{{Progress: &Progress{FilesChanged: 1, OutputLength: 900}}, {Progress: &Progress{OutputLength: 10}}},
			ReasonOutputDecline,
			"Relapse: output_decline again 2 iterations after recovery (watching 3)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := recovered(t, relapsing(tt.cfg), tt.trip, tt.probe)
			s := b.Stats()
			require.Equal(t, 1, s.Opens)
			require.Equal(t, 3, s.RelapseWatch)
			for i, it := range tt.after {
				b.Record(it)
				if i < len(tt.after)-1 {
					require.Equal(t, Closed, b.State(), "iteration %d after recovery", i+1)
				}
			}
			s = b.Stats()
			require.Equal(t, Open, s.State)
			assert.Equal(t, ReasonRelapse, s.Reason.Kind)
			assert.Equal(t, tt.kind, s.Reason.Relapsed)
			assert.Equal(t, tt.text, b.TripReason())
			assert.Equal(t, 2, s.ConsecutiveOpens, "the open streak goes on")
			assert.Equal(t, 2*DefaultConfig().Cooldown, s.Cooldown, "doubled, as after a failed probe")
			assert.Zero(t, s.RelapseWatch)
			last := s.History[len(s.History)-1]
			assert.Equal(t, CauseSignal, last.Cause)
			assert.Equal(t, ReasonRelapse, last.Reason.Kind)
		})
	}
}

// What is not a relapse: the signal showing after the window, another
// signal, the watch switched off, or a half-open "one more chance" that
// progress closed without the circuit ever opening.
func TestWhatIsNotARelapse(t *testing.T) {
	threeFailures := times(3, Iteration{Err: errB(1)})
	tests := []struct {
		name   string
		cfg    Config
		trip   []Iteration
		probe  Iteration
		after  []Iteration
		state  State
		kind   ReasonKind
		cool   time.Duration
		opened int // ConsecutiveOpens after
	}{
		{"a failure after the three watched iterations", relapsing(Config{}), threeFailures, Iteration{},
			[]Iteration{{}, {}, {}, {Err: errA(1)}}, Closed, ReasonNone, 0, 0},
		{"the watch switched off", Config{CooldownPolicy: DoublingCooldown(0)}, threeFailures, Iteration{},
			[]Iteration{{Err: errA(1)}}, Closed, ReasonNone, 0, 0},
		{"the watch switched off by a negative window", Config{RelapseWindow: -1, CooldownPolicy: DoublingCooldown(0)}, threeFailures, Iteration{},
			[]Iteration{{Err: errA(1)}}, Closed, ReasonNone, 0, 0},
		{"another signal trips: a fresh streak", relapsing(Config{}), times(3, Iteration{Progress: noProgress}), Iteration{Progress: progressed},
			[]Iteration{{Err: errA(1)}, {Err: errA(2)}, {Err: errA(3)}}, Open, ReasonConsecutiveFailures, DefaultConfig().Cooldown, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := recovered(t, tt.cfg, tt.trip, tt.probe)
			for _, it := range tt.after {
				b.Record(it)
			}
			s := b.Stats()
			assert.Equal(t, tt.state, s.State)
			assert.Equal(t, tt.kind, s.Reason.Kind)
			assert.Equal(t, tt.cool, s.Cooldown)
			assert.Equal(t, tt.opened, s.ConsecutiveOpens)
		})
	}

	t.Run("a one-more-chance closed by progress", func(t *testing.T) {
		b, _ := newTestBreaker(t, relapsing(Config{}))
		b.Record(Iteration{Progress: noProgress})
		b.Record(Iteration{Progress: noProgress})
		require.Equal(t, HalfOpen, b.State())
		b.Record(Iteration{Progress: progressed})
		require.Equal(t, Closed, b.State())
		assert.Zero(t, b.Stats().RelapseWatch)
		b.Record(Iteration{Progress: noProgress})
		assert.Equal(t, Closed, b.State())
	})
}

// A relapse after a relapse goes on doubling: the streak is the loop's,
// until it stays well for the whole watch.
func TestRelapsesKeepDoublingTheCooldown(t *testing.T) {
	b, clock := recovered(t, relapsing(Config{}), times(3, Iteration{Err: errB(1)}), Iteration{})
	waits := []time.Duration{}
	for range 3 {
		b.Record(Iteration{Err: errA(1)})
		s := b.Stats()
		require.Equal(t, ReasonRelapse, s.Reason.Kind)
		assert.Equal(t, ReasonConsecutiveFailures, s.Reason.Relapsed)
		waits = append(waits, s.Cooldown)
		clock.Advance(s.Cooldown)
		require.True(t, b.Check().Probe)
		b.Record(Iteration{})
		require.Equal(t, Closed, b.State())
	}
	assert.Equal(t, []time.Duration{60 * time.Second, 120 * time.Second, 240 * time.Second}, waits)

	for range 3 {
		b.Record(Iteration{})
	}
	b.Record(Iteration{Err: errors.New("KeyError: 'x'")})
	b.Record(Iteration{Err: errors.New("KeyError: 'y'")})
	b.Record(Iteration{Err: errors.New("KeyError: 'z'")})
	s := b.Stats()
	assert.Equal(t, ReasonConsecutiveFailures, s.Reason.Kind, "well for the whole watch: a fresh start")
	assert.Equal(t, DefaultConfig().Cooldown, s.Cooldown)
}

// The relapse reason carries the error text of the failure that relapsed.
func TestRelapseReasonQuotesTheError(t *testing.T) {
	b, _ := recovered(t, relapsing(Config{}), times(3, Iteration{Err: errB(1)}), Iteration{})
	b.Record(Iteration{Err: errA(7)})
	r := b.Stats().Reason
	assert.Equal(t, errA(7).Error(), r.Sample)
	assert.Equal(t, "relapse", r.Kind.String())
	assert.True(t, strings.HasPrefix(b.TripReason(), "Relapse: "))
	assert.Contains(t, r.Detail(), `(watching 3): "`+errA(7).Error()+`"`)
}

// The watch survives a restart, and so does the streak it keeps; a
// breaker restarted with the watch off forgets it.
func TestRelapseWatchSurvivesARestart(t *testing.T) {
	b, clock := recovered(t, relapsing(Config{}), times(3, Iteration{Err: errB(1)}), Iteration{})
	b.Record(Iteration{})

	nb, _ := restart(t, b, relapsing(Config{}), clock.Now().Add(time.Minute))
	assert.Equal(t, 2, nb.Stats().RelapseWatch)
	nb.Record(Iteration{Err: errA(1)})
	s := nb.Stats()
	assert.Equal(t, ReasonRelapse, s.Reason.Kind)
	assert.Equal(t, 2*DefaultConfig().Cooldown, s.Cooldown)

	off, _ := restart(t, b, Config{CooldownPolicy: DoublingCooldown(0)}, clock.Now().Add(time.Minute))
	assert.Zero(t, off.Stats().RelapseWatch)
	off.Record(Iteration{Err: errA(1)})
	assert.Equal(t, Closed, off.State())

	shorter, _ := restart(t, b, Config{RelapseWindow: 1}, clock.Now().Add(time.Minute))
	assert.Zero(t, shorter.Stats().RelapseWatch, "one iteration seen: a window of one is over")
}

// Resume and Skip end the watch: a person has looked at the loop.
func TestManualControlsEndTheRelapseWatch(t *testing.T) {
	for name, control := range map[string]func(b *CircuitBreaker){
		"resume": (*CircuitBreaker).Resume,
		"skip":   (*CircuitBreaker).Skip,
	} {
		t.Run(name, func(t *testing.T) {
			b, _ := recovered(t, relapsing(Config{}), times(3, Iteration{Err: errB(1)}), Iteration{})
			control(b)
			assert.Zero(t, b.Stats().RelapseWatch)
			b.Record(Iteration{Err: errA(1)})
			assert.Equal(t, Closed, b.State())
		})
	}
}
