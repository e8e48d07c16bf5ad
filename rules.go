package loopbreaker

import (
	"fmt"
	"strings"
)

// ReasonKind names the signal behind a reason. [ReasonKind.Class] says what
// a reason of the kind does: open the circuit, refuse for a limit, complete
// the loop, or warn.
type ReasonKind uint8

// ReasonClass is what a reason does to the loop ([ReasonKind.Class]).
type ReasonClass uint8

// The reason classes.
const (
	ClassNone     ReasonClass = iota // [ReasonNone]'s
	ClassStop                        // opens the circuit ([ErrOpen]): a failure
	ClassLimit                       // refuses, circuit closed: no failure
	ClassComplete                    // refuses: the loop is done ([ErrComplete])
	ClassWarning                     // refuses nothing ([Decision.Warnings])
)

// String returns "none", "stop", "limit", "complete" or "warning".
func (c ReasonClass) String() string {
	switch c {
	case ClassStop:
		return "stop"
	case ClassLimit:
		return "limit"
	case ClassComplete:
		return "complete"
	case ClassWarning:
		return "warning"
	}
	return "none"
}

// Class returns what a reason of kind k does to the loop; ClassNone for
// ReasonNone and for a kind this build does not know.
func (k ReasonKind) Class() ReasonClass {
	if int(k) >= len(rules) {
		return ClassNone
	}
	return rules[k].class
}

// The reason kinds. A counting signal's Count reached its Threshold; the
// other [Reason] fields are set where they apply. A kind marked limit,
// completion or warning does not open the circuit; one marked held keeps it
// open until Resume, Skip or Reset.
const (
	ReasonNone ReasonKind = iota // no reason: the zero Reason

	ReasonConsecutiveFailures       // [FailureRules.MaxConsecutive] failures in a row
	ReasonSameErrorInARow           // [FailureRules.MaxSameErrorInARow] in a row, one error
	ReasonSameError                 // one error [FailureRules.MaxSameError] times in all
	ReasonNoProgress                // [ProgressRules.MaxNoProgress] iterations, no progress
	ReasonProgressScore             // score below zero over [ProgressRules.ScoreWindow]
	ReasonOutputDecline             // output [ProgressRules.OutputDeclinePercent] below baseline
	ReasonPermissionDenials         // [ProgressRules.MaxPermissionDenials] with denials
	ReasonCircularApproach          // [ProgressRules.CircularApproachWindow] going in circles
	ReasonTestFixLoop               // test fixes above [ProgressRules.TestFixPercent]
	ReasonProbeFailed               // the half-open probe failed
	ReasonCallBudget                // limit: [SpendRules.MaxCallsPerHour] calls made
	ReasonDoneSignals               // completion: [ProgressRules.DoneSignals] done in a row
	ReasonTestOnlyLoops             // completion: [ProgressRules.TestOnly] test-only in a row
	ReasonPlanComplete              // completion: every task of [Iteration.Plan] done
	ReasonForcedOpen                // held: [CircuitBreaker.ForceOpen]
	ReasonAborted                   // held: [CircuitBreaker.Abort]
	ReasonProbeLost                 // [CircuitBreaker.Restore] found the probe running
	ReasonSameTask                  // [FailureRules.MaxSameTask] failures on one task (GSD's exit.sh)
	ReasonRelapse                   // the opening signal within [Config.RelapseWindow]
	ReasonCallBudgetWarning         // warning: 80% of the call budget used
	ReasonLongTask                  // warning: [ProgressRules.MaxTaskIterations] on one task
	ReasonTestsDeclining            // warning: [ProgressRules.TestsDeclining] falls in a row
	ReasonErrorsRising              // warning: [ProgressRules.ErrorsRising] rises in a row
	ReasonRepeatedActionObservation // [StepRules.MaxRepeatedAction] identical steps (OpenHands)
	ReasonRepeatedActionError       // [StepRules.MaxRepeatedActionError] same action failing
	ReasonMonologue                 // [StepRules.MaxMonologue] same message-only turns
	ReasonAlternatingActions        // [StepRules.AlternatingWindow] steps alternating
	ReasonCondensationLoop          // [StepRules.MaxCondensations] condensations in a row
	ReasonProtectedFiles            // held: [Config.Guard] found files lost
	ReasonProviderLimit             // limit: the provider refused for now
	ReasonProviderStopped           // limit: the provider refused for good
	ReasonSpendCap                  // limit: [SpendRules.MaxTokens] or MaxCostUSD spent
	ReasonHourlySpendCap            // limit: [SpendRules.MaxTokensPerHour] or MaxCostUSDPerHour
	ReasonSpendWarning              // warning: 80% of a spend cap spent
	ReasonUnavailable               // limit: a shared breaker's state is out of reach
	ReasonGaveUp                    // held: [Config.MaxConsecutiveOpens] openings in a row
	ReasonUnpricedModel             // warning: a model without a price under a dollar cap
	ReasonFalseCompletion           // [ProgressRules.MaxClaims] claims of done without Done (clawker)
	ReasonProviderLoop              // the provider refused the agent's repeated tool calls ([ProviderLoop])
)

