package loopbreaker

import (
	"context"
)

// Wait blocks until Check allows the next iteration, and returns that
// Decision. It sleeps out each refusal's [Decision.RetryAfter] with
// [Config.Sleep], waits for another goroutine's probe, and wakes at once
// when the host changes the breaker. When waiting cannot help
// ([Decision.WaitHelps]) it returns the refused Decision and [Decision.Err]
// at once; when ctx ends first, the last refused Decision and ctx.Err(). A
// goroutine that Waits again after its own probe, without recording it,
// waits until ctx ends.
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

// WaitHelps reports whether waiting can end the refusal d: true for an open
// circuit, a probe in flight, a provider limit, the call budget, an hourly
// spend cap, the burn rate, a window share that waits for the window's
// reset and an unreachable shared breaker; false for what only a person
// ends (a complete loop, [ErrGaveUp], a held circuit, a provider stop, the
// lifetime spend cap, a window share with [SpendRules.StopAtWindowShare])
// and for a Decision that allows.
func (d Decision) WaitHelps() bool {
	switch {
	case d.Allow || d.Complete:
		return false
	case d.Reason.Kind == ReasonProviderStopped || d.Reason.Kind == ReasonSpendCap:
		return false
	case d.Reason.Kind == ReasonWindowShare && d.RetryAfter == 0:
		return false // StopAtWindowShare: a person resumes
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
