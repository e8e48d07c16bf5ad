package loopbreaker

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The seed's first worked example: success, then the same error three
// times in a row trips on consecutive failures.
func TestThreeConsecutiveFailuresTrip(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})

	b.Record(Iteration{})
	assert.Equal(t, 0, b.Stats().Failures.Consecutive)
	assert.False(t, b.RecordFailure(errA(10).Error()))
	assert.False(t, b.RecordFailure(errA(11).Error()))
	assert.True(t, b.RecordFailure(errA(12).Error()))

	s := b.Stats()
	assert.Equal(t, Open, s.State)
	assert.Equal(t, 3, s.Failures.Consecutive)
	assert.Equal(t, 3, s.Failures.Counts[Fingerprint(errA(1).Error())])
	assert.Equal(t, "3 consecutive failures (threshold: 3)", b.TripReason())
	assert.Equal(t, ReasonConsecutiveFailures, s.Reason.Kind)
}

// Fail twice, succeed, fail twice more: the consecutive count is 2, not
// 4, but the same-error count is 4, and one more trips at 5.
func TestSameErrorTripsAcrossSuccesses(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})

	for i, fail := range []bool{true, true, false, true, true, false} {
		if fail {
			b.Record(Iteration{Err: errA(40 + i)})
		} else {
			b.Record(Iteration{})
		}
		require.Equal(t, Closed, b.State(), "iteration %d", i+1)
	}
	s := b.Stats()
	assert.Equal(t, 0, s.Failures.Consecutive)
	assert.Equal(t, 4, s.Failures.Total)
	assert.Equal(t, 4, s.Failures.Counts[Fingerprint(errA(1).Error())])

	assert.True(t, b.RecordFailure(errA(99).Error()))
	assert.Equal(t, "Same error repeated 5 times (threshold: 5)", b.TripReason())
	assert.Equal(t, ReasonSameError, b.Stats().Reason.Kind)
	assert.Equal(t, Fingerprint(errA(1).Error()), b.Stats().Reason.Fingerprint)
}

// Different errors in between do not save a repeating one either.
func TestSameErrorTripsAcrossOtherErrors(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Failures: FailureRules{MaxConsecutive: -1}})
	for i := 0; i < 4; i++ {
		b.Record(Iteration{Err: errA(i)})
		b.Record(Iteration{Err: errB(i)})
	}
	require.False(t, b.IsTripped())
	b.Record(Iteration{Err: errA(100)})
	assert.True(t, b.IsTripped())
	assert.Equal(t, "Same error repeated 5 times (threshold: 5)", b.TripReason())
	assert.Equal(t, 2, b.Stats().Failures.Unique)
}

// When both signals fire on the same iteration, consecutive failures win.
func TestConsecutiveFailuresCheckedBeforeSameError(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Failures: FailureRules{MaxConsecutive: 2, MaxSameError: 2}})
	b.Record(Iteration{Err: errA(1)})
	b.Record(Iteration{Err: errA(2)})
	assert.Equal(t, "2 consecutive failures (threshold: 2)", b.TripReason())
}

func TestRuleBoundaries(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		failures []error // recorded in order, with a success after each nil
		tripped  bool
		reason   string
	}{
		{"consecutive: one below threshold", Config{}, []error{errA(1), errB(2)}, false, ""},
		{"consecutive: at threshold", Config{}, []error{errA(1), errB(2), errA(3)}, true, "3 consecutive failures (threshold: 3)"},
		{"consecutive: switched off", Config{Failures: FailureRules{MaxConsecutive: -1, MaxSameError: -1}},
			[]error{errA(1), errB(2), errA(3), errB(4), errA(5), errA(6), errA(7)}, false, ""},
		{"consecutive: custom threshold", Config{Failures: FailureRules{MaxConsecutive: 1}}, []error{errA(1)}, true, "1 consecutive failures (threshold: 1)"},
		{"same error: one below threshold", Config{}, []error{errA(1), nil, errA(2), nil, errA(3), nil, errA(4), nil}, false, ""},
		{"same error: at threshold", Config{}, []error{errA(1), nil, errA(2), nil, errA(3), nil, errA(4), nil, errA(5)}, true, "Same error repeated 5 times (threshold: 5)"},
		{"same error: switched off", Config{Failures: FailureRules{MaxSameError: -1}}, []error{errA(1), nil, errA(2), nil, errA(3), nil, errA(4), nil, errA(5), nil, errA(6)}, false, ""},
		{"same error: distinct errors never repeat", Config{Failures: FailureRules{MaxConsecutive: -1, MaxSameError: 2}}, []error{errors.New("undefined: loadUser"), errors.New("undefined: loadUsers")}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newTestBreaker(t, tt.cfg)
			for _, err := range tt.failures {
				b.Record(Iteration{Err: err})
			}
			assert.Equal(t, tt.tripped, b.IsTripped())
			assert.Equal(t, tt.reason, b.TripReason())
		})
	}
}

