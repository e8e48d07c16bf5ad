package loopbreaker_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// The loop contract: Check before each iteration, Record after it. Here a
// scripted agent fails once, recovers, then hits the same error three
// times in a row, and the breaker stops the loop.
func Example() {
	script := []error{
		errors.New("exit status 1: go test ./... failed"),
		nil,
		errors.New("undefined: loadUser (main.go:12:3)"),
		errors.New("undefined: loadUser (main.go:14:3)"),
		errors.New("undefined: loadUser (main.go:15:9)"),
		nil, // never runs
	}
	cb, err := loopbreaker.New(loopbreaker.DefaultConfig())
	if err != nil {
		panic(err)
	}
	for i, step := range script {
		d := cb.Check()
		if !d.Allow {
			fmt.Printf("iteration %d: stopping: %s\n", i+1, d.Reason)
			break
		}
		cb.Record(loopbreaker.Iteration{Err: step})
		fmt.Printf("iteration %d: %s\n", i+1, cb.State())
	}
	// Output:
	// iteration 1: CLOSED
	// iteration 2: CLOSED
	// iteration 3: CLOSED
	// iteration 4: CLOSED
	// iteration 5: OPEN
	// iteration 6: stopping: 3 consecutive failures (threshold: 3)
}

// The cooldown and the single probe, with a hand-driven clock.
func Example_cooldown() {
	now := time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)
	cb, _ := loopbreaker.New(loopbreaker.Config{
		Failures: loopbreaker.FailureRules{
			MaxConsecutive: 1,
		},
		Cooldown: time.Minute,
		Now:      func() time.Time { return now },
	})
	cb.RecordFailure("connection refused")
	d := cb.Check()
	fmt.Println(d.State, d.Allow, d.RetryAfter)

	now = now.Add(time.Minute)
	probe := cb.Check()
	fmt.Println(probe.State, probe.Allow, probe.Probe)
	fmt.Println(cb.Check().Allow) // a second iteration waits for the probe

	cb.RecordSuccess()
	fmt.Println(cb.State())
	// Output:
	// OPEN false 1m0s
	// HALF_OPEN true true
	// false
	// CLOSED
}

// A runner that wants an error for a refused iteration uses Decision.Err,
// which matches ErrOpen and carries the reason.
func ExampleDecision_Err() {
	cb, _ := loopbreaker.New(loopbreaker.Config{Failures: loopbreaker.FailureRules{MaxSameError: 2}})
	cb.RecordFailure("KeyError: 'user_id'")
	cb.RecordSuccess()
	cb.RecordFailure("KeyError: 'user_id'")

	err := cb.Check().Err()
	fmt.Println(errors.Is(err, loopbreaker.ErrOpen))
	var open *loopbreaker.RefusedError
	if errors.As(err, &open) {
		fmt.Println(open.Reason.Kind, "-", open.Reason)
	}
	// Output:
	// true
	// same_error - Same error repeated 2 times (threshold: 2)
}

// Presets carry seed 000's thresholds; an explicit field wins over the
// preset, as a command-line flag would.
func ExamplePreset() {
	cfg, err := loopbreaker.Preset("refactor")
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.Failures.MaxConsecutive, cfg.Failures.MaxSameError)

	cfg.Failures.MaxSameError = 4 // e.g. from --circuit-breaker-errors 4
	fmt.Println(cfg.Failures.MaxConsecutive, cfg.Failures.MaxSameError)

	_, err = loopbreaker.Preset("yolo")
	fmt.Println(err)
	// Output:
	// 2 3
	// 2 4
	// loopbreaker: unknown preset "yolo" (known: feature, tdd-red-green, refactor, incident-response, migration-safety, autonomous, tool-steps, feature-minimal, spec-driven, debug, code-archaeology, review, pr-review, adversarial-review, docs, documentation-first, api-design, performance-optimization, scientific-method, research, gap-analysis, mob-programming, socratic-learning, confession-loop, pdd-to-code-assist)
}

// The worked example of fingerprints: the same error at another line is the
// same error.
func ExampleFingerprint() {
	a := "TypeError: Cannot read property 'id' of undefined at UserController (/src/controllers/user.ts:42:15)"
	b := "TypeError: Cannot read property 'id' of undefined at UserController (/src/controllers/user.ts:87:22)"
	fmt.Println(loopbreaker.Normalize(a))
	fmt.Println(loopbreaker.Fingerprint(a) == loopbreaker.Fingerprint(b))
	fmt.Println(loopbreaker.Normalize("panic at 0x7f3a after 1500ms in worker 12"))
	fmt.Println(loopbreaker.Normalize("\x1b[31mFAIL\x1b[0m /tmp/go-build2281/app/main_test.go:12 (0.03s)"))
	// Output:
	// typeerror: cannot read property 'id' of undefined STACK
	// true
	// panic at HEX after DURATION in worker N
	// fail main_test.go:N (DURATION)
}

func ExampleCircuitBreaker_Stats() {
	cb, _ := loopbreaker.New(loopbreaker.DefaultConfig())
	cb.RecordFailure("timeout after 30s")
	cb.RecordFailure("timeout after 31s")
	cb.RecordSuccess()
	cb.RecordFailure("disk full")
	s := cb.Stats()
	fmt.Println(s.State, s.Failures.Consecutive, s.Failures.Total, s.Failures.Unique)
	fmt.Println(s.Failures.Counts[loopbreaker.Fingerprint("timeout after 1s")])
	// Output:
	// CLOSED 1 3 2
	// 2
}

// A host that measures progress passes it with each iteration. This agent
// keeps succeeding but stops changing anything: one iteration before the
// threshold the circuit is half-open (one more chance), then it opens.
func Example_progress() {
	cb, _ := loopbreaker.New(loopbreaker.DefaultConfig())
	changed := []int{4, 2, 0, 0, 0, 0} // files changed by each iteration
	for i, files := range changed {
		d := cb.Check()
		if !d.Allow {
			fmt.Printf("iteration %d: stopping: %s\n", i+1, d.Reason)
			break
		}
		cb.Record(loopbreaker.Iteration{Progress: &loopbreaker.Progress{
			FilesChanged: files,
			OutputLength: 2000,
		}})
		fmt.Printf("iteration %d: %s\n", i+1, cb.State())
	}
	// Output:
	// iteration 1: CLOSED
	// iteration 2: CLOSED
	// iteration 3: CLOSED
	// iteration 4: HALF_OPEN
	// iteration 5: OPEN
	// iteration 6: stopping: No progress in 3 consecutive iterations (threshold: 3)
}

// Output decline: an iteration without progress whose output falls far
// below the recent ones opens the circuit, with the evidence in the reason.
func Example_outputDecline() {
	cb, _ := loopbreaker.New(loopbreaker.DefaultConfig())
	for _, n := range []int{1800, 2100, 1950} {
		cb.Record(loopbreaker.Iteration{Progress: &loopbreaker.Progress{FilesChanged: 1, OutputLength: n}})
	}
	cb.Record(loopbreaker.Iteration{Progress: &loopbreaker.Progress{OutputLength: 240}})
	fmt.Println(cb.TripReason())
	// Output:
	// Output declined 87.7% below baseline (current: 240, baseline: 1950, threshold: 70%)
}
