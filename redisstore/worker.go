package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/errtext"
	"github.com/loopbreaker/loopbreaker/internal/timer"
)

// Worker is one worker of a fleet that shares one breaker on Redis. It
// stands for one loop: the host calls Check before each iteration and
// Record after it, as with a [loopbreaker.CircuitBreaker], and has the
// same methods. Each Check and each Record is one round trip to
// Redis. A Worker is safe for concurrent use; its calls to Redis are
// bounded by [Config.Timeout].
//
// What the fleet shares, in Redis: the circuit (its state, reason, opening
// time, cooldown and opens), the holds (Abort and ForceOpen stop every
// worker; Resume and Skip release them), the half-open probe (one worker
// of the fleet gets it, as a lease), the consecutive failures, the
// same-error counts by fingerprint and the same error in a row, the call
// budget of the rolling hour, the spend (over the fleet's life, in the
// rolling hour and in the burn window, against the spend caps and the
// burn rate's), the reports of the provider's usage windows (against the
// window share) and the provider limit in force (one worker hits it,
// every worker waits). What each worker keeps to
// itself, in its local breaker: progress, stagnation, tasks, trends,
// warnings other than the budget's and the spend's, and completion. When
// one of the worker's own signals opens its local breaker, the worker opens
// the fleet's circuit with that reason, so that every worker stops.
//
// A Worker is a [transport.Meter], and a [transport.WindowMeter]:
// AddUsage, ObserveLimit, LiftLimit, CountCall and ObserveWindow report
// spend, limits, calls and usage windows as they happen, each in one
// round trip, so transport.New(w, nil) is a model SDK's transport that
// reports to the fleet.
type Worker struct {
	cfg      Config // with defaults applied
	id       string
	addr     string // where the client reaches Redis, for messages
	keys     []string
	shared   shared
	localCfg loopbreaker.Config // the worker's own signals only
	fullCfg  loopbreaker.Config // every signal, for an outage
	classify func(error) loopbreaker.Outcome

	patterns []loopbreaker.LimitPattern
	prices   loopbreaker.Prices // the Breaker's, or the default table

	mu           sync.Mutex
	unpriced     []string // models that spent tokens with no price
	local        *loopbreaker.CircuitBreaker
	localOpens   int    // the local breaker's Opens already told to the fleet
	token        string // the probe lease this worker holds
	reserved     int    // calls Check reserved that no Record has counted yet
	reservedUsed int    // of those, the ones a call counted as it happened took
	byTransport  bool   // calls are counted as they happen (Transport, CountCall)
	limited      int    // iterations a provider refused, which the local breaker counted as neutral
	gen          int64  // the fleet's count of Resume, Skip and Reset
	restored     bool   // Restore ran, and Redis has not answered since
	last         view   // the fleet as the last answer showed it

	// While Redis is out of reach.
	down        bool
	downSince   time.Time
	downErr     error
	retryAt     time.Time         // when Check tries Redis again
	outage      int               // numbers the outages, for their replay
	outageCalls int               // calls recorded during this outage
	outageUsage loopbreaker.Usage // spend recorded during this outage
	// outageWindowStop is the stop of the window share (a reason, JSON)
	// that a report heard during this outage put in force; "" for none.
	outageWindowStop string
}

// view is the fleet's circuit as the last answer from Redis showed it.
type view struct {
	known     bool
	state     loopbreaker.State
	reason    loopbreaker.Reason
	held      bool
	openUntil time.Time // by the local clock

	stop        loopbreaker.Reason // a refusal no waiting ends: the provider stopped the fleet, or its spend cap over its life is reached
	limit       loopbreaker.Reason // a provider limit in force that a wait ends
	limitUntil  time.Time          // when it lifts, by the local clock
	window      loopbreaker.Reason // the window share's refusal that a wait ends
	windowUntil time.Time          // when its report is over, by the local clock
	spend       loopbreaker.Usage  // over the fleet's life
}

