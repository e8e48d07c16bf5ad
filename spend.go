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

	// InBurnWindow is the spend of the last BurnWindow, zero without a
	// burn-rate cap; the burn rate is it divided by the window's minutes
	// (CostPerMinute, TokensPerMinute). The caps of the burn rate, in
	// dollars and tokens a minute, as [Config] sets them.
	InBurnWindow        Usage
	BurnWindow          time.Duration
	MaxCostUSDPerMinute float64
	MaxTokensPerMinute  int

	// Windows are the provider's usage windows in force as they were last
	// reported ([CircuitBreaker.ObserveWindow]), oldest report first;
	// MaxWindowShare and StopAtWindowShare as [Config] sets them.
	Windows           []Window
	MaxWindowShare    int
	StopAtWindowShare bool
}

// CostPerMinute returns the burn rate in dollars a minute: the spend of
// the burn window divided by its minutes; 0 without a burn-rate cap.
func (s Spend) CostPerMinute() float64 {
	if s.BurnWindow <= 0 {
		return 0
	}
	return s.InBurnWindow.CostUSD / s.BurnWindow.Minutes()
}

// TokensPerMinute returns the burn rate in tokens a minute, as
// CostPerMinute does in dollars.
func (s Spend) TokensPerMinute() float64 {
	if s.BurnWindow <= 0 {
		return 0
	}
	return float64(s.InBurnWindow.Tokens()) / s.BurnWindow.Minutes()
}

// BurnRateRefusal returns the [ReasonBurnRate] refusal of the burn-rate
// cap that s reaches ([SpendRules.MaxCostUSDPerMinute],
// MaxTokensPerMinute), with the rate, the cap and the burn window's
// minutes: the dollars' cap when both are reached. It returns false when
// neither is, and without a burn-rate cap or a BurnWindow. A breaker
// gives it itself in [Decision.Reason]; a fleet worker that keeps the
// spend elsewhere calls it on the fleet's Spend.
func (s Spend) BurnRateRefusal() (Reason, bool) { return s.burnRate(ReasonBurnRate) }

// BurnRateWarning returns the [ReasonBurnRateWarning] of the burn rate,
// once it is 80% of its cap or more: of the dollars a minute or the
// tokens a minute, the rate nearer its cap (the dollars' on a tie), with
// the rate, the cap and the burn window's minutes. It still warns at the
// cap and over it. It returns false below 80%, and without a burn-rate
// cap or a BurnWindow. A breaker gives it itself in [Decision.Warnings].
func (s Spend) BurnRateWarning() (Reason, bool) { return s.burnRate(ReasonBurnRateWarning) }

// burnRate returns the first burn-rate cap reached (dollars before
// tokens) as a reason of kind, or for a warning (kind
// ReasonBurnRateWarning) the rate most spent from spendWarningPercent of
// its cap on; false when none is.
func (s Spend) burnRate(kind ReasonKind) (Reason, bool) {
	share := 100
	if kind == ReasonBurnRateWarning {
		share = spendWarningPercent
	}
	minutes := int(s.BurnWindow / time.Minute)
	cost, tokens := s.CostPerMinute(), s.TokensPerMinute()
	costShare, tokenShare := -1.0, -1.0
	if s.MaxCostUSDPerMinute > 0 {
		costShare = cost * 100 / s.MaxCostUSDPerMinute
	}
	if s.MaxTokensPerMinute > 0 {
		tokenShare = tokens * 100 / float64(s.MaxTokensPerMinute)
	}
	switch {
	case costShare >= float64(share) && (kind == ReasonBurnRate || costShare >= tokenShare):
		return Reason{Kind: kind, CostUSD: cost, MaxCostUSD: s.MaxCostUSDPerMinute, Window: minutes}, true
	case tokenShare >= float64(share):
		return Reason{Kind: kind, Count: int(tokens), Threshold: s.MaxTokensPerMinute, Window: minutes}, true
	}
	return Reason{}, false
}

