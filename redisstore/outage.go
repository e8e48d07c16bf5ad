package redisstore

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// While Redis is out of reach (an outage), a worker's local breaker
// decides alone, with every signal on: the worker's own failures, errors
// and calls count against its thresholds. It starts from what the local
// breaker knew (the worker's own counts, which it kept all along), and an
// open or held fleet circuit stays shut for this worker as it last saw it.
// Every RetryInterval, Check tries Redis again; the first answer ends the
// outage. Nothing is counted twice: a call whose answer was lost (it may
// or may not have reached Redis) is never sent again; the failures and
// fingerprints of the outage stay with the local breaker, which already
// acted on them; and the calls and the spend of the outage are added to
// the fleet's once, when the worker rejoins, under the outage's number, so
// that a rejoin whose answer is lost and is tried again adds only what the
// first attempt did not. A provider limit the local breaker has in force
// when the worker rejoins is told to the fleet (a limit in force is no
// count: telling it twice changes nothing).
//
// The spend caps over the fleet's life apply during an outage to what the
// fleet had left of them when the worker last heard from Redis; the hourly
// caps, like the call budget, to the worker's own spend of the outage.

// lose starts an outage (or goes on with one) after a call to Redis failed
// with err: the local breaker, with every signal on, takes over from the
// one that judged the worker's own signals.
func (w *Worker) lose(err error, now time.Time) {
	w.mu.Lock()
	w.retryAt = now.Add(w.cfg.RetryInterval)
	if w.down {
		w.mu.Unlock()
		return
	}
	w.down, w.downSince, w.downErr = true, now, err
	w.outage++
	w.outageCalls, w.outageUsage, w.outageWindowStop = 0, loopbreaker.Usage{}, ""
	w.token = ""
	w.local = w.switchTo(w.outageConfig(), false)
	w.mu.Unlock()
	w.cfg.Logger.Warn("loopbreaker: the fleet's breaker on Redis is out of reach; this worker's local breaker decides alone until it is back",
		"fleet", w.cfg.Name, "worker", w.id, "fail_closed", w.cfg.FailClosed, "err", err)
}

// switchTo returns a new local breaker on cfg that goes on from the
// current one's state; with dropShared, without the provider limit it has
// in force and the usage windows it heard (the fleet keeps them from then
// on). Called with w.mu held.
func (w *Worker) switchTo(cfg loopbreaker.Config, dropShared bool) *loopbreaker.CircuitBreaker {
	next, err := loopbreaker.New(cfg)
	if err != nil {
		return w.local // cfg was validated in New: not reached
	}
	snap := w.local.Snapshot()
	if dropShared {
		snap = withoutShared(snap)
	}
	if err := next.Restore(snap); err != nil {
		return w.local
	}
	return next
}

// withoutShared returns s without the provider limit in force and the
// usage windows (their reports and the window share's stop), which the
// fleet keeps; s itself should that fail.
func withoutShared(s loopbreaker.Snapshot) loopbreaker.Snapshot {
	data, err := s.MarshalJSON()
	if err != nil {
		return s
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return s
	}
	_, limit := fields["provider_limit"]
	_, windows := fields["windows"]
	if !limit && !windows {
		return s
	}
	delete(fields, "provider_limit")
	delete(fields, "windows")
	if data, err = json.Marshal(fields); err != nil {
		return s
	}
	var out loopbreaker.Snapshot
	if err := out.UnmarshalJSON(data); err != nil {
		return s
	}
	return out
}

// outageConfig returns the config of the local breaker during an outage:
// every signal on, and the spend caps over the fleet's life lowered by
// what the other workers had spent when this one last heard from Redis
// (the fleet's spend but the worker's own, which the local breaker
// counts). Called with w.mu held.
func (w *Worker) outageConfig() loopbreaker.Config {
	cfg := w.fullCfg
	if cfg.Spend.MaxTokens <= 0 && cfg.Spend.MaxCostUSD <= 0 {
		return cfg
	}
	own := w.local.Stats().Spend.Total
	fleet := w.last.spend
	if cfg.Spend.MaxTokens > 0 {
		others := max(fleet.Tokens()-own.Tokens(), 0)
		cfg.Spend.MaxTokens = max(cfg.Spend.MaxTokens-others, 1)
	}
	if cfg.Spend.MaxCostUSD > 0 {
		others := math.Max(fleet.CostUSD-own.CostUSD, 0)
		if cfg.Spend.MaxCostUSD -= others; cfg.Spend.MaxCostUSD <= 0 {
			cfg.Spend.MaxCostUSD = math.SmallestNonzeroFloat64
		}
	}
	return cfg
}

