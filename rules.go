package loopbreaker

import (
	"fmt"
	"slices"
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
	ReasonCycle                     // a cycle of steps gone round [StepRules.CycleRepeats] times
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
	ReasonSameToolError             // [StepRules.MaxSameToolError] of one tool's calls failing the same way
	ReasonRepeatedStep              // [StepRules.MaxRepeats] same steps in [StepRules.RepeatWindow]
	ReasonProviderLoop              // the provider refused the agent's repeated tool calls ([ProviderLoop])
	ReasonWindowShare               // limit: [SpendRules.MaxWindowShare] of a provider's usage window used
	ReasonWindowShareWarning        // warning: 80% of that share used
	ReasonBurnRate                  // limit: [SpendRules.MaxCostUSDPerMinute] or MaxTokensPerMinute reached
	ReasonBurnRateWarning           // warning: 80% of that rate
	ReasonStalled                   // [StepRules.MaxStalled] tool steps in a row changed no file and said nothing
)

// verdict is what a signal says about the iteration just recorded.
type verdict uint8

const (
	pass  verdict = iota // nothing to report
	watch                // one more chance: the circuit goes half-open
	trip                 // the circuit opens
)

// rule is one signal, the one place it is described: its reason's name,
// class and text; the thresholds it reads, with their defaults and valid
// values ([Thresholds]); how it judges an iteration and what evidence it
// gives; when it is one step short of tripping; what in an iteration is
// news to it; whether its opening holds and which sentinel its refusal
// matches. Adding a signal means adding a kind above, a row at that index
// below, and the state it counts.
type rule struct {
	name  string
	class ReasonClass
	text  func(r Reason) string
	// held: the circuit it opens stays open until Resume, Skip or Reset.
	held bool
	// sentinel is the error a refusal of the kind matches besides its
	// class's ([ErrOpen] for a stop, [ErrComplete] for a completion).
	sentinel error
	// thresholds are the Config fields the signal reads, its threshold
	// first; the signal is on when each is above zero once the defaults
	// are applied.
	thresholds []Threshold

	// counter returns what a counting signal counts after the iteration
	// just recorded, and whether the signal judges that iteration at all;
	// with b.mu held. It trips when the count reaches the threshold, and
	// is one step short one below it.
	counter func(b *CircuitBreaker) (n int, judged bool)
	// check evaluates a signal that does not only count, with b.mu held.
	// Nil for counting signals, and for kinds that the state machine sets
	// itself.
	check func(b *CircuitBreaker) verdict
	// short reports, for a signal that does not only count, whether one
	// more bad iteration would trip it; with b.mu held.
	short func(b *CircuitBreaker) bool
	// evidence returns the reason when check did not pass, or when the
	// signal is one step short.
	evidence func(b *CircuitBreaker) Reason
	// news are the fields of a successful iteration that the signal
	// judges; a success that is news to no active signal is not evaluated
	// (the hot path of a healthy loop). None: only failures, and the
	// counters a success resets, matter to it.
	news news
	// class is what the reason does. A completion's check runs after a
	// successful iteration, before the stop signals; a warning's runs
	// after each iteration that brings news of tasks or progress, and when
	// it trips, the Reason goes to [Decision.Warnings] and [Stats.Warnings].
	// early marks a stop signal checked before the rest of the table: a
	// narrower signal that would otherwise be hidden by a broader one
	// tripping on the same iteration.
	early bool
	// advice says, for a model, what a trip of the signal means ("You
	// made the same call 3 times..."); warning what being one step short
	// means and what one more such step does; try what to do instead, as
	// "Do not make this call again: " goes on ([Reason.ForModel]).
	advice, warning func(r Reason) string
	try             string
	// propose reports whether the proposed tool call, of the action
	// fingerprint given, would trip the signal if it ran and came out as
	// the same call did before ([CircuitBreaker.CheckAction]), with the
	// evidence of the steps before it; with b.mu held. Nil: the signal's
	// evidence is that, when proposeIf says so.
	propose func(b *CircuitBreaker, action uint32) (Reason, bool)
	// recurs reports, during the relapse watch after a recovery from an
	// open with reason r of this kind, whether the iteration just
	// recorded shows the signal again (one failure again, one iteration
	// without progress again...), with b.mu held. Nil: only the signal
	// tripping or watching again is a relapse.
	recurs func(b *CircuitBreaker, r Reason) bool
}

// news are the fields of an [Iteration] that a signal judges on a
// success, one bit each.
type news uint16

const (
	newsProgress news = 1 << iota
	newsApproach
	newsWork
	newsDone
	newsClaimed
	newsPlan
	newsAction
	newsNoticed
)

// news returns the fields the iteration sets that some signal judges on
// a success.
func (it *Iteration) news() news {
	var n news
	set := func(ok bool, bit news) {
		if ok {
			n |= bit
		}
	}
	set(it.Progress != nil, newsProgress)
	set(it.Approach != "", newsApproach)
	set(it.Work != WorkUnlabelled, newsWork)
	set(it.Done, newsDone)
	set(it.Claimed, newsClaimed)
	set(it.Plan != nil, newsPlan)
	set(it.Action != nil, newsAction)
	set(it.Noticed != nil, newsNoticed)
	return n
}