// verdict is what a signal says about the iteration just recorded.
type verdict uint8

const (
	pass  verdict = iota // nothing to report
	watch                // one more chance: the circuit goes half-open
	trip                 // the circuit opens
)

// rule is one stop signal: the name and text of its reason and, for the
// signals evaluated after each iteration, its test and its evidence.
// Adding a signal means adding a kind above and a row, at that index,
// below.
type rule struct {
	name string
	text func(r Reason) string
	// on reports whether the config switches the signal on; nil: always.
	on func(c *Config) bool
	// check evaluates the signal after an iteration was recorded, with
	// b.mu held. Nil for kinds that the state machine sets itself.
	check func(b *CircuitBreaker) verdict
	// evidence returns the reason when check did not pass.
	evidence func(b *CircuitBreaker) Reason
	// class is what the reason does. A completion's check runs after a
	// successful iteration, before the stop signals; a warning's runs
	// after each iteration that brings news of tasks or progress, and when
	// it trips, the Reason goes to [Decision.Warnings] and [Stats.Warnings].
	class ReasonClass
	// early marks a stop signal checked before the rest of the table: a
	// narrower signal that would otherwise be hidden by a broader one
	// tripping on the same iteration.
	early bool
	// recurs reports, during the relapse watch after a recovery from an
	// open with reason r of this kind, whether the iteration just
	// recorded shows the signal again (one failure again, one iteration
	// without progress again...), with b.mu held. Nil: only the signal
	// tripping or watching again is a relapse.
	recurs func(b *CircuitBreaker, r Reason) bool
}

