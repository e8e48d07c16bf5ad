package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/errtext"
	"github.com/loopbreaker/loopbreaker/internal/limits"
	"github.com/loopbreaker/loopbreaker/transport"
)

// What the fleet shares besides the circuit: the spend and its caps, and
// the provider limit in force (the usage windows: window.go). Both arrive with Record, and as they happen
// with AddUsage, ObserveLimit and CountCall, which a transport calls for a
// model SDK (Transport).

// A worker is a transport.Meter: the HTTP transport reports to it.
var _ transport.Meter = (*Worker)(nil)

// AddUsage adds what was spent to the fleet's spend, as it happens, in one
// round trip: a host (or a [Worker.Transport]) that sees each call's usage
// reports it here during an iteration, and leaves
// [loopbreaker.Iteration.Usage] zero. One worker's spend counts for the
// whole fleet: the spend caps ([loopbreaker.Config.Spend.MaxTokens],
// [loopbreaker.Config.Spend.MaxCostUSD] and their hourly kin) refuse every
// worker's next Check once the fleet reaches them. Negative counts and a
// cost that is negative, NaN or infinite count as zero. While Redis is out
// of reach, the local breaker counts it, and the fleet gets it, once, when
// the worker rejoins.
//
// A Usage that names its Model and gives no CostUSD is priced with
// [loopbreaker.Config.Spend.Prices] of the worker's Breaker, as a breaker prices
// it; a model with no price costs nothing, and while a dollar cap is set
// the worker's decisions warn of it ([loopbreaker.ReasonUnpricedModel]).
func (w *Worker) AddUsage(u loopbreaker.Usage) {
	if u = w.priced(u); u == (loopbreaker.Usage{}) {
		return
	}
	now := w.cfg.Breaker.Now()
	w.localBreaker().AddUsage(u) // the worker's own spend, which an outage starts from
	w.meter(now, 0, u, nil)
}

// priced returns u, clean, with its cost from the worker's prices when it
// names a Model and gives no CostUSD. A model with no price that spent
// tokens is remembered for the warning.
func (w *Worker) priced(u loopbreaker.Usage) loopbreaker.Usage {
	u = cleanUsage(u)
	if u.Model == "" || u.CostUSD != 0 {
		return u
	}
	if cost, ok := w.prices.Cost(u); ok {
		u.CostUSD = cost
	} else if u.InputTokens > 0 || u.OutputTokens > 0 {
		w.mu.Lock()
		if len(w.unpriced) < 8 && !slices.Contains(w.unpriced, u.Model) {
			w.unpriced = append(w.unpriced, errtext.FirstLine(u.Model))
		}
		w.mu.Unlock()
	}
	return u
}

// unpricedWarning returns the warning that models without a price spent
// tokens while the fleet has a dollar cap; false when there is none.
func (w *Worker) unpricedWarning() (loopbreaker.Reason, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.unpriced) == 0 || w.shared.maxCost <= 0 && w.shared.maxCostPerHour <= 0 {
		return loopbreaker.Reason{}, false
	}
	return loopbreaker.UnpricedModels(w.unpriced), true
}

// LiftLimit lifts, for the whole fleet, the wait or throttle that source
// put in force ([loopbreaker.Limit.Source]): a [Worker.Transport] calls it
// when a request to that host, sent after the transport reported the
// limit, succeeded (the SDK's retry got its answer). A limit of another
// source or of none, and a stop, are kept. While Redis is out of reach,
// only the local breaker is told.
func (w *Worker) LiftLimit(source string) {
	if source == "" {
		return
	}
	now := w.cfg.Breaker.Now()
	w.localBreaker().LiftLimit(source)
	if !w.rejoin(now) {
		return
	}
	r, err := w.call("lift", source)
	if err != nil {
		w.lose(err, now)
		return
	}
	w.observe(r, now)
}

// ObserveLimit puts a provider limit in force for the whole fleet, as it
// happens, in one round trip: every worker's Check refuses from then on,
// with the same reason and RetryAfter, until it lifts at [loopbreaker.Limit.Reset]
// (a time by the provider's clock, which the fleet keeps as it is), or,
// when no reset is known, after [loopbreaker.Config.Limits.Wait] or
// [loopbreaker.Config.Limits.ThrottleWait]; a [loopbreaker.LimitStop]
// until Resume, Skip or Reset on any worker. A limit that the one in force
// outlasts changes nothing; a stop outlasts every wait; a reset already
// past changes nothing. A half-open probe this worker holds is given back.
// While Redis is out of reach, the local breaker alone is told, and the
// fleet when the worker rejoins.
func (w *Worker) ObserveLimit(l loopbreaker.Limit) {
	w.meter(w.cfg.Breaker.Now(), 0, loopbreaker.Usage{}, &l)
}

