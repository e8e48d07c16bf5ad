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

// Config sets the breaker: the circuit's cooldown, and the thresholds of
// its signals, grouped by family. The zero value of every field means its
// default ([DefaultConfig]), so Config{} works; a negative threshold
// switches its signal off. [New] rejects a value that cannot mean anything
// with a *ConfigError naming the field.
type Config struct {
	// Cooldown is how long the circuit stays open before it lets one probe
	// iteration through. Default 30s.
	Cooldown time.Duration
	// CooldownPolicy sets the cooldown of each opening from Cooldown and
	// the openings since the circuit last closed. Nil: [ConstantCooldown];
	// [DoublingCooldown] is superkit's. It is called with the breaker's
	// lock held, so it must not call the breaker.
	CooldownPolicy CooldownPolicy
	// MaxConsecutiveOpens is how many times in a row the circuit may open,
	// with no close between, before the breaker gives up: the opening that
	// reaches it holds the circuit open with reason [ReasonGaveUp] (the
	// last opening's kind in Reason.Last), Check refuses with no
	// RetryAfter, and Wait returns at once with [ErrGaveUp], until a
	// person calls Resume, Skip or Reset. A failed probe, a relapse and a
	// lost probe count as openings; provider limits, spend caps and the
	// call budget open nothing. Default 10, what looprun's -max-opens
	// always stopped at: nine probes give a cause that clears by itself
	// room to clear, four and a half minutes with the default cooldown, a
	// day with the "autonomous" preset's. 1 gives up at the first opening;
	// negative: never give up.
	MaxConsecutiveOpens int
	// RelapseWindow watches this many iterations after a recovery (a probe
	// succeeded after the circuit had opened), as superkit does: when the
	// signal that opened the circuit shows again among them, it opens
	// again at once ([ReasonRelapse]) and the open streak goes on, so a
	// doubling cooldown doubles. Default 0: off, as in ralph-starter; the
	// "autonomous" preset sets 3; at most 1000.
	RelapseWindow int

	// Failures are the thresholds of failed iterations and their errors.
	Failures FailureRules
	// Progress are the thresholds of what iterations achieve: progress,
	// stagnation, trends and completion.
	Progress ProgressRules
	// Steps are the thresholds of a tool-calling agent's steps
	// ([Iteration.Action]), OpenHands' stuck detector's.
	Steps StepRules
	// Spend caps the calls, tokens and dollars the loop may spend.
	Spend SpendRules
	// Limits say how long a provider limit without a reset time lasts,
	// and how to recognise a host's own.
	Limits LimitRules

	// Classify decides how an iteration's non-nil error counts: Failure,
	// Success, Neutral, or a provider limit (ProviderLimit, ProviderStop).
	// Nil: [DefaultClassify], with Limits.Patterns. For a provider limit the
	// breaker reads the reset with [ProviderLimitOf]. RecordFailure asks it
	// too. It is called without the breaker's lock held.
	Classify func(error) Outcome
	// Guard, when not nil, keeps the loop's files from its agent (see
	// [Guard]; package protect has one). After each recorded iteration the
	// breaker calls its AfterIteration: when files were lost, the circuit
	// is held open with a reason of kind [ReasonProtectedFiles] whose
	// message is the Guard's summary, until a person calls Resume, Skip or
	// Reset, which call the Guard's Refresh first. The Guard runs without
	// the breaker's lock held.
	Guard Guard
	// OnStateChange, when not nil, is called after every transition
	// ([Stats.History], and Reset closing an open circuit), in order,
	// never with the breaker's lock held, so it may call the breaker. By
	// the time it runs the breaker may have moved on: the Transition says
	// what changed. A transition the callback makes is delivered after it
	// returns; a panic in it drops the transitions not yet delivered.
	OnStateChange func(Transition)
	// Now is the clock; nil: time.Now. It is called with the breaker's
	// lock held, so it must not call the breaker.
	Now func() time.Time
	// Sleep waits d or until ctx is done, for [CircuitBreaker.Wait], and
	// returns ctx.Err() (nil when d has passed); nil: a real timer. A test
	// on a fake clock sets it with Now, to advance the clock.
	Sleep func(ctx context.Context, d time.Duration) error
}

