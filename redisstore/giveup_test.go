package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two workers stuck on one error take turns at the fleet's probe; at the
// third opening in a row the fleet's breaker gives up: every worker's Wait
// returns at once with ErrGaveUp, quoting the error, until one resumes.
func TestTheFleetGivesUpAfterMaxOpeningsInARow(t *testing.T) {
	f := newFleet(t)
	cfg := Config{PollInterval: 5 * time.Millisecond, Breaker: loopbreaker.Config{
		Failures: loopbreaker.FailureRules{
			MaxConsecutive: 1,
		},
		Cooldown:            20 * time.Millisecond,
		MaxConsecutiveOpens: 3,
	}}
	ws := f.workers(2, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	var err error
	iterations := 0
	for i := 0; err == nil; i++ {
		w := ws[i%2]
		if _, err = w.Wait(ctx); err == nil {
			w.RecordFailure("AssertionError: expected 404 to equal 200")
			iterations++
		}
	}
	require.ErrorIs(t, err, loopbreaker.ErrGaveUp)
	require.NoError(t, ctx.Err(), "the fleet gave up by itself")
	assert.Equal(t, 3, iterations, "a failure, then two failed probes")

	for _, w := range ws {
		start := time.Now()
		d, err := w.Wait(ctx)
		require.ErrorIs(t, err, loopbreaker.ErrGaveUp)
		assert.Less(t, time.Since(start), time.Second, "at once")
		assert.False(t, d.WaitHelps())
		assert.Equal(t, loopbreaker.ReasonGaveUp, d.Reason.Kind)
		assert.Equal(t, loopbreaker.ReasonConsecutiveFailures, d.Reason.Last)
		assert.Equal(t, "Gave up: the circuit opened 3 times in a row without recovering (threshold: 3): 3 consecutive failures (threshold: 1)", d.Reason.String())
		assert.Equal(t, "AssertionError: expected 404 to equal 200", d.Reason.Sample)
		var open *loopbreaker.RefusedError
		assert.True(t, errors.As(err, &open))
	}

	ws[1].Resume()
	d, err := ws[0].Wait(ctx)
	require.NoError(t, err, "a resume at one worker releases the fleet")
	assert.True(t, d.Allow)
}

// A worker's RecordFailure of a provider limit's text puts the limit in
// force for the fleet, as Record of an error with that text does: no
// failure is counted.
func TestAWorkersRecordFailureOfALimitTextIsTheLimit(t *testing.T) {
	f := newFleet(t)
	ws := f.workers(2, Config{})
	for i := 0; i < 3; i++ {
		assert.False(t, ws[0].RecordFailure("You've hit your limit · resets 5pm (Europe/Vilnius)"))
	}
	d := ws[1].Check()
	require.ErrorIs(t, d.Err(), loopbreaker.ErrProviderLimit)
	s := ws[1].Stats()
	assert.Zero(t, s.Failures.Consecutive)
	assert.Zero(t, s.Failures.Total)
}
