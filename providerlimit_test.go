package loopbreaker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// errHitLimit is Claude Code's usage limit, resetting at 17:00 UTC: eight
// hours after the fake clock's start (09:00 UTC).
var errHitLimit = agentError("You've hit your limit · resets 5pm (UTC)")

// hangBound bounds a Wait that must return at once: a bound on a hang,
// not a timing.
const hangBound = 30 * time.Second

// errDisabled is a limit no waiting ends.
var errDisabled = agentError("Your usage allocation has been disabled by your admin")

// agentError is an error with the text an agent printed, as it printed it.
func agentError(text string) error { return errors.New(text) }

// Three provider limits in a row trip nothing, count as no failure, and
// leave no fingerprint: they are not the agent failing.
func TestProviderLimitsAreNoFailures(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	b.Record(Iteration{Err: errA(1)})
	for range 3 {
		b.Record(Iteration{Err: errHitLimit, Progress: &Progress{}})
		clock.Advance(8 * time.Hour)
	}
	s := b.Stats()
	assert.Equal(t, Closed, s.State)
	assert.Equal(t, 1, s.Iterations, "the limited iterations are not iterations")
	assert.Equal(t, 3, s.LimitedIterations)
	assert.Equal(t, 1, s.Failures.Consecutive, "not raised, not reset")
	assert.Equal(t, 1, s.Failures.Total)
	assert.Equal(t, 1, s.Failures.Unique, "no fingerprint counted toward same-error")
	assert.Equal(t, 0, s.Progress.ConsecutiveNoProgress, "no progress rule counts them")
	assert.Equal(t, 0, s.Opens)

	b.Record(Iteration{Err: errA(2)})
	b.Record(Iteration{Err: errA(3)})
	assert.Equal(t, "3 consecutive failures (threshold: 3)", b.TripReason(), "the failures around them still count in a row")
}

// Check refuses at a provider limit, with its own reason and the time
// until the reset, without opening the circuit; after the reset it allows
// again, no probe needed.
func TestCheckRefusesUntilTheResetThenAllows(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	b.Record(Iteration{Err: errHitLimit})

	d := b.Check()
	assert.False(t, d.Allow)
	assert.Equal(t, Closed, d.State, "the circuit does not open")
	assert.Equal(t, ReasonProviderLimit, d.Reason.Kind)
	assert.Equal(t, 8*time.Hour, d.RetryAfter)
	assert.Equal(t, "Provider limit: You've hit your limit (resets 2026-01-19 17:00 UTC)", d.Reason.String())

	err := d.Err()
	assert.ErrorIs(t, err, ErrProviderLimit)
	assert.NotErrorIs(t, err, ErrOpen)
	var refused *RefusedError
	require.ErrorAs(t, err, &refused)
	assert.Equal(t, 8*time.Hour, refused.RetryAfter)
	assert.Equal(t, "loopbreaker: Provider limit: You've hit your limit (resets 2026-01-19 17:00 UTC); retry in 8h0m0s", err.Error())

	s := b.Stats()
	assert.Equal(t, ReasonProviderLimit, s.ProviderLimit.Kind)
	assert.Equal(t, time.Date(2026, 1, 19, 17, 0, 0, 0, time.UTC), s.ProviderLimitUntil)
	assert.Equal(t, Closed, s.State)

	clock.Advance(8*time.Hour - time.Second)
	assert.False(t, b.Check().Allow, "a second before the reset")
	clock.Advance(time.Second)
	d = b.Check()
	assert.True(t, d.Allow)
	assert.False(t, d.Probe, "no probe needed")
	assert.Zero(t, b.Stats().ProviderLimit, "the limit is over")
}

// Without a reset time, a usage limit lasts Limits.Wait (60 minutes
// by default, as ralph-claude-code waits) and a throttle
// Limits.ThrottleWait (5 minutes).
func TestLimitsWithoutAResetWaitTheirDefault(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		err  error
		wait time.Duration
		text string
	}{
		{"a usage limit, by default", Config{}, errors.New("You've hit your limit"), time.Hour,
			"Provider limit: You've hit your limit (no reset time given: waiting 1h0m0s)"},
		{"a throttle, by default", Config{}, errors.New("API Error: Request rejected (429)"), 5 * time.Minute,
			"Provider limit: Request rejected (429) (no reset time given: waiting 5m0s)"},
		{"a usage limit, configured", Config{Limits: LimitRules{Wait: 2 * time.Hour}}, errors.New("You've hit your limit"), 2 * time.Hour, ""},
		{"a throttle, configured", Config{Limits: LimitRules{ThrottleWait: 30 * time.Second}}, sdkError(429, ""), 30 * time.Second,
			"Provider limit: HTTP 429 Too Many Requests (no reset time given: waiting 30s)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := newTestBreaker(t, tc.cfg)
			b.Record(Iteration{Err: tc.err})
			d := b.Check()
			assert.Equal(t, tc.wait, d.RetryAfter)
			if tc.text != "" {
				assert.Equal(t, tc.text, d.Reason.String())
			}
		})
	}
}