func TestStatsCountFailuresAndUniqueErrors(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Failures: FailureRules{MaxConsecutive: -1, MaxSameError: -1}})
	b.Record(Iteration{Err: errA(1)})
	b.Record(Iteration{Err: errB(1)})
	b.Record(Iteration{})
	b.Record(Iteration{Err: errA(2)})

	s := b.Stats()
	assert.Equal(t, Closed, s.State)
	assert.Equal(t, 4, s.Iterations)
	assert.Equal(t, 1, s.Failures.Consecutive)
	assert.Equal(t, 3, s.Failures.Total)
	assert.Equal(t, 2, s.Failures.Unique)
	assert.Equal(t, Fingerprint(errA(0).Error()), s.Failures.LastFingerprint)
	assert.Equal(t, map[string]int{
		Fingerprint(errA(0).Error()): 2,
		Fingerprint(errB(0).Error()): 1,
	}, s.Failures.Counts)
	assert.Equal(t, Reason{}, s.Reason)
	assert.True(t, s.OpenedAt.IsZero())
}

func TestStatsErrorCountsIsTheCallersCopy(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	b.Record(Iteration{Err: errA(1)})
	s := b.Stats()
	s.Failures.Counts[Fingerprint(errA(1).Error())] = 100
	s.Failures.Counts["deadbeef"] = 1
	assert.Equal(t, map[string]int{Fingerprint(errA(1).Error()): 1}, b.Stats().Failures.Counts)
}

func TestResetReturnsToTheInitialCondition(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	for i := 0; i < 3; i++ {
		b.Record(Iteration{Err: errA(i)})
	}
	require.True(t, b.IsTripped())

	b.Reset()
	s := b.Stats()
	assert.Equal(t, Stats{State: Closed, Failures: FailureStats{Counts: map[string]int{}}}, s)
	assert.Equal(t, "", b.TripReason())
	assert.True(t, b.Check().Allow)
	// The error history is gone: four more of the same error do not trip
	// the same-error rule (which needs five).
	for i := 0; i < 4; i++ {
		b.Record(Iteration{Err: errA(i)})
		b.Record(Iteration{})
	}
	assert.False(t, b.IsTripped())
}

func TestRecordFailureReportsOpenAfterTheCall(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Failures: FailureRules{MaxConsecutive: 2}})
	assert.False(t, b.RecordFailure("boom"))
	assert.True(t, b.RecordFailure("boom"))
	assert.True(t, b.RecordFailure("boom"), "still open")
}

func TestRefusedDecisionErrorMatchesErrOpen(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Failures: FailureRules{MaxConsecutive: 1}, Cooldown: time.Minute})
	require.NoError(t, b.Check().Err())
	b.Record(Iteration{Err: errA(1)})
	clock.Advance(20 * time.Second)

	d := b.Check()
	require.False(t, d.Allow)
	err := d.Err()
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrOpen)
	assert.ErrorIs(t, fmt.Errorf("runner: %w", err), ErrOpen)

	var open *RefusedError
	require.ErrorAs(t, err, &open)
	assert.Equal(t, Open, open.State)
	assert.Equal(t, ReasonConsecutiveFailures, open.Reason.Kind)
	assert.Equal(t, 40*time.Second, open.RetryAfter)
	assert.Equal(t, "loopbreaker: circuit open: 1 consecutive failures (threshold: 1)", err.Error())
}

