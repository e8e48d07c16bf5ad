package protect

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Guard in the breaker: what the breaker does when the Guard finds
// protected files lost.

// newBreaker returns a breaker with cfg on a clock of the test's own.
func newBreaker(t testing.TB, cfg loopbreaker.Config) (*loopbreaker.CircuitBreaker, *loopbreakertest.Clock) {
	t.Helper()
	clock := loopbreakertest.NewClock(time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC))
	cfg.Now = clock.Now
	b, err := loopbreaker.New(cfg)
	require.NoError(t, err)
	return b, clock
}

// roundTrip writes s as JSON and reads it back, as a restart does.
func TestDeletedProtectedFileHoldsTheCircuitAndComesBack(t *testing.T) {
	root := aProject(t)
	manual := readFile(t, root, "CLAUDE.md")
	require.NoError(t, os.Chmod(filepath.Join(root, "CLAUDE.md"), 0o640))
	before, err := os.Stat(filepath.Join(root, "CLAUDE.md"))
	require.NoError(t, err)
	b, clock := newBreaker(t, loopbreaker.Config{Guard: newTestGuard(t, root, Config{})})

	b.Record(loopbreaker.Iteration{}) // iteration 1: the agent works on the printer
	require.Equal(t, loopbreaker.Closed, b.State())

	removeAll(t, root, "CLAUDE.md") // iteration 2: an over-eager cleanup
	b.Record(loopbreaker.Iteration{})

	s := b.Stats()
	assert.Equal(t, loopbreaker.Open, s.State)
	assert.Equal(t, loopbreaker.ReasonProtectedFiles, s.Reason.Kind)
	assert.Equal(t, 1, s.Reason.Count)
	assert.Equal(t, "Protected files lost: CLAUDE.md deleted, restored from its copy", s.Reason.String())
	assert.Equal(t, manual, readFile(t, root, "CLAUDE.md"), "restored byte for byte")
	after, err := os.Stat(filepath.Join(root, "CLAUDE.md"))
	require.NoError(t, err)
	assert.Equal(t, before.Mode(), after.Mode(), "with its mode")
	assert.True(t, before.ModTime().Equal(after.ModTime()), "and its modification time")
	last := s.History[len(s.History)-1]
	assert.Equal(t, "CLOSED -> OPEN (protected_files: Protected files lost: CLAUDE.md deleted, restored from its copy) at iteration 2", last.String())

	clock.Advance(24 * time.Hour)
	d := b.Check()
	assert.False(t, d.Allow, "no cooldown ends it")
	assert.Zero(t, d.RetryAfter)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a Wait that waited would end here with context.Canceled
	_, err = b.Wait(ctx)
	assert.ErrorIs(t, err, loopbreaker.ErrOpen, "Wait returns at once with the hold")

	b.Resume()
	assert.True(t, b.Check().Allow)
	b.Record(loopbreaker.Iteration{})
	assert.Equal(t, loopbreaker.Closed, b.State(), "the restored file is intact")
}

func TestEditingAProtectedFileIsNoLossButEmptyingIt(t *testing.T) {
	root := aProject(t)
	b, _ := newBreaker(t, loopbreaker.Config{Guard: newTestGuard(t, root, Config{})})
	plan := "# Plan\n"
	for i := 0; i < 5; i++ {
		plan += "- [x] task\n"
		writeFile(t, root, "IMPLEMENTATION_PLAN.md", plan)
		writeFile(t, root, "specs/new.md", plan)
		b.Record(loopbreaker.Iteration{})
		require.Equal(t, loopbreaker.Closed, b.State(), "iteration %d", i+1)
	}

	require.NoError(t, os.Truncate(filepath.Join(root, "IMPLEMENTATION_PLAN.md"), 0)) // echo "" > plan, near enough
	b.Record(loopbreaker.Iteration{})
	assert.Equal(t, "Protected files lost: IMPLEMENTATION_PLAN.md emptied, restored from its copy", b.TripReason())
	assert.Equal(t, plan, readFile(t, root, "IMPLEMENTATION_PLAN.md"), "the last intact plan, not the first")
}

func TestChangedReadOnlyFileIsALossThatIsNotWrittenOver(t *testing.T) {
	root := aProject(t)
	b, _ := newBreaker(t, loopbreaker.Config{Guard: newTestGuard(t, root, Config{ReadOnly: []string{"AGENTS.md"}})})
	writeFile(t, root, "AGENTS.md", "# Agents\nreviewer: approves everything\n")
	b.Record(loopbreaker.Iteration{})
	assert.Equal(t, "Protected files lost: AGENTS.md changed: not restored: something is there, and a Guard never writes over it", b.TripReason())
	assert.Equal(t, "# Agents\nreviewer: approves everything\n", readFile(t, root, "AGENTS.md"))

	b.Resume() // the person keeps the change
	b.Record(loopbreaker.Iteration{})
	assert.Equal(t, loopbreaker.Closed, b.State(), "what the person resumed with is the new read-only content")

	// Touched but the same: no loss.
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(root, "AGENTS.md"), later, later))
	b.Record(loopbreaker.Iteration{})
	assert.Equal(t, loopbreaker.Closed, b.State())
}

func TestResumeTakesThePersonsFilesAsIntact(t *testing.T) {
	root := aProject(t)
	b, _ := newBreaker(t, loopbreaker.Config{Guard: newTestGuard(t, root, Config{})})
	removeAll(t, root, "memory/learnings.md")
	b.RecordSuccess()
	require.True(t, b.IsTripped())

	removeAll(t, root, "memory/learnings.md") // the person did want it gone
	b.Skip()
	b.RecordSuccess()
	assert.Equal(t, loopbreaker.Closed, b.State())
}

func TestCancelledIterationIsVerifiedToo(t *testing.T) {
	root := aProject(t)
	b, _ := newBreaker(t, loopbreaker.Config{Guard: newTestGuard(t, root, Config{})})
	removeAll(t, root, "specs/parser.md")
	b.Record(loopbreaker.Iteration{Err: context.Canceled})
	assert.Equal(t, loopbreaker.ReasonProtectedFiles, b.Stats().Reason.Kind)
	assert.Equal(t, 1, b.Stats().NeutralIterations)
}

func TestGuardIsSafeForConcurrentUse(t *testing.T) {
	root := aProject(t)
	g := newTestGuard(t, root, Config{})
	b, _ := newBreaker(t, loopbreaker.Config{Guard: g})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 10; j++ {
				b.Record(loopbreaker.Iteration{})
				_ = g.Verify()
				_ = g.CheckCommand("rm -rf build", "")
				if j == 5 {
					b.Resume()
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, loopbreaker.Closed, b.State())
	assert.NoError(t, g.Verify())
}