// rules is indexed by ReasonKind; the signals are evaluated in this order,
// and the first that trips gives the reason.
var rules = [...]rule{
	ReasonNone: {
		name: "none",
		text: func(Reason) string { return "" },
	},
	ReasonConsecutiveFailures: {
		name:  "consecutive_failures",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("%d consecutive failures (threshold: %d)", r.Count, r.Threshold)
		},
		on: func(c *Config) bool { return c.Failures.MaxConsecutive >= 0 },
		check: func(b *CircuitBreaker) verdict {
			return atThreshold(b.count.ConsecutiveFailures, b.cfg.Failures.MaxConsecutive)
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.count.ConsecutiveFailures, Threshold: b.cfg.Failures.MaxConsecutive}
		},
		recurs: failedAgain,
	},
	ReasonSameErrorInARow: {
		name:  "same_error_in_a_row",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("Same error repeated %d times in a row (threshold: %d)", r.Count, r.Threshold)
		},
		on: func(c *Config) bool { return c.Failures.MaxSameErrorInARow > 0 },
		check: func(b *CircuitBreaker) verdict {
			return atThreshold(b.count.SameErrorInARow, b.cfg.Failures.MaxSameErrorInARow)
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{
				Count:       b.count.SameErrorInARow,
				Threshold:   b.cfg.Failures.MaxSameErrorInARow,
				Fingerprint: formatFingerprint(b.lastFingerprint),
				Sample:      b.samples.latest(b.lastFingerprint),
			}
		},
		recurs: sameErrorAgain,
	},
	ReasonSameError: {
		name:  "same_error",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("Same error repeated %d times (threshold: %d)", r.Count, r.Threshold)
		},
		on: func(c *Config) bool { return c.Failures.MaxSameError >= 0 },
		check: func(b *CircuitBreaker) verdict {
			_, count, ok := b.sameErrorNow()
			if !ok {
				return pass
			}
			return atThreshold(count, b.cfg.Failures.MaxSameError)
		},
		evidence: func(b *CircuitBreaker) Reason {
			fp, count, _ := b.sameErrorNow()
			return Reason{
				Count:       count,
				Threshold:   b.cfg.Failures.MaxSameError,
				Fingerprint: formatFingerprint(fp),
				Sample:      b.samples.latest(fp),
			}
		},
		recurs: sameErrorAgain,
	},
	ReasonNoProgress: {
		name:  "no_progress",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("No progress in %d consecutive iterations (threshold: %d)", r.Count, r.Threshold)
		},
		on: func(c *Config) bool { return c.Progress.MaxNoProgress >= 0 },
		check: func(b *CircuitBreaker) verdict {
			limit, n := b.cfg.Progress.MaxNoProgress, b.progress.ConsecutiveNoProgress
			switch {
			case !b.progress.measured:
				return pass
			case n >= limit:
				return trip
			case n > 0 && n == limit-1:
				return watch
			}
			return pass
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.progress.ConsecutiveNoProgress, Threshold: b.cfg.Progress.MaxNoProgress}
		},
		recurs: func(b *CircuitBreaker, _ Reason) bool { return b.progress.measured && !b.progress.made },
	},
	ReasonProgressScore: {
		name:  "progress_score",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("Progress score %d over the last %d iterations (threshold: below 0)", r.Count, r.Window)
		},
		on: func(c *Config) bool { return c.Progress.ScoreWindow > 0 },
		check: func(b *CircuitBreaker) verdict {
			st := &b.stagnation
			if !b.progress.measured || !st.scores.full() && b.count.ConsecutiveOpens == 0 {
				return pass
			}
			if sum, _ := st.scoreSum(); sum < 0 {
				return trip
			}
			return pass
		},
		evidence: func(b *CircuitBreaker) Reason {
			sum, n := b.stagnation.scoreSum()
			return Reason{Count: sum, Window: n}
		},
		recurs: func(b *CircuitBreaker, _ Reason) bool {
			return b.progress.measured && b.count.LastProgressScore < 0
		},
	},
	ReasonOutputDecline: {
		name:  "output_decline",
		class: ClassStop,
		text: func(r Reason) string {
			decline := 100 * (1 - float64(r.Current)/r.Baseline)
			return fmt.Sprintf("Output declined %.1f%% below baseline (current: %d, baseline: %.0f, threshold: %d%%)",
				decline, r.Current, r.Baseline, r.Threshold)
		},
		on: func(c *Config) bool { return c.Progress.OutputDeclinePercent >= 0 },
		check: func(b *CircuitBreaker) verdict {
			ps := &b.progress
			if !ps.measured || ps.made || ps.baselineSum <= 0 {
				return pass
			}
			if declined, _ := ps.declines(b.cfg.Progress.OutputDeclinePercent); !declined {
				return pass
			}
			return trip
		},
		evidence: func(b *CircuitBreaker) Reason {
			ps := &b.progress
			_, percent := ps.declines(b.cfg.Progress.OutputDeclinePercent)
			return Reason{
				Count:     percent,
				Threshold: b.cfg.Progress.OutputDeclinePercent,
				Baseline:  float64(ps.baselineSum) / float64(ps.baselineSize),
				Current:   ps.output,
			}
		},
	},
	ReasonPermissionDenials: {
		name:  "permission_denials",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("Permission denied in %d consecutive iterations (threshold: %d)", r.Count, r.Threshold)
		},
		on: func(c *Config) bool { return c.Progress.MaxPermissionDenials >= 0 },
		check: func(b *CircuitBreaker) verdict {
			if !b.progress.measured {
				return pass
			}
			return atThreshold(b.progress.ConsecutivePermissionDenials, b.cfg.Progress.MaxPermissionDenials)
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.progress.ConsecutivePermissionDenials, Threshold: b.cfg.Progress.MaxPermissionDenials}
		},
		recurs: func(b *CircuitBreaker, _ Reason) bool {
			return b.progress.measured && b.progress.ConsecutivePermissionDenials > 0
		},
	},
	ReasonCircularApproach: {
		name:  "circular_approach",
		class: ClassStop,
		text: func(r Reason) string {
			return withAction(fmt.Sprintf("Circular approach: %d approaches alternating over the last %d iterations without progress (approaches: %s)",
				r.Count, r.Window, r.Fingerprint), r.Action)
		},
		on: func(c *Config) bool { return c.Progress.CircularApproachWindow > 0 },
		check: func(b *CircuitBreaker) verdict {
			if !b.stagnation.approachAdded || b.stagnation.circle() == 0 {
				return pass
			}
			return trip
		},
		evidence: func(b *CircuitBreaker) Reason {
			st := &b.stagnation
			period := st.circle()
			fps, texts := st.circleFingerprints(period)
			return Reason{Count: period, Window: st.approaches.n, Fingerprint: fps, Action: texts}
		},
		recurs: circlingAgain,
	},
	ReasonTestFixLoop: {
		name:  "test_fix_loop",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("Test-fix loop: %d of the last %d iterations only fixed tests (threshold: more than %d%%)",
				r.Count, r.Window, r.Threshold)
		},
		on: func(c *Config) bool { return c.Progress.TestFixWindow > 0 && c.Progress.TestFixPercent >= 0 },
		check: func(b *CircuitBreaker) verdict {
			st := &b.stagnation
			n := st.testFixes()
			if !st.workAdded || n < 0 || n*100 <= b.cfg.Progress.TestFixPercent*st.works.n {
				return pass
			}
			return trip
		},
		evidence: func(b *CircuitBreaker) Reason {
			st := &b.stagnation
			return Reason{Count: st.testFixes(), Window: st.works.n, Threshold: b.cfg.Progress.TestFixPercent}
		},
		recurs: func(b *CircuitBreaker, _ Reason) bool {
			st := &b.stagnation
			return st.workAdded && st.works.n > 0 && st.works.at(st.works.n-1) == WorkTestFix
		},
	},
	ReasonProbeFailed: {
		name:  "probe_failed",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("Half-open probe failed (error %s)", r.Fingerprint)
		},
		recurs: failedAgain,
	},
	ReasonCallBudget: {
		name:  "call_budget",
		class: ClassLimit,
		text: func(r Reason) string {
			return fmt.Sprintf("Call budget exhausted: %d calls in the last hour (limit: %d)", r.Count, r.Threshold)
		},
	},
	ReasonDoneSignals: {
		name:  "done_signals",
		class: ClassComplete,
		text: func(r Reason) string {
			return fmt.Sprintf("Complete: the agent reported done %d times in a row (threshold: %d)", r.Count, r.Threshold)
		},
		on: func(c *Config) bool { return c.Progress.DoneSignals >= 0 },
		check: func(b *CircuitBreaker) verdict {
			return atThreshold(b.completion.ConsecutiveDoneSignals, b.cfg.Progress.DoneSignals)
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.completion.ConsecutiveDoneSignals, Threshold: b.cfg.Progress.DoneSignals}
		},
	},
	ReasonTestOnlyLoops: {
		name:  "test_only_loops",
		class: ClassComplete,
		text: func(r Reason) string {
			return fmt.Sprintf("Complete: %d iterations in a row only ran tests (threshold: %d)", r.Count, r.Threshold)
		},
		on: func(c *Config) bool { return c.Progress.TestOnly >= 0 },
		check: func(b *CircuitBreaker) verdict {
			return atThreshold(b.completion.ConsecutiveTestOnly, b.cfg.Progress.TestOnly)
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.completion.ConsecutiveTestOnly, Threshold: b.cfg.Progress.TestOnly}
		},
	},
	ReasonPlanComplete: {
		name:  "plan_complete",
		class: ClassComplete,
		text: func(r Reason) string {
			return fmt.Sprintf("Complete: all %d tasks of the plan are done", r.Count)
		},
		check: func(b *CircuitBreaker) verdict {
			if b.completion.PlanComplete {
				return trip
			}
			return pass
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.completion.Plan.Done}
		},
	},
	ReasonForcedOpen: {
		name:  "forced_open",
		class: ClassStop,
		text:  func(r Reason) string { return withMessage("Forced open", r.Message) },
	},
	ReasonAborted: {
		name:  "aborted",
		class: ClassStop,
		text:  func(r Reason) string { return withMessage("Aborted", r.Message) },
	},
	ReasonProbeLost: {
		name:  "probe_lost",
		class: ClassStop,
		text: func(Reason) string {
			return "Half-open probe lost: the process stopped before its outcome was recorded"
		},
		recurs: failedAgain,
	},
	ReasonSameTask: {
		name:  "same_task",
		class: ClassStop,
		early: true,
		text: func(r Reason) string {
			return fmt.Sprintf("Stuck on task %q: %d failed iterations in a row (threshold: %d)", r.Task, r.Count, r.Threshold)
		},
		on: func(c *Config) bool { return c.Failures.MaxSameTask >= 0 },
		check: func(b *CircuitBreaker) verdict {
			if !b.tasks.named {
				return pass // no news of the task
			}
			return atThreshold(b.tasks.TaskFailures, b.cfg.Failures.MaxSameTask)
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{
				Count:       b.tasks.TaskFailures,
				Threshold:   b.cfg.Failures.MaxSameTask,
				Task:        b.tasks.Task,
				Fingerprint: formatFingerprint(b.lastFingerprint),
				Sample:      b.samples.latest(b.lastFingerprint),
			}
		},
		recurs: func(b *CircuitBreaker, r Reason) bool {
			return b.lastFailed && b.tasks.named && b.tasks.Task == r.Task
		},
	},
	ReasonRelapse: {
		name:  "relapse",
		class: ClassStop,
		text: func(r Reason) string {
			s := fmt.Sprintf("Relapse: %s again", r.Relapsed)
			if r.Task != "" {
				s += fmt.Sprintf(" on task %q", r.Task)
			}
			if r.Fingerprint != "" {
				s += fmt.Sprintf(" (error %s)", r.Fingerprint)
			}
			return s + fmt.Sprintf(" %d %s after recovery (watching %d)", r.Count, plural(r.Count, "iteration"), r.Window)
		},
	},
	ReasonCallBudgetWarning: {
		name:  "call_budget_warning",
		class: ClassWarning,
		text: func(r Reason) string {
			return Budget{Limit: r.Threshold, Used: r.Count}.Warning()
		},
	},
	ReasonLongTask: {
		name:  "long_task",
		class: ClassWarning,
		text: func(r Reason) string {
			return fmt.Sprintf("Task %q has taken %d iterations in a row (warning above %d)", r.Task, r.Count, r.Threshold)
		},
		on: func(c *Config) bool { return c.Progress.MaxTaskIterations >= 0 },
		check: func(b *CircuitBreaker) verdict {
			if b.tasks.TaskIterations > b.cfg.Progress.MaxTaskIterations {
				return trip
			}
			return pass
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.tasks.TaskIterations, Threshold: b.cfg.Progress.MaxTaskIterations, Task: b.tasks.Task}
		},
	},
	ReasonTestsDeclining: {
		name:  "tests_declining",
		class: ClassWarning,
		text: func(r Reason) string {
			return fmt.Sprintf("Passing tests fell in %d measured iterations in a row, from %.0f to %d (threshold: %d)",
				r.Count, r.Baseline, r.Current, r.Threshold)
		},
		on: func(c *Config) bool { return c.Progress.TestsDeclining >= 0 },
		check: func(b *CircuitBreaker) verdict {
			return atThreshold(b.trends.ConsecutiveTestDeclines, b.cfg.Progress.TestsDeclining)
		},
		evidence: func(b *CircuitBreaker) Reason {
			t := &b.trends
			return Reason{
				Count:     t.ConsecutiveTestDeclines,
				Threshold: b.cfg.Progress.TestsDeclining,
				Baseline:  float64(t.TestsBeforeDecline),
				Current:   b.progress.testsPassing,
			}
		},
	},
	ReasonErrorsRising: {
		name:  "errors_rising",
		class: ClassWarning,
		text: func(r Reason) string {
			return fmt.Sprintf("Errors rose in %d measured iterations in a row, from %.0f to %d (threshold: %d)",
				r.Count, r.Baseline, r.Current, r.Threshold)
		},
		on: func(c *Config) bool { return c.Progress.ErrorsRising >= 0 },
		check: func(b *CircuitBreaker) verdict {
			return atThreshold(b.trends.ConsecutiveErrorRises, b.cfg.Progress.ErrorsRising)
		},
		evidence: func(b *CircuitBreaker) Reason {
			t := &b.trends
			return Reason{
				Count:     t.ConsecutiveErrorRises,
				Threshold: b.cfg.Progress.ErrorsRising,
				Baseline:  float64(t.ErrorsBeforeRise),
				Current:   t.errors,
			}
		},
	},
	ReasonRepeatedActionObservation: {
		name:  "repeated_action_observation",
		class: ClassStop,
		text: func(r Reason) string {
			return withAction(fmt.Sprintf("Same action with the same observation %d times in a row (threshold: %d)", r.Count, r.Threshold), r.Action)
		},
		on: func(c *Config) bool { return c.Steps.MaxRepeatedAction >= 0 },
		check: func(b *CircuitBreaker) verdict {
			if !b.steps.added {
				return pass
			}
			return atThreshold(b.count.SameStepInARow, b.cfg.Steps.MaxRepeatedAction)
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{
				Count:       b.count.SameStepInARow,
				Threshold:   b.cfg.Steps.MaxRepeatedAction,
				Fingerprint: b.steps.lastAction(),
				Action:      b.steps.texts[1],
			}
		},
	},
	ReasonRepeatedActionError: {
		name:  "repeated_action_error",
		class: ClassStop,
		text: func(r Reason) string {
			return withAction(fmt.Sprintf("Same action failed %d times in a row (threshold: %d, error %s)", r.Count, r.Threshold, r.Fingerprint), r.Action)
		},
		on: func(c *Config) bool { return c.Steps.MaxRepeatedActionError >= 0 },
		check: func(b *CircuitBreaker) verdict {
			if !b.steps.added {
				return pass
			}
			return atThreshold(b.count.SameActionFailedInARow, b.cfg.Steps.MaxRepeatedActionError)
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{
				Count:       b.count.SameActionFailedInARow,
				Threshold:   b.cfg.Steps.MaxRepeatedActionError,
				Fingerprint: formatFingerprint(b.lastFingerprint),
				Action:      b.steps.texts[1],
			}
		},
	},
	ReasonMonologue: {
		name:  "monologue",
		class: ClassStop,
		text: func(r Reason) string {
			return withAction(fmt.Sprintf("Monologue: the same message %d times in a row without a tool call (threshold: %d)", r.Count, r.Threshold), r.Action)
		},
		on: func(c *Config) bool { return c.Steps.MaxMonologue >= 0 },
		check: func(b *CircuitBreaker) verdict {
			if !b.steps.added {
				return pass
			}
			return atThreshold(b.count.SameMessageInARow, b.cfg.Steps.MaxMonologue)
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{
				Count:       b.count.SameMessageInARow,
				Threshold:   b.cfg.Steps.MaxMonologue,
				Fingerprint: b.steps.lastAction(),
				Action:      b.steps.texts[1],
			}
		},
	},
	ReasonAlternatingActions: {
		name:  "alternating_actions",
		class: ClassStop,
		text: func(r Reason) string {
			return withAction(fmt.Sprintf("Alternating actions: the same %d steps with the same observations over the last %d steps (actions: %s)", r.Count, r.Window, r.Fingerprint), r.Action)
		},
		on: func(c *Config) bool { return c.Steps.AlternatingWindow > 0 },
		check: func(b *CircuitBreaker) verdict {
			if !b.steps.added || !b.steps.alternates(b.cfg.Steps.AlternatingWindow) {
				return pass
			}
			return trip
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{
				Count:       2,
				Window:      b.cfg.Steps.AlternatingWindow,
				Fingerprint: b.steps.alternatingFingerprints(),
				Action:      b.steps.alternatingText(),
			}
		},
	},
	ReasonCondensationLoop: {
		name:  "condensation_loop",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("Context condensed %d times in a row with nothing between (threshold: %d)", r.Count, r.Threshold)
		},
		on: func(c *Config) bool { return c.Steps.MaxCondensations >= 0 },
		check: func(b *CircuitBreaker) verdict {
			if b.count.ConsecutiveCondensations == 0 {
				return pass
			}
			return atThreshold(b.count.ConsecutiveCondensations, b.cfg.Steps.MaxCondensations)
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.count.ConsecutiveCondensations, Threshold: b.cfg.Steps.MaxCondensations}
		},
	},
	ReasonProtectedFiles: {
		name:  "protected_files",
		class: ClassStop,
		text:  func(r Reason) string { return withMessage("Protected files lost", r.Message) },
	},
	ReasonProviderLimit: {
		name:  "provider_limit",
		class: ClassLimit,
		text:  func(r Reason) string { return withMessage("Provider limit", r.Message) },
	},
	ReasonProviderStopped: {
		name:  "provider_stopped",
		class: ClassLimit,
		text: func(r Reason) string {
			return withMessage("Provider stopped the loop (no waiting ends this)", r.Message)
		},
	},
	ReasonSpendCap: {
		name:  "spend_cap",
		class: ClassLimit,
		text:  func(r Reason) string { return spendCapText(r, "over the loop's life") },
	},
	ReasonHourlySpendCap: {
		name:  "hourly_spend_cap",
		class: ClassLimit,
		text:  func(r Reason) string { return spendCapText(r, "in the last hour") },
	},
	ReasonSpendWarning: {
		name:  "spend_warning",
		class: ClassWarning,
		text:  func(r Reason) string { return r.Message },
	},
	ReasonUnavailable: {
		name:  "unavailable",
		class: ClassLimit,
		text:  func(r Reason) string { return withMessage("Shared breaker unavailable", r.Message) },
	},
	ReasonUnpricedModel: {
		name:  "unpriced_model",
		class: ClassWarning,
		text: func(r Reason) string {
			if r.Count == 1 {
				return fmt.Sprintf("No price for model %s: its calls count no dollars toward the spend cap (add it to Config.Spend.Prices)", r.Message)
			}
			return fmt.Sprintf("No price for models %s: their calls count no dollars toward the spend cap (add them to Config.Spend.Prices)", r.Message)
		},
	},
	ReasonFalseCompletion: {
		name:  "false_completion",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("False completion: the agent claimed to be done %d times in a row without its done signal (threshold: %d)", r.Count, r.Threshold)
		},
		on: func(c *Config) bool { return c.Progress.MaxClaims >= 0 },
		check: func(b *CircuitBreaker) verdict {
			return atThreshold(b.completion.ConsecutiveClaims, b.cfg.Progress.MaxClaims)
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.completion.ConsecutiveClaims, Threshold: b.cfg.Progress.MaxClaims}
		},
	},
	ReasonProviderLoop: {
		name:  "provider_loop",
		class: ClassStop,
		early: true,
		text: func(r Reason) string {
			return withMessage("The provider refused the agent's repeated tool calls: a loop", r.Message)
		},
		check: func(b *CircuitBreaker) verdict {
			if b.providerLoop != "" {
				return trip
			}
			return pass
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{
				Message:     b.providerLoop,
				Fingerprint: formatFingerprint(b.lastFingerprint),
				Sample:      b.samples.latest(b.lastFingerprint),
			}
		},
		recurs: func(b *CircuitBreaker, _ Reason) bool { return b.providerLoop != "" },
	},
	ReasonGaveUp: {
		name:  "gave_up",
		class: ClassStop,
		text: func(r Reason) string {
			return withMessage(fmt.Sprintf("Gave up: the circuit opened %d times in a row without recovering (threshold: %d)", r.Count, r.Threshold), r.Message)
		},
	},
}

