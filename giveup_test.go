package loopbreaker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stuckOnOneError runs a loop with Wait whose every iteration fails with
// the same error, until Wait returns an error, and returns the last
// Decision, the iterations run and the error. It gives up after limit
// iterations, failing the test: the loop must end by itself.
func stuckOnOneError(t *testing.T, b *CircuitBreaker, limit int) (Decision, int, error) {
	t.Helper()
	for n := 1; n <= limit; n++ {
		d, err := b.Wait(context.Background())
		if err != nil {
			return d, n - 1, err
		}
		b.Record(Iteration{Err: errA(n)})
	}
	t.Fatalf("the loop still runs after %d iterations", limit)
	return Decision{}, 0, nil
}

// An agent stuck on one error: three failures open the circuit, and each
// probe after a cooldown fails again. At the tenth opening the breaker
// gives up: Wait returns at once with ErrGaveUp, after four and a half
// minutes of cooldowns, and the reason names the last opening's.
func TestAStuckLoopGivesUpAtTheTenthOpening(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	start := clock.Now()

	d, iterations, err := stuckOnOneError(t, b, 100)
	require.ErrorIs(t, err, ErrGaveUp)
	require.ErrorIs(t, err, ErrOpen, "giving up is an open circuit too")
	assert.Equal(t, 3+9, iterations, "three failures, then nine failed probes")
	assert.Equal(t, 9*30*time.Second, clock.Now().Sub(start), "nine cooldowns were waited out")

	assert.False(t, d.Allow)
	assert.Equal(t, Open, d.State)
	assert.Zero(t, d.RetryAfter, "no cooldown ends it")
	assert.False(t, d.WaitHelps())
	assert.Equal(t, ReasonGaveUp, d.Reason.Kind)
	assert.Equal(t, 10, d.Reason.Count)
	assert.Equal(t, 10, d.Reason.Threshold)
	assert.Equal(t, ReasonConsecutiveFailures, d.Reason.Last, "the failures in a row, checked first, had opened it last")
	assert.Equal(t, "Gave up: the circuit opened 10 times in a row without recovering (threshold: 10): 12 consecutive failures (threshold: 3)", d.Reason.String())
	assert.Contains(t, d.Reason.Detail(), `: "TypeError: Cannot read property 'id' of undefined at UserController (/src/controllers/user.ts:12:15)"`)
	var open *RefusedError
	require.True(t, errors.As(err, &open))
	assert.Equal(t, d.Reason, open.Reason)

	s := b.Stats()
	assert.Equal(t, 10, s.Opens)
	assert.Equal(t, 10, s.ConsecutiveOpens)
	assert.Equal(t, ReasonGaveUp, s.Reason.Kind)

	clock.Advance(24 * time.Hour)
	again, err := b.Wait(context.Background())
	require.ErrorIs(t, err, ErrGaveUp, "a day later it has still given up")
	assert.Equal(t, Open, again.State)
}

// The count is of openings in a row: a probe that succeeds closes the
// circuit and starts it again, so a loop that recovers between its
// troubles is never given up on.
func TestARecoveryStartsTheCountOfOpeningsAgain(t *testing.T) {
	b, clock := newTestBreaker(t, Config{MaxConsecutiveOpens: 3})
	for round := 0; round < 5; round++ {
		for i := 0; i < 3; i++ {
			b.RecordFailure("connection refused")
		}
		require.Equal(t, Open, b.State())
		clock.Advance(30 * time.Second)
		require.True(t, b.Check().Probe)
		b.RecordFailure("connection refused") // the probe fails: the second opening
		require.Equal(t, 2, b.Stats().ConsecutiveOpens)
		clock.Advance(30 * time.Second)
		require.True(t, b.Check().Probe)
		b.RecordSuccess() // the next probe succeeds
		require.Equal(t, Closed, b.State())
		require.Zero(t, b.Stats().ConsecutiveOpens)
	}
	assert.Equal(t, 10, b.Stats().Opens, "ten openings in all, never three in a row")
	assert.True(t, b.Check().Allow)
}

// Resume, Skip and Reset end the give-up, as they end every hold; the
// count of openings in a row starts again.
func TestGivingUpLastsUntilAPersonActs(t *testing.T) {
	for _, act := range []struct {
		name string
		do   func(b *CircuitBreaker)
	}{
		{"resume", (*CircuitBreaker).Resume},
		{"skip", (*CircuitBreaker).Skip},
		{"reset", (*CircuitBreaker).Reset},
	} {
		t.Run(act.name, func(t *testing.T) {
			b, clock := newTestBreaker(t, Config{MaxConsecutiveOpens: 2})
			_, _, err := stuckOnOneError(t, b, 100)
			require.ErrorIs(t, err, ErrGaveUp)
			clock.Advance(time.Hour)
			require.False(t, b.Check().Allow, "no time ends it")

			act.do(b)
			d := b.Check()
			assert.True(t, d.Allow)
			assert.Equal(t, Closed, d.State)
			assert.Zero(t, b.Stats().ConsecutiveOpens)
		})
	}
}

