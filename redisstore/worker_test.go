package redisstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loop is what a host's loop calls of a breaker. A fleet worker has it as
// a *loopbreaker.CircuitBreaker has it, so an interface a host declares
// takes either.
type loop interface {
	Check() loopbreaker.Decision
	Record(loopbreaker.Iteration)
	Wait(context.Context) (loopbreaker.Decision, error)
	RecordSuccess()
	RecordFailure(string) bool
	State() loopbreaker.State
	IsTripped() bool
	Stats() loopbreaker.Stats
	TripReason() string
	Resume()
	Skip()
	Abort()
	ForceOpen(string)
	Reset()
}

var (
	_ loop = (*Worker)(nil)
	_ loop = (*loopbreaker.CircuitBreaker)(nil)
)

// newClock returns a hand-driven local clock; the shared state runs on
// Redis's. It starts at the time of the machine, which Redis's clock reads
// too, so that a provider's reset (a time, as the provider gives it) means
// the same to both.
func newClock() *loopbreakertest.Clock {
	return loopbreakertest.NewClock(time.Now().Truncate(time.Millisecond))
}

// fleet makes workers of one fleet on a server.
type fleet struct {
	t      *testing.T
	srv    *server
	client *redis.Client
	clock  *loopbreakertest.Clock
	name   string
	log    *bytes.Buffer
	logMu  sync.Mutex
}

func newFleet(t *testing.T) *fleet {
	srv := startRedis(t)
	return &fleet{t: t, srv: srv, client: srv.client(t), clock: newClock(), name: t.Name(), log: &bytes.Buffer{}}
}

// Write makes the fleet the workers' log.
func (f *fleet) Write(p []byte) (int, error) {
	f.logMu.Lock()
	defer f.logMu.Unlock()
	return f.log.Write(p)
}

func (f *fleet) logged() string {
	f.logMu.Lock()
	defer f.logMu.Unlock()
	return f.log.String()
}

// worker returns a worker named name, with cfg's fields filled in.
func (f *fleet) worker(name string, cfg Config) *Worker {
	f.t.Helper()
	cfg.Client = f.client
	cfg.Name = f.name
	cfg.Worker = name
	cfg.Breaker.Now = f.clock.Now
	cfg.Logger = slog.New(slog.NewTextHandler(f, nil))
	if cfg.Timeout == 0 {
		// A machine shared with other work may hold a script longer than
		// the default 200ms; a timeout would start an outage that the
		// hand-driven clock never ends. (A killed server fails at once.)
		cfg.Timeout = 5 * time.Second
	}
	w, err := New(cfg)
	require.NoError(f.t, err)
	return w
}

func (f *fleet) workers(n int, cfg Config) []*Worker {
	ws := make([]*Worker, n)
	for i := range ws {
		ws[i] = f.worker(fmt.Sprintf("w%02d", i), cfg)
	}
	return ws
}

func TestFailuresAcrossWorkersOpenOneCircuitForAll(t *testing.T) {
	f := newFleet(t)
	ws := f.workers(3, Config{})
	// One failure on each worker: three in a row, fleet-wide.
	for i, w := range ws {
		require.True(t, w.Check().Allow)
		open := w.RecordFailure(fmt.Sprintf("tool crashed on worker %d", i))
		assert.Equal(t, i == 2, open, "the third failure in a row opens the circuit")
	}
	for _, w := range ws {
		d := w.Check()
		require.False(t, d.Allow)
		assert.Equal(t, loopbreaker.Open, d.State)
		assert.Equal(t, "3 consecutive failures (threshold: 3)", d.Reason.String())
		assert.ErrorIs(t, d.Err(), loopbreaker.ErrOpen)
		assert.InDelta(t, 30*time.Second, d.RetryAfter, float64(2*time.Second))
	}
	s := ws[0].Stats()
	assert.Equal(t, loopbreaker.Open, s.State)
	assert.Equal(t, 3, s.Failures.Total)
	assert.Equal(t, 1, s.Opens)
	assert.Equal(t, 1, s.Iterations, "iterations are the worker's own")
}

