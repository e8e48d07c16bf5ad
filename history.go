package loopbreaker

import (
	"fmt"
	"strconv"
	"time"
)

// historyLen is how many transitions the breaker remembers ([Stats.History],
// a snapshot's); older ones are forgotten first.
const historyLen = 50

// Transition is one change of the circuit's state, as [Stats.History] and
// [Config.OnStateChange] see it. From and To may be the same for a manual
// control, a completion and a provider limit.
type Transition struct {
	// At is when it happened (a lazy one: when a call noticed it).
	At time.Time `json:"at"`
	// From and To are the states before and after.
	From State `json:"from"`
	To   State `json:"to"`
	// Cause says what made the transition.
	Cause Cause `json:"cause"`
	// Reason is the circuit's reason after it, the completion's or the limit's.
	Reason Reason `json:"reason"`
	// Iteration is how many iterations were recorded by then.
	Iteration int `json:"iteration"`
}

// String returns e.g. "CLOSED -> OPEN (signal: 3 consecutive failures
// (threshold: 3)) at iteration 3".
func (t Transition) String() string {
	s := fmt.Sprintf("%s -> %s (%s", t.From, t.To, t.Cause)
	if t.Reason.Kind != ReasonNone {
		s += ": " + t.Reason.String()
	}
	return s + ") at iteration " + strconv.Itoa(t.Iteration)
}

// Cause says what made a transition.
type Cause uint8

// The causes of transitions. They are stored by name, never by number.
const (
	CauseSignal         Cause = iota // a signal fired, or the probe failed or was lost
	CauseCooldownOver                // the cooldown passed: half-open
	CauseProbeSucceeded              // the probe succeeded: closed
	CauseResume                      // [CircuitBreaker.Resume]
	CauseSkip                        // [CircuitBreaker.Skip]
	CauseAbort                       // [CircuitBreaker.Abort]
	CauseForceOpen                   // [CircuitBreaker.ForceOpen]
	CauseReset                       // [CircuitBreaker.Reset] closed the circuit
	CauseComplete                    // a completion signal completed the loop
	CauseProtectedFiles              // [Config.Guard] found files lost: held open
	CauseProviderLimit               // a provider limit was put in force
	CauseLimitLifted                 // [CircuitBreaker.LiftLimit] lifted it early
)

var causeNames = [...]string{
	CauseSignal:         "signal",
	CauseCooldownOver:   "cooldown_over",
	CauseProbeSucceeded: "probe_succeeded",
	CauseResume:         "resume",
	CauseSkip:           "skip",
	CauseAbort:          "abort",
	CauseForceOpen:      "force_open",
	CauseReset:          "reset",
	CauseComplete:       "complete",
	CauseProtectedFiles: "protected_files",
	CauseProviderLimit:  "provider_limit",
	CauseLimitLifted:    "limit_lifted",
}

// String returns the cause's name in snake case, e.g. "cooldown_over".
func (c Cause) String() string {
	if int(c) < len(causeNames) {
		return causeNames[c]
	}
	return "Cause(" + strconv.Itoa(int(c)) + ")"
}

// manual reports whether a person or the host caused the transition (lost
// protected files count: the host's Guard found them), or it tells of a
// completion or a provider limit; such transitions are recorded even when
// the state stays the same.
func (c Cause) manual() bool {
	switch c {
	case CauseResume, CauseSkip, CauseAbort, CauseForceOpen, CauseComplete, CauseProtectedFiles, CauseProviderLimit, CauseLimitLifted:
		return true
	}
	return false
}

// transition records the change from the state from to the current state
// in the history and queues it for [Config.OnStateChange]. Called with b.mu
// held, by the transition functions in state.go. A change to the same
// state is recorded only for the manual controls.
func (b *CircuitBreaker) transition(now time.Time, from State, cause Cause) {
	if from == b.state && !cause.manual() {
		return
	}
	t := b.entry(now, from, cause)
	b.history.push(t)
	if b.cfg.OnStateChange != nil {
		b.pending = append(b.pending, t)
	}
}

// entry returns the transition from the state from to the current state.
func (b *CircuitBreaker) entry(now time.Time, from State, cause Cause) Transition {
	t := Transition{At: now, From: from, To: b.state, Cause: cause, Reason: b.reason, Iteration: b.count.Iterations}
	switch cause {
	case CauseComplete:
		t.Reason = b.completion.Complete
	case CauseProviderLimit, CauseLimitLifted:
		t.Reason = b.limit.reason
	}
	return t
}

// unlock releases b.mu and then delivers the queued transitions to
// [Config.OnStateChange], so that the callback never runs with the lock held.
// Deliveries are serialized: the goroutine that finds transitions queued
// and nobody delivering becomes the deliverer and delivers, in order, every
// transition queued until the queue is empty, including those queued
// meanwhile by other goroutines or by the callback itself. Every public
// method that can make a transition unlocks with it.
func (b *CircuitBreaker) unlock() {
	if len(b.pending) == 0 || b.delivering {
		b.mu.Unlock() // the hot path: small enough to inline
		return
	}
	b.flush()
}

// flush is unlock's slow path: b becomes the deliverer.
func (b *CircuitBreaker) flush() {
	b.delivering = true
	for len(b.pending) > 0 {
		batch := b.pending
		b.pending = nil
		b.mu.Unlock()
		b.deliver(batch)
		b.mu.Lock()
	}
	b.delivering = false
	b.mu.Unlock()
}

// deliver calls the callback for each transition of batch, without b.mu
// held. If the callback panics, the rest of the batch and whatever is
// queued are dropped and the breaker stays usable; the panic goes on.
func (b *CircuitBreaker) deliver(batch []Transition) {
	done := false
	defer func() {
		if !done {
			b.mu.Lock()
			b.pending = nil
			b.delivering = false
			b.mu.Unlock()
		}
	}()
	for _, t := range batch {
		b.cfg.OnStateChange(t)
	}
	done = true
}

// values returns a copy of the values held, oldest first; nil when empty.
func (r *ring[T]) values() []T {
	if r.n == 0 {
		return nil
	}
	vs := make([]T, r.n)
	for i := range vs {
		vs[i] = r.at(i)
	}
	return vs
}
