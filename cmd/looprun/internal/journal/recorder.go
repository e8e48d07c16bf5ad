package journal

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// Recorder turns what a loop's breaker says, step by step, into the
// journal's entries and the events a person is told of: it compares the
// breaker's figures with those it saw last, so that it tells a fleet's
// circuit opened by another runner as well as one of its own. It is safe
// for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	w      *Writer           // nil: no journal
	notify func(Entry)       // the events Notified reports true for; nil: none
	failed func(error)       // a journal that cannot be written, said once
	base   Entry             // Loop, Dir, Host, Source, Fleet, Worker
	now    func() time.Time  // the clock
	seen   loopbreaker.Stats // as last observed
	last   *loopbreaker.Transition
	warned bool   // a spend warning was told, and is still in force
	capped string // the spend cap last told
	said   bool   // the journal's failure was said
}

// RecorderConfig is what a Recorder writes where.
type RecorderConfig struct {
	// Journal is where entries are written; nil writes none.
	Journal *Writer
	// Notify is given each entry whose kind is Notified, after it is
	// written; it must not block (a Notifier queues).
	Notify func(Entry)
	// Failed is told the first error writing the journal, once.
	Failed func(error)
	// Base holds the fields every entry has: Loop, Dir, Host, Source,
	// Fleet, Worker.
	Base Entry
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// NewRecorder returns a recorder that starts from the breaker's figures
// s: what they hold already (the history of earlier runs) is not told
// again.
func NewRecorder(cfg RecorderConfig, s loopbreaker.Stats) *Recorder {
	r := &Recorder{w: cfg.Journal, notify: cfg.Notify, failed: cfg.Failed, base: cfg.Base, now: cfg.Now}
	if r.now == nil {
		r.now = time.Now
	}
	r.seen = s
	if n := len(s.History); n > 0 {
		t := s.History[n-1]
		r.last = &t
	}
	r.warned = hasWarning(s.Warnings, loopbreaker.ReasonSpendWarning)
	return r
}

// Add writes e, with the base's fields where e leaves them empty, and
// tells it when its kind is one a person is told of.
func (r *Recorder) Add(e Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.add(e)
}

func (r *Recorder) add(e Entry) {
	if e.At.IsZero() {
		e.At = r.now()
	}
	fill := func(field *string, from string) {
		if *field == "" {
			*field = from
		}
	}
	fill(&e.Loop, r.base.Loop)
	fill(&e.Dir, r.base.Dir)
	fill(&e.Host, r.base.Host)
	fill(&e.Source, r.base.Source)
	fill(&e.Fleet, r.base.Fleet)
	fill(&e.Worker, r.base.Worker)
	if r.w != nil {
		if err := r.w.Append(e); err != nil && !r.said {
			r.said = true
			if r.failed != nil {
				r.failed(err)
			}
		}
	}
	if r.notify != nil && e.Kind.Notified() {
		r.notify(e)
	}
}

// Who names the loop in an event's text: "looprun <loop> on <host> in
// <dir>".
func (r *Recorder) Who() string {
	s := "looprun " + r.base.Loop
	if r.base.Worker != "" {
		s += " (fleet " + r.base.Fleet + ", worker " + r.base.Worker + ")"
	}
	if r.base.Host != "" {
		s += " on " + r.base.Host
	}
	if r.base.Dir != "" {
		s += " in " + r.base.Dir
	}
	return s
}

// Started tells that the loop starts, with the breaker's figures s.
func (r *Recorder) Started(start Start, s loopbreaker.Stats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	what := "started"
	if start.Resumed {
		what = fmt.Sprintf("resumed at iteration %d, circuit %s", s.Iterations, s.State)
	}
	r.add(Entry{Kind: Started, Text: r.Who() + ": " + what, Iteration: s.Iterations, State: s.State.String(), Start: &start, Spend: SpendOf(s.Spend)})
}

// Iteration tells that an iteration ran (its number, what it did) and
// then what the breaker's figures after it, s, say changed; stuck, when
// the circuit opened, says what the loop was stuck on (nil: nothing).
func (r *Recorder) Iteration(n int, run Run, s loopbreaker.Stats, stuck func() *Stuck) {
	r.mu.Lock()
	defer r.mu.Unlock()
	text := fmt.Sprintf("%s: iteration %d %s", r.Who(), n, run.Result)
	r.add(Entry{Kind: IterationRan, Text: text, Iteration: n, State: s.State.String(), Run: &run, Spend: SpendOf(s.Spend)})
	r.observe(s, stuck)
}

// Observe tells what changed in the breaker's figures s since they were
// last seen: the circuit's transitions, a provider limit, a spend
// warning. stuck is as for Iteration.
func (r *Recorder) Observe(s loopbreaker.Stats, stuck func() *Stuck) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observe(s, stuck)
}

