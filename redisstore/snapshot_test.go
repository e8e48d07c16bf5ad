package redisstore

import (
	"testing"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestARestartedWorkerGoesOnWithItsOwnSignals(t *testing.T) {
	f := newFleet(t)
	before := f.worker("a", Config{})
	for range 2 {
		require.True(t, before.Check().Allow)
		before.Record(loopbreaker.Iteration{Progress: &loopbreaker.Progress{OutputLength: 500}})
	}
	saved := before.Snapshot()
	assert.Equal(t, 2, statsOf(t, saved).Progress.ConsecutiveNoProgress, "the worker's own count is in its snapshot")

	// The process stops and starts again, as the same worker.
	after := f.worker("a", Config{})
	require.NoError(t, after.Restore(saved))
	require.True(t, after.Check().Allow)
	after.Record(loopbreaker.Iteration{Progress: &loopbreaker.Progress{OutputLength: 500}})
	d := f.worker("b", Config{}).Check()
	require.False(t, d.Allow, "the third iteration without progress, across the restart, stops the fleet")
	assert.Equal(t, loopbreaker.ReasonNoProgress, d.Reason.Kind)
}

// heldWorker returns a worker whose own signal holds the fleet: its agent
// deleted a protected file.
func heldWorker(t *testing.T, f *fleet) (*Worker, loopbreaker.Config) {
	guard := &lossGuard{}
	cfg := loopbreaker.Config{Guard: guard}
	w := f.worker("careless", Config{Breaker: cfg})
	require.True(t, w.Check().Allow)
	guard.lose("IMPLEMENTATION_PLAN.md deleted, restored from its copy")
	w.Record(loopbreaker.Iteration{})
	require.Equal(t, loopbreaker.ReasonProtectedFiles, w.Check().Reason.Kind)
	return w, cfg
}

func TestARestoredHoldIsReleasedWhenTheFleetWasResumedMeanwhile(t *testing.T) {
	f := newFleet(t)
	held, cfg := heldWorker(t, f)
	saved := held.Snapshot()
	require.Equal(t, loopbreaker.ReasonProtectedFiles, statsOf(t, saved).Reason.Kind)

	// While the worker is stopped, a person resumes the fleet on another.
	f.worker("b", Config{}).Resume()
	restarted := f.worker("careless", Config{Breaker: cfg})
	require.NoError(t, restarted.Restore(saved))
	assert.True(t, restarted.Check().Allow, "the fleet is no longer held, nor is the worker")
}

func TestARestoredHoldStaysWhileTheFleetIsHeld(t *testing.T) {
	f := newFleet(t)
	held, cfg := heldWorker(t, f)
	restarted := f.worker("careless", Config{Breaker: cfg})
	require.NoError(t, restarted.Restore(held.Snapshot()))
	d := restarted.Check()
	assert.False(t, d.Allow)
	assert.Equal(t, loopbreaker.ReasonProtectedFiles, d.Reason.Kind)
	f.worker("b", Config{}).Resume()
	assert.True(t, restarted.Check().Allow, "a resume releases it")
}

func TestARestoredOpenCircuitIsNotToldToTheFleetAgain(t *testing.T) {
	f := newFleet(t)
	stuck := f.worker("stuck", Config{})
	for range 3 {
		stuck.Record(loopbreaker.Iteration{Progress: &loopbreaker.Progress{OutputLength: 500}})
	}
	require.False(t, stuck.Check().Allow)
	saved := stuck.Snapshot()
	require.Equal(t, loopbreaker.Open, statsOf(t, saved).State)
	opens := f.worker("other", Config{}).Stats().Opens

	f.worker("other", Config{}).Resume() // a person resumes the fleet
	restarted := f.worker("stuck", Config{})
	require.NoError(t, restarted.Restore(saved))
	restarted.Record(loopbreaker.Iteration{Progress: &loopbreaker.Progress{OutputLength: 900, FilesChanged: 1}})
	assert.Equal(t, opens, f.worker("other", Config{}).Stats().Opens, "the restored opening was not counted twice")
}

func TestRestoreRefusesAnInvalidSnapshot(t *testing.T) {
	f := newFleet(t)
	w := f.worker("a", Config{})
	w.Record(loopbreaker.Iteration{Progress: &loopbreaker.Progress{OutputLength: 500}})
	require.Error(t, w.Restore(loopbreaker.Snapshot{}), "a zero Snapshot is not one a breaker saved")
	assert.Equal(t, 1, statsOf(t, w.Snapshot()).Progress.ConsecutiveNoProgress, "the worker is as it was")
}

// statsOf reads a snapshot through a breaker of its own.
func statsOf(t *testing.T, s loopbreaker.Snapshot) loopbreaker.Stats {
	t.Helper()
	cb, err := loopbreaker.New(loopbreaker.Config{})
	require.NoError(t, err)
	require.NoError(t, cb.Restore(s))
	return cb.Stats()
}