// withAction returns text, followed by ": " and the action's text when
// there is one.
func withAction(text, action string) string {
	if action == "" {
		return text
	}
	return text + ": " + action
}

// withMessage returns text, followed by ": " and msg when msg is not empty.
func withMessage(text, msg string) string {
	if msg == "" {
		return text
	}
	return text + ": " + msg
}

// atThreshold trips when count has reached a non-negative limit.
func atThreshold(count, limit int) verdict {
	if limit < 0 || count < limit {
		return pass
	}
	return trip
}

// activeRules returns the kinds of the stop and the completion signals c
// switches on, each in evaluation order (the early stop signals first,
// then the table's order), so that a signal switched off costs nothing.
func activeRules(c *Config) (stops, completions []ReasonKind) {
	for _, early := range []bool{true, false} {
		for i := range rules {
			r := &rules[i]
			if r.check == nil || r.class == ClassWarning || r.early != early || r.on != nil && !r.on(c) {
				continue
			}
			if r.class == ClassComplete {
				completions = append(completions, ReasonKind(i))
			} else {
				stops = append(stops, ReasonKind(i))
			}
		}
	}
	return stops, completions
}

// activeWarnings returns the kinds of the warnings c switches on that are
// judged after an iteration, in the table's order.
func activeWarnings(c *Config) []ReasonKind {
	var warns []ReasonKind
	for i := range rules {
		r := &rules[i]
		if r.class == ClassWarning && r.check != nil && (r.on == nil || r.on(c)) {
			warns = append(warns, ReasonKind(i))
		}
	}
	return warns
}

