package loopbreaker

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An agent that exits 0 after the same failing tool call, iteration after
// iteration, succeeds every time; the error it noticed counts toward the
// same error, and opens the circuit at its threshold, with its text.
func TestNoticedErrorsTripTheSameError(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Failures.MaxSameError = 3
	b, _ := newTestBreaker(t, cfg)
	for i := range 3 {
		require.Equal(t, Closed, b.State(), "iteration %d", i+1)
		b.Record(Iteration{Noticed: fmt.Errorf("Error: Cannot find module 'left-pad' at app.js:%d", 10+i)})
	}
	s := b.Stats()
	assert.Equal(t, Open, s.State)
	assert.Equal(t, ReasonSameError, s.Reason.Kind)
	assert.Equal(t, 3, s.Reason.Count)
	assert.Equal(t, "Error: Cannot find module 'left-pad' at app.js:12", s.Reason.Sample)
	assert.Equal(t, "Error: Cannot find module 'left-pad' at app.js:10", s.Failures.Samples[s.Reason.Fingerprint].First)
}

// A noticed error is no failure: the consecutive failures, the same error
// in a row and the total stay as successes leave them, while its count
// goes on over the loop's life, with the failures' of the same error.
func TestNoticedErrorsAreNoFailures(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Failures.MaxConsecutive = 2
	cfg.Failures.MaxSameErrorInARow = 2
	cfg.Failures.MaxSameError = 4
	b, _ := newTestBreaker(t, cfg)
	noticed := errors.New("Error: Cannot find module 'left-pad'")
	b.Record(Iteration{Err: noticed})
	b.Record(Iteration{Noticed: noticed})
	b.Record(Iteration{Noticed: noticed})
	s := b.Stats()
	assert.Equal(t, Closed, s.State, "%s", s.Reason)
	assert.Equal(t, 0, s.Failures.Consecutive)
	assert.Equal(t, 0, s.Failures.SameErrorInARow)
	assert.Equal(t, 1, s.Failures.Total)
	assert.Equal(t, 3, s.Failures.Counts[Fingerprint(noticed.Error())])

	b.Record(Iteration{Err: noticed})
	s = b.Stats()
	assert.Equal(t, Open, s.State)
	assert.Equal(t, ReasonSameError, s.Reason.Kind, "the fourth sighting, a failure, reaches 4")
}

// What an iteration that failed, was cancelled or hit a provider limit
// noticed besides is left out: its outcome counts, and only that.
func TestNoticedErrorsCountOnlyOnSuccess(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Failures.MaxSameError = 2
	b, _ := newTestBreaker(t, cfg)
	other := errors.New("Error: ENOSPC")
	b.Record(Iteration{Err: errors.New("exit status 1"), Noticed: other})
	b.Record(Iteration{Err: context.Canceled, Noticed: other})
	b.Record(Iteration{Err: errors.New("429 Too Many Requests"), Noticed: other})
	s := b.Stats()
	assert.Zero(t, s.Failures.Counts[Fingerprint(other.Error())])
	assert.Equal(t, Closed, s.State)
}

// A half-open probe that succeeds but notices the error that opened the
// circuit, at its threshold, opens it again.
func TestAProbeThatNoticesTheSameErrorReopens(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Failures.MaxSameError = 3
	b, clock := newTestBreaker(t, cfg)
	err := errors.New("Error: Cannot find module 'left-pad'")
	for range 3 {
		b.Record(Iteration{Err: err})
	}
	require.Equal(t, Open, b.State())
	clock.Advance(cfg.Cooldown)
	require.True(t, b.Check().Allow)
	b.Record(Iteration{Noticed: err})
	s := b.Stats()
	assert.Equal(t, Open, s.State)
	assert.Equal(t, ReasonSameError, s.Reason.Kind)
	assert.Equal(t, 4, s.Reason.Count)
}