// The threshold's edges: 1 gives up at the first opening, with no probe;
// a negative one never gives up.
func TestGiveUpThresholdEdges(t *testing.T) {
	b, clock := newTestBreaker(t, Config{MaxConsecutiveOpens: 1})
	start := clock.Now()
	_, iterations, err := stuckOnOneError(t, b, 100)
	require.ErrorIs(t, err, ErrGaveUp)
	assert.Equal(t, 3, iterations)
	assert.Equal(t, start, clock.Now(), "no cooldown, no probe")

	b, _ = newTestBreaker(t, Config{MaxConsecutiveOpens: -1})
	for n := 1; n <= 200; n++ {
		d, err := b.Wait(context.Background())
		require.NoError(t, err, "iteration %d", n)
		b.Record(Iteration{Err: errA(n)})
		_ = d
	}
	assert.Equal(t, Open, b.State(), "probed for ever")
	assert.Greater(t, b.Stats().ConsecutiveOpens, 100)
}

// Provider limits, spend and the call budget open no circuit: they are
// waited out however often they come, and count toward no give-up.
func TestLimitsAreWaitedOutHoweverOften(t *testing.T) {
	b, clock := newTestBreaker(t, Config{MaxConsecutiveOpens: 2, Spend: SpendRules{MaxCallsPerHour: 5}})
	limit := &LimitError{Limit: Limit{Kind: LimitThrottle, Why: "HTTP 429"}}
	for n := 1; n <= 30; n++ {
		_, err := b.Wait(context.Background())
		require.NoError(t, err, "iteration %d", n)
		b.Record(Iteration{Err: limit})
	}
	s := b.Stats()
	assert.Zero(t, s.Opens)
	assert.Equal(t, 30, s.LimitedIterations)
	assert.Greater(t, clock.Now().Sub(testStart), 5*time.Hour, "the budget and the limits were waited out")
}

// A snapshot keeps the breaker given up, with its evidence.
func TestGivingUpSurvivesARestart(t *testing.T) {
	b, _ := newTestBreaker(t, Config{MaxConsecutiveOpens: 2})
	_, _, err := stuckOnOneError(t, b, 100)
	require.ErrorIs(t, err, ErrGaveUp)

	restored, clock := newTestBreaker(t, Config{MaxConsecutiveOpens: 2})
	require.NoError(t, restored.Restore(roundTrip(t, b.Snapshot())))
	start := clock.Now()
	d, err := restored.Wait(context.Background())
	require.ErrorIs(t, err, ErrGaveUp)
	assert.Equal(t, ReasonConsecutiveFailures, d.Reason.Last)
	assert.NotEmpty(t, d.Reason.Sample)
	assert.Equal(t, start, clock.Now())
}

// The transition that gives up reaches the history and OnStateChange.
func TestGivingUpIsATransition(t *testing.T) {
	var heard []Transition
	b, clock := newTestBreaker(t, Config{MaxConsecutiveOpens: 2, OnStateChange: func(tr Transition) { heard = append(heard, tr) }})
	for i := 0; i < 3; i++ {
		b.RecordFailure("boom")
	}
	clock.Advance(30 * time.Second)
	require.True(t, b.Check().Probe)
	b.RecordFailure("boom")

	require.NotEmpty(t, heard)
	last := heard[len(heard)-1]
	assert.Equal(t, "HALF_OPEN -> OPEN (signal: Gave up: the circuit opened 2 times in a row without recovering (threshold: 2): 4 consecutive failures (threshold: 3)) at iteration 4", last.String())
	assert.Equal(t, last, b.Stats().History[len(b.Stats().History)-1])
}

// WaitHelps is the question every loop asks of a refusal: wait, or stop?
func TestWaitHelpsTellsWhatTimeEnds(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		make func(b *CircuitBreaker, clock *loopbreakertest.Clock)
		want bool
	}{
		{"allowed: nothing to wait for", Config{}, func(*CircuitBreaker, *loopbreakertest.Clock) {}, false},
		{"cooldown", Config{}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			for i := 0; i < 3; i++ {
				b.RecordFailure("boom")
			}
		}, true},
		{"probe in flight", Config{}, func(b *CircuitBreaker, clock *loopbreakertest.Clock) {
			for i := 0; i < 3; i++ {
				b.RecordFailure("boom")
			}
			clock.Advance(30 * time.Second)
			b.Check()
		}, true},
		{"provider limit", Config{}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			b.ObserveLimit(Limit{Kind: LimitThrottle})
		}, true},
		{"call budget", Config{Spend: SpendRules{MaxCallsPerHour: 1}}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) { b.RecordSuccess() }, true},
		{"hourly spend cap", Config{Spend: SpendRules{MaxTokensPerHour: 10}}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			b.AddUsage(Usage{InputTokens: 10})
		}, true},
		{"gave up", Config{MaxConsecutiveOpens: 1}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			for i := 0; i < 3; i++ {
				b.RecordFailure("boom")
			}
		}, false},
		{"aborted", Config{}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) { b.Abort() }, false},
		{"forced open", Config{}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) { b.ForceOpen("") }, false},
		{"provider stopped", Config{}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			b.ObserveLimit(Limit{Kind: LimitStop})
		}, false},
		{"spend cap", Config{Spend: SpendRules{MaxTokens: 10}}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			b.AddUsage(Usage{OutputTokens: 10})
		}, false},
		{"complete", Config{}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			b.Record(Iteration{Done: true})
			b.Record(Iteration{Done: true})
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, clock := newTestBreaker(t, c.cfg)
			c.make(b, clock)
			d := b.Check()
			assert.Equal(t, c.want, d.WaitHelps(), "%+v", d)
		})
	}
}