// A limit no waiting ends is a stop with its own reason: Wait returns at
// once with its error, and only a person's Resume (or Skip, or Reset) ends
// it.
func TestProviderStopIsEndlessUntilAPersonResumes(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	b.Record(Iteration{Err: errDisabled})

	d := b.Check()
	assert.Equal(t, ReasonProviderStopped, d.Reason.Kind)
	assert.Zero(t, d.RetryAfter)
	assert.Equal(t, "Provider stopped the loop (no waiting ends this): Your usage allocation has been disabled", d.Reason.String())
	assert.ErrorIs(t, d.Err(), ErrProviderStopped)
	assert.NotErrorIs(t, d.Err(), ErrProviderLimit)
	assert.NotErrorIs(t, d.Err(), ErrOpen)

	clock.Advance(30 * 24 * time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	wd, err := b.Wait(ctx)
	assert.ErrorIs(t, err, ErrProviderStopped, "no waiting ends it: Wait returns at once")
	assert.Equal(t, ReasonProviderStopped, wd.Reason.Kind)
	assert.Equal(t, time.Date(2026, 2, 18, 9, 0, 0, 0, time.UTC), clock.Now(), "Wait did not sleep")

	b.Record(Iteration{Err: errHitLimit})
	assert.Equal(t, ReasonProviderStopped, b.Check().Reason.Kind, "a wait does not end a stop")

	b.Resume()
	assert.True(t, b.Check().Allow, "the person dealt with it")

	b.Record(Iteration{Err: errDisabled})
	b.Skip()
	assert.True(t, b.Check().Allow)
	b.Record(Iteration{Err: errDisabled})
	b.Reset()
	assert.True(t, b.Check().Allow)
}

// A stop outranks an open circuit and every wait; an open circuit outranks
// a provider wait (its probe comes first, and the probe then waits out
// the limit).
func TestWhichRefusalSpeaksFirst(t *testing.T) {
	b, clock := tripped(t, Config{})
	b.Record(Iteration{Err: errHitLimit})
	d := b.Check()
	assert.Equal(t, Open, d.State)
	assert.Equal(t, ReasonConsecutiveFailures, d.Reason.Kind, "the open circuit speaks first")

	clock.Advance(DefaultConfig().Cooldown)
	d = b.Check()
	assert.False(t, d.Allow, "the cooldown is over, but the limit is in force")
	assert.False(t, d.Probe)
	assert.Equal(t, HalfOpen, d.State)
	assert.Equal(t, ReasonProviderLimit, d.Reason.Kind)

	b.Record(Iteration{Err: errDisabled})
	assert.Equal(t, ReasonProviderStopped, b.Check().Reason.Kind)
	b.ForceOpen("look")
	assert.Equal(t, ReasonProviderStopped, b.Check().Reason.Kind, "the stop speaks even over a held circuit")
}

// A limit recorded by the half-open probe gives the probe slot back: it
// counts as no probe, and after the reset the next Check gets the probe.
func TestLimitAtTheProbeGivesTheSlotBack(t *testing.T) {
	b, clock := tripped(t, Config{})
	clock.Advance(DefaultConfig().Cooldown)
	require.True(t, b.Check().Probe)

	b.Record(Iteration{Err: errHitLimit})
	assert.Equal(t, HalfOpen, b.State(), "the limit neither closes nor reopens the circuit")
	assert.Equal(t, 1, b.Stats().Opens)

	clock.Advance(8 * time.Hour)
	d := b.Check()
	assert.True(t, d.Allow)
	assert.True(t, d.Probe, "the probe runs after the reset")
}

// A limit a transport observes during the probe gives the slot back too:
// after the reset, the next Check gets the probe.
func TestLimitObservedDuringTheProbeGivesTheSlotBack(t *testing.T) {
	b, clock := tripped(t, Config{})
	clock.Advance(DefaultConfig().Cooldown)
	require.True(t, b.Check().Probe)
	b.ObserveLimit(Limit{Kind: LimitThrottle, Reset: clock.Now().Add(time.Minute)})
	clock.Advance(time.Minute)
	assert.True(t, b.Check().Probe)
}

// One worker's limit is every worker's: the limit is the provider's, so
// every Check of the breaker refuses until the reset.
func TestLimitIsSharedByEveryWorker(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	var wg sync.WaitGroup
	refused := make(chan bool, 8)
	b.Record(Iteration{Err: errHitLimit}) // worker 1
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			refused <- !b.Check().Allow
		}()
	}
	wg.Wait()
	close(refused)
	for r := range refused {
		assert.True(t, r)
	}
}

