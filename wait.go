package loopbreaker

import (
	"context"
)

// Wait blocks until the next iteration may run, and returns the Decision
// of the Check that allows it. While Check refuses, Wait waits out
// [Decision.RetryAfter] (the cooldown, a provider limit until it lifts, or
// until calls or spend leave the rolling hour) and checks again; while the half-open probe of another
// goroutine is in flight, it waits for the probe's outcome. A change that
// a host makes meanwhile (an iteration recorded, Resume, Skip, Reset,
// Restore, ...) wakes it to check at once.
//
// When waiting cannot end the refusal ([Decision.WaitHelps]), Wait returns
// at once with the refused Decision and its error ([Decision.Err]): the
// loop is complete ([ErrComplete]), the breaker gave up after
// [Config.MaxConsecutiveOpens] openings in a row ([ErrGaveUp]), the
// circuit is held open by ForceOpen, Abort or lost protected files
// ([ErrOpen]), the provider stopped the loop ([ErrProviderStopped]), or the
// spend cap of the loop's life is reached ([ErrSpendCap]); only a person
// ends those, so a loop that waits with Wait ends when it is stuck for
// good. When ctx ends first, Wait returns the last refused Decision and
// ctx.Err().
//
// Wait sleeps with [Config.Sleep], so a test on a fake clock does not wait.
// It starts no goroutine, and the timer of a real sleep is stopped before
// Wait returns. A goroutine that Waits again after its own Check let the
// probe through, without recording its outcome, waits until ctx ends.
func (b *CircuitBreaker) Wait(ctx context.Context) (Decision, error) {
	for {
		woken, done := b.waitForChange(ctx)
		d := b.Check()
		switch {
		case d.Allow:
			done()
			return d, nil
		case !d.WaitHelps():
			done()
			return d, d.Err()
		}
		var err error
		if d.RetryAfter > 0 {
			err = b.cfg.Sleep(woken, d.RetryAfter)
		} else {
			<-woken.Done() // the probe in flight
		}
		changed := woken.Err() != nil
		done()
		if ctx.Err() != nil {
			return d, ctx.Err()
		}
		if err != nil && !changed {
			return d, err // the host's Sleep failed
		}
	}
}

// WaitHelps reports whether waiting can end the refusal d, the question
// every loop asks of a refused Check: go on waiting, or stop? It is true
// for an open circuit whose cooldown will end, a probe in flight (its
// outcome is coming), a provider limit until its reset, and the call
// budget, an hourly spend cap or an unreachable fleet, which time ends.
// It is false for what only a person ends: the loop is complete, the
// breaker gave up ([ErrGaveUp]), the circuit is held open (Abort,
// ForceOpen, protected files lost), the provider stopped the loop, or the
// spend cap of the loop's life is reached. It is false for a Decision
// that allows the iteration, as there is nothing to wait for.
// [CircuitBreaker.Wait] waits exactly while it is true.
func (d Decision) WaitHelps() bool {
	switch {
	case d.Allow || d.Complete:
		return false
	case d.Reason.Kind == ReasonProviderStopped || d.Reason.Kind == ReasonSpendCap:
		return false
	}
	return !(d.State == Open && heldKind(d.Reason.Kind))
}

// waitForChange returns a context that ends with ctx or at the next change
// a host makes to the breaker, and the function that releases it.
func (b *CircuitBreaker) waitForChange(ctx context.Context) (context.Context, func()) {
	woken, cancel := context.WithCancel(ctx)
	b.mu.Lock()
	if b.waiters == nil {
		b.waiters = make(map[uint64]context.CancelFunc)
	}
	id := b.nextWaiter
	b.nextWaiter++
	b.waiters[id] = cancel
	b.mu.Unlock()
	return woken, func() {
		cancel()
		b.mu.Lock()
		delete(b.waiters, id)
		b.mu.Unlock()
	}
}

// wake wakes every Wait, as the breaker changed. Called with b.mu held.
func (b *CircuitBreaker) wake() {
	for id, cancel := range b.waiters {
		cancel()
		delete(b.waiters, id)
	}
}
