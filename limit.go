package loopbreaker

import (
	"regexp"
	"strconv"
	"time"

	"github.com/loopbreaker/loopbreaker/internal/errtext"
	"github.com/loopbreaker/loopbreaker/internal/limits"
)

// A provider limit is the model provider saying "not now" (a usage window
// spent, a rate limit, an overloaded server) or "not at all" (no credit, a
// quota or billing cap, usage disabled by an admin). It is not the agent
// failing: it trips nothing and counts toward no failure, progress or
// same-error rule, and Check refuses until it lifts.

// maxProviderLimitWait is the furthest a provider limit's reset may lie:
// 35 days. No provider window is longer than a month (a weekly limit, a
// monthly spend cap); a reset further off (a host's mistake, a state
// edited by hand) counts as this far.
const maxProviderLimitWait = limits.MaxAhead

// LimitKind says what a provider limit asks of the loop.
type LimitKind uint8

// The kinds of provider limits. Without a [Limit.Reset], a wait lasts
// [LimitRules.Wait] and a throttle [LimitRules.ThrottleWait].
const (
	LimitWait     LimitKind = iota // a usage limit
	LimitThrottle                  // a rate or capacity throttle (HTTP 429, 529)
	LimitStop                      // no waiting ends it (no credit): a person acts
)

const limitKindCount = int(LimitStop) + 1

// String returns "wait", "throttle" or "stop".
func (k LimitKind) String() string {
	switch k {
	case LimitWait:
		return "wait"
	case LimitThrottle:
		return "throttle"
	case LimitStop:
		return "stop"
	}
	return "LimitKind(" + strconv.Itoa(int(k)) + ")"
}

// Limit is a provider limit: what [ProviderLimitOf] recognises, a
// [*LimitError] carries and [CircuitBreaker.ObserveLimit] is told.
type Limit struct {
	// Kind is what the limit asks of the loop; zero: [LimitWait].
	Kind LimitKind
	// Reset is when it lifts; zero when not known (see [LimitRules]) and for
	// a stop. It is waited at least a second and at most 35 days.
	Reset time.Time
	// Why is what the provider said, for a person.
	Why string
	// Source is the API host a transport saw it from; empty otherwise.
	Source string
}

// LimitError is an error that is a provider limit: [DefaultClassify] and
// [ProviderLimitOf] take it as it says, whatever its text.
type LimitError struct {
	Limit Limit
	// Err is the error the host got; it may be nil.
	Err error
}

func (e *LimitError) Error() string {
	what := "provider limit"
	if e.Limit.Kind == LimitStop {
		what = "provider stop"
	}
	switch {
	case e.Err != nil && e.Limit.Why != "":
		return what + ": " + e.Limit.Why + ": " + e.Err.Error()
	case e.Err != nil:
		return what + ": " + e.Err.Error()
	case e.Limit.Why != "":
		return what + ": " + e.Limit.Why
	}
	return what
}

// Unwrap returns Err.
func (e *LimitError) Unwrap() error { return e.Err }

// LimitPattern is a host's own way of recognising a provider limit in text.
// Patterns run in order before the built-in rules, and the first match
// decides. A group named "reset" is read as when the limit lifts (a clock
// time, a duration, a Unix, RFC 3339 or HTTP time).
type LimitPattern struct {
	// Match finds the limit; it must not be nil.
	Match *regexp.Regexp
	// Kind is the limit's kind.
	Kind LimitKind
	// Why is [Limit.Why]; empty reports the pattern's expression.
	Why string
	// NotALimit makes a match mean no limit, whatever the built-in rules say.
	NotALimit bool
}

// internal returns p as internal/limits reads it.
func (p LimitPattern) internal() limits.Pattern {
	switch {
	case p.NotALimit:
		return limits.Pattern{Match: p.Match, Kind: limits.None}
	case p.Kind == LimitStop:
		return limits.Pattern{Match: p.Match, Kind: limits.Stop, Why: p.Why}
	}
	return limits.Pattern{Match: p.Match, Kind: limits.Wait, Why: p.Why, Throttle: p.Kind == LimitThrottle}
}

// internalPatterns converts patterns for internal/limits; nil for none.
func internalPatterns(patterns []LimitPattern) []limits.Pattern {
	if len(patterns) == 0 {
		return nil
	}
	ps := make([]limits.Pattern, len(patterns))
	for i, p := range patterns {
		ps[i] = p.internal()
	}
	return ps
}

// fromInternal converts a limit internal/limits recognised; false for
// none.
func fromInternal(l limits.Limit) (Limit, bool) {
	switch l.Kind {
	case limits.Wait:
		kind := LimitWait
		if l.Throttle {
			kind = LimitThrottle
		}
		return Limit{Kind: kind, Reset: l.Reset, Why: l.Why}, true
	case limits.Stop:
		return Limit{Kind: LimitStop, Why: l.Why}, true
	}
	return Limit{}, false
}

// ProviderLimitOf reports whether err is a provider limit, and which: a
// [*LimitError] in its tree, an SDK error's HTTP status (429, 529, 402)
// and headers, or its text as [ProviderLimitInText] reads it. A timeout is
// never a limit. The patterns run first; now resolves reset times.
func ProviderLimitOf(err error, now time.Time, patterns ...LimitPattern) (Limit, bool) {
	return limitOf(err, now, internalPatterns(patterns))
}

// limitOf is ProviderLimitOf with its patterns converted.
func limitOf(err error, now time.Time, patterns []limits.Pattern) (Limit, bool) {
	if err == nil {
		return Limit{}, false
	}
	if le, ok := limitErrorIn(err, 0); ok {
		l := le.Limit
		if l.Why == "" && le.Err != nil {
			l.Why = errtext.FirstLine(le.Err.Error())
		}
		return l, true
	}
	return fromInternal(limits.FromError(err, now, patterns...))
}