func (r *Recorder) observe(s loopbreaker.Stats, stuck func() *Stuck) {
	prev := r.seen
	r.seen = s
	explained := false // the new state is one a transition of the history went to
	for _, t := range r.newTransitions(s.History) {
		if t.Cause == loopbreaker.CauseProviderLimit || t.Cause == loopbreaker.CauseLimitLifted {
			continue // told from the limit in force, below, as on a fleet
		}
		r.transition(t, s, stuck)
		explained = explained || t.To == s.State
	}
	if !explained && s.State != prev.State || s.State == loopbreaker.Open && s.Opens > prev.Opens && !explained {
		// A shared circuit another runner moved: the local history does
		// not have it.
		kind := s.State
		t := loopbreaker.Transition{At: r.now(), From: prev.State, To: kind, Cause: loopbreaker.CauseSignal, Reason: s.Reason, Iteration: s.Iterations}
		r.transitionAs(t, "fleet", s, stuck)
	}
	if s.ProviderLimit.Kind != loopbreaker.ReasonNone &&
		(prev.ProviderLimit.Kind != s.ProviderLimit.Kind || !prev.ProviderLimitUntil.Equal(s.ProviderLimitUntil)) {
		r.limit(s)
	}
	warned := hasWarning(s.Warnings, loopbreaker.ReasonSpendWarning)
	if warned && !r.warned {
		for _, w := range s.Warnings {
			if w.Kind == loopbreaker.ReasonSpendWarning {
				r.add(Entry{Kind: SpendWarning, Text: r.Who() + ": " + w.String(), Iteration: s.Iterations, State: s.State.String(),
					Reason: ReasonOf(w), Spend: SpendOf(s.Spend)})
				break
			}
		}
	}
	r.warned = warned
}

// newTransitions returns the transitions of history after the last one
// told.
func (r *Recorder) newTransitions(history []loopbreaker.Transition) []loopbreaker.Transition {
	history = after(history, r.last)
	if n := len(history); n > 0 {
		t := history[n-1]
		r.last = &t
	}
	return history
}

// after returns the transitions of history after last (all of them when
// last is nil). When last is no longer there (Reset cleared the history,
// or more than it keeps happened since), those newer than last are.
func after(history []loopbreaker.Transition, last *loopbreaker.Transition) []loopbreaker.Transition {
	if last == nil {
		return history
	}
	for i := len(history) - 1; i >= 0; i-- {
		if sameTransition(history[i], *last) {
			return history[i+1:]
		}
	}
	for i, t := range history {
		if t.At.After(last.At) || t.At.Equal(last.At) && t.Iteration > last.Iteration {
			return history[i:]
		}
	}
	return nil
}

func sameTransition(a, b loopbreaker.Transition) bool {
	return a.At.Equal(b.At) && a.From == b.From && a.To == b.To && a.Cause == b.Cause && a.Iteration == b.Iteration && a.Reason.Kind == b.Reason.Kind
}

func (r *Recorder) transition(t loopbreaker.Transition, s loopbreaker.Stats, stuck func() *Stuck) {
	cause, err := t.Cause.MarshalText()
	if err != nil {
		cause = []byte(t.Cause.String())
	}
	r.transitionAs(t, string(cause), s, stuck)
}

