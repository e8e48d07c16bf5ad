package loopbreaker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// errCanceled is an iteration the host cancelled, as a runner reports it.
var errCanceled = fmt.Errorf("agent run: %w", context.Canceled)

func TestDefaultClassify(t *testing.T) {
	tests := []struct {
		err  error
		want Outcome
	}{
		{context.Canceled, Neutral},
		{errCanceled, Neutral},
		{context.DeadlineExceeded, Failure},
		{errors.New("exit status 1"), Failure},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, DefaultClassify(tt.err), "%v", tt.err)
	}
}

// A cancelled iteration is neither a success nor a failure: the failures
// before it stay in a row, and it is counted apart.
func TestCancelledIterationIsNeutral(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	b.Record(Iteration{Err: errA(1)})
	b.Record(Iteration{Err: errB(1)})
	b.Record(Iteration{Err: errCanceled, Progress: oneFile})
	s := b.Stats()
	assert.Equal(t, Closed, s.State)
	assert.Equal(t, 2, s.Failures.Consecutive, "not reset, not raised")
	assert.Equal(t, 2, s.Iterations)
	assert.Equal(t, 1, s.NeutralIterations)
	assert.Equal(t, 2, s.Failures.Unique)
	assert.True(t, s.Progress.LastProgress.IsZero(), "its progress is not counted either")

	b.Record(Iteration{Err: errA(2)})
	assert.Equal(t, "3 consecutive failures (threshold: 3)", b.TripReason())
}

// A cancelled probe gives the half-open slot back: the next Check is the
// probe.
func TestCancelledProbeReleasesTheSlot(t *testing.T) {
	b, clock := tripped(t, Config{})
	clock.Advance(DefaultConfig().Cooldown)
	require.True(t, b.Check().Probe)
	require.False(t, b.Check().Allow, "the probe is in flight")

	b.Record(Iteration{Err: errCanceled})
	assert.Equal(t, HalfOpen, b.State())
	d := b.Check()
	assert.True(t, d.Allow)
	assert.True(t, d.Probe)
}

func TestClassifierDecidesHowErrorsCount(t *testing.T) {
	errNothingToDo := errors.New("nothing to do")
	errInterrupted := errors.New("interrupted by the user")
	cfg := Config{
		Classify: func(err error) Outcome {
			switch {
			case errors.Is(err, errNothingToDo):
				return Success
			case errors.Is(err, errInterrupted):
				return Neutral
			}
			return Failure
		},
	}
	b, _ := newTestBreaker(t, cfg)
	b.Record(Iteration{Err: errA(1)})
	b.Record(Iteration{Err: errA(2)})
	b.Record(Iteration{Err: errNothingToDo})
	s := b.Stats()
	assert.Equal(t, 0, s.Failures.Consecutive, "a success resets the count")
	assert.Equal(t, 1, s.Failures.Unique, "and its error is not fingerprinted")

	b.Record(Iteration{Err: errInterrupted})
	b.Record(Iteration{Err: context.Canceled})
	s = b.Stats()
	assert.Equal(t, 1, s.NeutralIterations, "the classifier replaces the default")
	assert.Equal(t, 1, s.Failures.Consecutive)
}

// The classifier runs without the breaker's lock, so it may read the
// breaker.
func TestClassifierMayCallTheBreaker(t *testing.T) {
	var b *CircuitBreaker
	var seen State = 99
	b, _ = newTestBreaker(t, Config{
		Classify: func(err error) Outcome {
			seen = b.State()
			return Failure
		},
	})
	b.Record(Iteration{Err: errA(1)})
	assert.Equal(t, Closed, seen)
}

// RecordFailure of a provider limit's text is the limit, as Record of an
// error with that text is: three of Claude's usage-limit banners trip
// nothing, and the loop waits for the reset the banner names.
func TestRecordFailureOfALimitTextPutsTheLimitInForce(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	for i := 0; i < 3; i++ {
		open := b.RecordFailure("You've hit your limit · resets 5pm (Europe/Vilnius)")
		assert.False(t, open)
	}
	s := b.Stats()
	assert.Equal(t, Closed, s.State)
	assert.Zero(t, s.Failures.Consecutive)
	assert.Zero(t, s.Failures.Total)
	assert.Equal(t, 3, s.LimitedIterations)

	d := b.Check()
	require.ErrorIs(t, d.Err(), ErrProviderLimit)
	vilnius, err := time.LoadLocation("Europe/Vilnius")
	require.NoError(t, err)
	reset := time.Date(2026, 1, 19, 17, 0, 0, 0, vilnius) // the clock reads 09:00 UTC, 11:00 in Vilnius
	assert.Equal(t, reset.Sub(clock.Now()), d.RetryAfter)

	b.RecordFailure("TypeError: x is undefined")
	assert.Equal(t, 1, b.Stats().Failures.Consecutive, "any other text is a failure")
}

// RecordFailure asks the host's classifier, as Record does.
func TestRecordFailureAsksTheClassifier(t *testing.T) {
	var asked []string
	b, _ := newTestBreaker(t, Config{
		Classify: func(err error) Outcome {
			asked = append(asked, err.Error())
			return Neutral
		},
	})
	assert.False(t, b.RecordFailure("context canceled"))
	assert.Equal(t, []string{"context canceled"}, asked)
	s := b.Stats()
	assert.Zero(t, s.Failures.Consecutive)
	assert.Equal(t, 1, s.NeutralIterations)
}

func TestOutcomeStrings(t *testing.T) {
	assert.Equal(t, "failure", Failure.String())
	assert.Equal(t, "success", Success.String())
	assert.Equal(t, "neutral", Neutral.String())
	assert.Equal(t, "Outcome(7)", Outcome(7).String())
}
