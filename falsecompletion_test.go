package loopbreaker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An agent that says all tasks are complete, loop after loop, without its
// done signal is stuck in a false claim: the third claim in a row opens
// the circuit with a reason of its own (clawker's safety completion).
func TestClaimsWithoutTheDoneSignalOpenTheCircuit(t *testing.T) {
	b, _ := newTestBreaker(t, DefaultConfig())
	for range 2 {
		b.Record(Iteration{Claimed: true, Progress: &Progress{FilesChanged: 1}})
		require.Equal(t, Closed, b.State())
	}
	assert.Equal(t, 2, b.Stats().Progress.ConsecutiveClaims)
	b.Record(Iteration{Claimed: true, Progress: &Progress{FilesChanged: 1}})
	s := b.Stats()
	assert.Equal(t, Open, s.State)
	assert.Equal(t, ReasonFalseCompletion, s.Reason.Kind)
	assert.Equal(t, "False completion: the agent claimed to be done 3 times in a row without its done signal (threshold: 3)", s.Reason.String())
}

// The done signal still ends the loop as done: after claims it completes
// the loop at once, the claims counting as the agent saying it is done,
// and an iteration that claims nothing starts the count again.
func TestADoneSignalAfterClaimsCompletesAtOnce(t *testing.T) {
	b, _ := newTestBreaker(t, DefaultConfig())
	b.Record(Iteration{Claimed: true})
	b.Record(Iteration{Claimed: true})
	b.Record(Iteration{Claimed: true, Done: true})
	s := b.Stats()
	assert.Equal(t, Closed, s.State)
	assert.Equal(t, ReasonDoneSignals, s.Complete.Kind)

	b, _ = newTestBreaker(t, DefaultConfig())
	b.Record(Iteration{Claimed: true})
	b.Record(Iteration{Claimed: true})
	b.Record(Iteration{})
	b.Record(Iteration{Claimed: true})
	s = b.Stats()
	assert.Equal(t, Closed, s.State, "the count started again")
	assert.Equal(t, 1, s.Progress.ConsecutiveClaims)

	cfg := DefaultConfig()
	cfg.Progress.MaxClaims = -1
	b, _ = newTestBreaker(t, cfg)
	for range 5 {
		b.Record(Iteration{Claimed: true})
	}
	assert.Equal(t, Closed, b.State(), "switched off")
}

// A restart keeps the claims in a row.
func TestClaimsInARowSurviveARestart(t *testing.T) {
	b, _ := newTestBreaker(t, DefaultConfig())
	b.Record(Iteration{Claimed: true})
	b.Record(Iteration{Claimed: true})
	restored, _ := newTestBreaker(t, DefaultConfig())
	require.NoError(t, restored.Restore(roundTrip(t, b.Snapshot())))
	restored.Record(Iteration{Claimed: true})
	assert.Equal(t, ReasonFalseCompletion, restored.Stats().Reason.Kind)
}
