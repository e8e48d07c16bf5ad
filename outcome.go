package loopbreaker

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/loopbreaker/loopbreaker/internal/errtext"
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
	// ProviderLoop: the provider refused the agent's repeated, identical
	// tool calls (or the agent's own guard halted them): the agent loops.
	// It counts as a failure, and the circuit opens at once, with reason
	// provider_loop: no retry of the same conversation gets past it.
	ProviderLoop
)

// String returns "failure", "success", "neutral", "provider_limit",
// "provider_stop" or "provider_loop".
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
	case ProviderLoop:
		return "provider_loop"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// DefaultClassify is the classifier a nil [Config.Classify] stands for:
// context.Canceled is Neutral, a provider limit ([ProviderLimitOf]) is
// ProviderLimit or ProviderStop, a provider's refusal of the agent's
// repeated tool calls (DashScope's "Repetitive tool calls detected", Gemini
// CLI's "A potential loop was detected") is ProviderLoop, and every other
// error, a timeout included, is a Failure.
func DefaultClassify(err error) Outcome {
	return classify(err, nil)
}

// classify is DefaultClassify with a host's patterns. It reads err once.
func classify(err error, patterns []limits.Pattern) Outcome {
	if errors.Is(err, context.Canceled) {
		return Neutral
	}
	if le, ok := limitErrorIn(err, 0); ok {
		return le.Limit.outcome()
	}
	// The kind does not depend on the time: the clock only resolves
	// reset times, which the breaker reads again with its own.
	switch limits.FromError(err, time.Now(), patterns...).Kind {
	case limits.Wait:
		return ProviderLimit
	case limits.Stop:
		return ProviderStop
	case limits.Loop:
		return ProviderLoop
	}
	return Failure
}

// loopWhy is what an error the classifier called ProviderLoop says: the
// provider's words for the loop, or else the error's first line.
func loopWhy(err error, patterns []limits.Pattern) string {
	if l := limits.FromError(err, time.Time{}, patterns...); l.Kind == limits.Loop {
		return l.Why
	}
	return errtext.FirstLine(err.Error())
}

// outcome returns the outcome of an iteration that hit l.
func (l Limit) outcome() Outcome {
	if l.Kind == LimitStop {
		return ProviderStop
	}
	return ProviderLimit
}
