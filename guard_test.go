package loopbreaker

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testGuard is a Guard whose agent loses files when told to: the next
// AfterIteration reports the loss. It notes whether the breaker's lock
// was held while it ran, and panics while armed, as a host's bug would.
type testGuard struct {
	b *CircuitBreaker // the breaker it is in, to see its lock

	mu         sync.Mutex
	lose       int    // files lost in the next iteration
	summary    string // and what happened to them
	iterations int    // AfterIteration calls
	refreshes  int    // Refresh calls
	lockHeld   bool   // the breaker's lock was held during a call
	panics     bool
}

func (g *testGuard) AfterIteration() (int, string) {
	g.checkLock()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.panics {
		panic("guard broke")
	}
	g.iterations++
	n, s := g.lose, g.summary
	g.lose, g.summary = 0, ""
	return n, s
}

func (g *testGuard) Refresh() error {
	g.checkLock()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.panics {
		panic("guard broke")
	}
	g.refreshes++
	return nil
}

// checkLock notes whether the breaker's lock is held.
func (g *testGuard) checkLock() {
	if g.b == nil {
		return
	}
	if !g.b.mu.TryLock() {
		g.mu.Lock()
		g.lockHeld = true
		g.mu.Unlock()
		return
	}
	g.b.mu.Unlock()
}

// loses makes the next iteration lose n files.
func (g *testGuard) loses(n int, summary string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lose, g.summary = n, summary
}

func newGuardedBreaker(t *testing.T, cfg Config) (*CircuitBreaker, *testGuard, *loopbreakertest.Clock) {
	t.Helper()
	g := &testGuard{}
	cfg.Guard = g
	b, clock := newTestBreaker(t, cfg)
	g.b = b
	return b, g, clock
}

// The agent deletes the manual in the second iteration: the breaker holds
// the circuit open at once, with the Guard's summary as its reason; no
// cooldown ends the hold, Wait returns at once, and a person's Resume,
// which refreshes the Guard first, does.
func TestLostFilesHoldTheCircuitUntilAPersonResumes(t *testing.T) {
	b, g, clock := newGuardedBreaker(t, Config{})
	b.Record(Iteration{})
	require.Equal(t, Closed, b.State())

	g.loses(1, "CLAUDE.md deleted, restored from its copy")
	b.Record(Iteration{})
	s := b.Stats()
	assert.Equal(t, Open, s.State)
	assert.Equal(t, ReasonProtectedFiles, s.Reason.Kind)
	assert.Equal(t, 1, s.Reason.Count)
	assert.Equal(t, "Protected files lost: CLAUDE.md deleted, restored from its copy", s.Reason.String())
	assert.Equal(t, "CLOSED -> OPEN (protected_files: Protected files lost: CLAUDE.md deleted, restored from its copy) at iteration 2",
		s.History[len(s.History)-1].String())

	clock.Advance(24 * time.Hour)
	d := b.Check()
	assert.False(t, d.Allow, "no cooldown ends it")
	assert.Zero(t, d.RetryAfter)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a Wait that waited would end here with context.Canceled
	_, err := b.Wait(ctx)
	assert.ErrorIs(t, err, ErrOpen, "Wait returns at once with the hold")

	b.Resume()
	assert.Equal(t, 1, g.refreshes, "Resume takes stock first")
	assert.True(t, b.Check().Allow)
	b.Record(Iteration{})
	assert.Equal(t, Closed, b.State())
}

// Every way of recording an iteration asks the Guard, and a loss holds
// the circuit whatever the iteration's outcome; Skip and Reset refresh
// the Guard as Resume does.
func TestEveryRecordedIterationAsksTheGuard(t *testing.T) {
	records := map[string]func(b *CircuitBreaker){
		"Record":             func(b *CircuitBreaker) { b.Record(Iteration{}) },
		"a failed Record":    func(b *CircuitBreaker) { b.Record(Iteration{Err: errA(1)}) },
		"a neutral Record":   func(b *CircuitBreaker) { b.Record(Iteration{Err: context.Canceled}) },
		"a condensed Record": func(b *CircuitBreaker) { b.Record(Iteration{Condensed: true}) },
		"RecordSuccess":      func(b *CircuitBreaker) { b.RecordSuccess() },
		"RecordFailure":      func(b *CircuitBreaker) { b.RecordFailure("exit status 1") },
	}
	for name, record := range records {
		t.Run(name, func(t *testing.T) {
			b, g, _ := newGuardedBreaker(t, Config{})
			g.loses(2, "specs/ deleted with the 2 files in it, restored")
			record(b)
			assert.Equal(t, 1, g.iterations)
			s := b.Stats()
			assert.Equal(t, ReasonProtectedFiles, s.Reason.Kind)
			assert.Equal(t, 2, s.Reason.Count)
		})
	}
	for name, release := range map[string]func(b *CircuitBreaker){
		"Skip":  func(b *CircuitBreaker) { b.Skip() },
		"Reset": func(b *CircuitBreaker) { b.Reset() },
	} {
		t.Run(name, func(t *testing.T) {
			b, g, _ := newGuardedBreaker(t, Config{})
			g.loses(1, "AGENTS.md deleted")
			b.RecordSuccess()
			release(b)
			assert.Equal(t, 1, g.refreshes)
			assert.True(t, b.Check().Allow)
		})
	}
}