func TestDecisionReasonPrintsAsTripReason(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	assert.Equal(t, "", fmt.Sprint(b.Check().Reason))
	for i := 0; i < 3; i++ {
		b.Record(Iteration{Err: errA(i)})
	}
	d := b.Check()
	assert.Equal(t, b.TripReason(), fmt.Sprint(d.Reason))
	assert.Equal(t, "3 consecutive failures (threshold: 3)", fmt.Sprint(d.Reason))
}

// Many goroutines share one breaker; run with -race. Every failure and
// success is counted exactly once, and a half-open circuit lets exactly one
// of many concurrent Checks through.
func TestConcurrentUseCountsEveryIteration(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Failures: FailureRules{MaxConsecutive: -1, MaxSameError: -1}})
	const workers, per = 8, 500
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if !b.Check().Allow {
					t.Error("closed circuit refused")
					return
				}
				if i%2 == 0 {
					b.Record(Iteration{Err: fmt.Errorf("worker %c failed", 'a'+w)})
				} else {
					b.RecordSuccess()
				}
				_ = b.Stats()
				_ = b.TripReason()
			}
		}(w)
	}
	wg.Wait()
	s := b.Stats()
	assert.Equal(t, workers*per, s.Iterations)
	assert.Equal(t, workers*per/2, s.Failures.Total)
	assert.Equal(t, workers, s.Failures.Unique)

	// Trip it, let the cooldown pass, and race for the probe.
	b2, clock2 := newTestBreaker(t, Config{Failures: FailureRules{MaxConsecutive: 1}})
	b2.Record(Iteration{Err: errA(1)})
	clock2.Advance(DefaultConfig().Cooldown)
	var allowed sync.WaitGroup
	var mu sync.Mutex
	probes := 0
	for w := 0; w < 32; w++ {
		allowed.Add(1)
		go func() {
			defer allowed.Done()
			if b2.Check().Allow {
				mu.Lock()
				probes++
				mu.Unlock()
			}
		}()
	}
	allowed.Wait()
	assert.Equal(t, 1, probes)
}

func TestAnUnreachableFleetRefusesWithItsOwnError(t *testing.T) {
	// What a fleet worker that fails closed answers while its shared
	// breaker is out of reach: not an open circuit, not a spent budget.
	d := Decision{
		State:      Closed,
		Reason:     Reason{Kind: ReasonUnavailable, Message: "dial unix /tmp/redis.sock: connect: no such file or directory"},
		RetryAfter: time.Second,
	}
	err := d.Err()
	require.ErrorIs(t, err, ErrUnavailable)
	assert.NotErrorIs(t, err, ErrOpen)
	assert.NotErrorIs(t, err, ErrCallBudget)
	assert.NotErrorIs(t, err, ErrComplete)
	var refused *RefusedError
	require.ErrorAs(t, err, &refused)
	assert.Equal(t, "loopbreaker: Shared breaker unavailable: dial unix /tmp/redis.sock: connect: no such file or directory; trying again in 1s", err.Error())
	assert.Equal(t, "unavailable", ReasonUnavailable.String())
	assert.False(t, opensCircuit(ReasonUnavailable), "no circuit is open for it, so no snapshot may hold it as the reason")
}

func TestEveryRefusalMatchesOnlyItsOwnSentinels(t *testing.T) {
	sentinels := []error{ErrOpen, ErrGaveUp, ErrCallBudget, ErrUnavailable, ErrComplete, ErrProviderLimit, ErrProviderStopped, ErrSpendCap}
	cases := []struct {
		kind    ReasonKind
		matches []error
	}{
		{ReasonConsecutiveFailures, []error{ErrOpen}},
		{ReasonSameError, []error{ErrOpen}},
		{ReasonNoProgress, []error{ErrOpen}},
		{ReasonGaveUp, []error{ErrOpen, ErrGaveUp}},
		{ReasonCallBudget, []error{ErrCallBudget}},
		{ReasonUnavailable, []error{ErrUnavailable}},
		{ReasonProviderLimit, []error{ErrProviderLimit}},
		{ReasonProviderStopped, []error{ErrProviderStopped}},
		{ReasonSpendCap, []error{ErrSpendCap}},
		{ReasonHourlySpendCap, []error{ErrSpendCap}},
		{ReasonDoneSignals, []error{ErrComplete}},
		{ReasonTestOnlyLoops, []error{ErrComplete}},
	}
	for _, c := range cases {
		t.Run(c.kind.String(), func(t *testing.T) {
			err := error(&RefusedError{State: Open, Reason: Reason{Kind: c.kind}})
			for _, s := range sentinels {
				assert.Equal(t, slices.Contains(c.matches, s), errors.Is(err, s), "errors.Is(%s, %v)", c.kind, s)
			}
		})
	}
}

