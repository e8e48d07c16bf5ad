package sessions

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// A Call is one tool call the model asked for.
type Call struct {
	// ID is the framework's name for the call, which its result gives
	// back; "" when it has none. With IDs, the steps of a turn whose
	// calls run in parallel are recorded in the order the model made
	// them, whichever ends first.
	ID   string
	Tool string // the tool's name
	Args string // its arguments, as JSON
}

// action is the call as the breaker judges it.
func (c Call) action() *loopbreaker.Action {
	return &loopbreaker.Action{Tool: c.Tool, Args: c.Args}
}

// A Turn is one answer of the model: the tool calls it makes, in its
// order, or, when it makes none, its text; and what it spent.
type Turn struct {
	Calls []Call
	Text  string
	// Usage is what the framework's response says the call spent, with
	// the model that answered. It is priced with the breaker's prices
	// when no routed transport reports this session's calls (which then
	// reports it instead, so it is never counted twice).
	Usage loopbreaker.Usage
}

// A Session is one conversation's breaker and what a turn of it is doing.
// Its methods are safe for concurrent use (a framework may run a turn's
// tool calls in parallel). It implements transport.Meter, so that a routed
// transport ([Set.Transport]) reports the session's model calls to it.
type Session struct {
	set *Set
	key string
	cb  *loopbreaker.CircuitBreaker

	// routed: a transport reports this session's calls (CountCall), so
	// the session neither counts nor prices them itself.
	routed atomic.Bool

	mu       sync.Mutex
	used     time.Time
	pending  []pendingCall                   // the calls of the last turn, in order, until recorded
	warned   map[loopbreaker.ReasonKind]bool // the signals one short the model was told of
	saveErr  error                           // the last failed save, until BeforeModel returns it
	recordMu sync.Mutex
}

// pendingCall is a call of the last turn: its step, once it has ended.
type pendingCall struct {
	id    string
	ended bool
	step  loopbreaker.Iteration
}

func newSession(set *Set, key string, cb *loopbreaker.CircuitBreaker, now time.Time) *Session {
	return &Session{set: set, key: key, cb: cb, used: now}
}

// Key returns the session's key.
func (s *Session) Key() string { return s.key }

// Breaker returns the session's breaker, for what this type does not do:
// Stats, Resume, Snapshot.
func (s *Session) Breaker() *loopbreaker.CircuitBreaker { return s.cb }

func (s *Session) touch(now time.Time) {
	s.mu.Lock()
	s.used = now
	s.mu.Unlock()
}

func (s *Session) lastUsed() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// Save saves the session's breaker to the set's store; without a store it
// does nothing.
func (s *Session) Save(ctx context.Context) error {
	if s.set.opts.Store == nil {
		return nil
	}
	return s.set.opts.Store.Save(ctx, LoopName(s.key), s.cb.Snapshot())
}

// UserMessage tells the session that the person wrote a new message: the
// steps of the last turn are recorded, and, with
// [Options.UserMessageCloses], an open circuit is closed.
func (s *Session) UserMessage() {
	s.flush(true)
	if s.set.opts.UserMessageCloses && s.cb.State() == loopbreaker.Open {
		s.cb.Resume()
		s.save()
	}
}

