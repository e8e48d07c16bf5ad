package loopbreaker

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/loopbreaker/loopbreaker/internal/limits"
)

// CircuitBreaker watches an agent loop and stops it when it is stuck. The
// host calls Check before each iteration and Record after it. All methods
// are safe for concurrent use. A CircuitBreaker must be made with New.
//
// The host code a breaker calls ([Config.Now], [Config.Classify],
// [Config.CooldownPolicy], [Config.OnStateChange]) may panic. The panic goes on
// to the caller, and the breaker's lock is never left held: every method
// goes on working. What the breaker holds afterwards: a panic in Now or
// Classify leaves the call it came from undone (an iteration unrecorded, a
// control not applied); a panic in CooldownPolicy leaves the iteration
// counted and the circuit in the state it was in, so the next iteration
// that trips it opens it, asking the policy again; a panic in
// OnStateChange drops the transitions not yet delivered.
type CircuitBreaker struct {
	mu          sync.Mutex
	cfg         Config           // with defaults applied
	active      []ReasonKind     // the stop signals cfg switches on, in evaluation order
	completions []ReasonKind     // the completion signals cfg switches on
	warns       []ReasonKind     // the warnings cfg switches on that iterations make
	calls       callBudget       // outside loop: Reset does not give back calls made
	spend       spendState       // outside loop too: Reset does not give back what was spent
	spendCapped bool             // cfg caps the spend
	spendHourly bool             // ...by the hour
	unpriced    []string         // models that spent tokens with no price: Reset keeps them too
	patterns    []limits.Pattern // cfg.Limits.Patterns, for internal/limits
	// callsByTransport: a Transport counts the calls as they are made, so
	// an iteration counts only the calls it says it made.
	callsByTransport bool
	loop

	// Transitions waiting for [Config.OnStateChange], and whether a
	// goroutine is delivering them (see unlock).
	pending    []Transition
	delivering bool

	// The calls of Wait that are waiting, each woken (its context
	// cancelled) by the next change a host makes (wake).
	waiters    map[uint64]context.CancelFunc
	nextWaiter uint64
}

// loop is everything the breaker has learned about the loop; Reset
// replaces it whole.
type loop struct {
	state         State
	reason        Reason
	openedAt      time.Time
	restartedAt   time.Time // the cooldown's restart, while the clock reads earlier than openedAt
	probeInFlight bool
	cooldown      time.Duration // of the current open

	count counts

	errors               errorCounts
	lastFailed           bool   // the last recorded iteration failed
	lastFingerprint      uint32 // of the last failure
	lastFingerprintCount int    // its count after the last failure
	anyFailure           bool   // lastFingerprint is set

	progress   progressState
	stagnation stagnationState
	completion completionState
	steps      stepState

	samples  *errorSamples // the error text of the recent fingerprints
	tasks    taskState
	trends   trendState
	relapse  relapseState
	warnings []Reason // in force after the last recorded iteration (refreshWarnings)

	history ring[Transition] // the last historyLen transitions

	limit providerLimit // the provider limit in force

	// restored: the state came from a snapshot, perhaps taken under other
	// thresholds, and the rules have not judged it since; the next
	// recorded iteration is judged in full, a bare success included.
	restored bool
}

// counts are the loop's counters that Stats reports, under the same names,
// and that a snapshot stores, under its JSON names.
type counts struct {
	Opens               int `json:"opens"`             // since New or Reset
	ConsecutiveOpens    int `json:"consecutive_opens"` // since the circuit last closed
	Iterations          int `json:"iterations"`        // successes and failures, not neutral ones
	NeutralIterations   int `json:"neutral_iterations"`
	ConsecutiveFailures int `json:"consecutive_failures"`
	TotalFailures       int `json:"total_failures"`
	SameErrorInARow     int `json:"same_error_in_a_row"` // failures in a row with one fingerprint
	LastProgressScore   int `json:"last_progress_score"`

	// The step signals' counters (steps.go).
	SameStepInARow           int `json:"same_step_in_a_row,omitempty"`          // tool steps in a row with one action and one observation
	SameActionFailedInARow   int `json:"same_action_failed_in_a_row,omitempty"` // failed tool steps in a row with one action
	SameMessageInARow        int `json:"same_message_in_a_row,omitempty"`       // message-only turns in a row with one message
	ConsecutiveCondensations int `json:"consecutive_condensations,omitempty"`   // condensations with nothing between
	Condensations            int `json:"condensations,omitempty"`               // since New or Reset
	LimitedIterations        int `json:"limited_iterations"`                    // refused by the provider
}