// rules is indexed by ReasonKind; the signals are evaluated in this order
// (the early ones first), and the first that trips gives the reason.
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
		thresholds: []Threshold{{Field: "Failures.MaxConsecutive", About: "consecutive failures that open the circuit", Default: 3,
			ptr: func(c *Config) *int { return &c.Failures.MaxConsecutive }}},
		counter: func(b *CircuitBreaker) (int, bool) { return b.count.ConsecutiveFailures, true },
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.count.ConsecutiveFailures, Threshold: b.cfg.Failures.MaxConsecutive}
		},
		recurs: failedAgain,
		advice: func(r Reason) string { return fmt.Sprintf("Your last %d tool calls all failed.", r.Count) },
		warning: func(r Reason) string {
			return fmt.Sprintf("your last %d tool calls failed; one more failure, and your tool calls are stopped.", r.Count)
		},
	},
	ReasonSameErrorInARow: {
		name:  "same_error_in_a_row",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("Same error repeated %d times in a row (threshold: %d)", r.Count, r.Threshold)
		},
		thresholds: []Threshold{{Field: "Failures.MaxSameErrorInARow", About: "the same error this many times in a row opens the circuit",
			ptr: func(c *Config) *int { return &c.Failures.MaxSameErrorInARow }}},
		counter: func(b *CircuitBreaker) (int, bool) { return b.count.SameErrorInARow, true },
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{
				Count:       b.count.SameErrorInARow,
				Threshold:   b.cfg.Failures.MaxSameErrorInARow,
				Fingerprint: formatFingerprint(b.lastFingerprint),
				Sample:      b.samples.latest(b.lastFingerprint),
			}
		},
		recurs: sameErrorAgain,
		advice: func(r Reason) string { return fmt.Sprintf("The same error came back %d times.", r.Count) },
		warning: func(r Reason) string {
			return fmt.Sprintf("the same error has come back %d times; once more, and your tool calls are stopped. What you are trying does not reach its cause.", r.Count)
		},
	},
	ReasonSameError: {
		name:  "same_error",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("Same error repeated %d times (threshold: %d)", r.Count, r.Threshold)
		},
		thresholds: []Threshold{{Field: "Failures.MaxSameError", About: "times one error is seen before the circuit opens", Default: 5,
			ptr: func(c *Config) *int { return &c.Failures.MaxSameError }}},
		counter: func(b *CircuitBreaker) (int, bool) {
			_, count, ok := b.sameErrorNow()
			return count, ok
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
		news:   newsNoticed,
		recurs: sameErrorAgain,
		advice: func(r Reason) string { return fmt.Sprintf("The same error came back %d times.", r.Count) },
		warning: func(r Reason) string {
			return fmt.Sprintf("the same error has come back %d times; once more, and your tool calls are stopped. What you are trying does not reach its cause.", r.Count)
		},
	},
	ReasonNoProgress: {
		name:  "no_progress",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("No progress in %d consecutive iterations (threshold: %d)", r.Count, r.Threshold)
		},
		thresholds: []Threshold{{Field: "Progress.MaxNoProgress", About: "iterations without progress that open the circuit", Default: 3,
			ptr: func(c *Config) *int { return &c.Progress.MaxNoProgress }}},
		counter: func(b *CircuitBreaker) (int, bool) { return b.progress.ConsecutiveNoProgress, b.progress.measured },
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
		news:   newsProgress,
		recurs: func(b *CircuitBreaker, _ Reason) bool { return b.progress.measured && !b.progress.made },
		advice: func(r Reason) string { return fmt.Sprintf("Nothing changed in %d iterations in a row.", r.Count) },
		try:    "plan the task again from a fresh look at it, or break it into smaller steps",
	},
	ReasonProgressScore: {
		name:  "progress_score",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("Progress score %d over the last %d iterations (threshold: below 0)", r.Count, r.Window)
		},
		thresholds: []Threshold{{Field: "Progress.ScoreWindow", About: "iterations whose progress scores add up below zero", Max: maxWindow,
			ptr: func(c *Config) *int { return &c.Progress.ScoreWindow }}},
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
		short: func(b *CircuitBreaker) bool {
			sum, n := b.stagnation.scoreSum()
			return n >= b.cfg.Progress.ScoreWindow-1 && sum < 0
		},
		evidence: func(b *CircuitBreaker) Reason {
			sum, n := b.stagnation.scoreSum()
			return Reason{Count: sum, Window: n}
		},
		news: newsProgress,
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
		thresholds: []Threshold{{Field: "Progress.OutputDeclinePercent", About: "output decline in percent that opens the circuit", Default: 70,
			Max: 99, why: "an output cannot decline by 100% or more",
			ptr: func(c *Config) *int { return &c.Progress.OutputDeclinePercent }}},
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
		news: newsProgress,
	},
	ReasonPermissionDenials: {
		name:  "permission_denials",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("Permission denied in %d consecutive iterations (threshold: %d)", r.Count, r.Threshold)
		},
		thresholds: []Threshold{{Field: "Progress.MaxPermissionDenials", About: "iterations in a row with permission denials that open the circuit", Default: 3,
			ptr: func(c *Config) *int { return &c.Progress.MaxPermissionDenials }}},
		counter: func(b *CircuitBreaker) (int, bool) {
			return b.progress.ConsecutivePermissionDenials, b.progress.measured
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.progress.ConsecutivePermissionDenials, Threshold: b.cfg.Progress.MaxPermissionDenials}
		},
		news: newsProgress,
		recurs: func(b *CircuitBreaker, _ Reason) bool {
			return b.progress.measured && b.progress.ConsecutivePermissionDenials > 0
		},
		advice: func(r Reason) string {
			return fmt.Sprintf("Your calls were denied permission in %d iterations in a row.", r.Count)
		},
		try: "ask the user for the permission, or do the work another way",
	},
	ReasonCircularApproach: {
		name:  "circular_approach",
		class: ClassStop,
		text: func(r Reason) string {
			return withAction(fmt.Sprintf("Circular approach: %d approaches alternating over the last %d iterations without progress (approaches: %s)",
				r.Count, r.Window, r.Fingerprint), r.Action)
		},
		thresholds: []Threshold{{Field: "Progress.CircularApproachWindow", About: "labelled iterations that go in circles", Default: 6,
			Min: 4, Max: maxWindow, why: "two cycles of two approaches",
			ptr: func(c *Config) *int { return &c.Progress.CircularApproachWindow }}},
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
		news:   newsApproach,
		recurs: circlingAgain,
		advice: func(Reason) string {
			return "You keep going back to approaches you already tried, and none resolves the task."
		},
		try: "step back, look for the root cause, and try an approach you have not tried yet",
	},
	ReasonTestFixLoop: {
		name:  "test_fix_loop",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("Test-fix loop: %d of the last %d iterations only fixed tests (threshold: more than %d%%)",
				r.Count, r.Window, r.Threshold)
		},
		thresholds: []Threshold{
			{Field: "Progress.TestFixWindow", About: "labelled iterations judged for a test-fix loop", Default: 5, Max: maxWindow,
				ptr: func(c *Config) *int { return &c.Progress.TestFixWindow }},
			{Field: "Progress.TestFixPercent", About: "the share of the window that only fixed tests, in percent, above which the circuit opens", Default: 80,
				Max: 99, why: "no share can be more than 100%",
				ptr: func(c *Config) *int { return &c.Progress.TestFixPercent }},
		},
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
		news: newsWork,
		recurs: func(b *CircuitBreaker, _ Reason) bool {
			st := &b.stagnation
			return st.workAdded && st.works.n > 0 && st.works.at(st.works.n-1) == WorkTestFix
		},
		advice: func(Reason) string { return "You keep fixing the tests instead of the code they test." },
		try:    "question what the tests assume, and make what you implement smaller",
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
		name:     "call_budget",
		class:    ClassLimit,
		sentinel: ErrCallBudget,
		text: func(r Reason) string {
			return fmt.Sprintf("Call budget exhausted: %d calls in the last hour (limit: %d)", r.Count, r.Threshold)
		},
		thresholds: []Threshold{{Field: "Spend.MaxCallsPerHour", About: "calls per rolling hour", off: "no budget",
			ptr: func(c *Config) *int { return &c.Spend.MaxCallsPerHour }}},
	},
	ReasonDoneSignals: {
		name:  "done_signals",
		class: ClassComplete,
		text: func(r Reason) string {
			return fmt.Sprintf("Complete: the agent reported done %d times in a row (threshold: %d)", r.Count, r.Threshold)
		},
		thresholds: []Threshold{{Field: "Progress.DoneSignals", About: "done signals in a row that complete the loop", Default: 2,
			ptr: func(c *Config) *int { return &c.Progress.DoneSignals }}},
		counter: func(b *CircuitBreaker) (int, bool) { return b.completion.ConsecutiveDoneSignals, true },
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.completion.ConsecutiveDoneSignals, Threshold: b.cfg.Progress.DoneSignals}
		},
		news: newsDone,
	},
	ReasonTestOnlyLoops: {
		name:  "test_only_loops",
		class: ClassComplete,
		text: func(r Reason) string {
			return fmt.Sprintf("Complete: %d iterations in a row only ran tests (threshold: %d)", r.Count, r.Threshold)
		},
		thresholds: []Threshold{{Field: "Progress.TestOnly", About: "iterations in a row that only ran tests, which complete the loop", Default: 3,
			ptr: func(c *Config) *int { return &c.Progress.TestOnly }}},
		counter: func(b *CircuitBreaker) (int, bool) { return b.completion.ConsecutiveTestOnly, true },
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.completion.ConsecutiveTestOnly, Threshold: b.cfg.Progress.TestOnly}
		},
		news: newsWork,
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
		news: newsPlan,
	},
	ReasonForcedOpen: {
		name:  "forced_open",
		class: ClassStop,
		held:  true,
		text:  func(r Reason) string { return withMessage("Forced open", r.Message) },
	},
	ReasonAborted: {
		name:  "aborted",
		class: ClassStop,
		held:  true,
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
		thresholds: []Threshold{{Field: "Failures.MaxSameTask", About: "failed iterations in a row on one task that open the circuit", Default: 3,
			ptr: func(c *Config) *int { return &c.Failures.MaxSameTask }}},
		counter: func(b *CircuitBreaker) (int, bool) { return b.tasks.TaskFailures, b.tasks.named },
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
		advice: func(r Reason) string { return fmt.Sprintf("The task failed %d times in a row.", r.Count) },
		warning: func(r Reason) string {
			return fmt.Sprintf("task %q has failed %d times in a row; once more, and your tool calls are stopped. Check what it needs first.", r.Task, r.Count)
		},
		try: "check what the task needs first (a step before it, a dependency, a setting), or break it into smaller ones",
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
		thresholds: []Threshold{{Field: "RelapseWindow", About: "iterations after a recovery in which the same signal reopens the circuit at once",
			Max: maxWindow, off: "switches the relapse watch off",
			ptr: func(c *Config) *int { return &c.RelapseWindow }}},
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
		thresholds: []Threshold{{Field: "Progress.MaxTaskIterations", About: "iterations in a row on one task above which a warning is given", Default: 20,
			ptr: func(c *Config) *int { return &c.Progress.MaxTaskIterations }}},
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
		thresholds: []Threshold{{Field: "Progress.TestsDeclining", About: "measured iterations in a row whose passing tests fell, after which a warning is given", Default: 3,
			ptr: func(c *Config) *int { return &c.Progress.TestsDeclining }}},
		counter: func(b *CircuitBreaker) (int, bool) { return b.trends.ConsecutiveTestDeclines, true },
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
		thresholds: []Threshold{{Field: "Progress.ErrorsRising", About: "measured iterations in a row whose errors rose, after which a warning is given", Default: 3,
			ptr: func(c *Config) *int { return &c.Progress.ErrorsRising }}},
		counter: func(b *CircuitBreaker) (int, bool) { return b.trends.ConsecutiveErrorRises, true },
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
		early: true,
		text: func(r Reason) string {
			return withAction(fmt.Sprintf("Same action with the same observation %d times in a row (threshold: %d)", r.Count, r.Threshold), r.Action)
		},
		thresholds: []Threshold{{Field: "Steps.MaxRepeatedAction", About: "the same action with the same observation, in a row", Default: 4,
			Min: 2, Max: maxWindow, why: "a repetition takes two",
			ptr: func(c *Config) *int { return &c.Steps.MaxRepeatedAction }}},
		counter:  func(b *CircuitBreaker) (int, bool) { return b.count.SameStepInARow, b.steps.added },
		evidence: repeatedActionEvidence,
		news:     newsAction,
		advice: func(r Reason) string {
			return fmt.Sprintf("You made the same call %d times in a row and it returned the same result each time: it will not change.", r.Count)
		},
		warning: func(r Reason) string {
			return fmt.Sprintf("this call has returned the same result %d times in a row (%s); make it once more and your tool calls are stopped. It will not change: try something different.", r.Count, r.Action)
		},
		try: "the result will not change; use what it told you, or do something else",
	},
	ReasonRepeatedActionError: {
		name:  "repeated_action_error",
		class: ClassStop,
		early: true,
		text: func(r Reason) string {
			return withAction(fmt.Sprintf("Same action failed %d times in a row (threshold: %d, error %s)", r.Count, r.Threshold, r.Fingerprint), r.Action)
		},
		thresholds: []Threshold{{Field: "Steps.MaxRepeatedActionError", About: "the same action failing, in a row", Default: 3,
			Min: 2, Max: maxWindow, why: "a repetition takes two",
			ptr: func(c *Config) *int { return &c.Steps.MaxRepeatedActionError }}},
		counter:  func(b *CircuitBreaker) (int, bool) { return b.count.SameActionFailedInARow, b.steps.added },
		evidence: repeatedErrorEvidence,
		news:     newsAction,
		advice: func(r Reason) string {
			return fmt.Sprintf("You made the same call %d times in a row and it failed each time: it will fail again.", r.Count)
		},
		warning: func(r Reason) string {
			return fmt.Sprintf("this call has failed %d times in a row (%s); if it fails once more, your tool calls are stopped. Try something different.", r.Count, r.Action)
		},
	},
	ReasonMonologue: {
		name:  "monologue",
		class: ClassStop,
		early: true,
		text: func(r Reason) string {
			return withAction(fmt.Sprintf("Monologue: the same message %d times in a row without a tool call (threshold: %d)", r.Count, r.Threshold), r.Action)
		},
		thresholds: []Threshold{{Field: "Steps.MaxMonologue", About: "the same message-only turn, in a row", Default: 3,
			Min: 2, Max: maxWindow, why: "a repetition takes two",
			ptr: func(c *Config) *int { return &c.Steps.MaxMonologue }}},
		counter: func(b *CircuitBreaker) (int, bool) { return b.count.SameMessageInARow, b.steps.added },
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{
				Count:       b.count.SameMessageInARow,
				Threshold:   b.cfg.Steps.MaxMonologue,
				Fingerprint: b.steps.lastAction(),
				Action:      b.steps.lastText(),
			}
		},
		news: newsAction,
		advice: func(r Reason) string {
			return fmt.Sprintf("You wrote the same message %d times in a row without calling a tool.", r.Count)
		},
		warning: func(r Reason) string {
			return fmt.Sprintf("you have written the same message %d times in a row; once more and you are stopped. Take the next step, or end your turn.", r.Count)
		},
		try: "take the next step of the task with a tool",
	},
	ReasonCycle: {
		name:  "cycle",
		class: ClassStop,
		early: true,
		text: func(r Reason) string {
			refused := ""
			if r.Proposed {
				refused = "; its last call was refused before it ran"
			}
			return withAction(fmt.Sprintf("Cycle: the same %d steps with the same observations, %d times over the last %d steps%s (actions: %s)",
				r.Count, r.Window/max(r.Count, 1), r.Window, refused, r.Fingerprint), r.Action)
		},
		thresholds: []Threshold{{Field: "Steps.CycleRepeats", About: "times a cycle of 2 to 5 steps, each with the same observation, is gone round", Default: 3,
			Min: 2, Max: maxWindow / maxCyclePeriod, why: "a cycle is one when it comes twice",
			ptr: func(c *Config) *int { return &c.Steps.CycleRepeats }}},
		check: func(b *CircuitBreaker) verdict {
			if !b.steps.added || b.steps.cycle(b.cfg.Steps.CycleRepeats, nil) == 0 {
				return pass
			}
			return trip
		},
		short: func(b *CircuitBreaker) bool {
			return b.steps.added && b.steps.shortPeriod(b.cfg.Steps.CycleRepeats) != 0
		},
		evidence: func(b *CircuitBreaker) Reason {
			repeats := b.cfg.Steps.CycleRepeats
			p := b.steps.cycle(repeats, nil)
			if p == 0 {
				p = b.steps.shortPeriod(repeats)
			}
			return b.steps.cycleReason(p, repeats, false)
		},
		propose: func(b *CircuitBreaker, action uint32) (Reason, bool) {
			repeats := b.cfg.Steps.CycleRepeats
			p := b.steps.cycleNext(repeats, action)
			return b.steps.cycleReason(p, repeats, true), p != 0
		},
		news: newsAction,
		advice: func(r Reason) string {
			return fmt.Sprintf("You keep going round the same %d steps, and their results do not change.", r.Count)
		},
		warning: func(r Reason) string {
			return fmt.Sprintf("you are going round the same %d steps (%s) and their results do not change; once more round, and your tool calls are stopped. Try something you have not tried.", r.Count, r.Action)
		},
		try: "step back, look for the root cause, and try an approach you have not tried yet",
	},
	ReasonCondensationLoop: {
		name:  "condensation_loop",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("Context condensed %d times in a row with nothing between (threshold: %d)", r.Count, r.Threshold)
		},
		thresholds: []Threshold{{Field: "Steps.MaxCondensations", About: "condensations of the context in a row with nothing between", Default: 10,
			ptr: func(c *Config) *int { return &c.Steps.MaxCondensations }}},
		counter: func(b *CircuitBreaker) (int, bool) {
			return b.count.ConsecutiveCondensations, b.count.ConsecutiveCondensations > 0
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.count.ConsecutiveCondensations, Threshold: b.cfg.Steps.MaxCondensations}
		},
		advice: func(r Reason) string {
			return fmt.Sprintf("Your context was condensed %d times in a row with nothing done between.", r.Count)
		},
		try: "take a smaller step, reading less at once",
	},
	ReasonProtectedFiles: {
		name:  "protected_files",
		class: ClassStop,
		held:  true,
		text:  func(r Reason) string { return withMessage("Protected files lost", r.Message) },
	},
	ReasonProviderLimit: {
		name:     "provider_limit",
		class:    ClassLimit,
		sentinel: ErrProviderLimit,
		text:     func(r Reason) string { return withMessage("Provider limit", r.Message) },
	},
	ReasonProviderStopped: {
		name:     "provider_stopped",
		class:    ClassLimit,
		sentinel: ErrProviderStopped,
		text: func(r Reason) string {
			return withMessage("Provider stopped the loop (no waiting ends this)", r.Message)
		},
	},
	ReasonSpendCap: {
		name:     "spend_cap",
		class:    ClassLimit,
		sentinel: ErrSpendCap,
		text:     func(r Reason) string { return spendCapText(r, "over the loop's life") },
		thresholds: []Threshold{{Field: "Spend.MaxTokens", About: "tokens the loop may spend over its life", off: "no cap",
			ptr: func(c *Config) *int { return &c.Spend.MaxTokens }}},
	},
	ReasonHourlySpendCap: {
		name:     "hourly_spend_cap",
		class:    ClassLimit,
		sentinel: ErrSpendCap,
		text:     func(r Reason) string { return spendCapText(r, "in the last hour") },
		thresholds: []Threshold{{Field: "Spend.MaxTokensPerHour", About: "tokens the loop may spend in any rolling hour", off: "no cap",
			ptr: func(c *Config) *int { return &c.Spend.MaxTokensPerHour }}},
	},
	ReasonSpendWarning: {
		name:  "spend_warning",
		class: ClassWarning,
		text:  func(r Reason) string { return r.Message },
	},
	ReasonUnavailable: {
		name:     "unavailable",
		class:    ClassLimit,
		sentinel: ErrUnavailable,
		text:     func(r Reason) string { return withMessage("Shared breaker unavailable", r.Message) },
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
		thresholds: []Threshold{{Field: "Progress.MaxClaims", About: "claims of done without the done signal, in a row, that open the circuit", Default: 3,
			ptr: func(c *Config) *int { return &c.Progress.MaxClaims }}},
		counter: func(b *CircuitBreaker) (int, bool) { return b.completion.ConsecutiveClaims, true },
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.completion.ConsecutiveClaims, Threshold: b.cfg.Progress.MaxClaims}
		},
		news: newsClaimed,
		advice: func(r Reason) string {
			return fmt.Sprintf("You said the work is done %d times in a row without the done signal.", r.Count)
		},
		try: "check the plan again: if all of it is done, give the done signal; otherwise take the next open item and do not say the work is done",
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
		advice: func(r Reason) string {
			return "The model's provider refused your tool calls: you repeated the same call with the same arguments, round after round."
		},
		try: "stop repeating that call: read the result it already gave, and take a different step",
	},
	ReasonGaveUp: {
		name:     "gave_up",
		class:    ClassStop,
		held:     true,
		sentinel: ErrGaveUp,
		text: func(r Reason) string {
			return withMessage(fmt.Sprintf("Gave up: the circuit opened %d times in a row without recovering (threshold: %d)", r.Count, r.Threshold), r.Message)
		},
		thresholds: []Threshold{{Field: "MaxConsecutiveOpens", About: "openings in a row, with no recovery between, before the breaker gives up", Default: 10,
			off: "never gives up",
			ptr: func(c *Config) *int { return &c.MaxConsecutiveOpens }}},
	},
	ReasonSameToolError: {
		name:  "same_tool_error",
		class: ClassStop,
		early: true,
		text: func(r Reason) string {
			return withAction(fmt.Sprintf("Same tool, same error %d times in a row of its calls, whatever the arguments (threshold: %d, error %s)", r.Count, r.Threshold, r.Fingerprint), r.Action)
		},
		thresholds: []Threshold{{Field: "Steps.MaxSameToolError", About: "one tool failing with one error, in a row of its calls, whatever their arguments", Default: 5,
			Min: 2, Max: maxWindow, why: "a repetition takes two",
			ptr: func(c *Config) *int { return &c.Steps.MaxSameToolError }}},
		counter: func(b *CircuitBreaker) (int, bool) { return b.steps.sameToolErrors(), b.steps.added },
		evidence: func(b *CircuitBreaker) Reason {
			last, _ := b.steps.last()
			return Reason{
				Count:       b.steps.sameToolErrors(),
				Threshold:   b.cfg.Steps.MaxSameToolError,
				Fingerprint: formatFingerprint(last.errFP),
				Sample:      b.samples.latest(last.errFP),
				Action:      last.text,
			}
		},
		news: newsAction,
		advice: func(r Reason) string {
			return fmt.Sprintf("This tool failed with the same error %d times in a row, whatever arguments you gave it: other arguments will not fix it.", r.Count)
		},
		warning: func(r Reason) string {
			return fmt.Sprintf("this tool has failed with the same error %d times in a row (%s); if it fails so once more, your tool calls are stopped. Other arguments will not fix it: read the error.", r.Count, r.Action)
		},
		try: "read the error: it does not come from the arguments; fix its cause, or use another tool",
	},
	ReasonRepeatedStep: {
		name:  "repeated_step",
		class: ClassStop,
		early: true,
		text: func(r Reason) string {
			return withAction(fmt.Sprintf("Same action with the same observation %d times in the last %d steps%s (threshold: %d)", r.Count, r.Window, refusedCall(r), r.Threshold), r.Action)
		},
		thresholds: []Threshold{
			{Field: "Steps.MaxRepeats", About: "the same action with the same observation, in the last RepeatWindow steps", Default: 4,
				Min: 2, Max: maxWindow, why: "a repetition takes two",
				ptr: func(c *Config) *int { return &c.Steps.MaxRepeats }},
			{Field: "Steps.RepeatWindow", About: "the steps judged for repeats with others between", Default: 30,
				Min: 2, Max: maxWindow, why: "a repetition takes two",
				ptr: func(c *Config) *int { return &c.Steps.RepeatWindow }},
		},
		counter: func(b *CircuitBreaker) (int, bool) {
			return b.steps.recurring(b.cfg.Steps.RepeatWindow, b.count.SameStepInARow), b.steps.added
		},
		evidence: func(b *CircuitBreaker) Reason {
			last, _ := b.steps.last()
			return Reason{
				Count:       b.steps.recurring(b.cfg.Steps.RepeatWindow, b.count.SameStepInARow),
				Threshold:   b.cfg.Steps.MaxRepeats,
				Window:      b.cfg.Steps.RepeatWindow,
				Fingerprint: formatFingerprint(last.action),
				Action:      last.text,
			}
		},
		propose: func(b *CircuitBreaker, action uint32) (Reason, bool) {
			window := b.cfg.Steps.RepeatWindow
			s, n := b.steps.recurringNext(action, window, b.count.SameStepInARow)
			if n < b.cfg.Steps.MaxRepeats {
				return Reason{}, false
			}
			return Reason{Count: n - 1, Threshold: b.cfg.Steps.MaxRepeats, Window: window, Fingerprint: formatFingerprint(s.action), Action: s.text}, true
		},
		news: newsAction,
		advice: func(r Reason) string {
			return fmt.Sprintf("You made this call %d times in the last %d steps and it returned the same result each time: nothing it reads has changed.", r.Count, r.Window)
		},
		warning: func(r Reason) string {
			return fmt.Sprintf("you have made this call %d times in the last %d steps with the same result (%s); once more and your tool calls are stopped. Use what it told you.", r.Count, r.Window, r.Action)
		},
		try: "use what it told you the times before, or do something else",
	},
	ReasonWindowShare: {
		name:     "window_share",
		class:    ClassLimit,
		sentinel: ErrSpendCap,
		text: func(r Reason) string {
			return withTail(fmt.Sprintf("Window share cap reached: %d%% of the %s used (cap: %d%%)", r.Count, windowName(r.Window), r.Threshold), r.Message)
		},
		thresholds: []Threshold{{Field: "Spend.MaxWindowShare", About: "percent of the provider's 5-hour or weekly usage window the loop may use",
			Max: 100, off: "no cap",
			ptr: func(c *Config) *int { return &c.Spend.MaxWindowShare }}},
	},
	ReasonWindowShareWarning: {
		name:  "window_share_warning",
		class: ClassWarning,
		text: func(r Reason) string {
			return withTail(fmt.Sprintf("Window share %d%% of the %s used (cap: %d%%)", r.Count, windowName(r.Window), r.Threshold), r.Message)
		},
	},
	ReasonBurnRate: {
		name:     "burn_rate",
		class:    ClassLimit,
		sentinel: ErrSpendCap,
		text:     func(r Reason) string { return "Burn rate cap reached: " + burnRateText(r) },
		thresholds: []Threshold{{Field: "Spend.MaxTokensPerMinute", About: "tokens a minute the loop may spend, over the rolling burn window", off: "no cap",
			ptr: func(c *Config) *int { return &c.Spend.MaxTokensPerMinute }}},
	},
	ReasonBurnRateWarning: {
		name:  "burn_rate_warning",
		class: ClassWarning,
		text:  func(r Reason) string { return "Burn rate near the cap: " + burnRateText(r) },
	},
	ReasonStalled: {
		name:  "stalled",
		class: ClassStop,
		text: func(r Reason) string {
			return fmt.Sprintf("Stalled: %d tool calls in a row changed no file and said nothing to the user (threshold: %d)", r.Count, r.Threshold)
		},
		thresholds: []Threshold{{Field: "Steps.MaxStalled", About: "tool steps in a row, each reporting its progress, that change no file and say nothing to the user", Default: 50,
			Min: 2, why: "a run takes two",
			ptr: func(c *Config) *int { return &c.Steps.MaxStalled }}},
		counter: func(b *CircuitBreaker) (int, bool) { return b.count.StalledSteps, b.steps.added },
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.count.StalledSteps, Threshold: b.cfg.Steps.MaxStalled}
		},
		news: newsAction,
		advice: func(r Reason) string {
			return fmt.Sprintf("You made %d tool calls in a row without changing a file or writing a word to the user.", r.Count)
		},
		warning: func(r Reason) string {
			return fmt.Sprintf("your last %d tool calls changed no file and you have said nothing to the user; one more such call and your tool calls are stopped. Tell the user what you found and what you will do, or make the change.", r.Count)
		},
		try: "tell the user what you have found and what blocks you, or make the change you were looking for",
	},
}