// New returns a worker of the fleet cfg.Name. It does not reach Redis: the
// first Check does. An invalid cfg is an error matching [ErrInvalidConfig].
func New(cfg Config) (*Worker, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	w := &Worker{
		cfg:      cfg,
		id:       cfg.Worker,
		keys:     keysOf(cfg.Name),
		addr:     addressOf(cfg.Client),
		shared:   sharedOf(cfg.Breaker),
		localCfg: localConfig(cfg.Breaker),
		fullCfg:  cfg.Breaker,
		classify: cfg.Breaker.Classify,
		patterns: cfg.Breaker.Limits.Patterns,
		prices:   cfg.Breaker.Spend.Prices,
	}
	if w.prices == nil {
		w.prices = loopbreaker.DefaultPrices()
	}
	if w.id == "" {
		w.id = defaultWorkerName()
	}
	if w.classify == nil {
		w.classify = defaultClassify(w.patterns)
	}
	// The local breaker is told the outcome the worker found, so that the
	// host's Classify runs once per iteration.
	w.localCfg.Classify = classifiedOutcome(w.classify)
	w.fullCfg.Classify = w.localCfg.Classify
	local, err := loopbreaker.New(w.localCfg)
	if err != nil {
		return nil, err
	}
	w.local = local
	return w, nil
}

// defaultWorkerName returns the host name, the process id and a random
// suffix.
func defaultWorkerName() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// ID returns the worker's name in the fleet ([Config.Worker]).
func (w *Worker) ID() string { return w.id }

// classified is an iteration's error with the outcome the worker found for
// it.
type classified struct {
	err     error
	outcome loopbreaker.Outcome
}

func (c *classified) Error() string { return c.err.Error() }
func (c *classified) Unwrap() error { return c.err }

func classifiedOutcome(classify func(error) loopbreaker.Outcome) func(error) loopbreaker.Outcome {
	return func(err error) loopbreaker.Outcome {
		if c, ok := err.(*classified); ok {
			return c.outcome
		}
		return classify(err)
	}
}

// Check asks whether the next iteration may run, in one round trip: the
// fleet's circuit must allow it (closed, or half-open with the probe
// leased to this worker), no provider limit may be in force on the fleet,
// its spend caps must not be reached, its call budget must have a call
// left (Check reserves it), and the worker's local breaker must allow it
// too. When several refuse, the first of these says why, as for a
// [loopbreaker.CircuitBreaker]: the provider stopped the fleet; the spend
// cap of its life is spent; the window share stopped it; the circuit is
// open; a provider limit is in force; a usage window is used up to the
// window share; an hourly spend cap is spent; the burn rate is at its cap;
// the call budget is spent. A refusal
// of the local breaker (its own signals opened it, or its loop is complete)
// costs no round trip, but for a hold (protected files lost): Check then
// asks the fleet whether a worker resumed it meanwhile. While Redis is out
// of reach, the local breaker decides alone, or with [Config.FailClosed]
// every iteration is refused with [loopbreaker.ErrUnavailable]; every
// [Config.RetryInterval] Check tries Redis again.
func (w *Worker) Check() loopbreaker.Decision {
	now := w.cfg.Breaker.Now()
	if !w.rejoin(now) {
		return w.offline(now)
	}
	local := w.localBreaker()
	var ld loopbreaker.Decision
	localHalfOpen := local.State() == loopbreaker.HalfOpen
	if !localHalfOpen {
		if ld = local.Check(); !ld.Allow {
			if !heldDecision(ld) || !w.resumedElsewhere(now) {
				return ld
			}
			// Another worker resumed the fleet: this worker's own hold
			// is released with it.
			local = w.localBreaker()
			if ld = local.Check(); !ld.Allow {
				return ld
			}
		}
	}
	r, err := w.call("check", "0")
	if err != nil {
		w.lose(err, now)
		d := w.offline(now)
		if d.Allow && !unsent(err) {
			// Redis may have run the check, and reserved the iteration's
			// call, before its answer was lost: the call is taken as
			// reserved, so that it counts there or nowhere, never again
			// when the worker rejoins.
			w.mu.Lock()
			w.reserved++
			w.mu.Unlock()
		}
		return d
	}
	w.observe(r, now)
	d := w.decision(r)
	if !d.Allow {
		return d
	}
	w.mu.Lock()
	if d.Probe {
		w.token = r.token
	}
	w.reserved++
	w.mu.Unlock()
	if localHalfOpen {
		if ld = local.Check(); !ld.Allow {
			if d.Probe {
				w.release(r.token, now)
			}
			return ld
		}
	}
	d.Probe = d.Probe || ld.Probe
	if d.State == loopbreaker.Closed {
		d.State, d.Reason = ld.State, ld.Reason
	}
	d.Warnings = append(d.Warnings, ld.Warnings...)
	return d
}

