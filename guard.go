package loopbreaker

import "time"

// Guard keeps files from a loop's agent: with [Config.Guard] set, the
// breaker asks it after every recorded iteration whether files were lost,
// and when they were, holds the circuit open with a reason of kind
// [ReasonProtectedFiles] until a person resumes. Package protect (module
// github.com/loopbreaker/loopbreaker/protect) has one for superkit's hard
// gate: it keeps the loop's plan, configuration and memory, puts back what
// the agent deleted or emptied, and checks shell commands before they run.
//
// The breaker calls a Guard without its own lock held, from the goroutine
// that records or resumes, so several calls may run at once: a Guard is
// safe for concurrent use. A panic in a Guard goes up to the caller of
// Record or Resume, and leaves the breaker as it was.
type Guard interface {
	// AfterIteration is called after each recorded iteration (Record, a
	// neutral one too, RecordSuccess, RecordFailure). It checks the
	// guarded files and puts back what it can, and returns how many were
	// lost and a summary of what happened to them, which becomes the
	// reason's message ("CLAUDE.md deleted, restored from its copy"). A
	// count above zero holds the circuit open. When nothing was lost
	// (0 and ""), the files as they are now are what the next iteration
	// is compared with.
	AfterIteration() (lost int, summary string)

	// Refresh takes the files as they are now as intact. Resume, Skip and
	// Reset call it before they close the circuit: the person's word is
	// that the files are as they should be, and what they left is what
	// the next iteration is compared with. The breaker ignores the error,
	// which is for a host that calls Refresh itself.
	Refresh() error
}

// lostFiles is what the breaker's Guard found after an iteration.
type lostFiles struct {
	count   int
	summary string
}

// guardIteration runs the breaker's Guard after an iteration, without the
// breaker's lock: what was lost, nothing when there is no Guard.
func (b *CircuitBreaker) guardIteration() lostFiles {
	if b.cfg.Guard == nil {
		return lostFiles{}
	}
	count, summary := b.cfg.Guard.AfterIteration()
	return lostFiles{count: count, summary: summary}
}

// holdLost holds the circuit open for lost files. Called with b.mu held.
func (b *CircuitBreaker) holdLost(lost lostFiles, now time.Time) {
	if lost.count <= 0 {
		return
	}
	b.hold(Reason{Kind: ReasonProtectedFiles, Count: lost.count, Message: lost.summary}, now, CauseProtectedFiles)
}

// refreshGuard has the breaker's Guard take stock, for Resume, Skip and
// Reset, without the breaker's lock.
func (b *CircuitBreaker) refreshGuard() {
	if b.cfg.Guard != nil {
		_ = b.cfg.Guard.Refresh()
	}
}
