package loopbreaker

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker/internal/errtext"
)

// spendWindow is the rolling window of the hourly spend caps
// ([SpendRules.MaxTokensPerHour], [SpendRules.MaxCostUSDPerHour]).
const spendWindow = time.Hour

// spendWarningPercent is the share of a spend cap at which
// [Decision.Warnings] holds a warning, as it does for the call budget.
const spendWarningPercent = 80

// maxSpendEntries bounds the memory of the hourly spend window: beyond it,
// spend recorded close together shares an entry (conservatively: it then
// leaves the window with the newest of it).
const maxSpendEntries = 4096

// Usage is what an iteration, or a call within one, spent. Negative counts
// and a negative, NaN or infinite cost count as zero, and sums saturate. A
// Usage with a Model and no CostUSD is priced with [SpendRules.Prices] when
// it is recorded.
type Usage struct {
	// InputTokens counts the tokens read, cached ones included;
	// OutputTokens those written, thinking included.
	InputTokens  int
	OutputTokens int
	// CostUSD is the cost in US dollars; zero: priced from Model.
	CostUSD float64
	// Model is the model that answered, for pricing; empty: not priced.
	Model string
	// CacheReadTokens and CacheWriteTokens are the part of InputTokens read
	// from and written to the prompt cache.
	CacheReadTokens  int
	CacheWriteTokens int
}

// Tokens returns InputTokens plus OutputTokens.
func (u Usage) Tokens() int { return addSat(max(u.InputTokens, 0), max(u.OutputTokens, 0)) }

// clean returns u with what cannot be spent (negative counts, a cost
// that is negative, NaN or infinite) as zero.
func (u Usage) clean() Usage {
	u.InputTokens = max(u.InputTokens, 0)
	u.OutputTokens = max(u.OutputTokens, 0)
	u.CacheReadTokens = max(u.CacheReadTokens, 0)
	u.CacheWriteTokens = max(u.CacheWriteTokens, 0)
	if !(u.CostUSD > 0 && u.CostUSD <= math.MaxFloat64) {
		u.CostUSD = 0
	}
	return u
}

// zero reports whether u spent nothing.
func (u Usage) zero() bool {
	return u.InputTokens == 0 && u.OutputTokens == 0 && u.CostUSD == 0 && u.CacheReadTokens == 0 && u.CacheWriteTokens == 0
}

// plus returns u+v, both clean, saturated, naming no model.
func (u Usage) plus(v Usage) Usage {
	return Usage{
		InputTokens:      addSat(u.InputTokens, v.InputTokens),
		OutputTokens:     addSat(u.OutputTokens, v.OutputTokens),
		CostUSD:          addCost(u.CostUSD, v.CostUSD),
		CacheReadTokens:  addSat(u.CacheReadTokens, v.CacheReadTokens),
		CacheWriteTokens: addSat(u.CacheWriteTokens, v.CacheWriteTokens),
	}
}

// addCost returns a+b, both finite and not negative, at most the largest
// float64.
func addCost(a, b float64) float64 {
	return math.Min(a+b, math.MaxFloat64)
}

// Spend is what the loop spent, and its caps ([Stats.Spend]). Neither Reset
// nor Resume gives the spend back.
type Spend struct {
	// Total is the spend of the loop's life, across restarts; LastHour that
	// of the rolling hour, zero without an hourly cap.
	Total    Usage
	LastHour Usage
	// The caps, as [Config] sets them; zero: no cap.
	MaxTokens         int
	MaxCostUSD        float64
	MaxTokensPerHour  int
	MaxCostUSDPerHour float64
}

// TokensLeft returns the tokens the tightest token cap leaves; -1 without one.
func (s Spend) TokensLeft() int {
	left := -1
	for _, c := range s.caps() {
		if c.tokens && (left < 0 || c.left() < float64(left)) {
			left = int(c.left())
		}
	}
	return left
}

// CostLeftUSD returns the dollars the tightest cost cap leaves; -1 without one.
func (s Spend) CostLeftUSD() float64 {
	left := -1.0
	for _, c := range s.caps() {
		if !c.tokens && (left < 0 || c.left() < left) {
			left = c.left()
		}
	}
	return left
}

// Warning returns the warning text from 80% of the most spent cap; "" below.
func (s Spend) Warning() string {
	most := s.mostSpent()
	if most == nil {
		return ""
	}
	return fmt.Sprintf("Spend %d%% of the cap: %s of %s %s, %s left",
		int(math.Min(most.share(), 100)), most.amount(most.spent), most.amount(most.limit), most.where(), most.amount(most.left()))
}

// mostSpent returns the cap most spent, once spendWarningPercent of it
// is; nil below that or without caps.
func (s Spend) mostSpent() *spendCap {
	var most *spendCap
	caps := s.caps()
	for i := range caps {
		if most == nil || caps[i].share() > most.share() {
			most = &caps[i]
		}
	}
	if most == nil || most.share() < spendWarningPercent {
		return nil
	}
	return most
}