// FailureRules are the thresholds of failed iterations and their errors
// ([Config.Failures]). A negative threshold switches its signal off.
type FailureRules struct {
	// MaxConsecutive opens the circuit when this many iterations in a row
	// failed. Default 3.
	MaxConsecutive int
	// MaxSameError opens it when one error fingerprint was seen this many
	// times over the breaker's life, whatever came between. Default 5.
	MaxSameError int
	// MaxSameErrorInARow opens it when this many failures in a row had one
	// fingerprint, as ralph-claude-code and OpenHands count it. Default 0:
	// off.
	MaxSameErrorInARow int
	// MaxSameTask opens it when this many failures in a row were on one
	// task ([Iteration.Task]), as GSD's exit.sh stops a loop stuck on one
	// task; it is judged before the other signals, so the reason names the
	// task. Iterations that name no task are left out. Default 3.
	MaxSameTask int
	// MaxFingerprints bounds the error history: when it is full, the least
	// recently seen fingerprint is forgotten. Default 10,000; at most
	// 2,147,483,647.
	MaxFingerprints int
	// MaxSamples is how many fingerprints, the most recently seen, keep
	// the text of their first and latest error ([Stats.Failures]). Default
	// 1000; negative: none, for texts that must not be kept; at most
	// 10,000.
	MaxSamples int
}

// ProgressRules are the thresholds of what iterations achieve
// ([Config.Progress]): they judge the iterations that report
// [Iteration.Progress], or label their approach or work, and stay idle
// otherwise. A negative threshold switches its signal off.
type ProgressRules struct {
	// MaxNoProgress opens the circuit when this many measured iterations
	// in a row made no progress; one before, it is half-open ("one more
	// chance"). Default 3.
	MaxNoProgress int
	// OutputDeclinePercent opens it when an iteration without progress
	// outputs this many percent less than the mean of up to three before.
	// Default 70; below 100.
	OutputDeclinePercent int
	// MaxPermissionDenials opens it when this many measured iterations in
	// a row had permission denials. Default 3.
	MaxPermissionDenials int
	// ScoreWindow opens it when the progress scores (ScoreWeights) of this
	// many measured iterations in a row add up below zero, superkit's
	// score. Default 0: off; at most 1000.
	ScoreWindow int
	// ScoreWeights are the points of the progress score; zero:
	// [DefaultScoreWeights].
	ScoreWeights ScoreWeights
	// CircularApproachWindow opens it when this many labelled iterations
	// ([Iteration.Approach]) cycle through two or three approaches and
	// none resolved anything. Default 6; 4 to 1000.
	CircularApproachWindow int
	// TestFixWindow and TestFixPercent open it when more than TestFixPercent
	// of the last TestFixWindow labelled iterations ([Iteration.Work]) were
	// test fixes. Defaults 5 and 80; a window of at most 1000, a percent
	// below 100.
	TestFixWindow, TestFixPercent int
	// MaxTaskIterations warns ([ReasonLongTask]) once one task took more
	// than this many iterations in a row. Default 20.
	MaxTaskIterations int
	// TestsDeclining and ErrorsRising warn ([ReasonTestsDeclining],
	// [ReasonErrorsRising]) when the passing tests fell, or the errors
	// rose, in this many measured iterations in a row. Defaults 3.
	TestsDeclining, ErrorsRising int
	// DoneSignals completes the loop when this many successful iterations
	// in a row reported [Iteration.Done] (ralph-claude-code: 2). Default 2.
	DoneSignals int
	// TestOnly completes it when this many successful iterations in a row
	// only ran tests ([WorkTestsOnly]). Default 3.
	TestOnly int
}

// StepRules are the thresholds of a tool-calling agent's steps
// ([Config.Steps]), as OpenHands' stuck detector sets them; they judge the
// iterations that report an [Iteration.Action]. A negative threshold
// switches its signal off; 1 and more than 1000 are invalid.
type StepRules struct {
	// MaxRepeatedAction opens the circuit when this many steps in a row
	// were the same action with the same observation. Default 4.
	MaxRepeatedAction int
	// MaxRepeatedActionError opens it when this many steps in a row were
	// the same action, each failing. Default 3.
	MaxRepeatedActionError int
	// MaxMonologue opens it when this many steps in a row were the same
	// message-only turn. Default 3.
	MaxMonologue int
	// AlternatingWindow opens it when this many steps in a row alternate
	// between two steps, each with the same observation. Default 6; even,
	// at least 4.
	AlternatingWindow int
	// MaxCondensations opens it when the context was condensed
	// ([Iteration.Condensed]) this many times in a row. Default 10.
	MaxCondensations int
}

