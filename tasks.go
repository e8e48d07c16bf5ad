package loopbreaker

import (
	"slices"
	"strings"

	"github.com/loopbreaker/loopbreaker/internal/errtext"
)

// maxSkippedTasks is how many skipped tasks the breaker remembers
// ([CircuitBreaker.SkippedTasks]); the oldest is forgotten first.
const maxSkippedTasks = 100

// taskNameRunes bounds a task's name ([Iteration.Task]), as kept and
// compared.
const taskNameRunes = 200

// taskCounts are the task signals' counters that Stats reports, under the
// same names, and that a snapshot stores, under its JSON names.
type taskCounts struct {
	Task           string `json:"task,omitempty"`            // of the last iteration that named one
	TaskIterations int    `json:"task_iterations,omitempty"` // in a row on Task
	TaskFailures   int    `json:"task_failures,omitempty"`   // failed, in a row, on Task
}

// taskState is what the task signals remember between iterations.
type taskState struct {
	taskCounts
	named   bool     // the last recorded iteration named a task
	skipped []string // the tasks Skip skipped, oldest first
}

// taskName returns the name of an iteration's task as the breaker keeps
// it: white space around it trimmed, cut to 200 runes, valid UTF-8; ""
// for no task.
func taskName(task string) string { return errtext.Clip(task, taskNameRunes) }

// observeTask updates the task signals for a success or a failure on
// task ("" when the iteration named none: it is left out). Called with
// b.mu held.
func (b *CircuitBreaker) observeTask(task string, failed bool) {
	t := &b.tasks
	t.named = task != ""
	if !t.named {
		return
	}
	if task != t.Task {
		t.Task = strings.Clone(task) // the host's string may be part of a larger one
		t.TaskIterations, t.TaskFailures = 0, 0
	}
	t.TaskIterations++
	if failed {
		t.TaskFailures++
	} else {
		t.TaskFailures = 0 // exit.sh: the task passed
	}
}

// skip records the current task as skipped, as the newest, once.
func (t *taskState) skip() {
	if t.Task == "" {
		return
	}
	t.skipped = slices.DeleteFunc(t.skipped, func(s string) bool { return s == t.Task })
	if len(t.skipped) >= maxSkippedTasks {
		t.skipped = append(t.skipped[:0], t.skipped[len(t.skipped)-maxSkippedTasks+1:]...)
	}
	t.skipped = append(t.skipped, t.Task)
}

// SkippedTasks returns the tasks Skip skipped, oldest first, at most 100,
// until Reset; nil when none was. The slice is the caller's.
func (b *CircuitBreaker) SkippedTasks() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.tasks.skipped)
}
