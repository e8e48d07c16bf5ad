package loopbreaker

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/loopbreaker/loopbreaker/internal/limits"
)

// Outcome is how an iteration counts: as a success, a failure, neither, or
// as a provider limit.
type Outcome uint8

// The outcomes [Config.Classify] may give an iteration's error.
const (
	// Failure: the iteration failed; the failure rules count it and its
	// error's fingerprint.
	Failure Outcome = iota
	// Success: the iteration succeeded although it returned an error (a
	// host may classify, say, "nothing to do" as a success).
	Success
	// Neutral: the iteration neither succeeded nor failed, for example
	// because the host cancelled it. It changes no counter and no signal,
	// only [Stats.NeutralIterations], and it gives back a half-open probe
	// slot, so that the next Check gets the probe.
	Neutral
	// ProviderLimit: the model provider refused the iteration for now (a
	// usage limit, a rate limit, an overloaded server). It is no failure:
	// it trips nothing and changes no counter of the signals, only
	// [Stats.LimitedIterations]; it gives back a half-open probe slot; and
	// Check refuses, without opening the circuit, until the limit lifts
	// (see [Limit]).
	ProviderLimit
	// ProviderStop: the model provider refused the iteration for good (no
	// credit, a quota or billing cap, usage disabled by an admin). Like
	// ProviderLimit, but no waiting ends it: Check refuses until Resume,
	// Skip or Reset.
	ProviderStop
)

// String returns "failure", "success", "neutral", "provider_limit" or
// "provider_stop".
func (o Outcome) String() string {
	switch o {
	case Failure:
		return "failure"
	case Success:
		return "success"
	case Neutral:
		return "neutral"
	case ProviderLimit:
		return "provider_limit"
	case ProviderStop:
		return "provider_stop"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// [DefaultClassify] is the classifier a nil [Config.Classify] stands for: an
// error that matches context.Canceled (errors.Is) is Neutral, as the host
// cancelled the iteration, not the agent failing it; a provider limit
// ([ProviderLimitOf]: a [*LimitError], an HTTP 429 or 529, Claude Code's
// "You've hit your limit", an API's rate_limit_error, ...) is
// ProviderLimit, and one no waiting ends (no credit, a quota or billing
// cap) ProviderStop; every other error is a Failure. A
// context.DeadlineExceeded is a Failure, never a limit: an iteration that
// ran out of time did not get its work done. The breaker's own default
// also tries [LimitRules.Patterns].
func DefaultClassify(err error) Outcome {
	return classify(err, nil)
}

// classify is DefaultClassify with a host's patterns.
func classify(err error, patterns []limits.Pattern) Outcome {
	if errors.Is(err, context.Canceled) {
		return Neutral
	}
	// The kind does not depend on the time: the clock only resolves
	// reset times, which the breaker reads again with its own.
	if l, ok := limitOf(err, time.Now(), patterns); ok {
		return l.outcome()
	}
	return Failure
}

// outcome returns the outcome of an iteration that hit l.
func (l Limit) outcome() Outcome {
	if l.Kind == LimitStop {
		return ProviderStop
	}
	return ProviderLimit
}