// unsent reports whether a call to Redis failed before its command was
// written (no connection could be made, or writing failed), so that Redis
// cannot have run it. Any other failure (a timeout, a connection lost
// while waiting for the answer) may come after Redis ran it.
func unsent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && (op.Op == "dial" || op.Op == "write")
}

// heldDecision reports whether d is the refusal of a circuit held open,
// which no cooldown ends.
func heldDecision(d loopbreaker.Decision) bool {
	return d.State == loopbreaker.Open && d.Reason.Kind.Held()
}

// resumedElsewhere asks the fleet, taking nothing, whether a worker
// resumed, skipped or reset it since this worker last heard; the local
// breaker then resumes too.
func (w *Worker) resumedElsewhere(now time.Time) bool {
	r, err := w.call("check", "1")
	if err != nil {
		w.lose(err, now)
		return false
	}
	return w.observe(r, now)
}

// decision turns the fleet's answer to a check into a Decision (without
// the local breaker's part).
func (w *Worker) decision(r reply) loopbreaker.Decision {
	d := loopbreaker.Decision{Allow: r.allow, State: r.state, Probe: r.probe}
	if r.state != loopbreaker.Closed {
		d.Reason = r.reason
	}
	if limit := w.shared.callsPerHour; limit > 0 {
		// As a breaker's Decision: the calls before this iteration's,
		// which the script reserved when it allowed it.
		used := r.used
		if r.allow {
			used = max(used-1, 0)
		}
		d.Budget = loopbreaker.Budget{Limit: limit, Used: used}
	}
	spend := w.spendOf(r)
	switch {
	case r.why == "limit":
		d.Reason, d.RetryAfter, d.Budget = r.limit, r.retry, loopbreaker.Budget{}
		return d
	case r.why == "spend":
		d.Reason, d.RetryAfter, d.Budget = spendCapReason(spend, r.capped), r.retry, loopbreaker.Budget{}
		return d
	case r.why == "window":
		d.Reason, d.RetryAfter, d.Budget = w.windowRefusal(r), r.retry, loopbreaker.Budget{}
		return d
	case r.why == "burn":
		d.Reason, d.RetryAfter, d.Budget = burnRefusal(spend), r.retry, loopbreaker.Budget{}
		return d
	case r.budget:
		// The budget stays in the Decision, as a breaker's does; its
		// warning is no news beside the refusal.
		d.Reason = loopbreaker.Reason{Kind: loopbreaker.ReasonCallBudget, Count: r.used, Threshold: w.shared.callsPerHour}
		d.RetryAfter = r.retry
	case r.state == loopbreaker.Open:
		d.RetryAfter = r.retry
		d.Budget = loopbreaker.Budget{}
	}
	if !r.budget && d.Budget.Warning() != "" {
		d.Warnings = append(d.Warnings, loopbreaker.Reason{Kind: loopbreaker.ReasonCallBudgetWarning, Count: d.Budget.Used, Threshold: d.Budget.Limit})
	}
	if warn := spendWarning(spend, r.warned); warn.Kind != loopbreaker.ReasonNone {
		d.Warnings = append(d.Warnings, warn)
	}
	d.Warnings = append(d.Warnings, shareWarnings(spend)...)
	if warn, ok := w.unpricedWarning(); ok {
		d.Warnings = append(d.Warnings, warn)
	}
	return d
}

// Record tells the fleet the outcome of an iteration, in one round trip.
// [loopbreaker.Config.Classify] decides how a non-nil Err counts, once. The
// fleet counts the failure (consecutive failures, its fingerprint, the same
// error in a row), the iteration's calls beyond the one Check reserved and
// what it spent ([loopbreaker.Iteration.Usage]), and judges the shared
// signals on Redis; the local breaker judges the worker's own, and when
// they open it, the fleet's circuit opens with that reason. An iteration
// the provider refused (a [loopbreaker.ProviderLimit] or
// [loopbreaker.ProviderStop] outcome) puts the limit in force for the
// whole fleet: every worker's Check refuses until it lifts (a stop: until
// Resume, Skip or Reset on any worker). The outcome of the half-open probe
// that this worker holds closes the fleet's circuit or opens it again;
// other workers' iterations that end while the circuit is not closed only
// count. While Redis is out of reach the local breaker alone judges the
// iteration, and its calls and spend are kept to be added, once, to the
// fleet's when the worker rejoins.
func (w *Worker) Record(it loopbreaker.Iteration) {
	outcome := loopbreaker.Success
	if it.Err != nil {
		outcome = w.classify(it.Err)
	}
	w.record(it, outcome)
}

