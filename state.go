package loopbreaker

import (
	"strconv"
	"time"
)

// State is the circuit's state.
type State uint8

// The circuit's states. A new breaker is Closed.
const (
	// Closed: iterations run.
	Closed State = iota
	// Open: iterations do not run until the cooldown has passed.
	Open
	// HalfOpen: one probe iteration may run; its outcome closes or reopens.
	HalfOpen
)

// String returns CLOSED, OPEN or HALF_OPEN.
func (s State) String() string {
	switch s {
	case Closed:
		return "CLOSED"
	case Open:
		return "OPEN"
	case HalfOpen:
		return "HALF_OPEN"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// This file holds every state transition of the breaker. Each function is
// called with b.mu held. The circuit's states, and what moves it:
//
//	         a signal trips (trip)                the cooldown ends (advance)
//	CLOSED ──────────────────────────▶ OPEN ───────────────────────────────▶ HALF_OPEN
//	  │  ▲                              ▲  ▲                                    │  │
//	  │  │                              │  └── the probe fails, a signal trips ─┘  │
//	  │  └─ the probe succeeds (recover), Resume, Skip, Reset ───────────────────────┘
//	  └──── a signal watches (watch): HALF_OPEN at once, one more chance
//
// ForceOpen, Abort, protected files lost and giving up (hold, openAfter)
// open the circuit held: no cooldown ends it, only Resume, Skip or Reset.
// Completing the loop (finish) closes it for good until Reset. A
// provider limit (limitSeen, lift) changes no state; it goes to the
// history.

// advance moves an open circuit to half-open once the cooldown has passed
// since it opened. It is the only transition driven by time, and it happens
// lazily, when a call reads the clock. A circuit held open (ForceOpen,
// Abort) never advances.
func (b *CircuitBreaker) advance(now time.Time) {
	if b.state == Open && !b.held() && !now.Before(b.cooldownEnd(now)) {
		b.state = HalfOpen
		b.probeInFlight = false
		b.transition(now, Open, CauseCooldownOver)
	}
}

// cooldownEnd returns when the open circuit's cooldown ends, as a clock
// that reads now sees it. A clock that reads earlier than the opening was
// set back, and elapsed time cannot be trusted: the cooldown starts again
// from the earliest such reading, so the circuit stays open for a full
// cooldown, never for the cooldown plus the step back. Once the clock
// reads the opening or later again, the cooldown ends where it first
// would have: going back and then forward never shortens it.
func (b *CircuitBreaker) cooldownEnd(now time.Time) time.Time {
	if !now.Before(b.openedAt) {
		return b.openedAt.Add(b.cooldown)
	}
	if b.restartedAt.IsZero() || now.Before(b.restartedAt) {
		b.restartedAt = now
	}
	return b.restartedAt.Add(b.cooldown)
}

// held reports whether the circuit is held open by a person or the host
// (ForceOpen, Abort), or for lost protected files: no cooldown ends it,
// only Resume, Skip or Reset.
func (b *CircuitBreaker) held() bool {
	return b.state == Open && heldKind(b.reason.Kind)
}

// Held reports whether a reason of kind k holds the circuit open until
// Resume, Skip or Reset: [ReasonForcedOpen], [ReasonAborted],
// [ReasonProtectedFiles], [ReasonGaveUp].
func (k ReasonKind) Held() bool { return heldKind(k) }

// heldKind is Held.
func heldKind(k ReasonKind) bool { return int(k) < len(rules) && rules[k].held }

// retryAfter returns the time left until an open circuit lets the probe
// through; zero for a circuit held open, which no time ends.
func (b *CircuitBreaker) retryAfter(now time.Time) time.Duration {
	if b.held() {
		return 0
	}
	return b.cooldownEnd(now).Sub(now)
}

// trip opens the circuit for reason and starts the cooldown, whose length
// the cooldown policy sets from the opens since the last close. The
// progress-score window starts again, so that the probe is judged on its
// own score.
func (b *CircuitBreaker) trip(reason Reason, now time.Time) {
	from := b.open(reason, now)
	b.transition(now, from, CauseSignal)
}

// loseProbe reopens a circuit that Restore found half-open with its probe
// running when the snapshot was taken: the probe's process is gone, and its
// outcome with it, so it counts as a failed probe, with a cooldown from now
// as the cooldown policy sets it after a failed probe. Otherwise a probe
// that kills its process would be let through again by every restart, with
// no cooldown between. The transition goes to the history, not to
// [Config.OnStateChange]: Restore calls nothing.
func (b *CircuitBreaker) loseProbe(now time.Time) {
	from := b.open(Reason{Kind: ReasonProbeLost}, now)
	b.history.push(b.entry(now, from, CauseSignal))
}

// open is what trip and loseProbe share: the circuit opens for reason and
// the cooldown starts. It returns the state before.
func (b *CircuitBreaker) open(reason Reason, now time.Time) State {
	return b.openAfter(reason, now, b.count.ConsecutiveOpens)
}

// openAfter opens the circuit as the next open of a streak of opens
// (ConsecutiveOpens), which the cooldown policy reads. The open that
// reaches [Config.MaxConsecutiveOpens] gives up: the circuit is held open,
// with no cooldown, and its reason (kind [ReasonGaveUp]) carries the one
// given. It returns the state before.
func (b *CircuitBreaker) openAfter(reason Reason, now time.Time, opens int) State {
	var cooldown time.Duration
	if limit := b.cfg.MaxConsecutiveOpens; limit > 0 && opens+1 >= limit {
		reason = Reason{
			Kind:        ReasonGaveUp,
			Count:       opens + 1,
			Threshold:   limit,
			Last:        reason.Kind,
			Message:     reason.String(),
			Fingerprint: reason.Fingerprint,
			Sample:      reason.Sample,
			Task:        reason.Task,
			Action:      reason.Action,
		}
		if reason.Sample == "" && b.lastFailed {
			// The last opening's reason quotes no error (consecutive
			// failures, a failed probe): the last failure's says why.
			reason.Fingerprint = formatFingerprint(b.lastFingerprint)
			reason.Sample = b.samples.latest(b.lastFingerprint)
		}
	} else {
		// The policy is the host's code: asked before anything changes,
		// so that a panic in it leaves the circuit as it was.
		cooldown = max(b.cfg.CooldownPolicy(b.cfg.Cooldown, opens+1), 0)
	}
	from := b.state
	b.state = Open
	b.reason = reason
	b.openedAt, b.restartedAt = now, time.Time{}
	b.probeInFlight = false
	b.count.Opens++
	b.count.ConsecutiveOpens = opens + 1
	b.cooldown = cooldown
	b.stagnation.scores.clear()
	b.relapse = relapseState{}
	return from
}

// reopenRelapsed opens the circuit again, with reason (kind [ReasonRelapse]), when
// the signal that had opened it showed again during the relapse watch
// after a recovery: the open streak goes on from the open it recovered
// from, so that the cooldown grows as after a failed probe (superkit).
func (b *CircuitBreaker) reopenRelapsed(reason Reason, now time.Time) {
	from := b.openAfter(reason, now, b.relapse.Opens)
	b.transition(now, from, CauseSignal)
}

// recover closes the circuit after a successful probe. When the circuit
// had opened (not only gone half-open for one more chance) and
// [Config.RelapseWindow] is on, the next iterations are watched for a
// relapse of the signal that opened it.
func (b *CircuitBreaker) recover(now time.Time) {
	watch := relapseState{Reason: b.reason, Opens: b.count.ConsecutiveOpens}
	b.close(now, CauseProbeSucceeded)
	if b.cfg.RelapseWindow > 0 && watch.Opens > 0 {
		b.relapse = watch
	}
}

// hold opens the circuit for a person or the host (ForceOpen, Abort, with
// reason of kind [ReasonForcedOpen] or [ReasonAborted]), or for protected
// files lost ([ReasonProtectedFiles]): no cooldown ends it, only Resume, Skip
// or Reset. A circuit already open keeps its opening
// time and counts no new open. A complete loop is complete no more: the
// held reason is what Check reports from now on (the completion stays in
// the history).
func (b *CircuitBreaker) hold(reason Reason, now time.Time, cause Cause) {
	b.wake()
	from := b.state
	b.completion.Complete = Reason{}
	if from != Open {
		b.openedAt, b.restartedAt = now, time.Time{}
		b.count.Opens++
		b.count.ConsecutiveOpens++
	}
	b.state = Open
	b.reason = reason
	b.probeInFlight = false
	b.cooldown = 0
	b.relapse = relapseState{}
	b.transition(now, from, cause)
}

// close closes the circuit: after a successful probe (cause
// CauseProbeSucceeded), or by hand (Resume, Skip). The consecutive
// counters start again; the error history is kept (Resume and Skip clear
// it before they close).
func (b *CircuitBreaker) close(now time.Time, cause Cause) {
	from := b.state
	b.state = Closed
	b.reason = Reason{}
	b.openedAt = time.Time{}
	b.probeInFlight = false
	b.count.ConsecutiveOpens = 0
	b.cooldown = 0
	b.count.ConsecutiveFailures = 0
	b.relapse = relapseState{}
	b.transition(now, from, cause)
}

// takeProbe lets the single half-open probe through. It reports false when
// the probe is already in flight.
func (b *CircuitBreaker) takeProbe() bool {
	if b.probeInFlight {
		return false
	}
	b.probeInFlight = true
	return true
}

// finish completes the loop: from now on Check refuses every iteration
// with reason, which is not a failure. A half-open circuit closes, as the
// iteration that completed the loop succeeded.
func (b *CircuitBreaker) finish(reason Reason, now time.Time) {
	b.completion.Complete = reason
	b.close(now, CauseComplete)
}

// releaseProbe gives the half-open probe slot back after a neutral
// iteration: the next Check gets the probe.
func (b *CircuitBreaker) releaseProbe() {
	if b.state == HalfOpen {
		b.probeInFlight = false
	}
}

// watch makes a closed circuit half-open without a cooldown: a signal
// says the loop is close to stuck, and the next iteration is its one more
// chance.
func (b *CircuitBreaker) watch(reason Reason, now time.Time) {
	from := b.state
	b.state = HalfOpen
	b.reason = reason
	b.probeInFlight = false
	b.relapse = relapseState{}
	b.transition(now, from, CauseSignal)
}

// settle applies the outcome of the iteration just recorded to the state.
// A closed circuit opens when a signal trips and goes half-open when one
// watches. A half-open circuit opens again, with a fresh cooldown, when a
// signal trips or the probe failed; stays half-open, with a new probe, when
// a signal still watches; and closes otherwise. An iteration that finishes
// while the circuit is open changes the counters only. During the relapse
// watch after a recovery, a closed circuit opens again at once when the
// signal that had opened it shows again.
func (b *CircuitBreaker) settle(failed bool, now time.Time) {
	if b.state == Open {
		return
	}
	reason, v := b.evaluate()
	if b.relapse.watching() {
		if r, ok := b.relapsed(reason, v); ok {
			b.reopenRelapsed(r, now)
			return
		}
		b.watched()
	}
	switch {
	case v == trip:
		b.trip(reason, now)
	case b.state == HalfOpen && failed:
		b.trip(Reason{
			Kind:        ReasonProbeFailed,
			Fingerprint: formatFingerprint(b.lastFingerprint),
			Sample:      b.samples.latest(b.lastFingerprint),
		}, now)
	case v == watch:
		b.watch(reason, now)
	case b.state == HalfOpen:
		b.recover(now)
	}
}

// limitSeen puts the provider limit l, seen at now, in force, unless the
// limit in force outlasts it: a stop outlasts every wait, and of two waits
// the later reset wins. A change is recorded in the history and goes to
// [Config.OnStateChange] (cause CauseProviderLimit), though the circuit's
// state stays as it is: the circuit does not open for a limit.
func (b *CircuitBreaker) limitSeen(l Limit, now time.Time) {
	cur := b.limit
	next := providerLimit{reason: Reason{Kind: ReasonProviderStopped, Message: l.Why}, source: l.Source}
	if l.Kind != LimitStop {
		next = providerLimit{reason: Reason{Kind: ReasonProviderLimit, Message: l.Why}, until: b.limitUntil(l, now), source: l.Source}
		if l.Reset.IsZero() {
			note := "no reset time given: waiting " + next.until.Sub(now).String()
			next.reason.Message = note
			if l.Why != "" {
				next.reason.Message = l.Why + " (" + note + ")"
			}
		}
		switch {
		case !next.until.After(now):
			return // already lifted
		case cur.reason.Kind == ReasonProviderStopped,
			cur.reason.Kind == ReasonProviderLimit && !next.until.After(cur.until) && now.Before(cur.until):
			return // the limit in force outlasts it
		}
	} else if cur.reason.Kind == ReasonProviderStopped {
		return
	}
	b.limit = next
	b.transition(now, b.state, CauseProviderLimit)
}

// lift lifts the provider limit in force: its source answered again
// (LiftLimit). The history records it with the limit's reason, though the
// circuit's state stays as it is.
func (b *CircuitBreaker) lift(now time.Time) {
	b.transition(now, b.state, CauseLimitLifted)
	b.limit = providerLimit{}
}

// restart returns the breaker to its initial condition (Reset), the
// history included. If the circuit was not closed, the transition to
// CLOSED still goes to [Config.OnStateChange], but the new history starts
// empty.
func (b *CircuitBreaker) restart(now time.Time) {
	from := b.state
	b.reset()
	b.wake()
	if from != Closed && b.cfg.OnStateChange != nil {
		b.pending = append(b.pending, Transition{At: now, From: from, To: Closed, Cause: CauseReset})
	}
}
