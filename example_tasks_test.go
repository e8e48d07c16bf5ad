package loopbreaker_test

import (
	"errors"
	"fmt"
	"slices"

	"github.com/loopbreaker/loopbreaker"
)

// A runner that works through a task list, naming each iteration's task.
// Three failures in a row on one task stop the loop with a reason that
// names it, as GSD's exit.sh does; a person skips the task, and the runner
// moves on to the first task that was not skipped.
func ExampleCircuitBreaker_SkippedTasks() {
	cfg := loopbreaker.DefaultConfig()
	cfg.Failures.MaxConsecutive = 5 // exit.sh's 5 failures across tasks
	cb, _ := loopbreaker.New(cfg)
	tasks := []string{"05-01 add login", "05-02 add logout"}
	next := func() string {
		for _, task := range tasks {
			if !slices.Contains(cb.SkippedTasks(), task) {
				return task
			}
		}
		return ""
	}

	for cb.Check().Allow {
		cb.Record(loopbreaker.Iteration{
			Task: next(),
			Err:  errors.New("--- FAIL: TestLogin: session cookie not set"),
		})
	}
	fmt.Println(cb.TripReason())

	cb.Skip() // the person's choice, e.g. from a pause menu
	fmt.Println("skipped:", cb.SkippedTasks())
	fmt.Println("next:", next())
	// Output:
	// Stuck on task "05-01 add login": 3 failed iterations in a row (threshold: 3)
	// skipped: [05-01 add login]
	// next: 05-02 add logout
}

// Stats keeps, for each error fingerprint, the text of its first and of
// its latest failure, and the same-error reason carries the latest: the
// hash says which error, the sample says what it was.
func ExampleErrorSample() {
	cb, _ := loopbreaker.New(loopbreaker.DefaultConfig())
	for line := 40; line < 45; line++ {
		cb.Record(loopbreaker.Iteration{Err: fmt.Errorf("TypeError: Cannot read properties of undefined (reading 'id') at user.ts:%d", line)})
		cb.RecordSuccess()
	}
	s := cb.Stats()
	sample := s.Failures.Samples[s.Failures.LastFingerprint]
	fmt.Println("first: ", sample.First)
	fmt.Println("latest:", sample.Latest)
	fmt.Println(s.Reason)
	fmt.Println(s.Reason.Detail())
	// Output:
	// first:  TypeError: Cannot read properties of undefined (reading 'id') at user.ts:40
	// latest: TypeError: Cannot read properties of undefined (reading 'id') at user.ts:44
	// Same error repeated 5 times (threshold: 5)
	// Same error repeated 5 times (threshold: 5): "TypeError: Cannot read properties of undefined (reading 'id') at user.ts:44"
}