func TestASuccessOnAnyWorkerEndsTheFailuresInARow(t *testing.T) {
	f := newFleet(t)
	a, b := f.worker("a", Config{}), f.worker("b", Config{})
	a.RecordFailure("boom 1")
	a.RecordFailure("boom 2")
	b.RecordSuccess()
	a.RecordFailure("boom 3")
	assert.True(t, b.Check().Allow)
	assert.Equal(t, 1, b.Stats().Failures.Consecutive)
}

func TestTheSameErrorIsCountedAcrossTheFleet(t *testing.T) {
	f := newFleet(t)
	ws := f.workers(5, Config{Breaker: loopbreaker.Config{Failures: loopbreaker.FailureRules{MaxConsecutive: -1}}})
	for i, w := range ws {
		w.Record(loopbreaker.Iteration{Err: fmt.Errorf("open /tmp/build-%d/out.json: no such file or directory", 1000+i)})
		if i < 4 {
			w.RecordSuccess()
		}
	}
	d := ws[0].Check()
	require.False(t, d.Allow)
	assert.Equal(t, loopbreaker.ReasonSameError, d.Reason.Kind)
	assert.Equal(t, 5, d.Reason.Count)
	assert.Equal(t, loopbreaker.Fingerprint("open /tmp/build-1004/out.json: no such file or directory"), d.Reason.Fingerprint)
	assert.Equal(t, "open /tmp/build-1004/out.json: no such file or directory", d.Reason.Sample)
	s := ws[1].Stats()
	assert.Equal(t, map[string]int{d.Reason.Fingerprint: 5}, s.Failures.Counts)
	assert.Equal(t, 1, s.Failures.Unique)
}

// An error that successful iterations noticed (an agent that exits 0
// after tool calls failed inside it) counts toward the fleet's same
// error, and opens its circuit, without counting as a failure.
func TestANoticedErrorCountsTowardTheFleetsSameError(t *testing.T) {
	f := newFleet(t)
	ws := f.workers(5, Config{})
	for i, w := range ws {
		require.True(t, w.Check().Allow)
		w.Record(loopbreaker.Iteration{Noticed: fmt.Errorf("Error: Cannot find module 'left-pad' (attempt %d)", i+1)})
	}
	d := ws[0].Check()
	require.False(t, d.Allow)
	assert.Equal(t, loopbreaker.ReasonSameError, d.Reason.Kind)
	assert.Equal(t, 5, d.Reason.Count)
	assert.Equal(t, "Error: Cannot find module 'left-pad' (attempt 5)", d.Reason.Sample)
	s := ws[1].Stats()
	assert.Zero(t, s.Failures.Total, "no failure")
	assert.Zero(t, s.Failures.Consecutive)
}

func TestSixtyFourWorkersGetExactlyOneProbePerCooldown(t *testing.T) {
	f := newFleet(t)
	const workers, cycles = 64, 3
	cfg := Config{Breaker: loopbreaker.Config{Failures: loopbreaker.FailureRules{MaxConsecutive: 1}, Cooldown: 200 * time.Millisecond}}
	ws := f.workers(workers, cfg)
	ws[0].RecordFailure("the shared tool is down")
	require.Equal(t, loopbreaker.Open, ws[0].State())

	for cycle := range cycles {
		// Every worker asks until it has seen the half-open circuit: the
		// probe for one of them, a refusal for the rest.
		var probes, refusedHalfOpen atomic.Int32
		var prober atomic.Pointer[Worker]
		var wg sync.WaitGroup
		for _, w := range ws {
			wg.Add(1)
			go func() {
				defer wg.Done()
				deadline := time.Now().Add(5 * time.Second)
				for time.Now().Before(deadline) {
					d := w.Check()
					switch {
					case d.Allow:
						assert.True(t, d.Probe, "a half-open circuit lets only the probe through")
						probes.Add(1)
						prober.Store(w)
						return
					case d.State == loopbreaker.HalfOpen:
						refusedHalfOpen.Add(1)
						return
					}
					<-time.After(2 * time.Millisecond) // pacing a real server's clock
				}
				t.Errorf("worker %s never saw the circuit half-open", w.ID())
			}()
		}
		wg.Wait()
		require.Equal(t, int32(1), probes.Load(), "cycle %d: exactly one probe", cycle)
		require.Equal(t, int32(workers-1), refusedHalfOpen.Load(), "cycle %d: every other worker refused", cycle)
		// The probe fails: the circuit opens again for another cooldown.
		require.True(t, prober.Load().RecordFailure("still down"))
	}
	s := ws[5].Stats()
	assert.Equal(t, cycles+1, s.Opens)
	assert.Equal(t, cycles+1, s.ConsecutiveOpens, "no probe succeeded")
	assert.Equal(t, loopbreaker.ReasonConsecutiveFailures, s.Reason.Kind, "the failed probe reached the threshold, as in a single breaker")
}