// A hold for lost files survives a restart: the snapshot keeps it, and the
// restored breaker, without a Guard, still refuses whatever the clock.
func TestAHoldForLostFilesSurvivesARestart(t *testing.T) {
	b, g, clock := newGuardedBreaker(t, Config{})
	g.loses(1, "AGENTS.md deleted, restored from its copy")
	b.RecordFailure("exit status 1")

	again, _ := newTestBreaker(t, Config{})
	require.NoError(t, again.Restore(roundTrip(t, b.Snapshot())))
	clock.Advance(48 * time.Hour)
	d := again.Check()
	assert.False(t, d.Allow)
	assert.Equal(t, "Protected files lost: AGENTS.md deleted, restored from its copy", d.Reason.String())
}

// A loss found with another stop in the same iteration: the hold wins, and
// the history records it after the trip. A completed loop is complete no
// more.
func TestLostFilesWinOverATripAndACompletion(t *testing.T) {
	b, g, _ := newGuardedBreaker(t, Config{Failures: FailureRules{MaxConsecutive: 1}})
	g.loses(1, "CLAUDE.md deleted, restored from its copy")
	b.Record(Iteration{Err: errA(1)})
	s := b.Stats()
	assert.Equal(t, []string{
		"CLOSED -> OPEN (signal: 1 consecutive failures (threshold: 1)) at iteration 1",
		"OPEN -> OPEN (protected_files: Protected files lost: CLAUDE.md deleted, restored from its copy) at iteration 1",
	}, transitions(s.History))
	assert.Equal(t, 1, s.Opens, "one open")

	b.Reset()
	g.loses(1, "AGENTS.md deleted")
	b.Record(Iteration{Plan: &Plan{Done: 3}})
	d := b.Check()
	assert.False(t, d.Complete)
	assert.Equal(t, ReasonProtectedFiles, d.Reason.Kind)
}

// The Guard's file system work runs without the breaker's lock: its calls
// never find the lock held.
func TestTheGuardRunsWithoutTheBreakersLock(t *testing.T) {
	b, g, _ := newGuardedBreaker(t, Config{})
	b.Record(Iteration{})
	b.RecordFailure("exit status 1")
	g.loses(1, "CLAUDE.md deleted")
	b.RecordSuccess()
	b.Resume()
	b.Skip()
	b.Reset()
	assert.Equal(t, 3, g.iterations)
	assert.Equal(t, 3, g.refreshes)
	assert.False(t, g.lockHeld, "the Guard ran under the breaker's lock")
}

// A Guard that panics leaves the breaker usable: the panic goes up to the
// caller, no lock is held, and nothing was recorded.
func TestAPanickingGuardLeavesNoLockHeld(t *testing.T) {
	calls := map[string]func(b *CircuitBreaker){
		"Record":        func(b *CircuitBreaker) { b.Record(Iteration{}) },
		"RecordSuccess": func(b *CircuitBreaker) { b.RecordSuccess() },
		"RecordFailure": func(b *CircuitBreaker) { b.RecordFailure("boom") },
		"Resume":        func(b *CircuitBreaker) { b.Resume() },
		"Skip":          func(b *CircuitBreaker) { b.Skip() },
		"Reset":         func(b *CircuitBreaker) { b.Reset() },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			b, g, _ := newGuardedBreaker(t, Config{})
			g.panics = true
			require.True(t, callRecovering(func() { call(b) }), "the panic reaches the caller")
			require.True(t, b.mu.TryLock(), "a panic in the Guard left the breaker's lock held")
			b.mu.Unlock()
			assert.Zero(t, b.Stats().Iterations, "the iteration was not recorded")
			g.panics = false
			requireUsable(t, b)
		})
	}
}
