package loopbreaker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// Wait instead of Check: a loop that sleeps out the cooldown and carries
// on with the probe, and stops only when waiting cannot help. The clock
// here is a fake that Sleep advances, so the example takes no time; a
// real host leaves Now and Sleep nil.
func ExampleCircuitBreaker_Wait() {
	now := time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)
	cb, _ := loopbreaker.New(loopbreaker.Config{
		Failures: loopbreaker.FailureRules{
			MaxConsecutive: 2,
		},
		Now: func() time.Time { return now },
		Sleep: func(ctx context.Context, d time.Duration) error {
			now = now.Add(d)
			return ctx.Err()
		},
	})
	script := []error{
		errors.New("dial tcp 10.0.0.7:5432: connection refused"),
		errors.New("dial tcp 10.0.0.7:5432: connection refused"),
		nil, // the database is back: the probe succeeds
		nil,
	}
	start := now
	for i, step := range script {
		d, err := cb.Wait(context.Background())
		if err != nil {
			fmt.Println("stopping:", err)
			return
		}
		cb.Record(loopbreaker.Iteration{Err: step})
		fmt.Printf("iteration %d at +%s (probe: %t): %s\n", i+1, now.Sub(start), d.Probe, cb.State())
	}
	cb.Abort() // a person stops the loop: no waiting ends that
	_, err := cb.Wait(context.Background())
	fmt.Println("stopping:", err)
	// Output:
	// iteration 1 at +0s (probe: false): CLOSED
	// iteration 2 at +0s (probe: false): OPEN
	// iteration 3 at +30s (probe: true): CLOSED
	// iteration 4 at +30s (probe: false): CLOSED
	// stopping: loopbreaker: circuit open: Aborted
}