func TestEveryReasonKindSaysWhatItDoesToTheLoop(t *testing.T) {
	want := map[ReasonKind]ReasonClass{
		ReasonNone:                      ClassNone,
		ReasonConsecutiveFailures:       ClassStop,
		ReasonSameErrorInARow:           ClassStop,
		ReasonSameError:                 ClassStop,
		ReasonNoProgress:                ClassStop,
		ReasonProgressScore:             ClassStop,
		ReasonOutputDecline:             ClassStop,
		ReasonPermissionDenials:         ClassStop,
		ReasonCircularApproach:          ClassStop,
		ReasonTestFixLoop:               ClassStop,
		ReasonProbeFailed:               ClassStop,
		ReasonCallBudget:                ClassLimit,
		ReasonDoneSignals:               ClassComplete,
		ReasonTestOnlyLoops:             ClassComplete,
		ReasonPlanComplete:              ClassComplete,
		ReasonForcedOpen:                ClassStop,
		ReasonAborted:                   ClassStop,
		ReasonProbeLost:                 ClassStop,
		ReasonSameTask:                  ClassStop,
		ReasonRelapse:                   ClassStop,
		ReasonCallBudgetWarning:         ClassWarning,
		ReasonLongTask:                  ClassWarning,
		ReasonTestsDeclining:            ClassWarning,
		ReasonErrorsRising:              ClassWarning,
		ReasonRepeatedActionObservation: ClassStop,
		ReasonRepeatedActionError:       ClassStop,
		ReasonMonologue:                 ClassStop,
		ReasonCycle:                     ClassStop,
		ReasonCondensationLoop:          ClassStop,
		ReasonProtectedFiles:            ClassStop,
		ReasonProviderLimit:             ClassLimit,
		ReasonProviderStopped:           ClassLimit,
		ReasonSpendCap:                  ClassLimit,
		ReasonHourlySpendCap:            ClassLimit,
		ReasonSpendWarning:              ClassWarning,
		ReasonUnavailable:               ClassLimit,
		ReasonGaveUp:                    ClassStop,
		ReasonUnpricedModel:             ClassWarning,
		ReasonFalseCompletion:           ClassStop,
		ReasonSameToolError:             ClassStop,
		ReasonRepeatedStep:              ClassStop,
		ReasonProviderLoop:              ClassStop,
		ReasonWindowShare:               ClassLimit,
		ReasonWindowShareWarning:        ClassWarning,
		ReasonBurnRate:                  ClassLimit,
		ReasonBurnRateWarning:           ClassWarning,
		ReasonStalled:                   ClassStop,
		ReasonStalled + 1:               ClassNone, // a kind this build does not know
	}
	require.Len(t, want, len(rules)+1, "every kind has its row here")
	for kind, class := range want {
		assert.Equal(t, class, kind.Class(), "%s", kind)
		if class == ClassStop || class == ClassLimit || class == ClassComplete {
			err := &RefusedError{State: Open, Reason: Reason{Kind: kind}}
			assert.Equal(t, class == ClassStop, errors.Is(err, ErrOpen), "%s refuses as a %s", kind, class)
			assert.Equal(t, class == ClassComplete, errors.Is(err, ErrComplete), "%s refuses as a %s", kind, class)
		}
	}
	assert.Equal(t, "stop limit complete warning none", fmt.Sprint(ClassStop, ClassLimit, ClassComplete, ClassWarning, ClassNone))
}
