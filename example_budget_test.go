package loopbreaker_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// A budget of 5 calls per rolling hour: a warning from the fourth call on
// (80%), then a refusal that says when the next call frees up. The circuit
// does not open.
func Example_callBudget() {
	now := time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)
	cb, _ := loopbreaker.New(loopbreaker.Config{
		Spend: loopbreaker.SpendRules{
			MaxCallsPerHour: 5,
		},
		Now: func() time.Time { return now },
	})
	for {
		d := cb.Check()
		if !d.Allow {
			fmt.Println(d.Reason, "- retry after", d.RetryAfter, "-", d.State)
			fmt.Println(errors.Is(d.Err(), loopbreaker.ErrCallBudget))
			break
		}
		for _, w := range d.Warnings {
			fmt.Println(w)
		}
		cb.Record(loopbreaker.Iteration{Calls: 1})
		now = now.Add(10 * time.Minute)
	}
	// Output:
	// Call budget 80% used: 4 of 5 calls in the last hour, 1 left
	// Call budget exhausted: 5 calls in the last hour (limit: 5) - retry after 10m0s - CLOSED
	// true
}

// Seed 002's end detection: the agent reports done twice in a row, and
// the loop stops as complete, not as failed.
func Example_completion() {
	cb, _ := loopbreaker.New(loopbreaker.DefaultConfig())
	outputs := []string{"implemented login", "EXIT_SIGNAL: true", "EXIT_SIGNAL: true", "never runs"}
	for _, out := range outputs {
		d := cb.Check()
		if !d.Allow {
			fmt.Println("stopped:", d.Reason)
			fmt.Println("complete:", d.Complete, "failed:", errors.Is(d.Err(), loopbreaker.ErrOpen))
			break
		}
		fmt.Println("iteration:", out)
		cb.Record(loopbreaker.Iteration{Done: out == "EXIT_SIGNAL: true"})
	}
	// Output:
	// iteration: implemented login
	// iteration: EXIT_SIGNAL: true
	// iteration: EXIT_SIGNAL: true
	// stopped: Complete: the agent reported done 2 times in a row (threshold: 2)
	// complete: true failed: false
}