// CountCall counts one call, made now, into the fleet's call budget, as it
// happens: a request a [Worker.Transport] sent. The first such call of an
// iteration is the one Check reserved, and costs no round trip; each
// further one is a round trip. From the first CountCall on, as with
// Transport, Record counts only the calls [loopbreaker.Iteration.Calls]
// states (beyond the reserved one, which an iteration always counts).
func (w *Worker) CountCall() {
	now := w.cfg.Breaker.Now()
	w.localBreaker().CountCall() // judged by the local breaker during an outage
	w.mu.Lock()
	w.byTransport = true
	if w.reservedUsed < w.reserved {
		w.reservedUsed++
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	w.meter(now, 1, loopbreaker.Usage{}, nil)
}

// Now returns the time by the worker's clock ([loopbreaker.Config.Now] of
// its Breaker): what the HTTP transport (package
// github.com/loopbreaker/loopbreaker/transport) dates a reset given as a
// delay with. The fleet's own state runs on Redis's clock.
func (w *Worker) Now() time.Time { return w.cfg.Breaker.Now() }

// meter tells the fleet, in one round trip, calls, spend and a limit (nil
// for none) as they happen. During an outage they are kept for the rejoin,
// and the limit goes to the local breaker, which decides alone. A report
// whose answer was lost is never sent again (it counts once at most).
func (w *Worker) meter(now time.Time, calls int, u loopbreaker.Usage, l *loopbreaker.Limit) {
	if w.rejoin(now) {
		token := ""
		if l != nil {
			w.mu.Lock()
			token, w.token = w.token, "" // the probe is given back with the limit
			w.mu.Unlock()
		}
		args := []any{calls, u.InputTokens, u.OutputTokens, formatCost(u.CostUSD)}
		args = append(args, w.limitArgs(l, now)...)
		source := ""
		if l != nil {
			source = l.Source
		}
		r, err := w.call("meter", append(args, token, source)...)
		if err == nil {
			w.observe(r, now)
			return
		}
		w.lose(err, now)
	} else {
		w.mu.Lock()
		if !w.down {
			// It rejoined meanwhile: tell the fleet.
			w.mu.Unlock()
			w.meter(now, calls, u, l)
			return
		}
		w.outageCalls += calls
		w.outageUsage = addUsage(w.outageUsage, u)
		w.mu.Unlock()
	}
	if l != nil {
		w.localBreaker().ObserveLimit(*l)
	}
}

// defaultClassify is [loopbreaker.DefaultClassify] with the host's limit
// patterns, as a breaker's own default classifier is.
func defaultClassify(patterns []loopbreaker.LimitPattern) func(error) loopbreaker.Outcome {
	if len(patterns) == 0 {
		return loopbreaker.DefaultClassify
	}
	return func(err error) loopbreaker.Outcome {
		if errors.Is(err, context.Canceled) {
			return loopbreaker.Neutral
		}
		if l, ok := loopbreaker.ProviderLimitOf(err, time.Now(), patterns...); ok {
			if l.Kind == loopbreaker.LimitStop {
				return loopbreaker.ProviderStop
			}
			return loopbreaker.ProviderLimit
		}
		return loopbreaker.Failure
	}
}

// limitFor returns the limit an iteration whose error err the classifier
// called outcome (ProviderLimit or ProviderStop) hit at now: what
// ProviderLimitOf reads in err, of the kind the classifier said.
func (w *Worker) limitFor(err error, outcome loopbreaker.Outcome, now time.Time) loopbreaker.Limit {
	l, ok := loopbreaker.ProviderLimitOf(err, now, w.patterns...)
	if !ok {
		l = loopbreaker.Limit{Why: errtext.FirstLine(err.Error())}
	}
	switch {
	case outcome == loopbreaker.ProviderStop:
		l = loopbreaker.Limit{Kind: loopbreaker.LimitStop, Why: l.Why}
	case l.Kind == loopbreaker.LimitStop:
		l = loopbreaker.Limit{Kind: loopbreaker.LimitWait, Why: l.Why}
	}
	return l
}

// limitArgs returns the script's arguments for the limit l seen at now
// (nil for none): its kind ("s" a stop, "w" a wait), its reset in ms of
// the wall clock (0 when the provider gave none), how long it lasts then
// (ms), and its reason as JSON.
func (w *Worker) limitArgs(l *loopbreaker.Limit, now time.Time) []any {
	if l == nil {
		return []any{"", 0, 0, ""}
	}
	if l.Kind == loopbreaker.LimitStop {
		return []any{"s", 0, 0, reasonJSON(loopbreaker.Reason{Kind: loopbreaker.ReasonProviderStopped, Message: l.Why})}
	}
	msg, reset, wait := l.Why, int64(0), time.Duration(0)
	if l.Reset.IsZero() {
		wait = w.shared.limitWait
		if l.Kind == loopbreaker.LimitThrottle {
			wait = w.shared.throttleWait
		}
		note := "no reset time given: waiting " + wait.String()
		msg = note
		if l.Why != "" {
			msg = l.Why + " (" + note + ")"
		}
	} else {
		// The provider's time, as it said it; at most as far off as any
		// provider's window.
		at := l.Reset
		if far := now.Add(limits.MaxAhead); at.After(far) {
			at = far
		}
		reset = at.UnixMilli()
	}
	return []any{"w", reset, wait.Milliseconds(), reasonJSON(loopbreaker.Reason{Kind: loopbreaker.ReasonProviderLimit, Message: msg})}
}

func reasonJSON(r loopbreaker.Reason) string {
	b, err := json.Marshal(r)
	if err != nil {
		return ""
	}
	return string(b)
}

// cleanUsage returns u with what cannot be spent (negative counts, a cost
// that is negative, NaN or infinite) as zero.
func cleanUsage(u loopbreaker.Usage) loopbreaker.Usage {
	u.InputTokens = max(u.InputTokens, 0)
	u.OutputTokens = max(u.OutputTokens, 0)
	u.CacheReadTokens = max(u.CacheReadTokens, 0)
	u.CacheWriteTokens = max(u.CacheWriteTokens, 0)
	if !(u.CostUSD > 0 && u.CostUSD <= math.MaxFloat64) {
		u.CostUSD = 0
	}
	return u
}

// addUsage returns a+b, both clean, saturated.
func addUsage(a, b loopbreaker.Usage) loopbreaker.Usage {
	return loopbreaker.Usage{
		InputTokens:  addSat(a.InputTokens, b.InputTokens),
		OutputTokens: addSat(a.OutputTokens, b.OutputTokens),
		CostUSD:      math.Min(a.CostUSD+b.CostUSD, math.MaxFloat64),
	}
}

func addSat(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// spendOf returns the fleet's spend as the answer r shows it, with the
// caps of this worker's config.
func (w *Worker) spendOf(r reply) loopbreaker.Spend {
	s := w.shared
	spend := loopbreaker.Spend{
		Total:               r.spend,
		LastHour:            r.hour,
		MaxTokens:           s.maxTokens,
		MaxCostUSD:          s.maxCost,
		MaxTokensPerHour:    s.maxTokensPerHour,
		MaxCostUSDPerHour:   s.maxCostPerHour,
		MaxCostUSDPerMinute: s.maxCostPerMinute,
		MaxTokensPerMinute:  s.maxTokensPerMinute,
		Windows:             windowsOf(r.windows),
		MaxWindowShare:      s.maxWindowShare,
		StopAtWindowShare:   s.stopAtWindowShare,
	}
	if s.burning() {
		spend.InBurnWindow, spend.BurnWindow = r.burn, s.burnWindow
	}
	return spend
}

// capFigures returns the figures of the spend cap the script names by
// code ("c", "t", "hc", "ht": over the fleet's life or in the hour, cost or
// tokens) in a reason of kind.
func capFigures(kind loopbreaker.ReasonKind, s loopbreaker.Spend, code string) loopbreaker.Reason {
	r := loopbreaker.Reason{Kind: kind}
	switch code {
	case "c":
		r.CostUSD, r.MaxCostUSD = s.Total.CostUSD, s.MaxCostUSD
	case "t":
		r.Count, r.Threshold = s.Total.Tokens(), s.MaxTokens
	case "hc":
		r.CostUSD, r.MaxCostUSD = s.LastHour.CostUSD, s.MaxCostUSDPerHour
	case "ht":
		r.Count, r.Threshold = s.LastHour.Tokens(), s.MaxTokensPerHour
	default:
		return loopbreaker.Reason{}
	}
	return r
}

// spendCapReason returns the reason of a refusal at the spend cap code.
func spendCapReason(s loopbreaker.Spend, code string) loopbreaker.Reason {
	kind := loopbreaker.ReasonSpendCap
	if strings.HasPrefix(code, "h") {
		kind = loopbreaker.ReasonHourlySpendCap
	}
	return capFigures(kind, s, code)
}

// spendWarning returns the spend warning, 80% of the cap code spent, as
// the core gives it; the zero Reason when there is none.
func spendWarning(s loopbreaker.Spend, code string) loopbreaker.Reason {
	text := s.Warning()
	if code == "" || text == "" {
		return loopbreaker.Reason{}
	}
	r := capFigures(loopbreaker.ReasonSpendWarning, s, code)
	r.Message = text
	return r
}