// rejoin reports whether the worker is in touch with Redis. During an
// outage, once RetryInterval has passed, it tries Redis again, adding the
// outage's calls and spend to the fleet's and telling it the provider
// limit the local breaker has in force; on success the outage ends, and
// the local breaker judges the worker's own signals again (the fleet keeps
// the limit).
func (w *Worker) rejoin(now time.Time) bool {
	w.mu.Lock()
	if !w.down {
		w.mu.Unlock()
		return true
	}
	if now.Before(w.retryAt) {
		w.mu.Unlock()
		return false
	}
	w.retryAt = now.Add(w.cfg.RetryInterval) // one attempt per interval
	outage, calls, usage, local, windowStop := w.outage, w.outageCalls, w.outageUsage, w.local, w.outageWindowStop
	w.mu.Unlock()

	s := local.Stats()
	args := []any{strconv.Itoa(outage), calls, usage.InputTokens, usage.OutputTokens, formatCost(usage.CostUSD)}
	args = append(args, w.limitInForce(s, now)...)
	r, err := w.call("rejoin", append(args, w.windowRejoinArgs(windowStop, s, now)...)...)
	if err != nil {
		return false
	}
	w.mu.Lock()
	if w.outageCalls != calls || w.outageUsage != usage {
		// Calls or spend recorded meanwhile: send them too before
		// rejoining.
		w.retryAt = now
		w.mu.Unlock()
		return false
	}
	w.down = false
	w.local = w.switchTo(w.localCfg, true)
	w.localOpens = w.local.Stats().Opens // what opened it during the outage stays local
	since := w.downSince
	w.mu.Unlock()
	w.observe(r, now)
	w.cfg.Logger.Info("loopbreaker: the fleet's breaker on Redis is back; this worker rejoined it",
		"fleet", w.cfg.Name, "worker", w.id, "outage", now.Sub(since), "calls_replayed", calls,
		"tokens_replayed", usage.Tokens(), "cost_usd_replayed", usage.CostUSD)
	return true
}

// limitInForce returns the script's arguments for the provider limit in
// force at now on the local breaker, whose Stats are s (see limitArgs).
func (w *Worker) limitInForce(s loopbreaker.Stats, now time.Time) []any {
	switch s.ProviderLimit.Kind {
	case loopbreaker.ReasonProviderStopped:
		return []any{"s", 0, 0, reasonJSON(s.ProviderLimit)}
	case loopbreaker.ReasonProviderLimit:
		if s.ProviderLimitUntil.After(now) {
			return []any{"w", s.ProviderLimitUntil.UnixMilli(), 0, reasonJSON(s.ProviderLimit)}
		}
	}
	return w.limitArgs(nil, now)
}

// offline decides while Redis is out of reach: with FailClosed, a refusal
// with [loopbreaker.ErrUnavailable]; otherwise a provider stop or a spent spend
// cap over the fleet's life stays in force for this worker, a fleet circuit
// that was held stays held, one that was open stays open until its
// cooldown was due to end, a provider limit stays in force until it was
// due to lift, and then the local breaker decides alone.
func (w *Worker) offline(now time.Time) loopbreaker.Decision {
	w.mu.Lock()
	last, local, retry, cause := w.last, w.local, w.retryAt.Sub(now), w.downErr
	w.mu.Unlock()
	switch {
	case w.cfg.FailClosed:
		msg := ""
		if cause != nil {
			msg = cause.Error()
		}
		return loopbreaker.Decision{
			State:      last.state,
			Reason:     loopbreaker.Reason{Kind: loopbreaker.ReasonUnavailable, Message: msg},
			RetryAfter: max(retry, 0),
		}
	case last.stop.Kind != loopbreaker.ReasonNone:
		return loopbreaker.Decision{State: last.state, Reason: last.stop}
	case last.held:
		return loopbreaker.Decision{State: loopbreaker.Open, Reason: last.reason}
	case last.state == loopbreaker.Open && now.Before(last.openUntil):
		return loopbreaker.Decision{State: loopbreaker.Open, Reason: last.reason, RetryAfter: last.openUntil.Sub(now)}
	case now.Before(last.limitUntil):
		return loopbreaker.Decision{State: local.State(), Reason: last.limit, RetryAfter: last.limitUntil.Sub(now)}
	case now.Before(last.windowUntil):
		return loopbreaker.Decision{State: local.State(), Reason: last.window, RetryAfter: last.windowUntil.Sub(now)}
	}
	return local.Check()
}