// Iteration is what the host tells the breaker about one iteration.
type Iteration struct {
	// Err is the iteration's error; nil means it succeeded. Its Error()
	// text is fingerprinted with Fingerprint.
	Err error
	// Progress is what the iteration achieved; nil when the host does not
	// measure progress, and the progress signals then stay idle. Failure
	// and progress are independent: a failed iteration that made progress
	// counts as a failure and as progress.
	Progress *Progress
	// Approach labels the way the iteration went about its task (any
	// text; it is fingerprinted like an error). Empty means unlabelled.
	// The circular-approach signal reads it.
	Approach string
	// Work says what kind of work the iteration did; the test-fix-loop
	// and test-only completion signals read it.
	Work WorkKind
	// Done says the agent reported that the work is done (a done signal,
	// ralph-claude-code's EXIT_SIGNAL). [ProgressRules.DoneSignals] of them in a row
	// complete the loop.
	Done bool
	// Plan is the host's task list after the iteration; nil when the host
	// keeps none. A plan with every task done completes the loop.
	Plan *Plan
	// Calls counts the API calls the iteration made, for the call budget;
	// zero or less counts as one, or, when the calls are counted as they
	// are made ([CircuitBreaker.CountCall], which the HTTP transport calls),
	// as none.
	Calls int

	// Action is what the step did, for a host whose loop runs one model
	// turn and its tool calls per iteration: the tool called and its
	// arguments, or a message-only turn. Nil when the host does not say;
	// the step signals (repeated action, repeated action error,
	// monologue, alternating actions) then leave the iteration out. A
	// turn that calls several tools is several steps: record one
	// iteration per tool call, in order.
	Action *Action
	// Observation is the step's result: what the tool returned (for a
	// message-only turn, the reply it got, if any). It is normalized like
	// an error, so times, ids and paths that vary do not make two
	// identical results look different, but compared whole, not by the
	// first 500 runes a fingerprint reads: an output polled while it grows
	// is a new result each time. Of an observation above 1 MiB the first
	// and the last 512 KiB and its length count. When it is empty and the
	// step failed, Err's text stands in for it.
	Observation string
	// Condensed says the agent's context was condensed, or overflowed,
	// instead of a step being taken (OpenHands' condensation events). It
	// is neither a success nor a failure: it changes no counter but the
	// condensation ones, whatever Err says, and gives a half-open probe
	// slot back. [StepRules.MaxCondensations] condensations with nothing
	// between open the circuit. Calls still count.
	Condensed bool
	// Task names the task the iteration worked on (any text: a plan
	// item, a ticket, "05-01"); the breaker trims white space around it
	// and keeps at most 200 runes. Empty means no task: the iteration is
	// left out of the task signals. Failures in a row on one task stop
	// the loop ([FailureRules.MaxSameTask]), a task that takes many
	// iterations is a warning ([ProgressRules.MaxTaskIterations]), and Skip
	// records the task as skipped ([CircuitBreaker.SkippedTasks]).
	Task string
	// Usage is what the iteration spent (tokens, cost), for the spend
	// caps; zero when the host did not say, or reported it as it
	// happened with [CircuitBreaker.AddUsage]. It counts whatever the
	// outcome, a provider limit's included.
	Usage Usage
}

// plain reports whether the iteration says nothing beyond its outcome
// that a signal judges on a success. (A task's name is not such news: a
// success on a task resets its failures, and its warning is judged when
// it is recorded.)
func (it *Iteration) plain() bool {
	return it.Progress == nil && it.Approach == "" && it.Work == WorkUnlabelled && !it.Done && it.Plan == nil && it.Action == nil
}

