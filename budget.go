package loopbreaker

import (
	"fmt"
	"math"
	"time"
)

// callBudgetWindow is the rolling window of the call budget: at most
// [SpendRules.MaxCallsPerHour] calls in any hour, not per clock hour.
const callBudgetWindow = time.Hour

// callBudgetWarningPercent is the share of the call budget at which
// [Decision.Warnings] holds a warning (ralph-claude-code and superkit: 80%).
const callBudgetWarningPercent = 80

// maxCallEntries bounds the memory of the call budget: beyond it, calls
// recorded close together share an entry (conservatively: they then leave
// the window with the newest of them).
const maxCallEntries = 4096

// Budget is the call budget as of a Decision or Stats; zero without one.
type Budget struct {
	// Limit is [SpendRules.MaxCallsPerHour]; Used the calls in the last hour.
	Limit int
	Used  int
}

// Left returns the calls left in the rolling hour; -1 without a budget.
func (b Budget) Left() int {
	if b.Limit <= 0 {
		return -1
	}
	return max(b.Limit-b.Used, 0)
}

// Warning returns the warning text from 80% of the budget used; "" below.
func (b Budget) Warning() string {
	// In floating point: the product of a limit near the largest int and a
	// percentage does not fit in an int.
	used := float64(b.Used) * 100 / float64(b.Limit)
	if b.Limit <= 0 || used < callBudgetWarningPercent {
		return ""
	}
	return fmt.Sprintf("Call budget %d%% used: %d of %d calls in the last hour, %d left",
		int(used), b.Used, b.Limit, b.Left())
}

// callEntry is a number of calls recorded at one time.
type callEntry struct {
	at    time.Time
	calls int
}

// callBudget counts the calls of the rolling hour.
type callBudget struct {
	entries []callEntry // oldest first, from head on
	head    int
	used    int // the calls in entries[head:]
}

// prune forgets the calls that left the window by now. Calls recorded
// later than now were recorded before the clock was set back: they count
// as made now, so that they leave the window an hour from now at the
// latest, never an hour after a time the clock may not reach for long.
func (cb *callBudget) prune(now time.Time) {
	for i := len(cb.entries) - 1; i >= cb.head && cb.entries[i].at.After(now); i-- {
		cb.entries[i].at = now
	}
	cutoff := now.Add(-callBudgetWindow)
	saturated := cb.used == math.MaxInt
	for cb.head < len(cb.entries) && !cb.entries[cb.head].at.After(cutoff) {
		cb.used -= cb.entries[cb.head].calls
		cb.head++
	}
	if saturated { // the sum of what is left may still not fit
		cb.used = 0
		for _, e := range cb.entries[cb.head:] {
			cb.used = addSat(cb.used, e.calls)
		}
	}
	if cb.head == len(cb.entries) {
		cb.entries, cb.head = cb.entries[:0], 0
	} else if cb.head > len(cb.entries)/2 {
		n := copy(cb.entries, cb.entries[cb.head:])
		cb.entries, cb.head = cb.entries[:n], 0
	}
}

// add records calls made at now.
func (cb *callBudget) add(calls int, now time.Time) {
	cb.prune(now)
	cb.used = addSat(cb.used, calls)
	if last := len(cb.entries) - 1; last >= cb.head && (len(cb.entries)-cb.head >= maxCallEntries || !now.After(cb.entries[last].at)) {
		cb.entries[last].calls = addSat(cb.entries[last].calls, calls)
		if now.After(cb.entries[last].at) {
			cb.entries[last].at = now
		}
		return
	}
	cb.entries = append(cb.entries, callEntry{at: now, calls: calls})
}

// retryAfter returns the time until the window holds fewer than limit
// calls; zero if it already does.
func (cb *callBudget) retryAfter(limit int, now time.Time) time.Duration {
	excess := cb.used - limit + 1 // cb.used >= 0 and limit > 0: no overflow
	for _, e := range cb.entries[cb.head:] {
		if excess <= 0 {
			break
		}
		excess -= e.calls
		if excess <= 0 {
			return e.at.Add(callBudgetWindow).Sub(now)
		}
	}
	return 0
}

// budgetState returns the budget as of now. Called with b.mu held.
func (b *CircuitBreaker) budgetState(now time.Time) Budget {
	if b.cfg.Spend.MaxCallsPerHour <= 0 {
		return Budget{}
	}
	b.calls.prune(now)
	return Budget{Limit: b.cfg.Spend.MaxCallsPerHour, Used: b.calls.used}
}

// countCalls adds an iteration's calls, made by now, to the budget: calls,
// or, when the iteration did not say, one (none when a Transport counts
// the calls). Called with b.mu held.
func (b *CircuitBreaker) countCalls(calls int, now time.Time) {
	if b.cfg.Spend.MaxCallsPerHour <= 0 || calls <= 0 && b.callsByTransport {
		return
	}
	b.calls.add(max(calls, 1), now)
}

// minTime returns the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// CountCall counts one call, made now, into the call budget. From the first
// CountCall on, Record counts only the calls [Iteration.Calls] states.
func (b *CircuitBreaker) CountCall() {
	b.mu.Lock()
	defer b.unlock()
	now := b.cfg.Now()
	defer b.wake()
	b.callsByTransport = true
	if b.cfg.Spend.MaxCallsPerHour > 0 {
		b.calls.add(1, now)
	}
}

// Now returns the time by the breaker's clock ([Config.Now]).
func (b *CircuitBreaker) Now() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cfg.Now()
}
