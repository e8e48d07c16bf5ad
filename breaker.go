package loopbreaker

import (
	"sync"
	"time"
)

// CircuitBreaker watches an agent loop and stops it when it is stuck. The
// host calls Check before each iteration and Record after it. All methods
// are safe for concurrent use. A CircuitBreaker must be made with New.
type CircuitBreaker struct {
	mu  sync.Mutex
	cfg Config // with defaults applied
	loop
}

// loop is everything the breaker has learned about the loop; Reset
// replaces it whole.
type loop struct {
	state         State
	reason        Reason
	openedAt      time.Time
	probeInFlight bool
	opens         int

	iterations          int
	consecutiveFailures int
	totalFailures       int

	errors               errorCounts
	lastFailed           bool   // the last recorded iteration failed
	lastFingerprint      uint32 // of the last failure
	lastFingerprintCount int    // its count after the last failure
	anyFailure           bool   // lastFingerprint is set

	progress progressState
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
	b.reset()
	return b, nil
}

// reset returns everything but the config to its initial value.
func (b *CircuitBreaker) reset() {
	b.loop = loop{errors: newErrorCounts(b.cfg.MaxFingerprints)}
}

// Check asks whether the next iteration may run. A closed circuit allows
// it. An open circuit refuses it until the cooldown has passed; then it is
// half-open and allows exactly one probe, refusing every other Check until
// the probe's outcome is recorded.
func (b *CircuitBreaker) Check() Decision {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == Closed {
		return Decision{Allow: true, State: Closed}
	}
	now := b.cfg.Now()
	b.advance(now)
	d := Decision{State: b.state, Reason: b.reason}
	switch b.state {
	case Open:
		d.RetryAfter = b.openedAt.Add(b.cfg.Cooldown).Sub(now)
	case HalfOpen:
		d.Allow = b.takeProbe()
		d.Probe = d.Allow
	}
	return d
}

// Record tells the breaker the outcome of an iteration. A failure (non-nil
// Err) or a stalled iteration may open the circuit; the outcome of a
// half-open probe closes it or opens it again. An iteration recorded while
// the circuit is open only updates the counters.
func (b *CircuitBreaker) Record(it Iteration) {
	var fp uint32
	if it.Err != nil {
		fp = fingerprint32(it.Err.Error()) // outside the lock: the only costly part
	}
	b.mu.Lock()
	b.record(it.Err != nil, fp, it.Progress)
	b.mu.Unlock()
}

// RecordSuccess records a successful iteration: the consecutive-failure
// count goes back to zero; the error history is kept.
func (b *CircuitBreaker) RecordSuccess() {
	b.mu.Lock()
	b.record(false, 0, nil)
	b.mu.Unlock()
}

// RecordFailure records a failed iteration with its error text and reports
// whether the circuit is open after it.
func (b *CircuitBreaker) RecordFailure(msg string) bool {
	fp := fingerprint32(msg)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.record(true, fp, nil)
	return b.state == Open
}

// record counts one iteration and settles the state. Called with b.mu held.
func (b *CircuitBreaker) record(failed bool, fp uint32, p *Progress) {
	b.iterations++
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
	b.observeProgress(p)
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
	defer b.mu.Unlock()
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
// counter and the error history cleared. The config is kept.
func (b *CircuitBreaker) Reset() {
	b.mu.Lock()
	b.reset()
	b.mu.Unlock()
}

// Stats returns a snapshot of the breaker's state and counters.
func (b *CircuitBreaker) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Stats{
		Opens:               b.opens,
		Iterations:          b.iterations,
		ConsecutiveFailures: b.consecutiveFailures,
		TotalFailures:       b.totalFailures,
		UniqueErrors:        b.errors.len(),
		EvictedErrors:       b.errors.evicted,
		ErrorCounts:         b.errors.snapshot(),

		ConsecutiveNoProgress:        b.progress.consecutiveNoProgress,
		ConsecutivePermissionDenials: b.progress.consecutiveDenials,
		LastProgress:                 b.progress.lastProgress,
		OutputTrend:                  b.progress.outputTrend(),
	}
	if b.anyFailure {
		s.LastFingerprint = formatFingerprint(b.lastFingerprint)
	}
	if b.state != Closed {
		now := b.cfg.Now()
		b.advance(now)
		s.Reason = b.reason
		s.OpenedAt = b.openedAt
		if b.state == Open {
			s.RetryAfter = b.openedAt.Add(b.cfg.Cooldown).Sub(now)
		}
	}
	s.State = b.state
	return s
}