// warningReason returns the spend warning as a [ReasonSpendWarning], with
// the figures of the cap most spent and the warning's text; the zero
// Reason below the warning's share.
func (s Spend) warningReason() Reason {
	most := s.mostSpent()
	if most == nil {
		return Reason{}
	}
	r := Reason{Kind: ReasonSpendWarning, Message: s.Warning()}
	if most.tokens {
		r.Count, r.Threshold = int(most.spent), int(most.limit)
	} else {
		r.CostUSD, r.MaxCostUSD = most.spent, most.limit
	}
	return r
}

// reached returns the reason of the first cap spent: over the loop's life
// before the hour, cost before tokens.
func (s Spend) reached() (Reason, bool) {
	for _, c := range s.caps() {
		if c.spent < c.limit {
			continue
		}
		r := Reason{Kind: ReasonSpendCap}
		if c.hourly {
			r.Kind = ReasonHourlySpendCap
		}
		if c.tokens {
			r.Count, r.Threshold = int(c.spent), int(c.limit)
		} else {
			r.CostUSD, r.MaxCostUSD = c.spent, c.limit
		}
		return r, true
	}
	return Reason{}, false
}

// spendCap is one cap set, and what was spent against it.
type spendCap struct {
	tokens, hourly bool
	spent, limit   float64
}

// caps returns the caps set, in the order reached reports them.
func (s Spend) caps() []spendCap {
	var cs []spendCap
	if s.MaxCostUSD > 0 {
		cs = append(cs, spendCap{spent: s.Total.CostUSD, limit: s.MaxCostUSD})
	}
	if s.MaxTokens > 0 {
		cs = append(cs, spendCap{tokens: true, spent: float64(s.Total.Tokens()), limit: float64(s.MaxTokens)})
	}
	if s.MaxCostUSDPerHour > 0 {
		cs = append(cs, spendCap{hourly: true, spent: s.LastHour.CostUSD, limit: s.MaxCostUSDPerHour})
	}
	if s.MaxTokensPerHour > 0 {
		cs = append(cs, spendCap{tokens: true, hourly: true, spent: float64(s.LastHour.Tokens()), limit: float64(s.MaxTokensPerHour)})
	}
	return cs
}

func (c spendCap) left() float64  { return math.Max(c.limit-c.spent, 0) }
func (c spendCap) share() float64 { return c.spent * 100 / c.limit }

func (c spendCap) where() string {
	if c.hourly {
		return "in the last hour"
	}
	return "over the loop's life"
}

// amount writes n as the cap counts it: tokens, or dollars.
func (c spendCap) amount(n float64) string {
	if c.tokens {
		return strconv.FormatFloat(n, 'f', 0, 64) + " tokens"
	}
	return formatUSD(n)
}

// formatUSD writes a cost in US dollars with cents, and with up to four
// decimals where they say something: "$10.00", "$0.0523".
func formatUSD(x float64) string {
	s := strconv.FormatFloat(x, 'f', 4, 64)
	for strings.HasSuffix(s, "0") && len(s)-strings.IndexByte(s, '.') > 3 {
		s = s[:len(s)-1]
	}
	return "$" + s
}

// spendCapText is the text of a spend-cap reason; where says over which
// time.
func spendCapText(r Reason, where string) string {
	if r.MaxCostUSD > 0 {
		return fmt.Sprintf("Spend cap reached: %s %s (cap: %s)", formatUSD(r.CostUSD), where, formatUSD(r.MaxCostUSD))
	}
	return fmt.Sprintf("Spend cap reached: %d tokens %s (cap: %d)", r.Count, where, r.Threshold)
}

// spendEntry is spend recorded at one time.
type spendEntry struct {
	at    time.Time
	usage Usage
}

// spendState is what the loop spent: over its life, and in the rolling
// hour when an hourly cap is set.
type spendState struct {
	total   Usage
	entries []spendEntry // the rolling hour, oldest first, from head on
	head    int
	hour    Usage // the spend in entries[head:]
}

// add records u, clean, spent at now; window says whether to keep it in
// the rolling hour.
func (s *spendState) add(u Usage, now time.Time, window bool) {
	s.total = s.total.plus(u)
	if !window {
		return
	}
	s.prune(now)
	s.hour = s.hour.plus(u)
	if last := len(s.entries) - 1; last >= s.head && (len(s.entries)-s.head >= maxSpendEntries || !now.After(s.entries[last].at)) {
		s.entries[last].usage = s.entries[last].usage.plus(u)
		if now.After(s.entries[last].at) {
			s.entries[last].at = now
		}
		return
	}
	s.entries = append(s.entries, spendEntry{at: now, usage: u})
}

// prune forgets the spend that left the hour by now. Spend recorded later
// than now was recorded before the clock was set back: it counts as spent
// now (see callBudget.prune). The hour's sum is added up again from what
// is left, so that the cost, a float, does not drift.
func (s *spendState) prune(now time.Time) {
	for i := len(s.entries) - 1; i >= s.head && s.entries[i].at.After(now); i-- {
		s.entries[i].at = now
	}
	cutoff := now.Add(-spendWindow)
	dropped := false
	for s.head < len(s.entries) && !s.entries[s.head].at.After(cutoff) {
		s.head++
		dropped = true
	}
	if dropped {
		s.hour = Usage{}
		for _, e := range s.entries[s.head:] {
			s.hour = s.hour.plus(e.usage)
		}
	}
	if s.head == len(s.entries) {
		s.entries, s.head = s.entries[:0], 0
	} else if s.head > len(s.entries)/2 {
		n := copy(s.entries, s.entries[s.head:])
		s.entries, s.head = s.entries[:n], 0
	}
}