// RecordSuccess records a successful iteration.
func (w *Worker) RecordSuccess() { w.record(loopbreaker.Iteration{}, loopbreaker.Success) }

// RecordFailure records a failed iteration with its error text, as Record
// records an error with that text: the classifier decides how it counts,
// so the text of a provider limit puts the limit in force rather than
// counting as a failure. It reports whether the fleet's circuit is open
// after it (the local breaker's, while Redis is out of reach).
func (w *Worker) RecordFailure(msg string) bool {
	err := errors.New(msg)
	return w.record(loopbreaker.Iteration{Err: err}, w.classify(err))
}

// record counts it, whose outcome is known, and reports whether the
// circuit is open after it.
func (w *Worker) record(it loopbreaker.Iteration, outcome loopbreaker.Outcome) bool {
	now := w.cfg.Breaker.Now()
	var fp, sample, code string
	var limit *loopbreaker.Limit
	switch outcome {
	case loopbreaker.Failure, loopbreaker.ProviderLoop: // a loop is a failure, which the local breaker opens on
		text := it.Err.Error()
		fp, code = loopbreaker.Fingerprint(text), "f"
		if w.cfg.Breaker.Failures.MaxSamples >= 0 {
			sample = errtext.Sample(text)
		}
	case loopbreaker.Neutral:
		code = "n"
	case loopbreaker.ProviderLimit, loopbreaker.ProviderStop:
		l := w.limitFor(it.Err, outcome, now)
		code, limit = "l", &l
	default:
		code = "s"
		if it.Noticed != nil {
			// An error the success noticed: the fleet counts it toward
			// the same error, as a breaker of the worker's own would.
			text := it.Noticed.Error()
			fp = loopbreaker.Fingerprint(text)
			if w.cfg.Breaker.Failures.MaxSamples >= 0 {
				sample = errtext.Sample(text)
			}
		}
	}
	w.mu.Lock()
	down := w.down
	w.mu.Unlock()
	localOutcome := outcome
	if limit != nil && !down {
		// The fleet keeps the limit; the local breaker, which judges only
		// the worker's own signals, takes the iteration as neutral, as it
		// would the limit: no counter changes, a probe is given back.
		localOutcome = loopbreaker.Neutral
	}
	if it.Err != nil {
		it.Err = &classified{err: it.Err, outcome: localOutcome}
	}
	usage := w.priced(it.Usage)
	local := w.localBreaker()
	local.Record(it)
	trip := w.localTrip(local)

	w.mu.Lock()
	if localOutcome != outcome {
		w.limited++
	}
	calls := w.callsOf(it)
	if w.down {
		w.outageCalls += calls
		w.outageUsage = addUsage(w.outageUsage, usage)
		local = w.local
		w.mu.Unlock()
		if limit != nil && localOutcome != outcome {
			local.ObserveLimit(*limit) // the outage began meanwhile
		}
		return local.State() == loopbreaker.Open
	}
	token := w.token
	w.token = ""
	w.mu.Unlock()

	held := ""
	if trip != "" && parseReason(trip).Kind.Held() {
		held = "1" // e.g. protected files lost: the fleet is held too
	}
	args := []any{token, code, fp, calls, trip, sample, held,
		usage.InputTokens, usage.OutputTokens, formatCost(usage.CostUSD)}
	args = append(args, w.limitArgs(limit, now)...)
	r, err := w.call("record", args...)
	if err != nil {
		// Applied or not, this iteration is never sent again: it counts
		// once at most. The outage's local breaker judges the limit.
		w.lose(err, now)
		local = w.localBreaker()
		if limit != nil {
			local.ObserveLimit(*limit)
		}
		return local.State() == loopbreaker.Open
	}
	w.observe(r, now)
	return r.state == loopbreaker.Open
}

