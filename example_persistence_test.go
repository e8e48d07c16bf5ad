package loopbreaker_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// A loop that is killed while its circuit is open finds it open again
// when it restarts, and waits out the rest of the cooldown by the wall
// clock. A corrupt state file is refused until the caller moves it aside.
func ExampleFileStore() {
	dir, err := os.MkdirTemp("", "loopbreaker-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	store := loopbreaker.NewFileStore(dir)

	now := time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)
	cfg := loopbreaker.Config{Failures: loopbreaker.FailureRules{MaxConsecutive: 2}, Now: func() time.Time { return now }}

	// The first process: two failures open the circuit; it saves the
	// state after every iteration, and then it is killed.
	cb, restored, err := loopbreaker.NewFromStore(ctx, cfg, store, "agent")
	if err != nil {
		panic(err)
	}
	fmt.Println("restored:", restored)
	for _, msg := range []string{"exit status 1", "exit status 1"} {
		cb.RecordFailure(msg)
		if err := store.Save(ctx, "agent", cb.Snapshot()); err != nil {
			panic(err)
		}
	}

	// The second process, ten seconds later.
	now = now.Add(10 * time.Second)
	cb, restored, err = loopbreaker.NewFromStore(ctx, cfg, store, "agent")
	if err != nil {
		panic(err)
	}
	d := cb.Check()
	fmt.Println("restored:", restored, d.State, d.RetryAfter, d.Reason)

	// A damaged file is refused, and kept.
	path, _ := store.Path("agent")
	if err := os.WriteFile(path, []byte(`{"version": 1, "sta`), 0o600); err != nil {
		panic(err)
	}
	_, _, err = loopbreaker.NewFromStore(ctx, cfg, store, "agent")
	var corrupt *loopbreaker.StateError
	fmt.Println(errors.Is(err, loopbreaker.ErrCorruptState), errors.As(err, &corrupt) && corrupt.Path == path)

	// Starting fresh is the caller's choice: move the file aside first.
	aside, err := store.MoveAside("agent")
	if err != nil {
		panic(err)
	}
	fmt.Println(filepath.Base(aside)[:len("agent.json.corrupt-")])
	cb, restored, err = loopbreaker.NewFromStore(ctx, cfg, store, "agent")
	fmt.Println("restored:", restored, cb.State(), err)
	// Output:
	// restored: false
	// restored: true OPEN 20s 2 consecutive failures (threshold: 2)
	// true true
	// agent.json.corrupt-
	// restored: false CLOSED <nil>
}

// OnStateChange hears every transition after the breaker's lock is
// released, so it may call the breaker: here it logs the stats.
func Example_onStateChange() {
	now := time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)
	var cb *loopbreaker.CircuitBreaker
	cb, _ = loopbreaker.New(loopbreaker.Config{
		Failures: loopbreaker.FailureRules{
			MaxConsecutive: 1,
		},
		Cooldown: time.Minute,
		Now:      func() time.Time { return now },
		OnStateChange: func(t loopbreaker.Transition) {
			fmt.Printf("%s (%d iterations so far)\n", t, cb.Stats().Iterations)
		},
	})
	cb.RecordFailure("connection refused")
	now = now.Add(time.Minute)
	cb.Check() // the cooldown is over: the probe may run
	cb.RecordSuccess()
	// Output:
	// CLOSED -> OPEN (signal: 1 consecutive failures (threshold: 1)) at iteration 1 (1 iterations so far)
	// OPEN -> HALF_OPEN (cooldown_over: 1 consecutive failures (threshold: 1)) at iteration 1 (1 iterations so far)
	// HALF_OPEN -> CLOSED (probe_succeeded) at iteration 2 (2 iterations so far)
}

// Seed 004's pause menu: when the circuit opens a person chooses to
// resume (retry), skip (move on to another task) or abort (stop for good).
func ExampleCircuitBreaker_Resume() {
	cb, _ := loopbreaker.New(loopbreaker.Config{Failures: loopbreaker.FailureRules{MaxSameError: 2}})
	cb.RecordFailure("KeyError: 'user_id'")
	cb.RecordSuccess()
	cb.RecordFailure("KeyError: 'user_id'")
	fmt.Println(cb.State(), cb.TripReason())

	cb.Resume() // closed, and the counts start again
	cb.RecordFailure("KeyError: 'user_id'")
	fmt.Println(cb.State(), cb.Stats().Failures.Counts[loopbreaker.Fingerprint("KeyError: 'user_id'")])

	cb.Skip() // the same, recorded as a skip
	cb.Abort()
	fmt.Println(cb.State(), cb.TripReason(), cb.Check().RetryAfter)

	for _, t := range cb.Stats().History {
		fmt.Println(t.From, "->", t.To, t.Cause)
	}
	// Output:
	// OPEN Same error repeated 2 times (threshold: 2)
	// CLOSED 1
	// OPEN Aborted 0s
	// CLOSED -> OPEN signal
	// OPEN -> CLOSED resume
	// CLOSED -> CLOSED skip
	// CLOSED -> OPEN abort
}

// ForceOpen stops the loop with the host's reason until a person resumes
// it; no cooldown ends it.
func ExampleCircuitBreaker_ForceOpen() {
	cb, _ := loopbreaker.New(loopbreaker.DefaultConfig())
	cb.ForceOpen("deploy freeze")
	d := cb.Check()
	fmt.Println(d.Allow, d.Reason)
	fmt.Println(errors.Is(d.Err(), loopbreaker.ErrOpen))
	// Output:
	// false Forced open: deploy freeze
	// true
}
