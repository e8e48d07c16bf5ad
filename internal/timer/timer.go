// Package timer sleeps on the real clock, for the breaker's and its
// runners' waits when no test clock is set.
package timer

import (
	"context"
	"time"
)

// Sleep returns after d, or with ctx.Err() as soon as ctx is done,
// whichever comes first. A d of zero or less returns at once.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