// callsOf returns the calls of the iteration it to add to the fleet's
// budget: all it made but the one Check reserved. With calls counted as
// they happen, only those it states ([loopbreaker.Iteration.Calls]), and
// the reserved call stands for the first of them unless a counted call
// took it: an iteration counts at least the call Check reserved. Called
// with w.mu held.
func (w *Worker) callsOf(it loopbreaker.Iteration) int {
	if !w.byTransport {
		calls := max(it.Calls, 1)
		if w.reserved > 0 {
			w.reserved--
			calls--
		}
		return calls
	}
	calls := max(it.Calls, 0)
	if w.reserved > 0 {
		w.reserved--
		if w.reservedUsed > 0 {
			w.reservedUsed--
		} else if calls > 0 {
			calls--
		}
	}
	return calls
}

// localTrip returns the reason, as JSON, when the local breaker opened on
// a signal of its own since the fleet was last told; "" otherwise.
func (w *Worker) localTrip(local *loopbreaker.CircuitBreaker) string {
	if local.State() != loopbreaker.Open {
		return ""
	}
	s := local.Stats()
	w.mu.Lock()
	defer w.mu.Unlock()
	if s.Opens <= w.localOpens {
		return ""
	}
	w.localOpens = s.Opens
	if k := s.Reason.Kind; k == loopbreaker.ReasonAborted || k == loopbreaker.ReasonForcedOpen {
		return "" // the host's own control of this worker, not a signal
	}
	b, err := json.Marshal(s.Reason)
	if err != nil {
		return ""
	}
	return string(b)
}

// observe takes in the fleet's answer, and reports whether a Resume, Skip
// or Reset made by another worker (or a Redis that lost the state) showed
// in it: the local breaker's counts then start again too.
func (w *Worker) observe(r reply, now time.Time) bool {
	w.mu.Lock()
	changed := w.last.known && r.gen != w.gen
	w.gen = r.gen
	w.last = w.viewOf(r, now)
	// A worker restored held (its protected files lost) that finds the
	// fleet not held: a person resumed it while the worker was stopped,
	// at a count of resumes it never saw.
	released := w.restored && !w.last.held
	w.restored = false
	local := w.local
	w.mu.Unlock()
	if released {
		if s := local.Stats(); s.State == loopbreaker.Open && s.Reason.Kind.Held() {
			changed = true
		}
	}
	if changed {
		local.Resume()
	}
	return changed
}

// viewOf returns the fleet as the answer r, received at now, shows it.
func (w *Worker) viewOf(r reply, now time.Time) view {
	v := view{known: true, state: r.state, reason: r.reason, held: r.held, spend: r.spend}
	if r.state == loopbreaker.Open && !r.held {
		v.openUntil = now.Add(r.retry)
	}
	switch {
	case r.limit.Kind == loopbreaker.ReasonProviderStopped:
		v.stop = r.limit
	case r.capped == "c" || r.capped == "t":
		v.stop = spendCapReason(w.spendOf(r), r.capped)
	case r.windowStop.Kind != loopbreaker.ReasonNone:
		v.stop = r.windowStop
	case r.limit.Kind == loopbreaker.ReasonProviderLimit:
		v.limit, v.limitUntil = r.limit, now.Add(r.limitLeft)
	}
	if reason, until, ok := w.windowWait(r); ok {
		v.window, v.windowUntil = reason, now.Add(until.Sub(r.now))
	}
	return v
}

// release gives back a probe lease this worker will not use.
func (w *Worker) release(token string, now time.Time) {
	w.mu.Lock()
	if w.token == token {
		w.token = ""
	}
	w.mu.Unlock()
	if _, err := w.call("release", token); err != nil {
		w.lose(err, now)
	}
}

func (w *Worker) localBreaker() *loopbreaker.CircuitBreaker {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.local
}

// State returns the fleet's circuit state, in one round trip; while the
// fleet's circuit is closed, the local breaker's (its own signals may
// have opened it); while Redis is out of reach, the local breaker's.
func (w *Worker) State() loopbreaker.State {
	now := w.cfg.Breaker.Now()
	local := w.localBreaker()
	if !w.rejoin(now) {
		return local.State()
	}
	r, err := w.call("check", "1")
	if err != nil {
		w.lose(err, now)
		return local.State()
	}
	w.observe(r, now)
	if r.state == loopbreaker.Closed {
		return local.State()
	}
	return r.state
}

