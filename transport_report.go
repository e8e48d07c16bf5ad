package loopbreaker

import (
	"time"

	"github.com/loopbreaker/loopbreaker/internal/apiusage"
	"github.com/loopbreaker/loopbreaker/internal/limits"
)

// The breaker is what its Transport reports to.

// now is the breaker's clock, for the transport.
func (b *CircuitBreaker) now() time.Time { return b.cfg.Now() }

// reportCall counts one call a transport sent into the call budget.
func (b *CircuitBreaker) reportCall(at time.Time) {
	b.mu.Lock()
	defer b.unlock()
	defer b.wake()
	if b.cfg.MaxCallsPerHour > 0 {
		b.calls.add(1, at)
	}
}

// reportUsage adds the tokens a call used, as a transport read them, to
// the spend, priced (AddUsage).
func (b *CircuitBreaker) reportUsage(u apiusage.Usage) { b.AddUsage(usageOf(u)) }

// usageOf returns what a transport read as a Usage, to be priced.
func usageOf(u apiusage.Usage) Usage {
	return Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, Model: u.Model,
		CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens}
}

// reportLimit puts a provider limit a transport saw in a response of
// source in force (ObserveLimit).
func (b *CircuitBreaker) reportLimit(l limits.Limit, source string) {
	if lim, ok := fromInternal(l); ok {
		lim.Source = source
		b.ObserveLimit(lim)
	}
}

// liftLimit is LiftLimit, for a transport.
func (b *CircuitBreaker) liftLimit(source string) { b.LiftLimit(source) }

// CountCall counts one call, made now, into the call budget, as it
// happens: a request a [Meter]'s transport sent, or a call a host counts
// itself. From the first CountCall on, as with a [CircuitBreaker.Transport],
// Record counts an iteration's calls only when [Iteration.Calls] says how
// many, so that none is counted twice. Without a budget
// ([Config.MaxCallsPerHour]) it does nothing.
func (b *CircuitBreaker) CountCall() {
	b.mu.Lock()
	defer b.unlock()
	now := b.cfg.Now()
	defer b.wake()
	b.callsByTransport = true
	if b.cfg.MaxCallsPerHour > 0 {
		b.calls.add(1, now)
	}
}

// meterReporter is what a transport made by NewTransport reports to: a
// Meter, with the clock that dates what the transport reads.
type meterReporter struct {
	m     Meter
	clock func() time.Time
}

func (r meterReporter) now() time.Time               { return r.clock() }
func (r meterReporter) reportCall(time.Time)         { r.m.CountCall() }
func (r meterReporter) reportUsage(u apiusage.Usage) { r.m.AddUsage(usageOf(u)) }
func (r meterReporter) liftLimit(source string)      { r.m.LiftLimit(source) }
func (r meterReporter) reportLimit(l limits.Limit, source string) {
	if lim, ok := fromInternal(l); ok {
		lim.Source = source
		r.m.ObserveLimit(lim)
	}
}