func TestFourHundredAttemptsAgainstABudgetOfAHundredAllowExactlyAHundred(t *testing.T) {
	f := newFleet(t)
	ws := f.workers(64, Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCallsPerHour: 100}}})
	var attempts, allowed, budgetRefusals atomic.Int32
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for attempts.Add(1) <= 400 {
				d := w.Check()
				if !d.Allow {
					if errors.Is(d.Err(), loopbreaker.ErrCallBudget) {
						budgetRefusals.Add(1)
					}
					continue
				}
				allowed.Add(1)
				w.Record(loopbreaker.Iteration{Calls: 1})
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(100), allowed.Load())
	assert.Equal(t, int32(300), budgetRefusals.Load())
	s := ws[0].Stats()
	assert.Equal(t, loopbreaker.Budget{Limit: 100, Used: 100}, s.Budget)
	assert.InDelta(t, time.Hour, s.BudgetRetryAfter, float64(time.Minute), "the first call leaves the rolling hour an hour after it was made")
	assert.Equal(t, loopbreaker.Closed, s.State, "a spent budget opens no circuit")
}

func TestAnIterationsCallsBeyondTheReservedOneCount(t *testing.T) {
	f := newFleet(t)
	w := f.worker("a", Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCallsPerHour: 10}}})
	d := w.Check()
	require.True(t, d.Allow)
	assert.Equal(t, loopbreaker.Budget{Limit: 10, Used: 0}, d.Budget, "as a breaker's Decision: the calls before this iteration")
	assert.Equal(t, 1, w.Stats().Budget.Used, "Check reserved the iteration's call")
	w.Record(loopbreaker.Iteration{Calls: 8})
	d = w.Check()
	require.True(t, d.Allow)
	assert.Equal(t, 8, d.Budget.Used)
	assert.Equal(t, "Call budget 80% used: 8 of 10 calls in the last hour, 2 left", warningsText(d))
	w.Record(loopbreaker.Iteration{})
	d = w.Check()
	require.True(t, d.Allow, "the tenth call")
	w.Record(loopbreaker.Iteration{})
	d = w.Check()
	assert.False(t, d.Allow)
	assert.Equal(t, "Call budget exhausted: 10 calls in the last hour (limit: 10)", d.Reason.String())
}

func TestAnAbortIsSeenByEveryWorkerAtItsNextCheck(t *testing.T) {
	f := newFleet(t)
	ws := f.workers(64, Config{})
	for _, w := range ws {
		require.True(t, w.Check().Allow)
		w.RecordSuccess()
	}
	ws[17].Abort()
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := w.Check()
			assert.False(t, d.Allow, "worker %s", w.ID())
			assert.Equal(t, loopbreaker.ReasonAborted, d.Reason.Kind)
			assert.Zero(t, d.RetryAfter, "no cooldown ends an abort")
			_, err := w.Wait(context.Background())
			assert.ErrorIs(t, err, loopbreaker.ErrOpen, "Wait returns at once: only a person ends an abort")
		}()
	}
	wg.Wait()

	ws[40].Resume()
	for _, w := range ws {
		assert.True(t, w.Check().Allow, "Resume by any worker releases every worker")
	}
}