// retryAfter returns the time until the hour's spend is below every
// hourly cap that it has reached; zero if it already is.
func (s *spendState) retryAfter(tokenCap int, costCap float64, now time.Time) time.Duration {
	over := func(u Usage) bool {
		return tokenCap > 0 && u.Tokens() >= tokenCap || costCap > 0 && u.CostUSD >= costCap
	}
	if !over(s.hour) {
		return 0
	}
	var left Usage
	es := s.entries[s.head:]
	for i := len(es) - 1; i >= 0; i-- {
		// What is left once es[i] has gone: the entries after it.
		if over(left.plus(es[i].usage)) {
			return es[i].at.Add(spendWindow).Sub(now)
		}
		left = left.plus(es[i].usage)
	}
	return 0
}

// spendCaps reports whether c caps the spend, and whether it caps it by
// the hour.
func spendCaps(c *Config) (any, hourly bool) {
	hourly = c.Spend.MaxTokensPerHour > 0 || c.Spend.MaxCostUSDPerHour > 0
	return hourly || c.Spend.MaxTokens > 0 || c.Spend.MaxCostUSD > 0, hourly
}

// spendAt returns the spend as of now. Called with b.mu held.
func (b *CircuitBreaker) spendAt(now time.Time) Spend {
	s := Spend{
		Total:             b.spend.total,
		MaxTokens:         max(b.cfg.Spend.MaxTokens, 0),
		MaxCostUSD:        math.Max(b.cfg.Spend.MaxCostUSD, 0),
		MaxTokensPerHour:  max(b.cfg.Spend.MaxTokensPerHour, 0),
		MaxCostUSDPerHour: math.Max(b.cfg.Spend.MaxCostUSDPerHour, 0),
	}
	if b.spendHourly {
		b.spend.prune(now)
		s.LastHour = b.spend.hour
	}
	return s
}

// addUsage adds u, spent by now and priced (priced), to the spend.
// Called with b.mu held.
func (b *CircuitBreaker) addUsage(u Usage, unpriced string, now time.Time) {
	if unpriced != "" {
		b.noteUnpriced(unpriced)
	}
	if u = u.clean(); !u.zero() {
		u.Model = ""
		b.spend.add(u, now, b.spendHourly)
	}
}

// priced returns u with its cost, when it names a Model and gives no
// CostUSD, from [SpendRules.Prices]; and the model's name when it has no
// price there (and u spent tokens), else "". It takes no lock: the table
// is the breaker's own, never changed.
func (b *CircuitBreaker) priced(u Usage) (Usage, string) {
	if u.Model == "" || u.CostUSD != 0 {
		return u, ""
	}
	cost, ok := b.cfg.Spend.Prices.Cost(u)
	if !ok {
		if u.InputTokens > 0 || u.OutputTokens > 0 {
			return u, u.Model
		}
		return u, ""
	}
	u.CostUSD = cost
	return u, ""
}

// maxUnpriced bounds the models without a price the warning names.
const maxUnpriced = 8

// noteUnpriced remembers that model, which spent tokens, has no price.
// Called with b.mu held.
func (b *CircuitBreaker) noteUnpriced(model string) {
	model = errtext.FirstLine(model)
	if len(b.unpriced) < maxUnpriced && !slices.Contains(b.unpriced, model) {
		b.unpriced = append(b.unpriced, model)
	}
}

// unpricedWarning returns the warning that models without a price spent
// tokens while a dollar cap is set; false when there is none to give.
// Called with b.mu held.
func (b *CircuitBreaker) unpricedWarning() (Reason, bool) {
	if len(b.unpriced) == 0 || b.cfg.Spend.MaxCostUSD <= 0 && b.cfg.Spend.MaxCostUSDPerHour <= 0 {
		return Reason{}, false
	}
	return UnpricedModels(b.unpriced), true
}

// UnpricedModels returns the [ReasonUnpricedModel] warning for models that
// spent tokens without a price, for a fleet worker that prices its own
// reports; a breaker gives it itself.
func UnpricedModels(models []string) Reason {
	quoted := make([]string, len(models))
	for i, m := range models {
		quoted[i] = strconv.Quote(m)
	}
	return Reason{Kind: ReasonUnpricedModel, Count: len(models), Message: strings.Join(quoted, ", ")}
}

// AddUsage adds u to the loop's spend as it happens, during an iteration
// (then leave [Iteration.Usage] zero); it is priced as a recorded Usage is.
// A spend cap reached refuses the next Check.
func (b *CircuitBreaker) AddUsage(u Usage) {
	u, unpriced := b.priced(u)
	b.mu.Lock()
	defer b.unlock()
	now := b.cfg.Now()
	defer b.wake()
	b.addUsage(u, unpriced, now)
}