// A host can log a limit as it happens: it is recorded in the history and
// goes to OnStateChange with its own cause, though the circuit's state
// stays as it is. A limit the one in force outlasts is not logged again;
// a later reset, and a stop, are.
func TestLimitIsLoggedAsItHappens(t *testing.T) {
	var seen []Transition
	var mu sync.Mutex
	b, clock := newTestBreaker(t, Config{
		OnStateChange: func(tr Transition) {
			mu.Lock()
			seen = append(seen, tr)
			mu.Unlock()
		},
	})
	b.Record(Iteration{Err: errHitLimit})
	require.Len(t, seen, 1)
	tr := seen[0]
	assert.Equal(t, CauseProviderLimit, tr.Cause)
	assert.Equal(t, Closed, tr.From)
	assert.Equal(t, Closed, tr.To)
	assert.Equal(t, ReasonProviderLimit, tr.Reason.Kind)
	assert.Equal(t, "CLOSED -> CLOSED (provider_limit: Provider limit: You've hit your limit (resets 2026-01-19 17:00 UTC)) at iteration 0", tr.String())

	clock.Advance(time.Minute)
	b.Record(Iteration{Err: errHitLimit})
	b.Record(Iteration{Err: errors.New("You've hit your limit · resets 3pm (UTC)")})
	assert.Len(t, seen, 1, "the limit in force outlasts both")

	b.Record(Iteration{Err: errors.New("You've hit your weekly limit · resets 9pm (UTC)")})
	require.Len(t, seen, 2, "a later reset is news")
	assert.Equal(t, 12*time.Hour-time.Minute, b.Check().RetryAfter)

	b.Record(Iteration{Err: errDisabled})
	require.Len(t, seen, 3)
	assert.Equal(t, ReasonProviderStopped, seen[2].Reason.Kind)

	history := b.Stats().History
	require.Len(t, history, 3)
	assert.Equal(t, CauseProviderLimit, history[2].Cause)
}

// A transport that sees a 429 during an iteration reports it as it
// happens: Check refuses at once, every Wait wakes to see it, and the
// iteration's outcome is recorded later as ever.
func TestObserveLimitDuringAnIteration(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	require.True(t, b.Check().Allow)
	b.ObserveLimit(Limit{Kind: LimitThrottle, Reset: clock.Now().Add(20 * time.Second), Why: "HTTP 429"})

	d := b.Check()
	assert.Equal(t, ReasonProviderLimit, d.Reason.Kind)
	assert.Equal(t, 20*time.Second, d.RetryAfter)
	assert.Equal(t, "Provider limit: HTTP 429", d.Reason.String())

	b.ObserveLimit(Limit{Reset: clock.Now().Add(-time.Second)})
	assert.Equal(t, 20*time.Second, b.Check().RetryAfter, "a reset already past changes nothing")

	b.ObserveLimit(Limit{Kind: LimitKind(9)})
	assert.Equal(t, time.Hour, b.Check().RetryAfter, "an unknown kind counts as a usage limit")

	b.Record(Iteration{Err: errA(1)})
	assert.Equal(t, 1, b.Stats().Failures.Consecutive, "the iteration's outcome counts as ever")
	assert.Equal(t, 0, b.Stats().LimitedIterations)
}

// Wait waits out a provider limit on the breaker's clock, and the loop goes
// on after the reset.
func TestWaitWaitsOutAProviderLimit(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	b.Record(Iteration{Err: errHitLimit})
	d, err := b.Wait(context.Background())
	require.NoError(t, err)
	assert.True(t, d.Allow)
	assert.Equal(t, time.Date(2026, 1, 19, 17, 0, 0, 0, time.UTC), clock.Now())
}

