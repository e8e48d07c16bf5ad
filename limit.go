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

// The kinds of provider limits.
const (
	// LimitWait: a usage limit (Claude's 5-hour or weekly limit, Codex's
	// usage limit) that lifts at [Limit.Reset], or, when no reset time is
	// known, after [LimitRules.Wait] (60 minutes).
	LimitWait LimitKind = iota
	// LimitThrottle: a short rate or capacity throttle (an HTTP 429 or
	// 529, a per-minute rate limit, an overloaded server) that lifts at
	// [Limit.Reset], or, when no reset time is known, after
	// [LimitRules.ThrottleWait] (5 minutes).
	LimitThrottle
	// LimitStop: a limit no waiting ends (no credit left, a quota or
	// billing cap, usage disabled by an admin): a person has to act.
	LimitStop
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

// Limit is a provider limit: what [ProviderLimitOf] and
// [ProviderLimitInText] recognise, what a [*LimitError] carries, and what
// [CircuitBreaker.ObserveLimit] is told.
type Limit struct {
	// Kind is what the limit asks of the loop; the zero value is a usage
	// limit to wait out.
	Kind LimitKind
	// Reset is when the limit lifts, as the provider said it; zero when
	// it did not say, and for a LimitStop. The breaker waits
	// [LimitRules.Wait] or [LimitRules.ThrottleWait] then, and
	// never longer than 35 days. A reset that is not after
	// the time the limit was seen (a Retry-After of 0, "retryDelay": "0s")
	// is waited out for a second: the provider said to retry at once, and
	// a loop that hits it again and again does not spin.
	Reset time.Time
	// Why says what the provider said, for a person: "You've hit your
	// limit (resets 2026-01-29 17:00 Europe/Vilnius)", "HTTP 429: API
	// error rate_limit_exceeded".
	Why string
	// Source names where the limit was seen, for a limit a transport read
	// in a response: the host of the API that answered
	// (api.anthropic.com). Empty otherwise. [CircuitBreaker.LiftLimit]
	// lifts a wait or throttle of a source.
	Source string
}

// LimitError is an error that is a provider limit. A host that knows its
// error is one (an SDK's rate-limit error, a proxy's quota error) wraps
// it in a *LimitError, and [DefaultClassify] and [ProviderLimitOf] take it
// for what it says, whatever its text, before reading anything else.
type LimitError struct {
	// Limit is the limit.
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

// LimitPattern is a host's own way of recognising a provider limit in
// text (an error's text or an agent's output), for [LimitRules.Patterns],
// [ProviderLimitOf] and [ProviderLimitInText].
//
// Patterns run before the built-in rules, in order, and the first that
// matches decides; the built-in rules run only when none matches. A
// pattern sees the text the built-in rules see: its last 64 KiB, without
// the tool results of Claude Code's stream-json output.
//
// When Match has a group named "reset", its text is read as the time the
// limit lifts: a clock time as Claude Code writes it ("5pm
// (Europe/Vilnius)", "May 5 at 9pm"), a duration ("10 minutes", "in 2h",
// "37s"), a Unix time, an RFC 3339 time or an HTTP date. A LimitStop
// ignores it.
type LimitPattern struct {
	// Match finds the limit; it must not be nil.
	Match *regexp.Regexp
	// Kind is the limit's kind.
	Kind LimitKind
	// Why is [Limit.Why]; empty reports the pattern's expression.
	Why string
	// NotALimit makes a match mean that the text is no limit, whatever
	// the built-in rules would say (Kind and Why are then ignored): a
	// host's own message that quotes a provider's.
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

// ProviderLimitOf reports whether err is a provider limit, and which.
//
// A [*LimitError] in err's tree (errors.As) is taken as it is. Otherwise
// the error is read: a timeout (context.DeadlineExceeded, or an error
// whose Timeout method reports true) is never a limit; an SDK error that
// exposes its HTTP status (openai-go's and anthropic-sdk-go's
// *apierror.Error, Azure's *azcore.ResponseError, or any error with a
// StatusCode method or field and a Response) is read like an HTTP
// response: 429 and Anthropic's 529 with Retry-After (seconds or an HTTP
// date) and the rate-limit headers, 402 a stop; anything else by its text,
// as [ProviderLimitInText] reads it. The patterns run first (see
// [LimitPattern]). now is when the error happened: reset times such as
// "5pm" resolve against it.
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

// ProviderLimitInText reports whether text, what an agent printed, shows
// a provider limit, and which. It reads the last 64 KiB of the text: Claude
// Code's plain text ("You've hit your limit · resets 5pm
// (Europe/Vilnius)", "Claude AI usage limit reached|1766502000") and its
// stream-json lines (a rate_limit_event whose status is "rejected"; the
// tool results of "user" events are left out, as they may only quote a
// limit), API error bodies (Anthropic's rate_limit_error, OpenAI's
// rate_limit_exceeded and insufficient_quota, Gemini's
// RESOURCE_EXHAUSTED) and SDK error texts. A limit message counts where it
// begins a line, so that prose quoting one does not. The patterns run first
// (see [LimitPattern]). now is when the text was printed: reset times such
// as "5pm" resolve against it, in the time zone the text names, or else in
// now's location. The provider-limits guide lists every text recognised.
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

// LiftLimit lifts the provider limit in force when it is a wait or a
// throttle that source put in force ([Limit.Source]): the provider
// answered a request sent after it, so the limit is no longer in force.
// The HTTP transport (package transport) calls it when a model SDK's retry
// succeeds under it. A limit of another source or of none (an iteration's error), a
// stop, and an empty source change nothing. The lift is in the history
// and goes to [Config.OnStateChange] (cause CauseLimitLifted), with the
// reason of the limit lifted.
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

// ObserveLimit tells the breaker that the provider refused, as it happens:
// a host (or an HTTP transport) that sees a limit during an iteration
// reports it here, and Check refuses from now on, every worker's, until it
// lifts (a [LimitStop]: until Resume, Skip or Reset). The iteration's
// outcome is recorded as ever with Record. A limit that a limit already in
// force outlasts changes nothing; a stop outlasts every wait. A half-open
// probe slot is given back. A [Limit.Reset] already past changes nothing;
// an unknown Kind counts as [LimitWait].
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
