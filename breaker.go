package loopbreaker

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/loopbreaker/loopbreaker/internal/limits"
)

// CircuitBreaker watches an agent loop and stops it when it is stuck. The
// host calls Check before each iteration and Record after it. It must be
// made with New, and is safe for concurrent use. The host code it calls
// (the Config funcs and Guard) may panic: the panic reaches the caller and
// no lock is left held.
type CircuitBreaker struct {
	mu          sync.Mutex
	cfg         Config           // with defaults applied
	active      []ReasonKind     // the stop signals cfg switches on, in evaluation order
	completions []ReasonKind     // the completion signals cfg switches on
	warns       []ReasonKind     // the warnings cfg switches on that iterations make
	news        news             // what in a success the active signals judge
	calls       callBudget       // outside loop: Reset does not give back calls made
	spend       spendState       // outside loop too: Reset does not give back what was spent
	spendCapped bool             // cfg caps the spend, or the window share
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
	lastFailed           bool         // the last recorded iteration failed
	lastFingerprint      uint32       // of the last failure
	lastFingerprintCount int          // its count after the last failure
	anyFailure           bool         // lastFingerprint is set
	noticed              noticedError // the error the last iteration, a success, noticed
	providerLoop         string       // the last iteration's provider said it loops: what it said

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

	limit   providerLimit // the provider limit in force
	windows windowState   // the provider's usage windows, as last reported

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
	SameErrorInARow     int `json:"same_error_in_a_row"`               // failures in a row with one fingerprint
	LastProgressScore   int `json:"last_progress_score" signed:"true"` // may be negative

	// The step signals' counters (steps.go), as Stats reports them.
	StepStats
	LimitedIterations int `json:"limited_iterations"` // refused by the provider
}

// Iteration is what the host tells the breaker about one iteration. Every
// field but Err is optional: a signal whose input is zero stays idle.
type Iteration struct {
	// Err is the iteration's error; nil means it succeeded.
	Err error
	// Noticed is an error a successful iteration reported (an agent that
	// exits 0 after tool calls failed inside it): it counts toward the same
	// error alone, not as a failure; left out of any other outcome.
	Noticed error
	// Progress is what the iteration achieved; nil: not measured.
	Progress *Progress
	// Approach labels how it went about its task (circular-approach signal).
	Approach string
	// Work labels the kind of work done (test-fix-loop and test-only).
	Work WorkKind
	// Claimed says the agent claimed the work done in words without Done:
	// MaxClaims in a row open the circuit (false_completion).
	Claimed bool
	// Done says the agent reported the work done (ralph-claude-code's EXIT_SIGNAL).
	Done bool
	// Plan is the host's task list after the iteration; nil: none.
	Plan *Plan
	// Calls counts the API calls made; zero or less counts as one, or as
	// none once [CircuitBreaker.CountCall] is used.
	Calls int

	// Action is one agent step's tool call or message; record one per call.
	Action *Action
	// Observation is the step's result; empty on a failed step: Err's text.
	Observation string
	// Condensed says the context was condensed instead of a step.
	Condensed bool
	// Task names the task worked on (trimmed, at most 200 runes).
	Task string
	// Usage is what the iteration spent; zero if reported with AddUsage.
	Usage Usage
}

// Decision is the breaker's answer to Check.
type Decision struct {
	// Allow says whether the iteration may run.
	Allow bool
	// State is the circuit's state; refused in HalfOpen: the probe is out.
	State State
	// Probe is true for the half-open probe.
	Probe bool
	// Reason is why it was refused, or in HalfOpen why the circuit opened.
	Reason Reason
	// Complete is true when the loop is complete; every Check then refuses.
	Complete bool
	// Budget is the call budget; zero without one.
	Budget Budget
	// Warnings are the warnings in force; nil when none is. The caller's.
	Warnings []Reason
	// RetryAfter is how long until asking again may help; zero when
	// allowed and for a refusal no waiting ends.
	RetryAfter time.Duration
	// Short are the signals one bad step short of opening the circuit,
	// each with [Reason.Short] set and its evidence, in the order they are
	// judged; nil when none is, and when refused. [Reason.ForModel] says
	// what each means to a model. The caller's.
	Short []Reason
}