// Ping reaches the fleet's state on Redis in one round trip, taking and
// changing nothing, and returns why the worker cannot use it: Redis out of
// reach, a certificate not trusted, a wrong user or password (go-redis's
// WRONGPASS), a user without the rights the fleet needs (NOPERM: the ACL
// line is in docs/fleet.md), or a state that is not the fleet's. Each
// error names Redis's address, never a user or a password. A host calls it
// at start to fail fast on a mistake in the setup; Check and Record need
// no Ping, and a failed Ping starts no outage.
func (w *Worker) Ping() error {
	_, err := w.call("check", "1")
	return err
}

// IsTripped reports whether the circuit is open (State).
func (w *Worker) IsTripped() bool { return w.State() == loopbreaker.Open }

// Stats returns the local breaker's Stats with the fleet's shared figures
// in place of the worker's own: State, Reason, OpenedAt, RetryAfter and
// Cooldown (the local breaker's while the fleet's circuit is closed),
// Opens, ConsecutiveOpens, ConsecutiveFailures, TotalFailures,
// SameErrorInARow, UniqueErrors, EvictedErrors, ErrorCounts,
// LastFingerprint, Budget, BudgetRetryAfter, Spend, ProviderLimit and
// ProviderLimitUntil; Warnings has the budget's and the spend's warnings
// first. OpenedAt and ProviderLimitUntil are by Redis's clock. Iterations,
// NeutralIterations, LimitedIterations and the rest are the worker's own.
// While Redis is out of reach it is the local breaker's alone.
func (w *Worker) Stats() loopbreaker.Stats {
	now := w.cfg.Breaker.Now()
	local := w.localBreaker()
	s := local.Stats()
	w.mu.Lock()
	limited := w.limited
	w.mu.Unlock()
	s.LimitedIterations += limited
	s.NeutralIterations = max(s.NeutralIterations-limited, 0)
	if !w.rejoin(now) {
		return s
	}
	r, err := w.call("stats")
	if err != nil {
		w.lose(err, now)
		return s
	}
	w.observe(r, now)
	st := r.stats
	if r.state != loopbreaker.Closed {
		s.State, s.Reason, s.OpenedAt, s.Cooldown, s.RetryAfter = r.state, r.reason, st.openedAt, st.cooldown, 0
		if r.state == loopbreaker.Open {
			s.RetryAfter = r.retry
		}
	}
	s.Opens, s.ConsecutiveOpens = r.opens, st.consecutiveOpens
	s.Failures.Consecutive, s.Failures.Total, s.Failures.SameErrorInARow = r.failures, st.totalFailures, st.sameInARow
	s.Failures.Counts, s.Failures.Unique, s.Failures.Evicted = st.errors, len(st.errors), st.evicted
	s.Failures.LastFingerprint = st.lastFingerprint
	s.Budget, s.BudgetRetryAfter = loopbreaker.Budget{}, 0
	if limit := w.shared.callsPerHour; limit > 0 {
		s.Budget = loopbreaker.Budget{Limit: limit, Used: r.used}
		s.BudgetRetryAfter = st.budgetRetry
	}
	s.Spend = w.spendOf(r)
	s.ProviderLimit, s.ProviderLimitUntil = r.limit, r.limitAt
	var warnings []loopbreaker.Reason
	if s.Budget.Warning() != "" {
		warnings = append(warnings, loopbreaker.Reason{Kind: loopbreaker.ReasonCallBudgetWarning, Count: s.Budget.Used, Threshold: s.Budget.Limit})
	}
	if warn := spendWarning(s.Spend, r.warned); warn.Kind != loopbreaker.ReasonNone {
		warnings = append(warnings, warn)
	}
	warnings = append(warnings, shareWarnings(s.Spend)...)
	if len(warnings) > 0 {
		s.Warnings = append(warnings, s.Warnings...)
	}
	return s
}

// TripReason returns why the circuit opened ([Worker.Stats]), or "" while
// it is closed.
func (w *Worker) TripReason() string { return w.Stats().Reason.String() }

// Abort stops every worker of the fleet: the fleet's circuit opens, or
// stays open, with a reason of kind [loopbreaker.ReasonAborted] whose
// Message is the reason it had before. No cooldown ends it; every worker's
// next Check refuses, until Resume or Skip (by any worker) or Reset. While
// Redis is out of reach, only this worker's local breaker is aborted.
func (w *Worker) Abort() {
	w.control("abort", loopbreaker.Reason{Kind: loopbreaker.ReasonAborted}, (*loopbreaker.CircuitBreaker).Abort)
}