// BeforeModel asks the breaker whether the model may be called now, and
// returns nil when it may. A provider limit or a spent call budget, which
// end by themselves, is waited out (on the breaker's clock) when it ends
// within [Options.MaxWait] and the context's deadline. Any other refusal
// ends the run: the error matches the breaker's sentinel
// (errors.Is(err, loopbreaker.ErrOpen), ErrGaveUp, ErrSpendCap, ...) and
// says why. An open circuit is not waited out: its cooldown may be
// minutes, and a run that waits for it holds its user as long; the next
// run after the cooldown is the probe. A failed save of the breaker to the
// store ends the run too.
func (s *Session) BeforeModel(ctx context.Context) error {
	s.flush(true)
	s.mu.Lock()
	saveErr := s.saveErr
	s.saveErr = nil
	s.mu.Unlock()
	if saveErr != nil {
		return fmt.Errorf("sessions: session %q: saving the breaker: %w", s.key, saveErr)
	}
	waited := time.Duration(0)
	for {
		d := s.cb.Check()
		if d.Allow {
			return nil
		}
		wait, ok := s.waitFor(ctx, d, waited)
		if !ok {
			return stopError(s.key, d)
		}
		if err := s.sleep(ctx, wait); err != nil {
			return fmt.Errorf("loopbreaker: session %q: waiting %v for %s: %w", s.key, wait, d.Reason, err)
		}
		waited += wait
	}
}