// opensCircuit reports whether a reason of kind k can be why the circuit
// is open or half-open.
func opensCircuit(k ReasonKind) bool { return k.Class() == ClassStop }

// failedAgain is the relapse test of the signals that failures make: the
// iteration failed.
func failedAgain(b *CircuitBreaker, _ Reason) bool { return b.lastFailed }

// sameErrorAgain is the relapse test of the same-error signals: the
// iteration failed with the reason's error.
func sameErrorAgain(b *CircuitBreaker, r Reason) bool {
	fp, ok := parseFingerprint(r.Fingerprint)
	return ok && b.lastFailed && b.lastFingerprint == fp
}

// circlingAgain is the relapse test of the circular-approach signal: the
// iteration took one of the circle's approaches again and resolved
// nothing.
func circlingAgain(b *CircuitBreaker, r Reason) bool {
	st := &b.stagnation
	if !st.approachAdded || st.approaches.n == 0 {
		return false
	}
	last := st.approaches.at(st.approaches.n - 1)
	if last.advanced {
		return false
	}
	for _, f := range strings.Split(r.Fingerprint, "/") {
		if fp, ok := parseFingerprint(f); ok && fp == last.fingerprint {
			return true
		}
	}
	return false
}

// plural returns word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// completes returns the reason of the first completion signal that trips
// after a successful iteration.
func (b *CircuitBreaker) completes() (Reason, bool) {
	for _, kind := range b.completions {
		if rules[kind].check(b) == trip {
			return rules[kind].reason(b, kind), true
		}
	}
	return Reason{}, false
}

// evaluate runs the active stop signals in order. It returns the reason of
// the first that trips, or else of the first that watches, with its
// verdict.
func (b *CircuitBreaker) evaluate() (Reason, verdict) {
	watched := ReasonNone
	for _, kind := range b.active {
		switch rules[kind].check(b) {
		case trip:
			return rules[kind].reason(b, kind), trip
		case watch:
			if watched == ReasonNone {
				watched = kind
			}
		}
	}
	if watched == ReasonNone {
		return Reason{}, pass
	}
	return rules[watched].reason(b, watched), watch
}

// reason returns the rule's evidence as a Reason of its kind.
func (r *rule) reason(b *CircuitBreaker, kind ReasonKind) Reason {
	reason := r.evidence(b)
	reason.Kind = kind
	return reason
}

// String returns the kind's name in snake case, e.g. "same_error".
func (k ReasonKind) String() string {
	if int(k) < len(rules) {
		return rules[k].name
	}
	return fmt.Sprintf("ReasonKind(%d)", uint8(k))
}
