package looprun

import (
	"context"
	"fmt"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// A subscriber's budget is a share of the provider's usage windows (the
// 5-hour and the weekly one), which the agents say as they run (each
// agent's reader, package agent, reads them: agent.Run.Windows).
// -max-window-share stops the loop at a share of them.

// windowObserver is a breaker that hears the usage windows
// (*loopbreaker.CircuitBreaker is one).
type windowObserver interface {
	ObserveWindow(loopbreaker.Window)
}

// reportWindows tells the breaker how much of the provider's usage windows
// the run's agent said is used, before the iteration is recorded; a
// breaker that hears no windows is told nothing.
func (r *runner) reportWindows(out *capture) {
	wo, ok := r.cb.(windowObserver)
	if !ok {
		return
	}
	for _, w := range out.run.Windows {
		wo.ObserveWindow(w)
	}
}

// windowShare handles a refusal at -max-window-share: with
// -window-share-stop, the loop stops (exit 5); otherwise it waits, with a
// countdown, for the window's reset, as the person asked.
func (r *runner) windowShare(ctx context.Context, d loopbreaker.Decision) (code int, stop bool) {
	if d.RetryAfter <= 0 {
		r.stopped = d.Reason.String()
		return exitBudget, true
	}
	until := r.clock.Now().Add(d.RetryAfter)
	fmt.Fprintf(r.out, "      %s\n      waiting %s, until %s\n", d.Reason, d.RetryAfter.Round(time.Second), r.clockTime(until))
	return r.waitWithCountdown(ctx, countdown{what: "the window's reset", until: until, inLog: true})
}
