package loopbreaker

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// step is one iteration of a story about tasks: the task it names ("" for
// none) and whether it failed.
type step struct {
	task   string
	failed bool
}

// play records the steps, each failure with an error of its own line.
func play(b *CircuitBreaker, steps []step) {
	for i, s := range steps {
		it := Iteration{Task: s.task}
		if s.failed {
			it.Err = errA(i)
		}
		b.Record(it)
	}
}

func fail(task string) step    { return step{task, true} }
func succeed(task string) step { return step{task, false} }

// GSD's exit.sh: three failures in a row on one task stop the loop as
// stuck, with a reason naming the task; a change of task starts the
// count again; its five failures across tasks are the consecutive-failure
// rule. gsd sets that rule to exit.sh's 5, so that the stories hear the
// same-task rule alone until then.
func TestSameTaskStuckStopsTheLoop(t *testing.T) {
	gsd := Config{Failures: FailureRules{MaxConsecutive: 5, MaxSameError: -1}}
	tests := []struct {
		name  string
		cfg   Config
		steps []step
		kind  ReasonKind // after the last step; ReasonNone: still closed
		text  string
	}{
		{"three failures on one task", gsd,
			[]step{fail("05-01"), fail("05-01"), fail("05-01")},
			ReasonSameTask, `Stuck on task "05-01": 3 failed iterations in a row (threshold: 3)`},
		{"two failures are not yet stuck", gsd,
			[]step{fail("05-01"), fail("05-01")},
			ReasonNone, ""},
		{"a change of task starts the count again", gsd,
			[]step{fail("05-01"), fail("05-01"), fail("05-02"), fail("05-02")},
			ReasonNone, ""},
		{"stuck on the second task", gsd,
			[]step{fail("05-01"), fail("05-01"), fail("05-02"), fail("05-02"), fail("05-02")},
			ReasonSameTask, `Stuck on task "05-02": 3 failed iterations in a row (threshold: 3)`},
		{"a success on the task starts the count again", gsd,
			[]step{fail("05-01"), fail("05-01"), succeed("05-01"), fail("05-01"), fail("05-01")},
			ReasonNone, ""},
		{"iterations naming no task are left out", gsd,
			[]step{fail("05-01"), fail("05-01"), fail(""), fail("05-01")},
			ReasonSameTask, `Stuck on task "05-01": 3 failed iterations in a row (threshold: 3)`},
		{"five failures across tasks are exit.sh's circuit breaker", gsd,
			[]step{fail("a"), fail("b"), fail("a"), fail("b"), fail("a")},
			ReasonConsecutiveFailures, "5 consecutive failures (threshold: 5)"},
		{"a threshold of its own", Config{Failures: FailureRules{MaxConsecutive: 5, MaxSameTask: 2}},
			[]step{fail("05-01"), fail("05-01")},
			ReasonSameTask, `Stuck on task "05-01": 2 failed iterations in a row (threshold: 2)`},
		{"switched off", Config{Failures: FailureRules{MaxConsecutive: 5, MaxSameTask: -1}},
			[]step{fail("05-01"), fail("05-01"), fail("05-01"), fail("05-01")},
			ReasonNone, ""},
		{"with the default 3 consecutive failures, the reason names the task", Config{},
			[]step{fail("05-01"), fail("05-01"), fail("05-01")},
			ReasonSameTask, `Stuck on task "05-01": 3 failed iterations in a row (threshold: 3)`},
		{"names are compared trimmed", gsd,
			[]step{fail("05-01"), fail(" 05-01"), fail("05-01\n")},
			ReasonSameTask, `Stuck on task "05-01": 3 failed iterations in a row (threshold: 3)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newTestBreaker(t, tt.cfg)
			play(b, tt.steps)
			s := b.Stats()
			if tt.kind == ReasonNone {
				assert.Equal(t, Closed, s.State)
				return
			}
			assert.Equal(t, Open, s.State)
			assert.Equal(t, tt.kind, s.Reason.Kind)
			assert.Equal(t, tt.text, b.TripReason())
		})
	}
}

// The same-task reason carries the task and the last error, with its
// text, and says so in Detail.
func TestSameTaskReasonCarriesTheTaskAndTheError(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	play(b, []step{fail("add login"), fail("add login"), fail("add login")})
	r := b.Stats().Reason
	assert.Equal(t, "add login", r.Task)
	assert.Equal(t, 3, r.Count)
	assert.Equal(t, 3, r.Threshold)
	assert.Equal(t, Fingerprint(errA(2).Error()), r.Fingerprint)
	assert.Equal(t, errA(2).Error(), r.Sample)
	assert.Equal(t, `Stuck on task "add login": 3 failed iterations in a row (threshold: 3): "`+errA(2).Error()+`"`, r.Detail())
}

// After a same-task stop, the probe is judged on its task: a failure on
// the same task reopens the circuit for the same reason; another task's
// success closes it.
func TestSameTaskProbe(t *testing.T) {
	tests := []struct {
		name  string
		probe step
		state State
		kind  ReasonKind
	}{
		{"fails again on the stuck task", fail("05-01"), Open, ReasonSameTask},
		{"succeeds on another task", succeed("05-02"), Closed, ReasonNone},
		{"succeeds on the stuck task", succeed("05-01"), Closed, ReasonNone},
		{"succeeds naming no task", succeed(""), Closed, ReasonNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, clock := newTestBreaker(t, Config{Failures: FailureRules{MaxConsecutive: 5}})
			play(b, []step{fail("05-01"), fail("05-01"), fail("05-01")})
			require.Equal(t, ReasonSameTask, b.Stats().Reason.Kind)
			clock.Advance(DefaultConfig().Cooldown)
			require.True(t, b.Check().Probe)
			play(b, []step{tt.probe})
			s := b.Stats()
			assert.Equal(t, tt.state, s.State)
			assert.Equal(t, tt.kind, s.Reason.Kind)
		})
	}
}

// superkit: more than 20 iterations on a single task is an alert. It is a
// warning in the decision, with the figures, and the loop goes on.
func TestLongTaskWarns(t *testing.T) {
	tests := []struct {
		name       string
		cfg        Config
		iterations int
		warns      bool
		text       string
	}{
		{"20 iterations are not yet a warning", Config{}, 20, false, ""},
		{"the 21st is", Config{}, 21, true, `Task "add login" has taken 21 iterations in a row (warning above 20)`},
		{"and it stays", Config{}, 30, true, `Task "add login" has taken 30 iterations in a row (warning above 20)`},
		{"a limit of its own", Config{Progress: ProgressRules{MaxTaskIterations: 5}}, 6, true, `Task "add login" has taken 6 iterations in a row (warning above 5)`},
		{"switched off", Config{Progress: ProgressRules{MaxTaskIterations: -1}}, 100, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newTestBreaker(t, tt.cfg)
			for i := range tt.iterations {
				var err error
				if i%2 == 1 {
					err = fmt.Errorf("error %q", strings.Repeat("x", i)) // each its own: never stuck
				}
				b.Record(Iteration{Task: "add login", Err: err})
			}
			d := b.Check()
			assert.True(t, d.Allow, "a warning is not a stop")
			if !tt.warns {
				assert.Nil(t, d.Warnings)
				assert.Empty(t, warningsText(d))
				return
			}
			require.Len(t, d.Warnings, 1)
			w := d.Warnings[0]
			assert.Equal(t, ReasonLongTask, w.Kind)
			assert.Equal(t, tt.iterations, w.Count)
			assert.Equal(t, "add login", w.Task)
			assert.Equal(t, tt.text, w.String())
			assert.Equal(t, tt.text, warningsText(d))
			assert.Equal(t, d.Warnings, b.Stats().Warnings)
		})
	}
}

// Another task ends the warning: the count is of iterations in a row.
func TestLongTaskWarningEndsWithTheTask(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Progress: ProgressRules{MaxTaskIterations: 2}})
	for range 3 {
		b.Record(Iteration{Task: "a"})
	}
	require.Len(t, b.Check().Warnings, 1)
	b.Record(Iteration{Task: "b"})
	assert.Nil(t, b.Check().Warnings)
	s := b.Stats()
	assert.Equal(t, "b", s.Failures.Task)
	assert.Equal(t, 1, s.Failures.TaskIterations)
}

// Skip records the task the loop was stuck on, so that a runner moves on
// to another one instead of retrying it; Resume does not.
func TestSkipRecordsTheSkippedTask(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	play(b, []step{fail("05-01"), fail("05-01"), fail("05-01")})
	require.True(t, b.IsTripped())

	b.Skip()
	assert.Equal(t, []string{"05-01"}, b.SkippedTasks())
	s := b.Stats()
	assert.Equal(t, Closed, s.State)
	assert.Equal(t, []string{"05-01"}, s.Failures.SkippedTasks)
	assert.Equal(t, "", s.Failures.Task, "the runner names the next task")
	assert.Zero(t, s.Failures.TaskIterations)
	assert.Zero(t, s.Failures.TaskFailures)
	assert.Equal(t, CauseSkip, s.History[len(s.History)-1].Cause)

	play(b, []step{fail("05-02"), fail("05-02"), fail("05-02")})
	b.Resume()
	assert.Equal(t, []string{"05-01"}, b.SkippedTasks(), "Resume retries the task: nothing skipped")

	play(b, []step{fail("05-02")})
	b.Skip()
	b.Skip() // no task named since: nothing more
	assert.Equal(t, []string{"05-01", "05-02"}, b.SkippedTasks())
}

// A task skipped again moves to the end of the list, once; the list keeps
// the last maxSkippedTasks; Reset clears it; the caller owns its copy.
func TestSkippedTasksAreBounded(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	assert.Nil(t, b.SkippedTasks())
	b.Skip()
	assert.Nil(t, b.SkippedTasks(), "no task was named")

	for i := range maxSkippedTasks + 5 {
		b.Record(Iteration{Task: fmt.Sprintf("task %d", i)})
		b.Skip()
	}
	skipped := b.SkippedTasks()
	require.Len(t, skipped, maxSkippedTasks)
	assert.Equal(t, "task 5", skipped[0])
	assert.Equal(t, fmt.Sprintf("task %d", maxSkippedTasks+4), skipped[maxSkippedTasks-1])

	b.Record(Iteration{Task: "task 5"})
	b.Skip()
	skipped = b.SkippedTasks()
	require.Len(t, skipped, maxSkippedTasks)
	assert.Equal(t, "task 6", skipped[0])
	assert.Equal(t, "task 5", skipped[maxSkippedTasks-1])

	skipped[0] = "changed"
	assert.Equal(t, "task 6", b.SkippedTasks()[0])

	b.Reset()
	assert.Nil(t, b.SkippedTasks())
}

// A task's name is trimmed and cut to 200 runes; white space alone is no
// task.
func TestTaskNames(t *testing.T) {
	long := strings.Repeat("é", 300)
	tests := []struct{ name, task, kept string }{
		{"as given", "05-01", "05-01"},
		{"trimmed", "\t 05-01 \n", "05-01"},
		{"white space alone is no task", "   ", ""},
		{"cut to 200 runes", long, strings.Repeat("é", 200)},
		{"invalid UTF-8 replaced", "task \xff", "task \uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newTestBreaker(t, Config{})
			b.Record(Iteration{Task: tt.task})
			assert.Equal(t, tt.kept, b.Stats().Failures.Task)
		})
	}
}

// The task counts and the skipped tasks survive a restart.
func TestTasksSurviveARestart(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Progress: ProgressRules{MaxTaskIterations: 2}})
	play(b, []step{fail("05-01"), fail("05-01"), fail("05-01")})
	b.Skip()
	play(b, []step{succeed("05-02"), fail("05-02"), succeed("05-02")})
	play(b, []step{fail("05-02")})

	nb, _ := restart(t, b, Config{Progress: ProgressRules{MaxTaskIterations: 2}}, clock.Now().Add(time.Minute))
	s := nb.Stats()
	assert.Equal(t, "05-02", s.Failures.Task)
	assert.Equal(t, 4, s.Failures.TaskIterations)
	assert.Equal(t, 1, s.Failures.TaskFailures)
	assert.Equal(t, []string{"05-01"}, s.Failures.SkippedTasks)
	require.Len(t, s.Warnings, 1, "the long-task warning is judged again")
	assert.Equal(t, ReasonLongTask, s.Warnings[0].Kind)

	play(nb, []step{fail("05-02"), fail("05-02")})
	assert.Equal(t, `Stuck on task "05-02": 3 failed iterations in a row (threshold: 3)`, nb.TripReason())
}