// waitFor returns how long to wait before asking again about a refusal
// that ends by itself; false when the run ends instead.
func (s *Session) waitFor(ctx context.Context, d loopbreaker.Decision, waited time.Duration) (time.Duration, bool) {
	if !d.WaitHelps() || d.State != loopbreaker.Closed || d.RetryAfter <= 0 {
		return 0, false // a stop, a probe in flight, or what only a person ends
	}
	if max := s.set.opts.MaxWait; max < 0 || waited+d.RetryAfter > max {
		return 0, false
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d.RetryAfter {
		return 0, false
	}
	return d.RetryAfter, true
}

// sleep waits d on the breaker's clock: Config.Sleep, or a timer.
func (s *Session) sleep(ctx context.Context, d time.Duration) error {
	if sleep := s.set.opts.Config.Sleep; sleep != nil {
		return sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stopError is the error that ends a run the breaker refused.
func stopError(key string, d loopbreaker.Decision) error {
	return fmt.Errorf("loopbreaker stopped session %q: %w", key, d.Err())
}

// AfterModel tells the session what the model answered. A turn without
// tool calls is one step, a message ([loopbreaker.Action.Message]); the
// turn's calls are steps when they end ([Session.AfterTool]). The model
// call counts one call toward the call budget, and its usage is priced,
// unless a routed transport reports them.
func (s *Session) AfterModel(t Turn) {
	s.meterCall(t.Usage)
	if len(t.Calls) == 0 {
		s.record(loopbreaker.Iteration{
			Action: &loopbreaker.Action{Message: t.Text},
			Done:   s.set.opts.DoneOnAnswer,
		})
		return
	}
	s.flush(true)
	s.mu.Lock()
	s.pending = s.pending[:0]
	for _, c := range t.Calls {
		if c.ID != "" {
			s.pending = append(s.pending, pendingCall{id: c.ID})
		}
	}
	s.mu.Unlock()
}

// ModelFailed tells the session that the model call failed (after the
// framework's own retries, or each try, as the framework reports it): one
// failed iteration, or, for a rate or usage limit, the limit put in force
// (the breaker's [loopbreaker.Config.Classify] decides).
func (s *Session) ModelFailed(err error) {
	s.meterCall(loopbreaker.Usage{})
	s.record(loopbreaker.Iteration{Err: err})
}

// meterCall counts a model call and prices its usage, unless a routed
// transport does.
func (s *Session) meterCall(u loopbreaker.Usage) {
	if s.routed.Load() {
		return
	}
	s.cb.CountCall()
	if u != (loopbreaker.Usage{}) {
		s.cb.AddUsage(u)
	}
}

// BeforeTool asks the breaker about a tool call before it runs. It returns
// false when the call may run. It is refused while the circuit is open,
// and when it would complete a repeat (the same call failing, or returning
// the same result, once more than the breaker lets pass), which opens the
// circuit as the call would have after it ran. A refused call is no step,
// nothing ran: the words returned are what the model reads as the call's
// result instead (the rule, the call and its error, what to do instead),
// and the next model call ends the run with the reason.
func (s *Session) BeforeTool(c Call) (refusal string, refused bool) {
	d := checkAction(s.cb, c.action())
	if d.Allow {
		return "", false
	}
	s.mu.Lock()
	s.dropPendingLocked(c.ID)
	s.mu.Unlock()
	s.save()
	return wordsForModel(d), true
}

// dropPendingLocked forgets a call of the turn that will not end (it was
// refused), so that the calls after it are recorded as they end.
func (s *Session) dropPendingLocked(id string) {
	for i, p := range s.pending {
		if p.id == id && id != "" {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			return
		}
	}
}

// AfterTool tells the session that a tool call ended, with its result (the
// observation) or its error: one step. The calls of a turn are recorded
// in the model's order as soon as those before them have ended; a call
// that never ends (interrupted, long-running) is passed over at the next
// model call.
//
// It returns a warning for the model to read beside the call's result,
// "" for none: a signal is one step short of stopping its calls ("this
// call has failed 2 times in a row; make it again and your tool calls are
// stopped"). Each is said once while it holds.
func (s *Session) AfterTool(c Call, observation string, err error) (warning string) {
	step := loopbreaker.Iteration{Action: c.action(), Observation: observation, Err: err}
	s.mu.Lock()
	found := false
	for i := range s.pending {
		if p := &s.pending[i]; p.id == c.ID && !p.ended {
			p.ended, p.step, found = true, step, true
			break
		}
	}
	s.mu.Unlock()
	if found {
		s.flush(false)
	} else {
		s.record(step)
	}
	short := shortNow(s.cb)
	s.mu.Lock()
	defer s.mu.Unlock()
	warning, s.warned = warningWords(short, s.warned)
	return warning
}

// flush records the ended calls of the turn at its head, in order; with
// all, every ended call, the others passed over.
func (s *Session) flush(all bool) {
	s.recordMu.Lock()
	defer s.recordMu.Unlock()
	for {
		s.mu.Lock()
		if len(s.pending) == 0 {
			s.mu.Unlock()
			return
		}
		p := s.pending[0]
		if !p.ended && !all {
			s.mu.Unlock()
			return
		}
		s.pending = s.pending[1:]
		s.mu.Unlock()
		if p.ended {
			s.recordLocked(p.step)
		}
	}
}

// record records a step and saves the breaker.
func (s *Session) record(it loopbreaker.Iteration) {
	s.recordMu.Lock()
	defer s.recordMu.Unlock()
	s.recordLocked(it)
}

// recordLocked records a step and saves the breaker. Called with recordMu
// held, which keeps the steps in order.
func (s *Session) recordLocked(it loopbreaker.Iteration) {
	s.cb.Record(it)
	s.save()
}

// save saves the breaker, keeping a failure for BeforeModel to return.
func (s *Session) save() {
	if err := s.Save(context.Background()); err != nil {
		s.mu.Lock()
		s.saveErr = err
		s.mu.Unlock()
	}
}

// Now is the breaker's clock (transport.Meter).
func (s *Session) Now() time.Time { return s.cb.Now() }

// CountCall counts a call a routed transport sent for the session
// (transport.Meter); from then on the session leaves counting and pricing
// to the transport.
func (s *Session) CountCall() {
	s.routed.Store(true)
	s.cb.CountCall()
}

// AddUsage adds what a call spent (transport.Meter).
func (s *Session) AddUsage(u loopbreaker.Usage) { s.cb.AddUsage(u) }

// ObserveLimit puts a provider limit in force (transport.Meter).
func (s *Session) ObserveLimit(l loopbreaker.Limit) { s.cb.ObserveLimit(l); s.save() }

// LiftLimit lifts a provider limit the provider got past (transport.Meter).
func (s *Session) LiftLimit(source string) { s.cb.LiftLimit(source); s.save() }

// IsStop reports whether err is a run ended by a session's breaker, rather
// than a failure of the framework, the model or a tool.
func IsStop(err error) bool {
	var refused *loopbreaker.RefusedError
	return errors.As(err, &refused)
}
