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
	Failure       Outcome = iota // the failure signals count it and its error
	Success                      // a success, although it returned an error
	Neutral                      // neither (cancelled, say): only counted
	ProviderLimit                // the provider refused for now: no failure
	ProviderStop                 // the provider refused for good
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

// DefaultClassify is the classifier a nil [Config.Classify] stands for:
// context.Canceled is Neutral, a provider limit ([ProviderLimitOf]) is
// ProviderLimit or ProviderStop, and every other error, a timeout included,
// is a Failure.
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
