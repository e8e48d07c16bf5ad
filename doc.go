// Package loopbreaker stops AI-agent loops that are stuck.
//
// A host program runs an agent in a loop. Once per iteration it asks the
// breaker whether it may go on ([CircuitBreaker.Check], or
// [CircuitBreaker.Wait], which sleeps out a cooldown) and tells it what
// happened ([CircuitBreaker.Record]). The breaker notices failure after
// failure, the same error coming back, iterations that change nothing,
// output collapsing, permission denials, an agent circling between the same
// approaches and a call budget running out; it opens the circuit, says
// exactly why, waits out a cooldown, and then lets one probe iteration
// through. After [Config.MaxConsecutiveOpens] (10) openings in a row without
// a recovery it gives up ([ErrGaveUp]), so this loop ends by itself when the
// agent is stuck for good:
//
//	cb, err := loopbreaker.New(loopbreaker.DefaultConfig())
//	if err != nil {
//		return err
//	}
//	for {
//		if _, err := cb.Wait(ctx); err != nil {
//			return err // gave up, done, stopped, or ctx ended
//		}
//		err := agent.Step(ctx)
//		cb.Record(loopbreaker.Iteration{Err: err})
//	}
//
// A host that calls [CircuitBreaker.Check] instead asks [Decision.WaitHelps]
// whether to wait or to stop.
//
// # Signals
//
// Each stop signal is a named rule with its own [ReasonKind], threshold
// and off switch, and its [Reason] carries the evidence: "3 consecutive
// failures (threshold: 3)". The circuit opens after
// [FailureRules.MaxConsecutive] failures in a row (3), or when one error
// fingerprint has been seen [FailureRules.MaxSameError] times over the
// breaker's life (5). A host that measures progress passes
// [Iteration.Progress], and three more signals watch it: iterations without
// progress, output falling below the recent baseline, and permission
// denials. The labels a host may give an iteration
// ([Iteration.Approach], [Iteration.Work]) feed the circular-approach and
// test-fix-loop signals of the superkit circuit-breaker design. A negative
// threshold switches a signal off; zero means the default.
//
// Some stops are not failures: a call budget over a rolling hour
// ([SpendRules.MaxCallsPerHour], [ErrCallBudget]); a spend cap on the tokens
// or dollars the loop may spend ([SpendRules.MaxTokens], [SpendRules.MaxCostUSD],
// [ErrSpendCap]), the dollars priced with [SpendRules.Prices] where only the
// tokens and the model are known; and completion, when the host's done signals, test-only
// iterations or finished plan say the work is done ([ErrComplete]).
//
// # Provider limits
//
// A model provider's usage limit is not the agent failing. The default
// classifier ([DefaultClassify], [ProviderLimitOf]) recognises one in an
// iteration's error: HTTP 429 and 529 with Retry-After, the rate-limit
// errors of Anthropic, OpenAI and Gemini, Claude Code's "You've hit your
// limit · resets 5pm (Europe/Vilnius)" with the reset read in its time
// zone, a [*LimitError] a host wraps its own in. The iteration trips
// nothing and counts toward no signal; Check refuses, without opening the
// circuit, until the reset ([ErrProviderLimit], with [Decision.RetryAfter]),
// and [CircuitBreaker.Wait] sleeps it out. A limit no waiting ends (no
// credit, a quota or billing cap) refuses until a person resumes
// ([ErrProviderStopped]). [CircuitBreaker.ObserveLimit] and
// [CircuitBreaker.AddUsage] take a limit and spend as they happen, during
// an iteration.
//
// # Tasks and evidence
//
// A host that works through a task list names each iteration's task
// ([Iteration.Task]): three failures in a row on one task stop the loop
// with a reason that names it, as GSD's exit.sh does, and
// [CircuitBreaker.Skip] records the task so that the runner moves on
// ([CircuitBreaker.SkippedTasks]). Each recent fingerprint keeps the text
// of its first and latest failure ([Stats].ErrorSamples), which the
// same-error reasons carry ([Reason.Detail]). superkit's alerts are
// warnings that stop nothing ([Decision].Warnings): a task past 20
// iterations, passing tests declining, errors rising, the call budget 80%
// used. [Stats].Risk is superkit's stagnation risk, and
// [Config.RelapseWindow] watches the iterations after a recovery for the
// signal that had opened the circuit.
//
// # Same error
//
// Errors are compared by [Fingerprint]: the first 8 hex digits of the MD5
// of [Normalize](msg), which replaces hex values, stack traces, numbers,
// durations and directories with placeholders, removes colour, lower-cases
// the rest, trims it and caps it at 500 runes, so the same failure at
// another line, address or temporary directory is the same error.
// [ExtractError] finds the error in an agent's raw output, plain text or
// stream-JSON.
//
// # States
//
// An open circuit refuses iterations until [Config.Cooldown] (30s) has
// passed; it is then half-open and allows exactly one probe. A successful
// probe closes the circuit; a failed one opens it again, for as long as
// [Config.CooldownPolicy] says. Transitions happen lazily when a call reads
// the clock ([Config.Now]): the breaker starts no goroutines and no timers,
// and [CircuitBreaker.Wait] stops its timer before it returns.
//
// # Persistence and manual control
//
// [CircuitBreaker.Snapshot] returns the whole state as versioned JSON, and
// [CircuitBreaker.Restore] puts it back, with the cooldown running on by
// the wall clock. A [Store] keeps one snapshot per loop; [FileStore] writes
// one file per loop, atomically. A corrupt state is an error matching
// [ErrCorruptState], never a fresh closed breaker. [Stats].History holds
// the last transitions, and [Config.OnStateChange] hears each one after the
// lock is released. The pause menu of GSD's exit.sh is there as
// [CircuitBreaker.Resume], [CircuitBreaker.Skip] and [CircuitBreaker.Abort];
// [CircuitBreaker.ForceOpen] holds the circuit open for the host.
//
// # Protected files
//
// A loop's plan, configuration and memory are not its agent's to delete.
// With [Config.Guard] set, the breaker asks the [Guard] after every
// iteration whether files were lost, and holds the circuit open
// ([ReasonProtectedFiles]) until a person resumes. Package protect (its
// own module, github.com/loopbreaker/loopbreaker/protect) has the Guard:
// it restores what was deleted or emptied, from its copy or from git, and
// refuses a shell command line that would delete a protected file (rm
// -rf, git clean -fdx, git checkout ., mv, >) before it runs.
//
// The short calls [CircuitBreaker.RecordSuccess],
// [CircuitBreaker.RecordFailure], [CircuitBreaker.IsTripped] and
// [CircuitBreaker.TripReason] are there for hosts that prefer them. A
// CircuitBreaker is safe for concurrent use, and a panic in the host's code
// never leaves its lock held.
package loopbreaker
