package loopbreaker

import (
	"sync"
	"time"
)

// CircuitBreaker watches an agent loop and stops it when it is stuck. The
// host calls Check before each iteration and Record after it. All methods
// are safe for concurrent use. A CircuitBreaker must be made with New.
type CircuitBreaker struct {
	mu     sync.Mutex
	cfg    Config       // with defaults applied
	active []ReasonKind // the signals cfg switches on, in evaluation order
	loop

	// Transitions waiting for Config.OnStateChange, and whether a
	// goroutine is delivering them (see unlock).
	pending    []Transition
	delivering bool
}

// loop is everything the breaker has learned about the loop; Reset
// replaces it whole.
type loop struct {
	state         State
	reason        Reason
	openedAt      time.Time
	probeInFlight bool
	opens         int           // since New or Reset
	openStreak    int           // opens since the circuit last closed
	cooldown      time.Duration // of the current open

	iterations          int // successes and failures, not neutral ones
	neutral             int
	consecutiveFailures int
	totalFailures       int

	errors               errorCounts
	lastFailed           bool   // the last recorded iteration failed
	lastFingerprint      uint32 // of the last failure
	lastFingerprintCount int    // its count after the last failure
	anyFailure           bool   // lastFingerprint is set

	progress   progressState
	stagnation stagnationState

	history ring[Transition] // the last HistoryLen transitions
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
	// signal reads it.
	Work WorkKind
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
	// Reason is why the circuit opened; zero while it is closed. It prints
	// as the text TripReason returns.
	Reason Reason
	// RetryAfter is, when the circuit is open, the time left until a
	// probe may run; zero otherwise.
	RetryAfter time.Duration
}

// Err returns nil when the decision allows the iteration, and otherwise an
// *OpenError, which matches ErrOpen with errors.Is and carries the reason.
func (d Decision) Err() error {
	if d.Allow {
		return nil
	}
	return &OpenError{State: d.State, Reason: d.Reason, RetryAfter: d.RetryAfter}
}

// New returns a closed breaker for cfg. Zero fields of cfg take their
// defaults; an invalid cfg is an error matching ErrInvalidConfig.
func New(cfg Config) (*CircuitBreaker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := &CircuitBreaker{cfg: cfg.withDefaults()}
	b.active = activeRules(&b.cfg)
	b.reset()
	return b, nil
}

// reset returns everything but the config to its initial value.
func (b *CircuitBreaker) reset() {
	b.loop = loop{
		errors:     newErrorCounts(b.cfg.MaxFingerprints),
		stagnation: newStagnationState(&b.cfg),
		history:    newRing[Transition](HistoryLen),
	}
}

// Check asks whether the next iteration may run. A closed circuit allows
// it. An open circuit refuses it until the cooldown has passed; then it is
// half-open and allows exactly one probe, refusing every other Check until
// the probe's outcome is recorded.
func (b *CircuitBreaker) Check() Decision {
	b.mu.Lock()
	if b.state == Closed {
		b.mu.Unlock()
		return Decision{Allow: true, State: Closed}
	}
	return b.checkNotClosed()
}

// checkNotClosed is Check for a circuit that is not closed, called with
// b.mu held; it releases it.
func (b *CircuitBreaker) checkNotClosed() Decision {
	defer b.unlock()
	now := b.cfg.Now()
	b.advance(now)
	d := Decision{State: b.state, Reason: b.reason}
	switch b.state {
	case Open:
		d.RetryAfter = b.retryAfter(now)
	case HalfOpen:
		d.Allow = b.takeProbe()
		d.Probe = d.Allow
	}
	return d
}

