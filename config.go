package loopbreaker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/loopbreaker/loopbreaker/internal/timer"
)

// Config sets the breaker: the cooldown and the thresholds of its signals,
// grouped by family. A zero field means its default ([DefaultConfig]); a
// negative threshold switches its signal off. [New] rejects a value that
// cannot mean anything with a [*ConfigError] naming the field. Classify,
// Guard and OnStateChange run without the breaker's lock held (OnStateChange
// may call the breaker); CooldownPolicy and Now run under it.
type Config struct {
	// Cooldown is how long an open circuit waits for a probe. Default 30s.
	Cooldown time.Duration
	// CooldownPolicy sets each opening's cooldown; nil: [ConstantCooldown].
	CooldownPolicy CooldownPolicy
	// MaxConsecutiveOpens: openings in a row before the breaker gives up
	// ([ReasonGaveUp]). Default 10; negative: never.
	MaxConsecutiveOpens int
	// RelapseWindow: iterations after a recovery watched for a relapse
	// ([ReasonRelapse]). Default 0: off.
	RelapseWindow int

	Failures FailureRules  // failed iterations and their errors
	Progress ProgressRules // progress, stagnation, trends and completion
	Steps    StepRules     // a tool-calling agent's steps (OpenHands')
	Spend    SpendRules    // the call budget and spend caps
	Limits   LimitRules    // provider limits

	// Classify decides how a non-nil Err counts; nil: [DefaultClassify].
	Classify func(error) Outcome
	// Guard, when set, holds the circuit open when files were lost.
	Guard Guard
	// OnStateChange, when set, hears each transition, in order.
	OnStateChange func(Transition)
	// Now is the clock; nil: time.Now. It must not call the breaker.
	Now func() time.Time
	// Sleep waits d or until ctx is done, for [CircuitBreaker.Wait]; nil: a
	// real timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// FailureRules are the thresholds of failed iterations and their errors
// ([Config.Failures]), at ralph-starter's and GSD's exit.sh's values. A
// negative threshold switches its signal off.
type FailureRules struct {
	// MaxConsecutive: failures in a row. Default 3.
	MaxConsecutive int
	// MaxSameError: one error over the breaker's life. Default 5.
	MaxSameError int
	// MaxSameErrorInARow: failures in a row with one error. Default 0: off.
	MaxSameErrorInARow int
	// MaxSameTask: failures in a row on one [Iteration.Task]. Default 3.
	MaxSameTask int
	// MaxFingerprints bounds the error history (oldest out). Default 10,000.
	MaxFingerprints int
	// MaxSamples: errors that keep their text. Default 1000, at most 10,000;
	// negative: none.
	MaxSamples int
}

// ProgressRules are the thresholds of what iterations achieve
// ([Config.Progress]); they judge only the iterations that report
// [Iteration.Progress] or label their approach or work. Windows are at most
// 1000 (CircularApproachWindow at least 4), percents below 100; a negative
// threshold switches its signal off.
type ProgressRules struct {
	// MaxNoProgress: iterations in a row without progress. Default 3.
	MaxNoProgress int
	// OutputDeclinePercent: an output this far below the recent mean. Default 70.
	OutputDeclinePercent int
	// MaxPermissionDenials: iterations in a row with denials. Default 3.
	MaxPermissionDenials int
	// ScoreWindow: iterations whose scores add up below zero. Default 0: off.
	ScoreWindow int
	// ScoreWeights score progress; zero: [DefaultScoreWeights].
	ScoreWeights ScoreWeights
	// CircularApproachWindow: labelled iterations going in circles. Default 6.
	CircularApproachWindow int
	// TestFixWindow, TestFixPercent: more than this percent of the window
	// only fixed tests. Defaults 5 and 80.
	TestFixWindow, TestFixPercent int
	// MaxTaskIterations warns above this many iterations on one task. Default 20.
	MaxTaskIterations int
	// TestsDeclining, ErrorsRising warn after this many falls, or rises, in
	// a row. Defaults 3.
	TestsDeclining, ErrorsRising int
	// DoneSignals completes the loop: [Iteration.Done] in a row. Default 2.
	DoneSignals int
	// MaxClaims opens it: claims of done without Done in a row
	// ([Iteration.Claimed]; clawker's safety completion). Default 3.
	MaxClaims int
	// TestOnly completes it: [WorkTestsOnly] iterations in a row. Default 3.
	TestOnly int
}

// StepRules are the thresholds of a tool-calling agent's steps
// ([Config.Steps]): OpenHands' at OpenHands' values, and the loops other
// agent tools stop (a cycle of steps, one tool failing the same way whatever
// its arguments, the same step again and again with others between). They
// judge only the iterations that report an [Iteration.Action]. A negative
// threshold switches its signal off.
type StepRules struct {
	// MaxRepeatedAction: the same action and observation in a row. Default 4.
	MaxRepeatedAction int
	// MaxRepeatedActionError: the same action failing in a row. Default 3.
	MaxRepeatedActionError int
	// MaxMonologue: the same message-only turn in a row. Default 3.
	MaxMonologue int
	// CycleRepeats: a cycle of 2 to 5 steps, each with the same
	// observation, gone round this many times. Default 3.
	CycleRepeats int
	// MaxSameToolError: one tool failing with one error this many times
	// in a row of its calls, whatever their arguments, with other tools'
	// steps between. Default 5.
	MaxSameToolError int
	// MaxRepeats and RepeatWindow: the same action with the same
	// observation this many times in the last RepeatWindow steps. Defaults 4
	// and 30.
	MaxRepeats, RepeatWindow int
	// MaxCondensations: [Iteration.Condensed] in a row. Default 10.
	MaxCondensations int
	// MaxStalled: tool steps in a row that change no file and say nothing
	// to the user ([ReasonStalled]). Only steps that report their
	// [Iteration.Progress] count: a step's words are its Action.Message,
	// and a step without Progress leaves the run as it was. Default 50.
	MaxStalled int
}

// SpendRules cap what the loop may spend ([Config.Spend]); at a cap, Check
// refuses without opening the circuit. Zero or negative: no cap.
type SpendRules struct {
	// MaxCallsPerHour is the call budget of a rolling hour.
	MaxCallsPerHour int
	// MaxTokens and MaxCostUSD cap the loop's life; no waiting ends them.
	MaxTokens  int
	MaxCostUSD float64
	// MaxTokensPerHour and MaxCostUSDPerHour cap a rolling hour.
	MaxTokensPerHour  int
	MaxCostUSDPerHour float64
	// MaxCostUSDPerMinute and MaxTokensPerMinute cap the burn rate: the
	// spend of the last BurnWindow, divided by its minutes. At the cap
	// Check refuses until the rate falls under it.
	MaxCostUSDPerMinute float64
	MaxTokensPerMinute  int
	// BurnWindow is the burn rate's rolling window, whole minutes from 1 to
	// 60. Default 5m (loopguard's).
	BurnWindow time.Duration
	// MaxWindowShare caps the share, in percent (1 to 100), of the
	// provider's 5-hour or weekly usage window that the loop may use, as
	// the provider reports it ([CircuitBreaker.ObserveWindow]). At the cap
	// Check refuses until the window resets.
	MaxWindowShare int
	// StopAtWindowShare: at MaxWindowShare, refuse until a person resumes
	// the loop, instead of until the window resets.
	StopAtWindowShare bool
	// Prices prices a [Usage] with a Model and no cost; nil: [DefaultPrices].
	Prices Prices
}

// LimitRules set how provider limits are waited out ([Config.Limits]); no
// wait is longer than 35 days.
type LimitRules struct {
	// Wait is how long a [LimitWait] without a reset lasts. Default 1h.
	Wait time.Duration
	// ThrottleWait: the same for a [LimitThrottle]. Default 5m.
	ThrottleWait time.Duration
	// Patterns are the host's own limits, tried before the built-in rules.
	Patterns []LimitPattern
}

// DefaultConfig returns the defaults a zero Config field stands for, at the
// values of ralph-starter, ralph-claude-code, GSD's exit.sh, superkit and
// OpenHands. The progress score, the same error in a row, the relapse
// watch, the call budget, the spend caps, the burn rate and the window
// share are off. The thresholds'
// defaults are [Threshold.Default], listed by [Thresholds].
func DefaultConfig() Config {
	c := Config{
		Cooldown: 30 * time.Second,
		Progress: ProgressRules{ScoreWeights: DefaultScoreWeights()},
		Spend:    SpendRules{BurnWindow: 5 * time.Minute},
		Limits: LimitRules{
			Wait:         60 * time.Minute,
			ThrottleWait: 5 * time.Minute,
		},
	}
	for _, t := range allThresholds {
		*t.ptr(&c) = t.Default
	}
	return c
}

// Threshold describes one whole-number field of Config: a signal's
// threshold or window, a spend cap, a bound of what the breaker keeps.
// [Thresholds] lists them; the defaults, [Config.Validate] and looprun's
// flags come from that list.
type Threshold struct {
	// Field is the field's path in Config, as a [ConfigError] names it:
	// "Steps.MaxRepeatedAction".
	Field string
	// Kind is the signal it sets; ReasonNone for a bound.
	Kind ReasonKind
	// About says what it counts, for a flag's help.
	About string
	// Default is what zero stands for. A threshold whose default is 0 is
	// off unless set (or no cap, no budget); zero or negative keeps it off.
	Default int
	// Min and Max bound a value above zero; 0 means no bound.
	Min, Max int

	ptr  func(c *Config) *int
	even bool   // a value above zero must be even
	why  string // why the bounds are what they are, said beside them
	// off says what a negative value does, or for a default of 0 what
	// zero or negative does: "switches the signal off" when empty.
	off string
	// noNegative: a negative value is invalid.
	noNegative bool
}

// Get returns the field's value in c.
func (t Threshold) Get(c *Config) int { return *t.ptr(c) }

// Set sets the field to v in c.
func (t Threshold) Set(c *Config, v int) { *t.ptr(c) = v }

// Thresholds returns every whole-number field of Config, in the order of
// the signals (the order of [ReasonKind]), then the bounds. The slice is
// the caller's.
func Thresholds() []Threshold { return slices.Clone(allThresholds) }

// boundThresholds bound what the breaker keeps.
var boundThresholds = []Threshold{
	{Field: "Failures.MaxFingerprints", About: "errors the error history keeps, the oldest forgotten first", Default: 10000,
		Max: math.MaxInt32, noNegative: true,
		ptr: func(c *Config) *int { return &c.Failures.MaxFingerprints }},
	{Field: "Failures.MaxSamples", About: "errors that keep their text", Default: 1000,
		Max: maxErrorSamples, off: "keeps no error text",
		ptr: func(c *Config) *int { return &c.Failures.MaxSamples }},
}

// allThresholds is Thresholds: the rules table's, then the bounds.
var allThresholds = func() []Threshold {
	var all []Threshold
	for k := range rules {
		for _, t := range rules[k].thresholds {
			t.Kind = ReasonKind(k)
			all = append(all, t)
		}
	}
	return append(all, boundThresholds...)
}()

// problem says why v cannot be t's value, or "" when it can.
func (t Threshold) problem(v int) string {
	switch {
	case v == 0:
		return ""
	case v < 0 && !t.noNegative:
		return ""
	case v > 0 && (t.Min == 0 || v >= t.Min) && (t.Max == 0 || v <= t.Max) && (!t.even || v%2 == 0):
		return ""
	}
	if t.Max == 99 && t.Min <= 1 && t.why != "" {
		return "must be below 100 (" + t.why + "; " + t.meaning() + ")"
	}
	return "must be " + t.bounds() + " (" + t.meaning() + ")"
}

// bounds says which values t takes: "between 2 (a repetition takes two)
// and 1000", "below 100 (...)", "at most 1000".
func (t Threshold) bounds() string {
	lo := t.Min
	if t.noNegative {
		lo = max(lo, 0)
	}
	why := ""
	if t.why != "" {
		why = " (" + t.why + ")"
	}
	even := ""
	if t.even {
		even = "even, "
	}
	switch {
	case t.Max == 99 && lo <= 1:
		return "below 100" + why
	case lo > 1 || t.noNegative:
		if t.Max == 0 {
			return fmt.Sprintf("%sat least %d%s", even, lo, why)
		}
		return fmt.Sprintf("%sbetween %d%s and %d", even, lo, why, t.Max)
	case t.Max > 0:
		return fmt.Sprintf("%sat most %d%s", even, t.Max, why)
	}
	return even + "a whole number" + why
}

// meaning says what zero and a negative value mean.
func (t Threshold) meaning() string {
	off := t.off
	if off == "" {
		off = "switches the signal off"
	}
	switch {
	case t.Default == 0:
		return "zero or negative " + off
	case t.noNegative:
		return fmt.Sprintf("zero means the default, %d", t.Default)
	}
	return fmt.Sprintf("zero means the default, %d; negative %s", t.Default, off)
}

// ErrInvalidConfig matches (errors.Is) every error Validate returns.
var ErrInvalidConfig = errors.New("loopbreaker: invalid config")

// ConfigError describes one invalid Config field.
type ConfigError struct {
	Field  string // the Config field, e.g. "Cooldown"
	Value  any    // the rejected value
	Reason string // why it cannot mean anything
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("loopbreaker: invalid config: %s = %v: %s", e.Field, e.Value, e.Reason)
}

// Is makes every ConfigError match [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// Validate reports every field that cannot mean anything, each as a
// *ConfigError, joined with errors.Join. It returns nil for a usable Config,
// including the zero Config.
func (c Config) Validate() error {
	var errs []error
	bad := func(field string, value any, reason string) {
		errs = append(errs, &ConfigError{Field: field, Value: value, Reason: reason})
	}
	if c.Cooldown < 0 {
		bad("Cooldown", c.Cooldown, "must not be negative (zero means the default, 30s)")
	}
	for _, t := range allThresholds {
		v := t.Get(&c)
		if why := t.problem(v); why != "" {
			bad(t.Field, v, why)
		}
	}
	if c.Limits.Wait < 0 || c.Limits.Wait > maxProviderLimitWait {
		bad("Limits.Wait", c.Limits.Wait, "must be between 0 (the default, 1h) and 840h (35 days)")
	}
	if c.Limits.ThrottleWait < 0 || c.Limits.ThrottleWait > maxProviderLimitWait {
		bad("Limits.ThrottleWait", c.Limits.ThrottleWait, "must be between 0 (the default, 5m) and 840h (35 days)")
	}
	for i, p := range c.Limits.Patterns {
		field := fmt.Sprintf("Limits.Patterns[%d]", i)
		switch {
		case p.Match == nil:
			bad(field+".Match", nil, "must be a regular expression")
		case !p.NotALimit && int(p.Kind) >= limitKindCount:
			bad(field+".Kind", p.Kind, "must be LimitWait, LimitThrottle or LimitStop")
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"Spend.MaxCostUSD", c.Spend.MaxCostUSD}, {"Spend.MaxCostUSDPerHour", c.Spend.MaxCostUSDPerHour},
		{"Spend.MaxCostUSDPerMinute", c.Spend.MaxCostUSDPerMinute},
	} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			bad(f.name, f.v, "must be a number (zero or negative: no cap)")
		}
	}
	if w := c.Spend.BurnWindow; w != 0 && (w < time.Minute || w > time.Hour || w%time.Minute != 0) {
		bad("Spend.BurnWindow", w, "must be whole minutes between 1m and 1h (zero means the default, 5m)")
	}
	for _, model := range slices.Sorted(maps.Keys(c.Spend.Prices)) {
		if !validPrice(c.Spend.Prices[model], 0) {
			bad(fmt.Sprintf("Spend.Prices[%q]", model), c.Spend.Prices[model], "every rate must be a number of dollars, 0 or more, and a long-context tier must have a threshold above 0")
		}
	}
	return errors.Join(errs...)
}