// Decision is the breaker's answer to Check.
type Decision struct {
	// Allow says whether the iteration may run.
	Allow bool
	// State is the circuit's state when the decision was made. A refusal
	// in HalfOpen means the single probe is already in flight.
	State State
	// Probe is true when this iteration is the half-open probe: its
	// outcome closes the circuit or opens it again.
	Probe bool
	// Reason is why the iteration was refused (the circuit is open, a
	// provider limit is in force, a spend cap or the call budget is spent,
	// or the loop is complete), or, in HalfOpen, why the circuit opened;
	// zero otherwise. For an open circuit it prints as the text TripReason
	// returns.
	Reason Reason
	// Complete is true when the loop is complete (Reason says which
	// completion signal): Check refuses every iteration from then on, and
	// it is not a failure.
	Complete bool
	// Budget is the call budget as of the decision; zero without one.
	Budget Budget
	// Warnings are the warnings in force, each a [Reason] with its kind,
	// figures and text: the call budget 80% used
	// ([ReasonCallBudgetWarning]), 80% of a spend cap spent
	// ([ReasonSpendWarning]), a task past [ProgressRules.MaxTaskIterations]
	// ([ReasonLongTask]), passing tests declining ([ReasonTestsDeclining]),
	// errors rising ([ReasonErrorsRising]). They stop nothing. Nil when
	// there are none, and for a complete loop. The slice is the caller's.
	Warnings []Reason
	// RetryAfter is, when the circuit is open, the time left until a
	// probe may run; at a provider limit, the time until it lifts; when
	// the call budget or an hourly spend cap is spent, the time until
	// enough leaves the rolling hour; zero otherwise, and for a refusal
	// no waiting ends.
	RetryAfter time.Duration
}

// Err returns nil when the decision allows the iteration, and else a
// *RefusedError with its reason, which matches the sentinel of the reason
// (errors.Is): [ErrOpen] for an open circuit, [ErrProviderLimit],
// [ErrSpendCap], [ErrComplete] and the others (see RefusedError).
func (d Decision) Err() error {
	if d.Allow {
		return nil
	}
	return &RefusedError{State: d.State, Reason: d.Reason, RetryAfter: d.RetryAfter}
}

// New returns a closed breaker for cfg. Zero fields of cfg take their
// defaults; an invalid cfg is an error matching [ErrInvalidConfig].
func New(cfg Config) (*CircuitBreaker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := &CircuitBreaker{cfg: cfg.withDefaults(), patterns: internalPatterns(cfg.Limits.Patterns)}
	b.active, b.completions = activeRules(&b.cfg)
	b.warns = activeWarnings(&b.cfg)
	b.spendCapped, b.spendHourly = spendCaps(&b.cfg)
	b.reset()
	return b, nil
}

// reset returns everything but the config to its initial value.
func (b *CircuitBreaker) reset() {
	b.loop = loop{
		errors:     newErrorCounts(b.cfg.Failures.MaxFingerprints),
		stagnation: newStagnationState(&b.cfg),
		steps:      newStepState(&b.cfg),
		history:    newRing[Transition](historyLen),
		samples:    newErrorSamples(&b.cfg),
	}
}

// Check asks whether the next iteration may run. A closed circuit allows
// it. An open circuit refuses it until the cooldown has passed; then it is
// half-open and allows exactly one probe, refusing every other Check until
// the probe's outcome is recorded. A provider limit, a spent spend cap and
// a spent call budget refuse it without opening the circuit (and without
// taking the probe), and a complete loop refuses every iteration.
//
// When several refuse, the first of these says why: the loop is complete;
// the provider stopped it; the spend cap of its life is spent; the circuit
// is open; a provider limit is in force; an hourly spend cap is spent; the
// call budget is spent.
func (b *CircuitBreaker) Check() Decision {
	b.mu.Lock()
	if b.state == Closed && b.completion.Complete.Kind == ReasonNone && b.cfg.Spend.MaxCallsPerHour <= 0 && len(b.warnings) == 0 &&
		b.limit.reason.Kind == ReasonNone && !b.spendCapped {
		b.mu.Unlock()
		return Decision{Allow: true, State: Closed}
	}
	return b.check()
}