// Err returns nil when d allows the iteration, else a [*RefusedError]
// that matches the sentinel of its reason, such as [ErrOpen].
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
	b.news = newsOf(b.active, b.completions)
	b.spendCapped = spendCaps(&b.cfg)
	b.spend = newSpendState(&b.cfg)
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
// it; an open one refuses until the cooldown has passed, then allows
// exactly one probe until its outcome is recorded. Provider limits, spend
// caps, the window share, the burn rate and the call budget refuse without
// opening the circuit, and a complete loop refuses every iteration. When
// several refuse, the first of these says why: complete, provider stopped,
// lifetime spend cap, window share that stops, open circuit, provider
// limit, window share, hourly spend cap, burn rate, call budget.
func (b *CircuitBreaker) Check() Decision {
	b.mu.Lock()
	if b.state == Closed && b.completion.Complete.Kind == ReasonNone && b.cfg.Spend.MaxCallsPerHour <= 0 && len(b.warnings) == 0 &&
		b.limit.reason.Kind == ReasonNone && !b.spendCapped {
		defer b.mu.Unlock()
		return Decision{Allow: true, State: Closed, Short: b.shortNow()}
	}
	return b.check(true)
}

// Short returns the signals one bad step short of opening the circuit
// now, as [Decision.Short] lists them, without a Check: nil when none is,
// and while the circuit is open or the loop complete.
func (b *CircuitBreaker) Short() []Reason {
	b.mu.Lock()
	defer b.unlock()
	if b.state == Open {
		b.advance(b.cfg.Now())
	}
	return b.shortNow()
}

// CheckAction asks whether a tool call the model proposes may run, before
// it runs. It refuses, as Check does, while the circuit is open or a limit,
// a spend cap, the call budget or completion holds; and it refuses the call
// that would complete a loop of the step signals if it ran and came out as
// it did the times before: the last round of a cycle ([ReasonCycle]), the
// last of the same step with others between ([ReasonRepeatedStep]). The
// same call in a row is judged after it ran: a call that failed twice may
// pass the third time (a flaky test, a service back), and a success may
// have done what its result does not show (a browser's "Navigated back").
// Such a refusal opens the
// circuit, as the call would have after it ran; its reason has
// [Reason.Proposed] set, and nothing is recorded. CheckAction takes no
// probe: in HalfOpen it judges the call alone, for a host that asks Check
// once per model turn and CheckAction per tool call. A message-only action
// is judged as Check judges, without the probe.
func (b *CircuitBreaker) CheckAction(a Action) Decision {
	action := a.fingerprint32() // outside the lock: the costly part
	b.mu.Lock()
	d := b.check(false)
	if !d.Allow || a.IsMessage() {
		return d
	}
	b.mu.Lock()
	defer b.unlock()
	if b.state == Open || b.completion.Complete.Kind != ReasonNone {
		return d // changed while unlocked: Check again says why
	}
	reason, ok := b.proposal(action)
	if !ok {
		return d
	}
	now := b.cfg.Now()
	b.trip(reason, now)
	return Decision{State: b.state, Reason: b.reason, RetryAfter: b.retryAfter(now)}
}