// Record tells the breaker the outcome of an iteration. Config.Classify
// decides how a non-nil Err counts (by default a failure, or neutral for
// context.Canceled); a nil Err is a success. A failure or a stalled
// iteration may open the circuit; the outcome of a half-open probe closes
// it or opens it again. A neutral iteration changes no counter and gives
// the half-open probe slot back. An iteration recorded while the circuit is
// open only updates the counters.
func (b *CircuitBreaker) Record(it Iteration) {
	// Outside the lock: the classifier is the host's code, and
	// fingerprinting is the only costly part.
	outcome := Success
	if it.Err != nil {
		outcome = b.cfg.Classify(it.Err)
	}
	var fp, approachFP uint32
	if outcome == Failure {
		fp = fingerprint32(it.Err.Error())
	}
	if it.Approach != "" {
		approachFP = fingerprint32(it.Approach)
	}
	b.mu.Lock()
	if outcome == Neutral {
		b.neutral++
		b.releaseProbe()
	} else {
		b.record(outcome == Failure, fp, &it, approachFP)
	}
	b.unlock()
}

// RecordSuccess records a successful iteration: the consecutive-failure
// count goes back to zero; the error history is kept.
func (b *CircuitBreaker) RecordSuccess() {
	b.mu.Lock()
	b.record(false, 0, &Iteration{}, 0)
	b.unlock()
}

// RecordFailure records a failed iteration with its error text and reports
// whether the circuit is open after it.
func (b *CircuitBreaker) RecordFailure(msg string) bool {
	fp := fingerprint32(msg)
	b.mu.Lock()
	defer b.unlock()
	b.record(true, fp, &Iteration{}, 0)
	return b.state == Open
}

// record counts one iteration and settles the state. Called with b.mu held.
func (b *CircuitBreaker) record(failed bool, fp uint32, it *Iteration, approachFP uint32) {
	b.iterations++
	sameError := failed && b.lastFailed && fp == b.lastFingerprint
	b.lastFailed = failed
	if failed {
		b.consecutiveFailures++
		b.totalFailures++
		b.anyFailure = true
		b.lastFingerprint = fp
		b.lastFingerprintCount = b.errors.add(fp)
	} else {
		b.consecutiveFailures = 0
	}
	b.observeProgress(it.Progress)
	b.observeStagnation(it, failed, sameError, approachFP)
	b.settle(failed)
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

// Reset returns the breaker to its initial condition: closed, every
// counter, the error history and the transition history cleared. The config
// is kept. If the circuit was not closed, Config.OnStateChange receives the
// transition to CLOSED (cause CauseReset), which the new history does not
// hold.
func (b *CircuitBreaker) Reset() {
	b.mu.Lock()
	b.restart(b.cfg.Now())
	b.unlock()
}

// Stats returns a snapshot of the breaker's state and counters.
func (b *CircuitBreaker) Stats() Stats {
	b.mu.Lock()
	defer b.unlock()
	s := Stats{
		Opens:               b.opens,
		ConsecutiveOpens:    b.openStreak,
		Iterations:          b.iterations,
		NeutralIterations:   b.neutral,
		ConsecutiveFailures: b.consecutiveFailures,
		TotalFailures:       b.totalFailures,
		UniqueErrors:        b.errors.len(),
		EvictedErrors:       b.errors.evicted,
		ErrorCounts:         b.errors.snapshot(),

		ConsecutiveNoProgress:        b.progress.consecutiveNoProgress,
		ConsecutivePermissionDenials: b.progress.consecutiveDenials,
		LastProgress:                 b.progress.lastProgress,
		OutputTrend:                  b.progress.outputTrend(),

		SameErrorInARow:   b.stagnation.sameErrorInARow,
		LastProgressScore: b.stagnation.lastScore,
	}
	s.ProgressScore, _ = b.stagnation.scoreSum()
	if b.anyFailure {
		s.LastFingerprint = formatFingerprint(b.lastFingerprint)
	}
	if b.state != Closed {
		now := b.cfg.Now()
		b.advance(now)
		s.Reason = b.reason
		s.OpenedAt = b.openedAt
		s.Cooldown = b.cooldown
		if b.state == Open {
			s.RetryAfter = b.retryAfter(now)
		}
	}
	s.State = b.state
	s.History = b.history.values() // after advance, which may add to it
	return s
}