// SpendRules cap what the loop may spend ([Config.Spend]): at a cap, Check
// refuses without opening the circuit. Zero or negative: no cap.
type SpendRules struct {
	// MaxCallsPerHour is the call budget of a rolling hour
	// (ralph-claude-code: 100); a warning speaks from 80%.
	MaxCallsPerHour int
	// MaxTokens and MaxCostUSD cap the tokens and the US dollars of the
	// loop's life ([Iteration.Usage], [CircuitBreaker.AddUsage]); no
	// waiting ends them, and neither Reset nor Resume gives the spend back.
	MaxTokens  int
	MaxCostUSD float64
	// MaxTokensPerHour and MaxCostUSDPerHour cap the spend of a rolling
	// hour: Check refuses until enough has left it.
	MaxTokensPerHour  int
	MaxCostUSDPerHour float64
	// Prices prices the usage that names its model and gives no cost
	// ([Usage.Model]). Nil: [DefaultPrices]; start from it to add a model.
	// A model with no price costs nothing, and while a dollar cap is set a
	// warning names it ([ReasonUnpricedModel]).
	Prices Prices
}

// LimitRules set how provider limits are waited out ([Config.Limits]).
type LimitRules struct {
	// Wait is how long a usage limit lasts when it named no reset time
	// ([LimitWait]). Default 60 minutes, as ralph-claude-code waits out
	// Claude's usage limit; at most 35 days.
	Wait time.Duration
	// ThrottleWait is how long a throttle (a 429 or 529, an overloaded
	// server: [LimitThrottle]) lasts when it named no reset time. Default 5
	// minutes: the SDKs and agents retried before they reported it.
	ThrottleWait time.Duration
	// Patterns are the host's own ways of recognising a provider limit in
	// an error's text, tried before the built-in rules ([LimitPattern]).
	Patterns []LimitPattern
}

// DefaultConfig returns the defaults, which a zero field of a Config
// stands for: ralph-starter's 3 consecutive failures, the same error 5
// times and a 30 second cooldown, giving up after 10 openings in a row;
// GSD's exit.sh's 3 failures in a row on one task; the progress signals
// that ralph-claude-code and the Nity Loop share (3 iterations without
// progress, a 70% output decline, 3 with permission denials), superkit's
// circular-approach and test-fix-loop signals, its warnings (a task past 20
// iterations, tests declining or errors rising 3 times) and
// ralph-claude-code's completion (2 done signals, 3 test-only iterations);
// OpenHands' step signals (4, 3, 3, 6 and 10). The signals that need a
// host's reports stay idle until it reports them. The progress score, the
// same error in a row, the doubling cooldown and the relapse watch are off
// (the "autonomous" preset turns them on); there is no call budget and no
// spend cap. A provider limit without a reset time lasts 60 minutes, a
// throttle 5.
func DefaultConfig() Config {
	return Config{
		Cooldown:            30 * time.Second,
		MaxConsecutiveOpens: 10,
		Failures: FailureRules{
			MaxConsecutive:  3,
			MaxSameError:    5,
			MaxSameTask:     3,
			MaxFingerprints: 10000,
			MaxSamples:      1000,
		},
		Progress: ProgressRules{
			MaxNoProgress:          3,
			OutputDeclinePercent:   70,
			MaxPermissionDenials:   3,
			ScoreWeights:           DefaultScoreWeights(),
			CircularApproachWindow: 6,
			TestFixWindow:          5,
			TestFixPercent:         80,
			MaxTaskIterations:      20,
			TestsDeclining:         3,
			ErrorsRising:           3,
			DoneSignals:            2,
			TestOnly:               3,
		},
		Steps: StepRules{
			MaxRepeatedAction:      4,
			MaxRepeatedActionError: 3,
			MaxMonologue:           3,
			AlternatingWindow:      6,
			MaxCondensations:       10,
		},
		Limits: LimitRules{
			Wait:         60 * time.Minute,
			ThrottleWait: 5 * time.Minute,
		},
	}
}

