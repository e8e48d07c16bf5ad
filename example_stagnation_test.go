package loopbreaker_test

import (
	"context"
	"fmt"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// An agent that circles between two fixes: it changes files every time,
// but the failing test never passes. The host labels each iteration's
// approach, and the sixth iteration closes the circle.
func Example_circularApproach() {
	cfg := loopbreaker.DefaultConfig()
	cfg.Failures.MaxConsecutive = 10 // let the circle speak first
	cfg.Failures.MaxSameError = 10
	cb, _ := loopbreaker.New(cfg)
	approaches := []string{"mock the clock", "add a retry", "mock the clock", "add a retry", "mock the clock", "add a retry"}
	for i, a := range approaches {
		cb.Record(loopbreaker.Iteration{
			Approach: a,
			Err:      fmt.Errorf("--- FAIL: TestLogin (attempt %d)", i+1),
			Progress: &loopbreaker.Progress{FilesChanged: 1, TestsPassing: 41},
		})
		fmt.Printf("iteration %d (%s): %s\n", i+1, a, cb.State())
	}
	fmt.Println(cb.Stats().Reason.Kind)
	// Output:
	// iteration 1 (mock the clock): CLOSED
	// iteration 2 (add a retry): CLOSED
	// iteration 3 (mock the clock): CLOSED
	// iteration 4 (add a retry): CLOSED
	// iteration 5 (mock the clock): CLOSED
	// iteration 6 (add a retry): OPEN
	// circular_approach
}

// Seed 003's progress score: a completed task carries the loop through two
// quiet iterations, a third opens the circuit.
func Example_progressScore() {
	cb, _ := loopbreaker.New(loopbreaker.Config{Progress: loopbreaker.ProgressRules{ScoreWindow: 3, MaxNoProgress: -1}})
	iterations := []loopbreaker.Progress{
		{TasksCompleted: 1, FilesChanged: 2, OutputLength: 900}, // +5 +1
		{OutputLength: 800}, // -3
		{OutputLength: 850}, // -3
		{OutputLength: 820}, // -3
	}
	for i, p := range iterations {
		cb.Record(loopbreaker.Iteration{Progress: &p})
		s := cb.Stats()
		fmt.Printf("iteration %d: score %+d, %s\n", i+1, s.Progress.LastScore, s.State)
	}
	fmt.Println(cb.TripReason())
	// Output:
	// iteration 1: score +6, CLOSED
	// iteration 2: score -3, CLOSED
	// iteration 3: score -3, CLOSED
	// iteration 4: score -3, OPEN
	// Progress score -9 over the last 3 iterations (threshold: below 0)
}

// Seed 003's growing cooldown: each failed probe doubles the wait, up to a
// ceiling; a successful probe starts again from the base.
func ExampleDoublingCooldown() {
	now := time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)
	cb, _ := loopbreaker.New(loopbreaker.Config{
		Failures: loopbreaker.FailureRules{
			MaxConsecutive: 1,
		},
		Cooldown:       30 * time.Minute,
		CooldownPolicy: loopbreaker.DoublingCooldown(4 * time.Hour),
		Now:            func() time.Time { return now },
	})
	cb.RecordFailure("database is locked")
	for range 4 {
		d := cb.Check()
		fmt.Printf("open %d: retry after %s\n", cb.Stats().ConsecutiveOpens, d.RetryAfter)
		now = now.Add(d.RetryAfter)
		cb.Check() // the probe
		cb.RecordFailure("database is locked")
	}
	// Output:
	// open 1: retry after 30m0s
	// open 2: retry after 1h0m0s
	// open 3: retry after 2h0m0s
	// open 4: retry after 4h0m0s
}

// A runner that cancels an iteration (Ctrl+C, a shutdown) reports it with
// its context error: the iteration counts neither way.
func ExampleDefaultClassify() {
	cb, _ := loopbreaker.New(loopbreaker.DefaultConfig())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cb.Record(loopbreaker.Iteration{Err: fmt.Errorf("agent: %w", ctx.Err())})
	s := cb.Stats()
	fmt.Println(loopbreaker.DefaultClassify(ctx.Err()), s.Iterations, s.NeutralIterations, s.Failures.Consecutive)
	// Output:
	// neutral 0 1 0
}

// Labelling what each iteration worked on lets the breaker see a loop that
// only ever fixes tests.
func ExampleWorkKind() {
	cb, _ := loopbreaker.New(loopbreaker.DefaultConfig())
	for range 5 {
		cb.Record(loopbreaker.Iteration{Work: loopbreaker.WorkTestFix})
	}
	fmt.Println(cb.TripReason())
	// Output:
	// Test-fix loop: 5 of the last 5 iterations only fixed tests (threshold: more than 80%)
}
