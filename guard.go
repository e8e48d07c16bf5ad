package loopbreaker

import "time"

// Guard keeps a loop's files from its agent ([Config.Guard]); package
// protect has one. The breaker calls it without its lock held, possibly
// from several goroutines at once, so it must be safe for concurrent use;
// a panic in it reaches the caller and leaves the breaker as it was.
type Guard interface {
	// AfterIteration checks and restores the files after each recorded
	// iteration, and returns how many were lost and a summary (the reason's
	// Message); a count above zero holds the circuit open.
	AfterIteration() (lost int, summary string)

	// Refresh takes the files as they are as intact; Resume, Skip and Reset
	// call it, ignoring the error.
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