func TestForceOpenHoldsTheFleetWithItsMessage(t *testing.T) {
	f := newFleet(t)
	a, b := f.worker("a", Config{}), f.worker("b", Config{})
	a.ForceOpen("deploy in progress")
	d := b.Check()
	require.False(t, d.Allow)
	assert.Equal(t, "Forced open: deploy in progress", d.Reason.String())
	b.Abort()
	d = a.Check()
	assert.Equal(t, "Aborted: Forced open: deploy in progress", d.Reason.String(), "Abort keeps the reason it replaced")
	b.Skip()
	assert.True(t, a.Check().Allow)
}

func TestAWorkersOwnSignalStopsTheWholeFleet(t *testing.T) {
	f := newFleet(t)
	stuck, other := f.worker("stuck", Config{}), f.worker("other", Config{})
	for range 3 {
		require.True(t, stuck.Check().Allow)
		stuck.Record(loopbreaker.Iteration{Progress: &loopbreaker.Progress{OutputLength: 500}})
	}
	d := other.Check()
	require.False(t, d.Allow, "no progress on one worker opens the fleet's circuit")
	assert.Equal(t, "No progress in 3 consecutive iterations (threshold: 3)", d.Reason.String())
	d = stuck.Check()
	assert.False(t, d.Allow)
	assert.Equal(t, loopbreaker.ReasonNoProgress, d.Reason.Kind)
}

func TestAProbeWhoseWorkerDiedIsLost(t *testing.T) {
	f := newFleet(t)
	cfg := Config{ProbeLease: 100 * time.Millisecond, Breaker: loopbreaker.Config{Failures: loopbreaker.FailureRules{MaxConsecutive: 1}, Cooldown: 50 * time.Millisecond}}
	dead, alive := f.worker("dead", cfg), f.worker("alive", cfg)
	dead.RecordFailure("boom")
	require.Eventually(t, func() bool { return dead.Check().Probe }, 5*time.Second, 5*time.Millisecond)
	// The worker that took the probe dies: it never records the outcome.
	var d loopbreaker.Decision
	require.Eventually(t, func() bool {
		d = alive.Check()
		return d.Reason.Kind == loopbreaker.ReasonProbeLost
	}, 5*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return alive.Check().Probe }, 5*time.Second, 5*time.Millisecond,
		"after the lost probe's cooldown another worker probes")
	alive.RecordSuccess()
	assert.True(t, dead.Check().Allow, "the probe succeeded: the circuit is closed")
	assert.Equal(t, loopbreaker.Closed, dead.State())
}

func TestANeutralProbeGivesTheProbeBack(t *testing.T) {
	f := newFleet(t)
	cfg := Config{Breaker: loopbreaker.Config{Failures: loopbreaker.FailureRules{MaxConsecutive: 1}, Cooldown: 50 * time.Millisecond}}
	a, b := f.worker("a", cfg), f.worker("b", cfg)
	a.RecordFailure("boom")
	require.Eventually(t, func() bool { return a.Check().Probe }, 5*time.Second, 5*time.Millisecond)
	assert.False(t, b.Check().Allow, "the probe is a's")
	a.Record(loopbreaker.Iteration{Err: context.Canceled})
	d := b.Check()
	assert.True(t, d.Allow && d.Probe, "a's cancelled probe gave it back")
}