// check is Check past its fast path, called with b.mu held; it releases
// it.
func (b *CircuitBreaker) check() Decision {
	defer b.unlock()
	if done := b.completion.Complete; done.Kind != ReasonNone {
		return Decision{State: b.state, Reason: done, Complete: true}
	}
	now := b.cfg.Now()
	b.advance(now)
	d := Decision{State: b.state}
	limit, limitWait, limited := b.limitAt(now)
	if limited && limit.Kind == ReasonProviderStopped {
		d.Reason = limit
		return d
	}
	var spend Spend
	spent, spentReason := false, Reason{}
	if b.spendCapped {
		spend = b.spendAt(now)
		spentReason, spent = spend.reached()
		if spent && spentReason.Kind == ReasonSpendCap {
			d.Reason = spentReason
			return d
		}
	}
	if b.state == Open {
		d.Reason, d.RetryAfter = b.reason, b.retryAfter(now)
		d.Warnings = b.warningsNow(Budget{}, spend)
		return d
	}
	if limited {
		d.Reason, d.RetryAfter = limit, limitWait
		return d
	}
	if spent {
		d.Reason = spentReason
		d.RetryAfter = b.spend.retryAfter(spend.MaxTokensPerHour, spend.MaxCostUSDPerHour, now)
		return d
	}
	d.Budget = b.budgetState(now)
	if d.Budget.Limit > 0 && d.Budget.Used >= d.Budget.Limit {
		d.Reason = Reason{Kind: ReasonCallBudget, Count: d.Budget.Used, Threshold: d.Budget.Limit}
		d.RetryAfter = b.calls.retryAfter(d.Budget.Limit, now)
		d.Warnings = b.warningsNow(Budget{}, spend)
		return d
	}
	d.Warnings = b.warningsNow(d.Budget, spend)
	d.Allow = true
	if b.state == HalfOpen {
		d.Reason = b.reason
		d.Allow = b.takeProbe()
		d.Probe = d.Allow
	}
	return d
}

// Record tells the breaker the outcome of an iteration. [Config.Classify]
// decides how a non-nil Err counts (by default a failure, neutral for
// context.Canceled, and a provider limit for one: see [DefaultClassify]); a
// nil Err is a success. A failure or a stalled iteration may open the
// circuit; the outcome of a half-open probe closes it or opens it again. A
// neutral iteration changes no counter and gives the half-open probe slot
// back. An iteration the provider refused changes no counter of the
// signals either (it counts in [Stats.LimitedIterations]), gives the
// probe slot back, and puts the limit in force: Check refuses until it
// lifts. Calls and usage count whatever the outcome. An iteration recorded while the circuit is
// open only updates the counters. Iterations are not told apart: in
// HalfOpen the first outcome recorded decides, whichever Check let its
// iteration run. A condensation ([Iteration.Condensed]) is neither a
// success nor a failure, and only the condensation signal judges it.
func (b *CircuitBreaker) Record(it Iteration) { b.recordIteration(it) }

// recordIteration is Record; it reports whether the circuit is open after
// the iteration.
func (b *CircuitBreaker) recordIteration(it Iteration) (open bool) {
	if it.Condensed {
		lost := b.guardIteration()
		b.mu.Lock()
		defer b.unlock()
		now := b.cfg.Now()
		defer b.wake()
		b.countCalls(it.Calls, now)
		b.recordCondensation(now)
		b.holdLost(lost, now)
		return b.state == Open
	}
	// Outside the lock: the classifier is the host's code, and
	// fingerprinting is the only costly part.
	outcome := Success
	if it.Err != nil {
		outcome = b.cfg.Classify(it.Err)
	}
	var fp, approachFP uint32
	var errText, sample string
	var limit Limit
	switch outcome {
	case Failure:
		errText = it.Err.Error()
		fp = fingerprint32(errText)
		if b.cfg.Failures.MaxSamples >= 0 {
			sample = sampleOf(errText)
		}
	case ProviderLimit, ProviderStop:
		limit = b.limitFor(it.Err, outcome)
	}
	it.Task = taskName(it.Task)
	usage, unpriced := b.priced(it.Usage)
	if it.Approach != "" {
		approachFP = fingerprint32(it.Approach)
	}
	var step *stepFacts
	if it.Action != nil && outcome != Neutral {
		f := newStepFacts(&it, outcome == Failure, errText)
		step = &f
	}
	lost := b.guardIteration()
	b.mu.Lock()
	defer b.unlock()
	now := b.cfg.Now()
	defer b.wake()
	b.countCalls(it.Calls, now)
	b.addUsage(usage, unpriced, now)
	switch outcome {
	case Neutral:
		b.count.NeutralIterations++
		b.releaseProbe()
	case ProviderLimit, ProviderStop:
		b.count.LimitedIterations++
		b.releaseProbe()
		b.limitSeen(limit, now)
	default:
		b.record(outcome == Failure, fp, sample, &it, approachFP, step, now)
	}
	b.holdLost(lost, now)
	return b.state == Open
}

// RecordSuccess records a successful iteration: the consecutive-failure
// count goes back to zero; the error history is kept.
func (b *CircuitBreaker) RecordSuccess() {
	lost := b.guardIteration()
	b.mu.Lock()
	defer b.unlock()
	now := b.cfg.Now()
	defer b.wake()
	b.countCalls(0, now)
	b.record(false, 0, "", &Iteration{}, 0, nil, now)
	b.holdLost(lost, now)
}