// ForceOpen holds the fleet's circuit open with a reason of kind
// [loopbreaker.ReasonForcedOpen] whose Message is reason: every worker
// stops until Resume, Skip or Reset. While Redis is out of reach, only
// this worker's local breaker is forced open.
func (w *Worker) ForceOpen(reason string) {
	w.control("force", loopbreaker.Reason{Kind: loopbreaker.ReasonForcedOpen, Message: reason},
		func(b *loopbreaker.CircuitBreaker) { b.ForceOpen(reason) })
}

// Resume closes the fleet's circuit, releasing a hold, lifts a provider
// limit in force on the fleet (a stop included: the person dealt with it),
// forgets the reports of the usage windows (a window share's stop with
// them: the next report counts afresh), and starts the shared counts again (consecutive failures, the same-error
// counts); the calls and the spend are kept, as they were made; this
// worker's local breaker resumes at once ([loopbreaker.CircuitBreaker.Resume]),
// every other worker's at its next round trip. While Redis is out of
// reach, only the local breaker resumes.
func (w *Worker) Resume() {
	w.control("resume", loopbreaker.Reason{}, (*loopbreaker.CircuitBreaker).Resume)
}

// Skip does what Resume does, and this worker's local breaker records the
// task it was on as skipped ([loopbreaker.CircuitBreaker.Skip]).
func (w *Worker) Skip() {
	w.control("resume", loopbreaker.Reason{}, (*loopbreaker.CircuitBreaker).Skip)
}

// Reset returns the fleet's breaker to its initial condition, no provider
// limit in force and no usage window reported, but for the calls of the rolling hour and the spend (they
// were made), and resets this worker's
// local breaker; the other workers' local breakers resume at their next
// round trip.
func (w *Worker) Reset() {
	w.control("reset", loopbreaker.Reason{}, func(b *loopbreaker.CircuitBreaker) {
		b.Reset()
	})
	w.mu.Lock()
	w.localOpens, w.limited = 0, 0
	w.mu.Unlock()
}

// control runs a manual control on the fleet, and on the local breaker.
func (w *Worker) control(op string, reason loopbreaker.Reason, onLocal func(*loopbreaker.CircuitBreaker)) {
	now := w.cfg.Breaker.Now()
	local := w.localBreaker()
	if !w.rejoin(now) {
		onLocal(local)
		return
	}
	var args []any
	if reason.Kind != loopbreaker.ReasonNone {
		b, _ := json.Marshal(reason)
		args = append(args, string(b))
	}
	r, err := w.call(op, args...)
	if err != nil {
		w.lose(err, now)
		onLocal(local)
		return
	}
	w.mu.Lock()
	w.gen = r.gen // this worker's own Resume or Reset: the local breaker follows below
	w.last = w.viewOf(r, now)
	w.mu.Unlock()
	if op != "abort" && op != "force" {
		onLocal(local)
	}
}

// Wait blocks until the next iteration may run and returns the Decision of
// the Check that allows it. While Check refuses, it sleeps
// [loopbreaker.Decision.RetryAfter], at most [Config.PollInterval] (another
// worker may Resume the fleet meanwhile), with
// [loopbreaker.Config.Sleep], and checks again. It returns at once with
// the refusal and its error when no waiting ends it
// ([loopbreaker.Decision.WaitHelps]): the loop is complete, the fleet's
// breaker gave up after [loopbreaker.Config.MaxConsecutiveOpens] openings
// in a row, the circuit is held open (Abort, ForceOpen, protected files
// lost), the provider stopped the fleet, its spend cap over its life is
// reached, or the window share stopped it. A provider limit, a window
// share that waits for the window's reset and the burn rate are waited
// out, as a cooldown is. When
// ctx ends first, it returns the last refusal and ctx.Err().
func (w *Worker) Wait(ctx context.Context) (loopbreaker.Decision, error) {
	sleep := w.cfg.Breaker.Sleep
	if sleep == nil {
		sleep = timer.Sleep
	}
	for {
		d := w.Check()
		switch {
		case d.Allow:
			return d, nil
		case !d.WaitHelps():
			return d, d.Err()
		}
		pause := w.cfg.PollInterval
		if d.RetryAfter > 0 && d.RetryAfter < pause {
			pause = d.RetryAfter
		}
		if err := sleep(ctx, pause); err != nil || ctx.Err() != nil {
			if ctx.Err() != nil {
				return d, ctx.Err()
			}
			return d, err
		}
	}
}