// [ErrInvalidConfig] is matched (errors.Is) by every error Validate returns.
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
	if c.Failures.MaxFingerprints < 0 || c.Failures.MaxFingerprints > math.MaxInt32 {
		bad("Failures.MaxFingerprints", c.Failures.MaxFingerprints, "must be between 0 (the default, 10000) and 2147483647")
	}
	if c.Progress.OutputDeclinePercent >= 100 {
		bad("Progress.OutputDeclinePercent", c.Progress.OutputDeclinePercent, "must be below 100 (an output cannot decline by 100% or more; negative switches the signal off)")
	}
	if c.Progress.ScoreWindow > maxWindow {
		bad("Progress.ScoreWindow", c.Progress.ScoreWindow, "must be at most 1000 (zero or negative switches the signal off)")
	}
	if c.Progress.CircularApproachWindow > maxWindow || c.Progress.CircularApproachWindow > 0 && c.Progress.CircularApproachWindow < 4 {
		bad("Progress.CircularApproachWindow", c.Progress.CircularApproachWindow, "must be between 4 (two cycles of two approaches) and 1000 (zero means the default, 6; negative switches the signal off)")
	}
	if c.Progress.TestFixWindow > maxWindow {
		bad("Progress.TestFixWindow", c.Progress.TestFixWindow, "must be at most 1000 (zero means the default, 5; negative switches the signal off)")
	}
	if c.Progress.TestFixPercent >= 100 {
		bad("Progress.TestFixPercent", c.Progress.TestFixPercent, "must be below 100 (no share can be more than 100%; zero means the default, 80; negative switches the signal off)")
	}
	if c.RelapseWindow > maxWindow {
		bad("RelapseWindow", c.RelapseWindow, "must be at most 1000 (zero or negative switches the relapse watch off)")
	}
	if c.Failures.MaxSamples > maxErrorSamples {
		bad("Failures.MaxSamples", c.Failures.MaxSamples, "must be at most 10000 (zero means the default, 1000; negative keeps no error text)")
	}
	for _, f := range []struct {
		name  string
		value int
		def   int
	}{
		{"Steps.MaxRepeatedAction", c.Steps.MaxRepeatedAction, 4},
		{"Steps.MaxRepeatedActionError", c.Steps.MaxRepeatedActionError, 3},
		{"Steps.MaxMonologue", c.Steps.MaxMonologue, 3},
	} {
		if f.value == 1 || f.value > maxWindow {
			bad(f.name, f.value, fmt.Sprintf("must be between 2 (a repetition takes two) and 1000 (zero means the default, %d; negative switches the signal off)", f.def))
		}
	}
	if w := c.Steps.AlternatingWindow; w > 0 && (w < 4 || w > maxWindow || w%2 != 0) {
		bad("Steps.AlternatingWindow", w, "must be even, between 4 (two steps twice) and 1000 (zero means the default, 6; negative switches the signal off)")
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
	}{{"Spend.MaxCostUSD", c.Spend.MaxCostUSD}, {"Spend.MaxCostUSDPerHour", c.Spend.MaxCostUSDPerHour}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			bad(f.name, f.v, "must be a number (zero or negative: no cap)")
		}
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
	setDefault(&c.MaxConsecutiveOpens, d.MaxConsecutiveOpens)
	if c.CooldownPolicy == nil {
		c.CooldownPolicy = ConstantCooldown
	}
	f, df := &c.Failures, d.Failures
	setDefault(&f.MaxConsecutive, df.MaxConsecutive)
	setDefault(&f.MaxSameError, df.MaxSameError)
	setDefault(&f.MaxSameTask, df.MaxSameTask)
	setDefault(&f.MaxFingerprints, df.MaxFingerprints)
	setDefault(&f.MaxSamples, df.MaxSamples)
	p, dp := &c.Progress, d.Progress
	setDefault(&p.MaxNoProgress, dp.MaxNoProgress)
	setDefault(&p.OutputDeclinePercent, dp.OutputDeclinePercent)
	setDefault(&p.MaxPermissionDenials, dp.MaxPermissionDenials)
	setDefault(&p.ScoreWeights, dp.ScoreWeights)
	setDefault(&p.CircularApproachWindow, dp.CircularApproachWindow)
	setDefault(&p.TestFixWindow, dp.TestFixWindow)
	setDefault(&p.TestFixPercent, dp.TestFixPercent)
	setDefault(&p.MaxTaskIterations, dp.MaxTaskIterations)
	setDefault(&p.TestsDeclining, dp.TestsDeclining)
	setDefault(&p.ErrorsRising, dp.ErrorsRising)
	setDefault(&p.DoneSignals, dp.DoneSignals)
	setDefault(&p.TestOnly, dp.TestOnly)
	st, ds := &c.Steps, d.Steps
	setDefault(&st.MaxRepeatedAction, ds.MaxRepeatedAction)
	setDefault(&st.MaxRepeatedActionError, ds.MaxRepeatedActionError)
	setDefault(&st.MaxMonologue, ds.MaxMonologue)
	setDefault(&st.AlternatingWindow, ds.AlternatingWindow)
	setDefault(&st.MaxCondensations, ds.MaxCondensations)
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