// RecordFailure records a failed iteration with its error text, as Record
// records an iteration whose Err has that text, and reports whether the
// circuit is open after it. [Config.Classify] decides how it counts, as
// for Record: with the default classifier the text of a provider limit
// ("You've hit your limit · resets 5pm (Europe/Vilnius)", an HTTP 429)
// puts the limit in force and counts as no failure.
func (b *CircuitBreaker) RecordFailure(msg string) bool {
	return b.recordIteration(Iteration{Err: errorText(msg)})
}

// errorText is an error whose text is all there is to it: the error of
// RecordFailure.
type errorText string

func (e errorText) Error() string { return string(e) }

// record counts one iteration, recorded at now, and settles the state;
// sample is the failure's error text (sampleOf); step is what it did, nil
// when it reported no action. Called with b.mu held.
func (b *CircuitBreaker) record(failed bool, fp uint32, sample string, it *Iteration, approachFP uint32, step *stepFacts, now time.Time) {
	b.count.Iterations++
	sameError := failed && b.lastFailed && fp == b.lastFingerprint
	b.lastFailed = failed
	if failed {
		b.count.ConsecutiveFailures++
		b.count.TotalFailures++
		b.anyFailure = true
		b.lastFingerprint = fp
		b.lastFingerprintCount = b.errors.add(fp)
		b.samples.add(fp, sample)
	} else {
		b.count.ConsecutiveFailures = 0
	}
	b.observeTask(it.Task, failed)
	b.observeTrends(it.Progress)
	b.observeProgress(it.Progress, now)
	b.observeStagnation(it, failed, sameError, approachFP)
	b.observeSteps(step)
	b.observeCompletion(it, failed)
	if it.Task != "" || it.Progress != nil {
		b.refreshWarnings() // nothing else changes what they read
	}
	if b.completion.Complete.Kind != ReasonNone || b.state == Open {
		return // the loop is over, or an iteration ended late: counters only
	}
	if !failed && b.state == Closed && it.plain() && !b.restored && !b.relapse.watching() {
		// A bare success on a closed circuit resets counters and fills no
		// window: no signal can trip or complete on it that did not trip
		// on the iteration before. (The hot path of a healthy loop.)
		return
	}
	b.restored = false
	if !failed {
		if reason, ok := b.completes(); ok {
			b.finish(reason, now)
			return
		}
	}
	b.settle(failed, now)
}

// IsTripped reports whether the circuit is open. It is false once the
// cooldown is over (the circuit is then half-open) and while it is closed.
func (b *CircuitBreaker) IsTripped() bool {
	return b.State() == Open
}

// State returns the circuit's state, moving an open circuit to half-open
// if its cooldown has passed.
func (b *CircuitBreaker) State() State {
	b.mu.Lock()
	defer b.unlock()
	if b.state == Open {
		b.advance(b.cfg.Now())
	}
	return b.state
}

// TripReason returns why the circuit opened, e.g. "3 consecutive failures
// (threshold: 3)", or "" while it is closed. It stays set while the
// circuit is half-open.
func (b *CircuitBreaker) TripReason() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reason.String()
}

// Reset returns the breaker to its initial condition: closed, not
// complete, no provider limit in force, every counter, the error history
// and the transition history cleared. The config, the call budget and the
// spend are kept: the calls were made, the money spent. [Config.Guard], if
// any, takes stock of the protected files as they are.
// If the circuit was not closed, [Config.OnStateChange] receives the
// transition to CLOSED (cause CauseReset), which the new history does not
// hold.
func (b *CircuitBreaker) Reset() {
	b.refreshGuard()
	b.mu.Lock()
	defer b.unlock()
	b.restart(b.cfg.Now())
}

