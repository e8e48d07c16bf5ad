package redisstore

import "github.com/loopbreaker/loopbreaker"

// Snapshot returns the worker's own state, for a host that keeps it
// between runs of the worker (a [loopbreaker.FileStore] takes it): its
// local breaker's, with the worker's own signals (progress, stagnation,
// tasks, trends and completion) and its own view of the rest, which it
// judges alone while Redis is out of reach. The fleet's shared state is
// in Redis, and restoring a snapshot adds nothing to it.
func (w *Worker) Snapshot() loopbreaker.Snapshot {
	return w.localBreaker().Snapshot()
}

// Restore puts back the worker's own state from a Snapshot taken by a
// worker of the same fleet, for a worker that starts again where it left
// off; call it before the first Check. A provider limit and usage windows
// in s are left to the fleet, which keeps its own. A circuit s shows open on the worker's
// own signal stays open until its cooldown ends, and is not told to the
// fleet again: the fleet heard of it when it opened. One s shows held (its
// protected files lost) stays held while the fleet is, and is released
// at the first answer from Redis that shows the fleet no longer held (a
// person resumed it meanwhile). An error is
// [loopbreaker.CircuitBreaker.Restore]'s, and leaves the worker as it was.
func (w *Worker) Restore(s loopbreaker.Snapshot) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.local.Restore(withoutShared(s)); err != nil {
		return err
	}
	w.localOpens = w.local.Stats().Opens
	w.restored = true
	return nil
}