// A classifier of the host's may call an error a provider limit; the
// breaker reads its reset, or waits the default with the error's first
// line as the reason. A host that calls a limit a failure is obeyed.
func TestHostClassifierDecidesWhatIsALimit(t *testing.T) {
	errQuota := errors.New("quota service: project alpha throttled\nretry later")
	b, _ := newTestBreaker(t, Config{
		Classify: func(err error) Outcome {
			switch {
			case errors.Is(err, errQuota):
				return ProviderLimit
			case errors.Is(err, errHitLimit):
				return Failure
			case errors.Is(err, errDisabled):
				return ProviderLimit // a stop the host calls a wait
			}
			return ProviderStop
		},
	})
	b.Record(Iteration{Err: errQuota})
	d := b.Check()
	assert.Equal(t, time.Hour, d.RetryAfter)
	assert.Equal(t, "Provider limit: quota service: project alpha throttled (no reset time given: waiting 1h0m0s)", d.Reason.String())

	b.Reset()
	b.Record(Iteration{Err: errHitLimit})
	assert.True(t, b.Check().Allow, "the host called it a failure")
	assert.Equal(t, 1, b.Stats().Failures.Consecutive)

	b.Reset()
	b.Record(Iteration{Err: errDisabled})
	assert.Equal(t, ReasonProviderLimit, b.Check().Reason.Kind, "the host's kind wins over the text's")

	b.Reset()
	b.Record(Iteration{Err: fmt.Errorf("limit: %w", errHitLimit)})
	b.Record(Iteration{Err: errA(1)})
	d = b.Check()
	assert.Equal(t, ReasonProviderStopped, d.Reason.Kind, "the host's stop")
	assert.Equal(t, "Provider stopped the loop (no waiting ends this): "+errA(1).Error(), d.Reason.String())
}

// A reset further off than any provider's window counts as
// maxProviderLimitWait from now.
func TestAResetTooFarOffIsCapped(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	b.ObserveLimit(Limit{Reset: clock.Now().AddDate(1, 0, 0)})
	assert.Equal(t, maxProviderLimitWait, b.Check().RetryAfter)
	assert.Equal(t, clock.Now().Add(maxProviderLimitWait), b.Stats().ProviderLimitUntil)
}

// Stats and the log show the limit in force and when it lifts.
func TestStatsShowTheLimit(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	b.Record(Iteration{Err: errHitLimit})
	s := b.Stats()
	v := s.LogValue().Group()
	attrs := map[string]string{}
	for _, a := range v {
		attrs[a.Key] = a.Value.String()
	}
	assert.Equal(t, "Provider limit: You've hit your limit (resets 2026-01-19 17:00 UTC)", attrs["provider_limit"])
	assert.Equal(t, "2026-01-19 17:00:00 +0000 UTC", attrs["provider_limit_until"])
}

func TestProviderLimitConfigIsValidated(t *testing.T) {
	for _, cfg := range []Config{
		{Limits: LimitRules{Wait: -time.Second}},
		{Limits: LimitRules{Wait: maxProviderLimitWait + time.Second}},
		{Limits: LimitRules{ThrottleWait: -time.Second}},
	} {
		assert.ErrorIs(t, cfg.Validate(), ErrInvalidConfig, "%+v", cfg)
	}
	assert.NoError(t, Config{Limits: LimitRules{Wait: maxProviderLimitWait}}.Validate())
}

// A *LimitError is found wherever errors.As would find it: joined with
// other errors, behind an error's own As method. An error that wraps
// itself is walked no further than a bound, instead of for ever.
func TestLimitErrorIsFoundWhereErrorsAsFindsIt(t *testing.T) {
	limit := &LimitError{Limit: Limit{Kind: LimitStop, Why: "tenant suspended"}}

	l, ok := ProviderLimitOf(errors.Join(errors.New("build failed"), fmt.Errorf("agent: %w", limit)), limitNow)
	require.True(t, ok, "in a joined error")
	assert.Equal(t, limit.Limit, l)

	l, ok = ProviderLimitOf(asLimit{limit}, limitNow)
	require.True(t, ok, "behind an As method")
	assert.Equal(t, limit.Limit, l)

	_, ok = ProviderLimitOf(selfWrapping{}, limitNow)
	assert.False(t, ok, "an error that wraps itself, and holds no limit")
}

// asLimit is an error that converts itself to a *LimitError by its As
// method, as an SDK's error type may.
type asLimit struct{ limit *LimitError }

func (e asLimit) Error() string { return "sdk error" }

func (e asLimit) As(target any) bool {
	if p, ok := target.(**LimitError); ok {
		*p = e.limit
		return true
	}
	return false
}

// selfWrapping is an error whose Unwrap returns itself.
type selfWrapping struct{}

func (selfWrapping) Error() string { return "again" }

func (e selfWrapping) Unwrap() error { return e }