// repeatedActionEvidence is the evidence of the same step in a row.
func repeatedActionEvidence(b *CircuitBreaker) Reason {
	return Reason{
		Count:       b.count.SameStepInARow,
		Threshold:   b.cfg.Steps.MaxRepeatedAction,
		Fingerprint: b.steps.lastAction(),
		Action:      b.steps.lastText(),
	}
}

// repeatedErrorEvidence is the evidence of the same action failing in a
// row.
func repeatedErrorEvidence(b *CircuitBreaker) Reason {
	return Reason{
		Count:       b.count.SameActionFailedInARow,
		Threshold:   b.cfg.Steps.MaxRepeatedActionError,
		Fingerprint: formatFingerprint(b.lastFingerprint),
		Sample:      b.samples.latest(b.lastFingerprint),
		Action:      b.steps.lastText(),
	}
}

// withAction returns text, followed by ": " and the action's text when
// there is one.
func withAction(text, action string) string {
	if action == "" {
		return text
	}
	return text + ": " + action
}

// refusedCall says, for a reason a proposed call tripped
// ([Reason.Proposed]), that the call was refused; "" otherwise.
func refusedCall(r Reason) string {
	if !r.Proposed {
		return ""
	}
	return "; the " + ordinal(r.Count+1) + " call was refused before it ran"
}