func TestKeysExpireWhenIdleAndNeverWhileOpen(t *testing.T) {
	f := newFleet(t)
	ctx := context.Background()
	w := f.worker("a", Config{IdleTTL: 2 * time.Hour, Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCallsPerHour: 10}}})
	require.True(t, w.Check().Allow)
	w.RecordFailure("boom")
	for _, k := range keysOf(f.name)[:3] {
		ttl, err := f.client.PTTL(ctx, k).Result()
		require.NoError(t, err)
		assert.InDelta(t, 2*time.Hour, ttl, float64(time.Minute), "key %s", k)
	}
	w.RecordFailure("boom")
	w.RecordFailure("boom")
	require.Equal(t, loopbreaker.Open, w.State())
	for _, k := range keysOf(f.name)[:3] {
		ttl, err := f.client.PTTL(ctx, k).Result()
		require.NoError(t, err)
		assert.Equal(t, time.Duration(-1), ttl, "key %s has no expiry while the circuit is open", k)
	}
}

func TestAResumeOnAnotherWorkerStartsTheLocalCountsAgain(t *testing.T) {
	f := newFleet(t)
	a, b := f.worker("a", Config{}), f.worker("b", Config{})
	for range 2 {
		a.Record(loopbreaker.Iteration{Progress: &loopbreaker.Progress{}})
	}
	b.Resume()
	a.Check() // learns of the Resume
	a.Record(loopbreaker.Iteration{Progress: &loopbreaker.Progress{}})
	assert.True(t, a.Check().Allow, "a's no-progress count started again")
	assert.Equal(t, 1, a.Stats().Progress.ConsecutiveNoProgress)
}

func TestNewRefusesWhatItCannotUse(t *testing.T) {
	slow := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer slow.Close()
	_, err := New(Config{Client: slow, Name: "a{b}"})
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.ErrorContains(t, err, "Name")
	assert.ErrorContains(t, err, "ContextTimeoutEnabled")
	_, err = New(Config{Name: "x", Breaker: loopbreaker.Config{Cooldown: -1}})
	assert.ErrorContains(t, err, "Client")
	assert.ErrorContains(t, err, "Cooldown")
}

func TestAWorkersOwnHoldHoldsTheFleetUntilAResumeOnAnotherWorker(t *testing.T) {
	f := newFleet(t)
	guard := &lossGuard{}
	careless := f.worker("careless", Config{Breaker: loopbreaker.Config{Guard: guard}})
	ws := append([]*Worker{careless}, f.workers(3, Config{})...)

	require.True(t, careless.Check().Allow)
	guard.lose("IMPLEMENTATION_PLAN.md deleted, restored from its copy") // the agent "cleans up"
	careless.Record(loopbreaker.Iteration{})

	for _, w := range ws {
		d := w.Check()
		require.False(t, d.Allow, "worker %s", w.ID())
		assert.Equal(t, loopbreaker.ReasonProtectedFiles, d.Reason.Kind)
		assert.Equal(t, "Protected files lost: IMPLEMENTATION_PLAN.md deleted, restored from its copy", d.Reason.String())
		assert.Zero(t, d.RetryAfter, "no cooldown ends a hold")
		_, err := w.Wait(context.Background())
		assert.ErrorIs(t, err, loopbreaker.ErrOpen, "Wait returns at once: only a person ends it")
	}

	ws[2].Resume() // a person looked, on another machine
	for _, w := range ws {
		assert.True(t, w.Check().Allow, "worker %s goes on", w.ID())
		w.RecordSuccess()
	}
	assert.Equal(t, loopbreaker.Closed, careless.Stats().State)
}

// lossGuard is a worker's Guard (package protect has the real one) whose
// agent loses a file when told to: the next iteration reports it.
type lossGuard struct {
	mu      sync.Mutex
	summary string
}

func (g *lossGuard) lose(summary string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.summary = summary
}

func (g *lossGuard) AfterIteration() (int, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.summary
	g.summary = ""
	if s == "" {
		return 0, ""
	}
	return 1, s
}

func (g *lossGuard) Refresh() error { return nil }

// warningsText returns the texts of d's warnings joined with "; ", as a
// host that prints them on one line would.
func warningsText(d loopbreaker.Decision) string {
	texts := make([]string, len(d.Warnings))
	for i, w := range d.Warnings {
		texts[i] = w.String()
	}
	return strings.Join(texts, "; ")
}