// validPrice reports whether p's rates are numbers, none negative, and its
// long-context tier, nested depth deep, is one.
func validPrice(p Price, depth int) bool {
	for _, rate := range []float64{p.Input, p.Output, p.CacheRead, p.CacheWrite} {
		if !(rate >= 0 && rate <= math.MaxFloat64) {
			return false
		}
	}
	switch {
	case p.Long == nil:
		return p.LongAbove >= 0
	case depth > 0 || p.LongAbove <= 0:
		return false // a tier has no tier of its own
	}
	return validPrice(*p.Long, depth+1)
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	setDefault(&c.Cooldown, d.Cooldown)
	if c.CooldownPolicy == nil {
		c.CooldownPolicy = ConstantCooldown
	}
	for _, t := range allThresholds {
		setDefault(t.ptr(&c), t.Default)
	}
	setDefault(&c.Progress.ScoreWeights, d.Progress.ScoreWeights)
	setDefault(&c.Spend.BurnWindow, d.Spend.BurnWindow)
	setDefault(&c.Limits.Wait, d.Limits.Wait)
	setDefault(&c.Limits.ThrottleWait, d.Limits.ThrottleWait)
	if c.Spend.Prices == nil {
		c.Spend.Prices = DefaultPrices()
	}
	if c.Classify == nil {
		c.Classify = DefaultClassify
		if patterns := internalPatterns(c.Limits.Patterns); patterns != nil {
			c.Classify = func(err error) Outcome { return classify(err, patterns) }
		}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Sleep == nil {
		c.Sleep = timer.Sleep
	}
	return c
}

func setDefault[T comparable](field *T, def T) {
	var zero T
	if *field == zero {
		*field = def
	}
}