// burnRateText is the text of a burn-rate reason: the rate, the window and
// the cap.
func burnRateText(r Reason) string {
	over := "over the last minute"
	if r.Window != 1 {
		over = fmt.Sprintf("over the last %d minutes", r.Window)
	}
	if r.MaxCostUSD > 0 {
		return fmt.Sprintf("%s a minute %s (cap: %s a minute)", formatUSD(r.CostUSD), over, formatUSD(r.MaxCostUSD))
	}
	return fmt.Sprintf("%d tokens a minute %s (cap: %d)", r.Count, over, r.Threshold)
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
// windows of the caps set, the hour and the burn window.
type spendState struct {
	total Usage
	hour  rollingSpend
	burn  rollingSpend
}

// add records u, clean, spent at now.
func (s *spendState) add(u Usage, now time.Time) {
	s.total = s.total.plus(u)
	s.hour.add(u, now)
	s.burn.add(u, now)
}

// rollingSpend is the spend of a rolling window, entry by entry.
type rollingSpend struct {
	window  time.Duration // zero: nothing is added (what a snapshot held is kept)
	entries []spendEntry  // oldest first, from head on
	head    int
	sum     Usage // the spend in entries[head:]
}

// add adds u, spent at now, to the window.
func (r *rollingSpend) add(u Usage, now time.Time) {
	if r.window <= 0 {
		return
	}
	r.prune(now)
	r.sum = r.sum.plus(u)
	if last := len(r.entries) - 1; last >= r.head && (len(r.entries)-r.head >= maxSpendEntries || !now.After(r.entries[last].at)) {
		r.entries[last].usage = r.entries[last].usage.plus(u)
		if now.After(r.entries[last].at) {
			r.entries[last].at = now
		}
		return
	}
	r.entries = append(r.entries, spendEntry{at: now, usage: u})
}

// prune forgets the spend that left the window by now. Spend recorded
// later than now was recorded before the clock was set back: it counts as
// spent now (see callBudget.prune). The sum is added up again from what is
// left, so that the cost, a float, does not drift. A window of zero keeps
// everything.
func (r *rollingSpend) prune(now time.Time) {
	if r.window <= 0 {
		return
	}
	for i := len(r.entries) - 1; i >= r.head && r.entries[i].at.After(now); i-- {
		r.entries[i].at = now
	}
	cutoff := now.Add(-r.window)
	dropped := false
	for r.head < len(r.entries) && !r.entries[r.head].at.After(cutoff) {
		r.head++
		dropped = true
	}
	if dropped {
		r.sum = Usage{}
		for _, e := range r.entries[r.head:] {
			r.sum = r.sum.plus(e.usage)
		}
	}
	if r.head == len(r.entries) {
		r.entries, r.head = r.entries[:0], 0
	} else if r.head > len(r.entries)/2 {
		n := copy(r.entries, r.entries[r.head:])
		r.entries, r.head = r.entries[:n], 0
	}
}

// restore fills the window with entries, oldest first, none later than
// now.
func (r *rollingSpend) restore(entries []spendEntryData, now time.Time) {
	*r = rollingSpend{window: r.window}
	for _, e := range entries[max(len(entries)-maxSpendEntries, 0):] {
		// No spend lies in the future of this clock (see prune).
		r.entries = append(r.entries, spendEntry{at: minTime(e.At, now), usage: e.usage()})
		r.sum = r.sum.plus(e.usage())
	}
	r.prune(now)
}

// retryAfter returns the time until the window's spend is below each of
// its caps that it has reached; zero if it already is. Called after prune.
func (r *rollingSpend) retryAfter(tokenCap int, costCap float64, now time.Time) time.Duration {
	over := func(u Usage) bool {
		return tokenCap > 0 && u.Tokens() >= tokenCap || costCap > 0 && u.CostUSD >= costCap
	}
	if !over(r.sum) {
		return 0
	}
	var left Usage
	es := r.entries[r.head:]
	for i := len(es) - 1; i >= 0; i-- {
		// What is left once es[i] has gone: the entries after it.
		if over(left.plus(es[i].usage)) {
			return es[i].at.Add(r.window).Sub(now)
		}
		left = left.plus(es[i].usage)
	}
	return 0
}

// newSpendState returns the spend state of c's caps: the hour's entries
// kept with an hourly cap, the burn window's with a burn-rate cap.
func newSpendState(c *Config) spendState {
	var s spendState
	if c.Spend.MaxTokensPerHour > 0 || c.Spend.MaxCostUSDPerHour > 0 {
		s.hour.window = spendWindow
	}
	if c.Spend.MaxTokensPerMinute > 0 || c.Spend.MaxCostUSDPerMinute > 0 {
		s.burn.window = c.Spend.BurnWindow
	}
	return s
}

// spendCaps reports whether c caps the spend, or the window share.
func spendCaps(c *Config) bool {
	s := &c.Spend
	return s.MaxTokens > 0 || s.MaxCostUSD > 0 || s.MaxTokensPerHour > 0 || s.MaxCostUSDPerHour > 0 ||
		s.MaxTokensPerMinute > 0 || s.MaxCostUSDPerMinute > 0 || s.MaxWindowShare > 0
}

// spendAt returns the spend as of now. Called with b.mu held.
func (b *CircuitBreaker) spendAt(now time.Time) Spend {
	c := &b.cfg.Spend
	s := Spend{
		Total:               b.spend.total,
		MaxTokens:           max(c.MaxTokens, 0),
		MaxCostUSD:          math.Max(c.MaxCostUSD, 0),
		MaxTokensPerHour:    max(c.MaxTokensPerHour, 0),
		MaxCostUSDPerHour:   math.Max(c.MaxCostUSDPerHour, 0),
		MaxCostUSDPerMinute: math.Max(c.MaxCostUSDPerMinute, 0),
		MaxTokensPerMinute:  max(c.MaxTokensPerMinute, 0),
		MaxWindowShare:      max(c.MaxWindowShare, 0),
		StopAtWindowShare:   c.StopAtWindowShare,
		Windows:             windowsOf(b.windowsAt(now)),
	}
	if b.spend.hour.window > 0 {
		b.spend.hour.prune(now)
		s.LastHour = b.spend.hour.sum
	}
	if b.spend.burn.window > 0 {
		b.spend.burn.prune(now)
		s.InBurnWindow, s.BurnWindow = b.spend.burn.sum, b.spend.burn.window
	}
	return s
}

// spendRefusal returns the refusal of the spend caps and the window share
// that s, the spend at now, reaches, if any: the first of the lifetime
// caps, the window share that stops, the window share that waits, the
// hourly caps and the burn rate; how long it lasts; and whether no waiting
// ends it (final). Called with b.mu held.
func (b *CircuitBreaker) spendRefusal(s Spend, now time.Time) (r Reason, wait time.Duration, final, ok bool) {
	r, spent := s.reached()
	if spent && r.Kind == ReasonSpendCap {
		return r, 0, true, true
	}
	if wr, wait, final, ok := b.windowRefusal(now); ok {
		return wr, wait, final, ok
	}
	if spent {
		return r, b.spend.hour.retryAfter(s.MaxTokensPerHour, s.MaxCostUSDPerHour, now), false, true
	}
	if r, ok := s.BurnRateRefusal(); ok {
		minutes := s.BurnWindow.Minutes()
		tokenCap := 0
		if s.MaxTokensPerMinute > 0 {
			tokenCap = int(math.Ceil(float64(s.MaxTokensPerMinute) * minutes))
		}
		// At least a second: the rate and the sum it is made of are
		// floats, which may round apart at the cap.
		wait := b.spend.burn.retryAfter(tokenCap, s.MaxCostUSDPerMinute*minutes, now)
		return r, max(wait, time.Second), false, true
	}
	return Reason{}, 0, false, false
}

// spendWarnings returns the warnings of the spend: the spend caps', the
// window share's and the burn rate's, in that order; nil when none is in
// force.
func spendWarnings(s Spend) []Reason {
	var ws []Reason
	if r := s.warningReason(); r.Kind != ReasonNone {
		ws = append(ws, r)
	}
	if r, ok := s.WindowShareWarning(); ok {
		ws = append(ws, r)
	}
	if r, ok := s.BurnRateWarning(); ok {
		ws = append(ws, r)
	}
	return ws
}

// addUsage adds u, spent by now and priced (priced), to the spend.
// Called with b.mu held.
func (b *CircuitBreaker) addUsage(u Usage, unpriced string, now time.Time) {
	if unpriced != "" {
		b.noteUnpriced(unpriced)
	}
	if u = u.clean(); !u.zero() {
		u.Model = ""
		b.spend.add(u, now)
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
