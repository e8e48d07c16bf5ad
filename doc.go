// Package loopbreaker stops AI-agent loops that are stuck.
//
// A host program runs an agent in a loop. Once per iteration it asks the
// breaker whether it may go on (Check) and tells it what happened (Record).
// The breaker notices failure after failure and the same error coming back,
// opens the circuit, says exactly why, waits out a cooldown, and then lets
// one probe iteration through:
//
//	cb, err := loopbreaker.New(loopbreaker.DefaultConfig())
//	if err != nil {
//		return err
//	}
//	for {
//		d := cb.Check()
//		if !d.Allow {
//			log.Printf("stopping: %s", d.Reason)
//			break
//		}
//		err := agent.Step(ctx)
//		cb.Record(loopbreaker.Iteration{Err: err})
//	}
//
// # Signals
//
// The circuit opens (CLOSED → OPEN) when MaxConsecutiveFailures iterations in
// a row failed (default 3), or when one error fingerprint has been seen
// MaxSameErrorCount times over the breaker's life (default 5), even with
// successes and other errors in between. Consecutive failures are checked
// first. A host that measures progress passes Iteration.Progress, and three
// more signals watch it: NoProgressThreshold iterations without progress
// (default 3; the circuit is half-open, one more chance, one iteration
// before), output falling more than OutputDeclinePercent below the recent
// baseline (default 70), and PermissionDenialThreshold iterations in a row
// with permission denials (default 3). Each signal has its own ReasonKind and
// reason text with its evidence, for example "3 consecutive failures
// (threshold: 3)". A negative threshold switches its signal off; zero means
// the default.
//
// Seed 003's stagnation signals go beyond counters: a progress score over a
// window of iterations (ProgressScoreWindow, off by default), an agent
// circling between two or three approaches (Iteration.Approach), a loop
// that only fixes tests (Iteration.Work), and the same error several times
// in a row (MaxSameErrorInARow, off by default). Config.Classify decides
// how an error counts: a cancelled iteration (context.Canceled) is neutral
// by default and gives a half-open probe slot back. The "autonomous" preset
// turns all of them on with seed 003's values.
//
// Two stops are not failures. A call budget (MaxCallsPerHour, a rolling
// hour) makes Check refuse without opening the circuit, with a warning from
// 80% and the exact RetryAfter; and the host's completion signals (two done
// signals in a row, three test-only iterations, a finished Plan) complete
// the loop: Check then refuses with Decision.Complete and an error matching
// ErrComplete.
//
// # Same error
//
// Errors are compared by Fingerprint: the first 8 hex digits of the MD5 of
// Normalize(msg), which replaces hex values, stack traces, numbers,
// durations and directories with placeholders, removes colour, lower-cases
// the rest, trims it and caps it at 500 runes, so the same failure at
// another line, address or temporary directory is the same error.
//
// ExtractError finds the error in an agent's raw output (stream-JSON or plain text).
//
// # States
//
// An open circuit refuses iterations until Config.Cooldown (default 30s)
// has passed; it is then half-open and allows exactly one probe. A
// successful probe closes the circuit (consecutive counters reset, error
// history kept); a failed one opens it again with a fresh cooldown, as long
// as Config.CooldownPolicy says (the same by default; DoublingCooldown
// doubles it after each failed probe).
// Transitions happen lazily when a call reads the clock (Config.Now):
// the breaker starts no goroutines and no timers.
//
// # Persistence and manual control
//
// Snapshot returns the whole state as versioned JSON (names, not numbers,
// for every enumeration) and Restore puts it back, with the cooldown
// running on by the wall clock; a clock gone backwards keeps the circuit
// open for a fresh full cooldown, and a half-open probe that was running
// when the snapshot was taken counts as failed. A Store keeps one snapshot
// per loop; FileStore writes one file per loop atomically. A corrupt state
// is an error matching ErrCorruptState (a *CorruptStateError with the
// path), never a fresh closed breaker: NewFromStore refuses it, and
// FileStore.MoveAside sets a corrupt file aside for a caller that chooses
// to start fresh; a missing file (ErrNoState) is a fresh start.
// Stats.History holds the last 50 transitions; Config.OnStateChange hears each one after
// the lock is released, in order and one at a time. Seed 004's controls:
// Resume and Skip close the circuit and reset the counters, Abort and
// ForceOpen hold it open until a person acts.
//
// The seed-style calls RecordSuccess, RecordFailure, IsTripped and
// TripReason are there for hosts that prefer them. A CircuitBreaker is safe
// for concurrent use.
package loopbreaker