// withTail returns text, followed by "; " and tail when tail is not empty.
func withTail(text, tail string) string {
	if tail == "" {
		return text
	}
	return text + "; " + tail
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

// on reports whether c, with its defaults applied, switches the signal
// on: each of its thresholds is above zero.
func (r *rule) on(c *Config) bool {
	for i := range r.thresholds {
		if *r.thresholds[i].ptr(c) <= 0 {
			return false
		}
	}
	return true
}

// judges reports whether the signal is evaluated after an iteration.
func (r *rule) judges() bool { return r.check != nil || r.counter != nil }

// judge evaluates the signal after the iteration just recorded, with b.mu
// held: its check, or for a counting signal its count against its
// threshold.
func (r *rule) judge(b *CircuitBreaker) verdict {
	if r.check != nil {
		return r.check(b)
	}
	n, ok := r.counter(b)
	if !ok {
		return pass
	}
	return atThreshold(n, *r.thresholds[0].ptr(&b.cfg))
}

// shortOf reports whether the signal is one bad iteration short of
// tripping, with b.mu held: a count one below a threshold above 1, or
// what the signal's short says.
func (r *rule) shortOf(b *CircuitBreaker) bool {
	if r.short != nil {
		return r.short(b)
	}
	if r.counter == nil {
		return false
	}
	n, ok := r.counter(b)
	limit := *r.thresholds[0].ptr(&b.cfg)
	return ok && limit > 1 && n == limit-1
}

// activeRules returns the kinds of the stop and the completion signals c
// switches on, each in evaluation order (the early stop signals first,
// then the table's order), so that a signal switched off costs nothing.
func activeRules(c *Config) (stops, completions []ReasonKind) {
	for _, early := range []bool{true, false} {
		for i := range rules {
			r := &rules[i]
			if !r.judges() || r.class == ClassWarning || r.early != early || !r.on(c) {
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
		if r.class == ClassWarning && r.judges() && r.on(c) {
			warns = append(warns, ReasonKind(i))
		}
	}
	return warns
}

// newsOf returns the news the signals kinds judge.
func newsOf(kinds ...[]ReasonKind) news {
	var n news
	for _, ks := range kinds {
		for _, k := range ks {
			n |= rules[k].news
		}
	}
	return n
}

// shortNow returns the reasons of the active stop signals that one more
// bad iteration would trip, in evaluation order; nil when there are none.
// Called with b.mu held.
func (b *CircuitBreaker) shortNow() []Reason {
	if b.state == Open || b.completion.Complete.Kind != ReasonNone {
		return nil
	}
	var short []Reason
	for _, kind := range b.active {
		if r := &rules[kind]; r.shortOf(b) {
			reason := r.reason(b, kind)
			reason.Short = true
			if reason.Action != "" && slices.ContainsFunc(short, func(s Reason) bool { return s.Action == reason.Action }) {
				continue // one warning of a call: the first signal's
			}
			short = append(short, reason)
		}
	}
	return short
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
		if rules[kind].judge(b) == trip {
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
		switch rules[kind].judge(b) {
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

// proposal returns the reason of the first active signal that the
// proposed call of action would trip ([CircuitBreaker.CheckAction]).
// Called with b.mu held.
func (b *CircuitBreaker) proposal(action uint32) (Reason, bool) {
	for _, kind := range b.active {
		if r := &rules[kind]; r.propose != nil {
			if reason, ok := r.propose(b, action); ok {
				reason.Kind, reason.Proposed = kind, true
				return reason, true
			}
		}
	}
	return Reason{}, false
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