// limitErrorIn finds a *LimitError in err's tree as errors.As does,
// without the allocation errors.As costs every call: limitOf runs on every
// failed iteration. depth bounds the walk of a tree that wraps itself.
func limitErrorIn(err error, depth int) (*LimitError, bool) {
	if err == nil || depth > maxErrorDepth {
		return nil, false
	}
	switch x := err.(type) {
	case *LimitError:
		return x, true
	case interface{ As(any) bool }:
		var le *LimitError
		if x.As(&le) {
			return le, true
		}
	}
	switch x := err.(type) {
	case interface{ Unwrap() error }:
		return limitErrorIn(x.Unwrap(), depth+1)
	case interface{ Unwrap() []error }:
		for _, e := range x.Unwrap() {
			if le, ok := limitErrorIn(e, depth+1); ok {
				return le, true
			}
		}
	}
	return nil, false
}

// maxErrorDepth bounds limitErrorIn's walk.
const maxErrorDepth = 64

// ProviderLimitInText reports whether text, what an agent printed, shows a
// provider limit, and which: the messages of Claude Code, other agent CLIs,
// the model APIs and SDKs, where they begin a line, in the last 64 KiB of
// text. The patterns run first; now resolves reset times such as "5pm",
// in the time zone the text names or else in now's location.
func ProviderLimitInText(text string, now time.Time, patterns ...LimitPattern) (Limit, bool) {
	return fromInternal(limits.FromText(text, now, internalPatterns(patterns)...))
}

// providerLimit is the provider limit in force: shared by every Check of
// the breaker, whichever worker hit it.
type providerLimit struct {
	// reason is of kind ReasonProviderLimit or ReasonProviderStopped;
	// ReasonNone while no limit is in force.
	reason Reason
	// until is when a ReasonProviderLimit lifts, by the wall clock; zero
	// for a stop.
	until time.Time
	// source is where it was seen ([Limit.Source]); "" when not known.
	source string
}

// LiftLimit lifts the wait or throttle in force when source ([Limit.Source])
// put it there: the provider has answered since. Anything else, and an
// empty source, change nothing. The lift is recorded (CauseLimitLifted).
func (b *CircuitBreaker) LiftLimit(source string) {
	b.mu.Lock()
	defer b.unlock()
	now := b.cfg.Now()
	if source == "" || b.limit.reason.Kind != ReasonProviderLimit || b.limit.source != source {
		return
	}
	defer b.wake()
	b.lift(now)
}

// ObserveLimit puts a provider limit in force as it happens, during an
// iteration: Check refuses until it lifts. A limit that the one in force
// outlasts, or whose Reset is past, changes nothing; a stop outlasts every
// wait. A half-open probe slot is given back.
func (b *CircuitBreaker) ObserveLimit(l Limit) {
	b.mu.Lock()
	defer b.unlock()
	now := b.cfg.Now()
	defer b.wake()
	b.releaseProbe()
	b.limitSeen(l, now)
}

// limitFor returns the limit an iteration whose error err the classifier
// called outcome (ProviderLimit or ProviderStop) hit: what ProviderLimitOf
// reads in err, of the kind the classifier said. Called without b.mu
// held: reading the error is the costly part. The clock is read with the
// lock held, as everywhere, so that a host's clock is never called
// concurrently.
func (b *CircuitBreaker) limitFor(err error, outcome Outcome) Limit {
	b.mu.Lock()
	now := func() time.Time {
		defer b.mu.Unlock()
		return b.cfg.Now()
	}()
	l, ok := limitOf(err, now, b.patterns)
	if !ok {
		l = Limit{Why: errtext.FirstLine(err.Error())}
	}
	switch {
	case outcome == ProviderStop:
		l = Limit{Kind: LimitStop, Why: l.Why}
	case l.Kind == LimitStop:
		l = Limit{Kind: LimitWait, Why: l.Why}
	}
	return l
}

// minProviderLimitWait is the wait of a provider limit whose reset is not
// after the time it was seen: the provider put it at once.
const minProviderLimitWait = time.Second

// limitUntil returns when l, seen at now, lifts: its reset (one not after
// now waits minProviderLimitWait), or the default wait of its kind, at
// most maxProviderLimitWait from now.
func (b *CircuitBreaker) limitUntil(l Limit, now time.Time) time.Time {
	until := l.Reset
	if until.IsZero() {
		wait := b.cfg.Limits.Wait
		if l.Kind == LimitThrottle {
			wait = b.cfg.Limits.ThrottleWait
		}
		until = now.Add(wait)
	}
	if !until.After(now) {
		until = now.Add(minProviderLimitWait)
	}
	return minTime(until, now.Add(maxProviderLimitWait))
}

// limitAt returns the provider limit in force at now, and for a wait the
// time until it lifts; a wait that has lifted is forgotten. Called with
// b.mu held.
func (b *CircuitBreaker) limitAt(now time.Time) (Reason, time.Duration, bool) {
	switch b.limit.reason.Kind {
	case ReasonProviderStopped:
		return b.limit.reason, 0, true
	case ReasonProviderLimit:
		if now.Before(b.limit.until) {
			// A clock set back far does not make the wait longer than
			// any provider's.
			return b.limit.reason, min(b.limit.until.Sub(now), maxProviderLimitWait), true
		}
		b.limit = providerLimit{}
	}
	return Reason{}, 0, false
}