// Stats returns a snapshot of the breaker's state and counters.
func (b *CircuitBreaker) Stats() Stats {
	b.mu.Lock()
	defer b.unlock()
	now := b.cfg.Now()
	s := Stats{
		Opens:             b.count.Opens,
		ConsecutiveOpens:  b.count.ConsecutiveOpens,
		Iterations:        b.count.Iterations,
		NeutralIterations: b.count.NeutralIterations,
		Failures: FailureStats{
			Consecutive:     b.count.ConsecutiveFailures,
			Total:           b.count.TotalFailures,
			Unique:          b.errors.len(),
			Evicted:         b.errors.evicted,
			Counts:          b.errors.snapshot(),
			SameErrorInARow: b.count.SameErrorInARow,
		},
		Progress: ProgressStats{
			ConsecutiveNoProgress:        b.progress.ConsecutiveNoProgress,
			ConsecutivePermissionDenials: b.progress.ConsecutivePermissionDenials,
			LastProgress:                 b.progress.LastProgress,
			OutputTrend:                  b.progress.outputTrend(),
			LastScore:                    b.count.LastProgressScore,
		},
		Steps: StepStats{
			SameStepInARow:           b.count.SameStepInARow,
			SameActionFailedInARow:   b.count.SameActionFailedInARow,
			SameMessageInARow:        b.count.SameMessageInARow,
			ConsecutiveCondensations: b.count.ConsecutiveCondensations,
			Condensations:            b.count.Condensations,
		},
		LimitedIterations: b.count.LimitedIterations,
		Spend:             b.spendAt(now),
	}
	if limit, _, ok := b.limitAt(now); ok {
		s.ProviderLimit, s.ProviderLimitUntil = limit, b.limit.until
	}
	s.Progress.Score, _ = b.stagnation.scoreSum()
	s.Complete = b.completion.Complete
	s.Progress.ConsecutiveDoneSignals = b.completion.ConsecutiveDoneSignals
	s.Progress.ConsecutiveTestOnly = b.completion.ConsecutiveTestOnly
	s.Progress.Plan = b.completion.Plan
	if b.cfg.Spend.MaxCallsPerHour > 0 {
		s.Budget = b.budgetState(now)
		if s.Budget.Used >= s.Budget.Limit {
			s.BudgetRetryAfter = b.calls.retryAfter(s.Budget.Limit, now)
		}
	}
	if b.anyFailure {
		s.Failures.LastFingerprint = formatFingerprint(b.lastFingerprint)
	}
	s.Failures.Samples = b.samples.snapshot()
	s.Failures.Task = b.tasks.Task
	s.Failures.TaskIterations = b.tasks.TaskIterations
	s.Failures.TaskFailures = b.tasks.TaskFailures
	s.Failures.SkippedTasks = slices.Clone(b.tasks.skipped)
	s.Progress.ConsecutiveTestDeclines = b.trends.ConsecutiveTestDeclines
	s.Progress.ConsecutiveErrorRises = b.trends.ConsecutiveErrorRises
	if b.relapse.watching() {
		s.RelapseWatch = max(b.cfg.RelapseWindow-b.relapse.Seen, 0)
	}
	if b.state != Closed {
		b.advance(now)
		s.Reason = b.reason
		s.OpenedAt = b.openedAt
		s.Cooldown = b.cooldown
		if b.state == Open {
			s.RetryAfter = b.retryAfter(now)
		}
	}
	s.State = b.state
	if b.completion.Complete.Kind == ReasonNone {
		s.Warnings = b.warningsNow(s.Budget, s.Spend)
	}
	s.Risk = b.risk(s.Warnings)
	s.History = b.history.values() // after advance, which may add to it
	return s
}

// refreshWarnings judges the warnings that iterations make, after an
// iteration or a change of the counters they read. Called with b.mu held.
func (b *CircuitBreaker) refreshWarnings() {
	b.warnings = b.warnings[:0]
	for _, kind := range b.warns {
		if rules[kind].check(b) == trip {
			b.warnings = append(b.warnings, rules[kind].reason(b, kind))
		}
	}
}

// warningsNow returns the warnings in force with budget and spend: the
// budget's warning from callBudgetWarningPercent on, the spend's from
// spendWarningPercent on, models without a price under a dollar cap, then
// the warnings of the last iteration; nil when there are none. The slice
// is new. Called with b.mu held.
func (b *CircuitBreaker) warningsNow(budget Budget, spend Spend) []Reason {
	budgetWarns, spendWarns := budget.Warning() != "", spend.Warning() != ""
	unpriced, unpricedWarns := b.unpricedWarning()
	if !budgetWarns && !spendWarns && !unpricedWarns && len(b.warnings) == 0 {
		return nil
	}
	ws := make([]Reason, 0, len(b.warnings)+3)
	if budgetWarns {
		ws = append(ws, Reason{Kind: ReasonCallBudgetWarning, Count: budget.Used, Threshold: budget.Limit})
	}
	if spendWarns {
		ws = append(ws, spend.warningReason())
	}
	if unpricedWarns {
		ws = append(ws, unpriced)
	}
	return append(ws, b.warnings...)
}