// transitionAs tells transition t, its cause named cause.
func (r *Recorder) transitionAs(t loopbreaker.Transition, cause string, s loopbreaker.Stats, stuck func() *Stuck) {
	kind := KindOf(t)
	e := Entry{Kind: kind, At: t.At, Iteration: t.Iteration, State: t.To.String(),
		Transition: &Transition{From: t.From.String(), To: t.To.String(), Cause: cause}, Reason: ReasonOf(t.Reason)}
	who := r.Who()
	switch kind {
	case CircuitOpened:
		e.Text = fmt.Sprintf("%s: the circuit opened at iteration %d: %s", who, t.Iteration, detail(t.Reason))
		switch {
		case t.Reason.Kind.Held():
			e.Text += "; held open until a person resumes or skips"
		case s.State == loopbreaker.Open && s.RetryAfter > 0:
			e.Text += fmt.Sprintf("; probe in %s", s.RetryAfter.Round(time.Second))
		}
	case GaveUp:
		e.Text = fmt.Sprintf("%s: gave up at iteration %d: %s; a person must resume or skip", who, t.Iteration, detail(t.Reason))
	case ProtectedFiles:
		e.Text = fmt.Sprintf("%s: protected files lost at iteration %d and restored: %s; held open until a person resumes or skips", who, t.Iteration, t.Reason)
	case HalfOpen:
		e.Text = fmt.Sprintf("%s: the circuit is half-open at iteration %d: the next iteration is the probe", who, t.Iteration)
		if s.Opens == 0 || t.From == loopbreaker.Closed {
			e.Text = fmt.Sprintf("%s: watching at iteration %d: a signal is one iteration short of opening the circuit", who, t.Iteration)
		}
	case CircuitClosed:
		why := map[loopbreaker.Cause]string{
			loopbreaker.CauseProbeSucceeded: "the probe passed", loopbreaker.CauseResume: "a person resumed",
			loopbreaker.CauseSkip: "a person skipped the task", loopbreaker.CauseReset: "reset",
		}[t.Cause]
		if why == "" {
			why = cause
		}
		e.Text = fmt.Sprintf("%s: the circuit closed at iteration %d: %s", who, t.Iteration, why)
	default:
		e.Text = fmt.Sprintf("%s: %s at iteration %d", who, strings.ReplaceAll(string(kind), "_", " "), t.Iteration)
	}
	if (kind == CircuitOpened || kind == GaveUp) && stuck != nil {
		e.Stuck = stuck()
	}
	r.add(e)
}

// limit tells the provider limit now in force.
func (r *Recorder) limit(s loopbreaker.Stats) {
	l := &Limit{Kind: "wait", Text: s.ProviderLimit.Message, Until: s.ProviderLimitUntil}
	text := fmt.Sprintf("%s: %s", r.Who(), s.ProviderLimit)
	if s.ProviderLimit.Kind == loopbreaker.ReasonProviderStopped {
		l.Kind, l.Until = "stop", time.Time{}
		text += "; no waiting ends it"
	} else if !l.Until.IsZero() {
		text += "; it lifts at " + l.Until.Format(time.RFC3339)
	}
	r.add(Entry{Kind: ProviderLimit, Text: text, Iteration: s.Iterations, State: s.State.String(), Reason: ReasonOf(s.ProviderLimit), Limit: l})
}

// LimitWaited tells how a wait for the provider limit ended, after
// waited: "lifted", "terminated" or "interrupted".
func (r *Recorder) LimitWaited(waited time.Duration, ended string, s loopbreaker.Stats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.add(Entry{Kind: LimitWaited, Text: fmt.Sprintf("%s: waited %s for the provider limit: %s", r.Who(), waited.Round(time.Second), ended),
		Iteration: s.Iterations, State: s.State.String(), Limit: &Limit{Kind: "wait", Waited: waited, Ended: ended}})
	r.observe(s, nil)
}

// Refused tells a refusal of the breaker that a person is told of: a
// spend cap reached, once for each cap.
func (r *Recorder) Refused(d loopbreaker.Decision, s loopbreaker.Stats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if k := d.Reason.Kind; k != loopbreaker.ReasonSpendCap && k != loopbreaker.ReasonHourlySpendCap {
		r.capped = ""
		return
	}
	text := d.Reason.String()
	if text == r.capped {
		return
	}
	r.capped = text
	r.add(Entry{Kind: SpendCap, Text: r.Who() + ": " + text, Iteration: s.Iterations, State: s.State.String(),
		Reason: ReasonOf(d.Reason), Spend: SpendOf(s.Spend)})
}

// Ended tells that the loop stopped, and why.
func (r *Recorder) Ended(exit Exit, s loopbreaker.Stats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observe(s, nil)
	text := fmt.Sprintf("%s: stopped (%s, exit code %d) after %d iterations", r.Who(), exit.Name, exit.Code, exit.Iterations)
	if exit.Stopped != "" {
		text += ": " + exit.Stopped
	}
	r.add(Entry{Kind: Ended, Text: text, Iteration: s.Iterations, State: s.State.String(), Exit: &exit,
		Reason: ReasonOf(s.Reason), Spend: SpendOf(s.Spend)})
}

// detail returns the reason's text and the first line of its error, as a
// chat shows it on a line.
func detail(r loopbreaker.Reason) string {
	first, _, _ := strings.Cut(strings.TrimSpace(r.Sample), "\n")
	if first == "" {
		return r.String()
	}
	return r.String() + `: "` + first + `"`
}

func hasWarning(ws []loopbreaker.Reason, kind loopbreaker.ReasonKind) bool {
	for _, w := range ws {
		if w.Kind == kind {
			return true
		}
	}
	return false
}