// check is Check past its fast path, called with b.mu held; it releases
// it. A half-open circuit lets its probe through only when probe is set
// (Check); otherwise (CheckAction) it allows without taking it.
func (b *CircuitBreaker) check(probe bool) Decision {
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
	var spentReason Reason
	var spentWait time.Duration
	spent := false
	if b.spendCapped {
		spend = b.spendAt(now)
		var final bool
		spentReason, spentWait, final, spent = b.spendRefusal(spend, now)
		if final {
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
		d.Reason, d.RetryAfter = spentReason, spentWait
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
		if probe {
			d.Allow = b.takeProbe()
			d.Probe = d.Allow
		}
	}
	if d.Allow {
		d.Short = b.shortNow()
	}
	return d
}

// Record tells the breaker the outcome of an iteration: a nil Err is a
// success, and [Config.Classify] decides how another counts. A failure or a
// stall may open the circuit, and a half-open probe's outcome closes or
// reopens it; the first outcome recorded in HalfOpen decides. A neutral
// iteration, a provider limit (put in force) and a condensation change no
// failure or progress count and give the probe slot back. While the circuit
// is open, Record only counts. Calls and usage always count.
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
	var errText, sample, loopSaid string
	var limit Limit
	failed := outcome == Failure || outcome == ProviderLoop
	switch {
	case failed:
		if outcome == ProviderLoop {
			loopSaid = loopWhy(it.Err, b.patterns)
		}
		errText = it.Err.Error()
		fp = fingerprint32(errText)
		if b.cfg.Failures.MaxSamples >= 0 {
			sample = sampleOf(errText)
		}
	case outcome == ProviderLimit, outcome == ProviderStop:
		limit = b.limitFor(it.Err, outcome)
	case outcome == Success && it.Noticed != nil:
		// The error counts toward the same error alone (see record).
		noticedText := it.Noticed.Error()
		fp = fingerprint32(noticedText)
		if b.cfg.Failures.MaxSamples >= 0 {
			sample = sampleOf(noticedText)
		}
	default:
		it.Noticed = nil
	}
	it.Task = taskName(it.Task)
	usage, unpriced := b.priced(it.Usage)
	if it.Approach != "" {
		approachFP = fingerprint32(it.Approach)
	}
	var step *stepFacts
	if it.Action != nil && outcome != Neutral {
		f := newStepFacts(&it, failed, errText, fp)
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
		b.providerLoop = loopSaid
		b.record(failed, fp, sample, &it, approachFP, step, now)
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

// RecordFailure records an iteration whose Err has the text msg, as Record
// does (so a provider limit's text is a limit, not a failure), and reports
// whether the circuit is open after it.
func (b *CircuitBreaker) RecordFailure(msg string) bool {
	return b.recordIteration(Iteration{Err: errorText(msg)})
}

// errorText is an error whose text is all there is to it: the error of
// RecordFailure.
type errorText string

func (e errorText) Error() string { return string(e) }

// record counts one iteration, recorded at now, and settles the state;
// fp and sample are the fingerprint and the text (sampleOf) of the
// failure's error, or of the error a success noticed (it.Noticed); step
// is what it did, nil when it reported no action. Called with b.mu held.
func (b *CircuitBreaker) record(failed bool, fp uint32, sample string, it *Iteration, approachFP uint32, step *stepFacts, now time.Time) {
	b.count.Iterations++
	sameError := failed && b.lastFailed && fp == b.lastFingerprint
	b.lastFailed = failed
	b.noticed = noticedError{}
	if failed {
		b.count.ConsecutiveFailures++
		b.count.TotalFailures++
		b.anyFailure = true
		b.lastFingerprint = fp
		b.lastFingerprintCount = b.errors.add(fp)
		b.samples.add(fp, sample)
	} else {
		b.count.ConsecutiveFailures = 0
		if it.Noticed != nil {
			b.noticed = noticedError{fingerprint: fp, count: b.errors.add(fp), set: true}
			b.samples.add(fp, sample)
		}
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
	if !failed && b.state == Closed && it.news()&b.news == 0 && !b.restored && !b.relapse.watching() {
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

// Reset returns the breaker to a closed, fresh state: every counter, the
// error history, the transition history, a completion and a provider limit
// are cleared. The config, the call budget and the spend are kept.
// [Config.Guard] takes stock of the files as they are; a circuit that was not
// closed reports its close to [Config.OnStateChange] (CauseReset).
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
		Steps:             b.count.StepStats,
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
	s.Progress.ConsecutiveClaims = b.completion.ConsecutiveClaims
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
		if rules[kind].judge(b) == trip {
			b.warnings = append(b.warnings, rules[kind].reason(b, kind))
		}
	}
}

// warningsNow returns the warnings in force with budget and spend: the
// budget's warning from callBudgetWarningPercent on, the spend's, the
// window share's and the burn rate's from spendWarningPercent on, models
// without a price under a dollar cap, then
// the warnings of the last iteration; nil when there are none. The slice
// is new. Called with b.mu held.
func (b *CircuitBreaker) warningsNow(budget Budget, spend Spend) []Reason {
	budgetWarns := budget.Warning() != ""
	spendWarns := spendWarnings(spend)
	unpriced, unpricedWarns := b.unpricedWarning()
	if !budgetWarns && len(spendWarns) == 0 && !unpricedWarns && len(b.warnings) == 0 {
		return nil
	}
	ws := make([]Reason, 0, len(b.warnings)+len(spendWarns)+2)
	if budgetWarns {
		ws = append(ws, Reason{Kind: ReasonCallBudgetWarning, Count: budget.Used, Threshold: budget.Limit})
	}
	ws = append(ws, spendWarns...)
	if unpricedWarns {
		ws = append(ws, unpriced)
	}
	return append(ws, b.warnings...)
}
