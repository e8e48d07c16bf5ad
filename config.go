package loopbreaker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// Defaults used where a Config field is zero.
const (
	DefaultMaxConsecutiveFailures    = 3
	DefaultMaxSameErrorCount         = 5
	DefaultCooldown                  = 30 * time.Second
	DefaultMaxConsecutiveOpens       = 10
	DefaultMaxFingerprints           = 10000
	DefaultNoProgressThreshold       = 3
	DefaultOutputDeclinePercent      = 70
	DefaultPermissionDenialThreshold = 3
	DefaultCircularApproachWindow    = 6
	DefaultTestFixWindow             = 5
	DefaultTestFixPercent            = 80
	DefaultDoneSignalThreshold       = 2
	DefaultTestOnlyThreshold         = 3
	DefaultSameTaskThreshold         = 3
	DefaultMaxTaskIterations         = 20
	DefaultTestsDecliningThreshold   = 3
	DefaultErrorsRisingThreshold     = 3
	DefaultMaxErrorSamples           = 1000

	// The step signals' defaults are OpenHands' stuck detector's.
	DefaultRepeatedActionThreshold      = 4
	DefaultRepeatedActionErrorThreshold = 3
	DefaultMonologueThreshold           = 3
	DefaultAlternatingActionsWindow     = 6
	DefaultCondensationThreshold        = 10
)

// Config sets the breaker's thresholds. The zero value of every field means
// its default, so Config{} is a working configuration; a negative threshold
// switches its signal off. New validates the Config and rejects values that
// cannot mean anything.
type Config struct {
	// MaxConsecutiveFailures trips the circuit when this many iterations
	// in a row have failed. Default 3; negative: never.
	MaxConsecutiveFailures int

	// MaxSameErrorCount trips the circuit when one error fingerprint has
	// been seen this many times over the breaker's life, whatever came in
	// between. Default 5; negative: never.
	MaxSameErrorCount int

	// Cooldown is how long the circuit stays open before it lets one probe
	// iteration through. Default 30s; negative is invalid.
	Cooldown time.Duration

	// MaxFingerprints bounds the per-fingerprint error history. When it is
	// full, the least recently seen fingerprint is forgotten (Stats counts
	// these evictions); if that error comes back its count starts again.
	// Default 10,000; negative is invalid.
	MaxFingerprints int

	// NoProgressThreshold opens the circuit when this many measured
	// iterations in a row made no progress; one iteration before that the
	// circuit is half-open ("one more chance"), and progress then closes
	// it. Only iterations that report Progress count. Default 3;
	// negative: never.
	NoProgressThreshold int

	// OutputDeclinePercent opens the circuit when an iteration without
	// progress produces output more than this many percent below the
	// baseline, the mean output length of up to three previous measured
	// iterations. Default 70; negative: never; 100 or more is invalid (no
	// output can fall that far).
	OutputDeclinePercent int

	// PermissionDenialThreshold opens the circuit when this many measured
	// iterations in a row had permission denials. Default 3; negative:
	// never.
	PermissionDenialThreshold int

	// MaxSameErrorInARow trips the circuit when this many failures in a
	// row had the same fingerprint (a success or another error starts the
	// count again), as ralph-claude-code and OpenHands count it; superkit
	// uses 5. Default 0: off, leaving the lifetime MaxSameErrorCount;
	// negative: off.
	MaxSameErrorInARow int

	// CooldownPolicy sets the cooldown of each open from Cooldown and the
	// opens since the circuit last closed. Nil means [ConstantCooldown]
	// (every open waits Cooldown, as in ralph-starter); [DoublingCooldown]
	// is superkit's. It is called with the breaker's lock held, so it must not call
	// the breaker.
	CooldownPolicy CooldownPolicy

	// MaxConsecutiveOpens is how many times in a row the circuit may open,
	// with no close between, before the breaker gives up on the loop: the
	// opening that reaches it holds the circuit open with a reason of kind
	// [ReasonGaveUp] that carries the last opening's reason. Check refuses
	// with no RetryAfter and [CircuitBreaker.Wait] returns at once with an
	// error matching [ErrGaveUp], until a person calls Resume, Skip or
	// Reset. A failed probe, a relapse and a probe lost with its process
	// each count as an opening; a provider limit, a spend cap and the call
	// budget open nothing and are waited out as ever, as they end by
	// themselves. Default 10, what looprun's -max-opens has always
	// stopped at: nine probes give a cause that clears by itself (a flaky
	// service, an outage the classifier did not take for a provider limit)
	// room to clear, and cost four and a half minutes with the default
	// 30-second cooldown (with the "autonomous" preset's cooldown, doubling
	// from 30 minutes to 4 hours, a day). 1 gives up at the first opening,
	// with no probe; negative: never give up, and a loop stuck for good is
	// probed for ever.
	MaxConsecutiveOpens int

	// Classify decides how an iteration's non-nil error counts: Failure,
	// Success, Neutral, or a provider limit (ProviderLimit, ProviderStop).
	// Nil means [DefaultClassify], with LimitPatterns (context.Canceled is
	// neutral, a provider limit is one, every other error a failure). For
	// an error it calls a provider limit, the breaker reads the limit's
	// reset and kind with [ProviderLimitOf]; when that finds none, the
	// limit lasts ProviderLimitWait. It is called without the breaker's
	// lock held. RecordFailure consults it too, with an error of the text
	// it was given.
	Classify func(error) Outcome

	// ProgressScoreWindow opens the circuit when the progress scores
	// (ScoreWeights) of this many measured iterations in a row add up to
	// less than zero (superkit: 3). After the circuit opens the window
	// starts again, and the probe opens it again if its own score is below
	// zero. Default 0: off; negative: off; at most 1000.
	ProgressScoreWindow int

	// ScoreWeights are the points of the progress score. The zero value
	// means [DefaultScoreWeights] (superkit's); any other value is used as
	// given, so start from [DefaultScoreWeights] to change one weight.
	ScoreWeights ScoreWeights

	// CircularApproachWindow opens the circuit when this many labelled
	// iterations in a row ([Iteration.Approach]) cycle through the same two
	// or three approaches, e.g. A B A B A B or A B C A B C, and none of
	// them resolved anything: no task completed, no more tests passing, no
	// error resolved (changed files do not count, as circling changes
	// files; an iteration without Progress counts as resolving when it
	// succeeded). The window must hold two
	// full cycles to tell a cycle of that length. Unlabelled iterations
	// are left out, and the signal judges only a labelled one: after it
	// opened the circuit, an unlabelled probe is judged on its outcome.
	// Default 6; negative: off; 1 to 3 are invalid, as is more than 1000.
	CircularApproachWindow int

	// TestFixWindow and TestFixPercent open the circuit when more than
	// TestFixPercent of the last TestFixWindow labelled iterations
	// ([Iteration.Work]) were test fixes (superkit: more than 80% of effort).
	// Unlabelled iterations are left out, and the signal judges only a
	// labelled one: after it opened the circuit, an unlabelled probe is
	// judged on its outcome. Defaults 5 and 80; a negative
	// value of either switches the signal off; a window of more than 1000
	// or a percent of 100 or more is invalid.
	TestFixWindow  int
	TestFixPercent int

	// MaxCallsPerHour is the call budget: Check refuses, without opening
	// the circuit, while the last hour (a rolling window) holds this many
	// calls, and [Decision.Warning] speaks from 80% on (ralph-claude-code and
	// superkit: 100). Each recorded iteration counts [Iteration.Calls], or one call.
	// Default 0: no budget; negative: no budget.
	MaxCallsPerHour int

	// DoneSignalThreshold completes the loop when this many successful
	// iterations in a row reported [Iteration.Done] (ralph-claude-code: 2). Default 2;
	// negative: off.
	DoneSignalThreshold int

	// TestOnlyThreshold completes the loop when this many successful
	// iterations in a row only ran tests (Work: [WorkTestsOnly]; ralph-claude-code:
	// 3). Unlabelled iterations are left out. Default 3; negative: off.
	TestOnlyThreshold int

	// SameTaskThreshold opens the circuit when this many failed
	// iterations in a row were on one task ([Iteration.Task]), as GSD's
	// exit.sh stops a loop stuck on one task. A success on the task (in
	// exit.sh, the task is done) or an iteration on another task starts
	// the count again; iterations that name no task are left out. It is
	// checked before the other signals, as exit.sh checks it before its
	// count of failures across tasks (here MaxConsecutiveFailures), so
	// that the reason names the task ([ReasonSameTask]) and the host can
	// skip it. Default 3; negative: off.
	SameTaskThreshold int

	// MaxTaskIterations makes a warning ([ReasonLongTask] in
	// [Decision.Warnings]), not a stop, once one task has taken more than
	// this many iterations in a row (superkit: 20). Default 20; negative:
	// off.
	MaxTaskIterations int

	// TestsDecliningThreshold makes a warning ([ReasonTestsDeclining]), not
	// a stop, when the passing tests ([Progress.TestsPassing]) fell in this
	// many measured iterations in a row (superkit: test pass rate
	// declining for 3 iterations). Default 3; negative: off.
	TestsDecliningThreshold int

	// ErrorsRisingThreshold makes a warning ([ReasonErrorsRising]), not a
	// stop, when the errors of an iteration ([Progress.Errors]) rose in this
	// many measured iterations in a row (superkit: error frequency
	// increasing for 3 iterations). Default 3; negative: off.
	ErrorsRisingThreshold int

	// RelapseWindow watches this many iterations after a recovery (a
	// half-open probe succeeded after the circuit had opened), as superkit
	// watches the next 3: when the signal that opened the circuit shows
	// again among them (one more failure, the same error again, one more
	// iteration without progress, ...), the circuit opens again at once
	// with reason [ReasonRelapse], and the open streak goes on, so that
	// [DoublingCooldown] doubles the cooldown as after a failed probe.
	// Default 0: off, as in ralph-starter, where a successful retry
	// resumes normal operation; the "autonomous" preset sets 3; negative:
	// off; at most 1000.
	RelapseWindow int

	// MaxErrorSamples is how many fingerprints, the most recently seen,
	// keep a sample of the error text they stand for ([Stats.ErrorSamples],
	// [Reason.Sample], snapshots): the first and the latest, each cut to
	// [ErrorSampleRunes] runes. Default 1000; negative: none, for error
	// texts that must not be kept (they may hold secrets); at most 10,000.
	MaxErrorSamples int
	// RepeatedActionThreshold opens the circuit when this many tool steps
	// in a row ([Iteration.Action]) were the same action with the same
	// observation ([Iteration.Observation]), failed or not: an agent that
	// runs ls, gets nothing, and runs it again. Steps without an Action
	// are left out. Default 4 (OpenHands); negative: off; 1 is invalid, as
	// is more than 1000.
	RepeatedActionThreshold int

	// RepeatedActionErrorThreshold opens the circuit when this many tool
	// steps in a row were the same action and each failed, whatever the
	// error said (as OpenHands counts it). Default 3 (OpenHands);
	// negative: off; 1 is invalid, as is more than 1000.
	RepeatedActionErrorThreshold int

	// MonologueThreshold opens the circuit when this many steps in a row
	// were the same message-only turn, no tool called between: the agent
	// telling itself the same thing over and over, or answering nothing
	// at all (an empty message). Default 3 (OpenHands); negative: off; 1
	// is invalid, as is more than 1000.
	MonologueThreshold int

	// AlternatingActionsWindow opens the circuit when this many steps in
	// a row alternate between two steps, A B A B A B, each with the same
	// observation every time (OpenHands' "action, observation pattern").
	// Default 6 (OpenHands); negative: off; odd, below 4 or above 1000 is
	// invalid.
	AlternatingActionsWindow int

	// CondensationThreshold opens the circuit when the context was
	// condensed or overflowed ([Iteration.Condensed]) this many times in a
	// row with no step between: condensing does not make it fit. Default
	// 10 (OpenHands); negative: off.
	CondensationThreshold int

	// ProviderLimitWait is how long a provider's usage limit lasts when
	// it said no reset time ([LimitWait]). Default 60 minutes, as
	// ralph-claude-code waits out Claude's usage limit; negative, or more
	// than [MaxProviderLimitWait], is invalid.
	ProviderLimitWait time.Duration

	// ProviderThrottleWait is how long a provider's short throttle (an
	// HTTP 429 or 529, a per-minute rate limit, an overloaded server:
	// [LimitThrottle]) lasts when it said no reset time. Default 5
	// minutes; negative, or more than [MaxProviderLimitWait], is invalid.
	ProviderThrottleWait time.Duration

	// LimitPatterns are the host's own ways of recognising a provider
	// limit in an error's text, tried before the built-in rules (see
	// [LimitPattern]) by the default classifier. A pattern with a nil
	// Match or an unknown Kind is invalid.
	LimitPatterns []LimitPattern

	// MaxTokens caps the tokens the loop may spend over its life
	// ([Usage.Tokens], reported with [Iteration.Usage] or
	// [CircuitBreaker.AddUsage]): Check refuses, without opening the
	// circuit, once the loop has spent this many, and no waiting ends
	// that; [Decision.Warning] speaks from 80% on. The spend survives
	// restarts in the snapshot, and neither Reset nor Resume gives it
	// back. Default 0: no cap; negative: no cap.
	MaxTokens int

	// MaxCostUSD caps what the loop may spend over its life, in US
	// dollars, as MaxTokens caps the tokens. Default 0: no cap; negative:
	// no cap; NaN or infinite is invalid.
	MaxCostUSD float64

	// MaxTokensPerHour and MaxCostUSDPerHour cap the spend of the last
	// hour (a rolling window, like the call budget): Check refuses until
	// enough of it has left the hour ([Decision.RetryAfter]). Default 0: no
	// cap; negative: no cap; a cost that is NaN or infinite is invalid.
	MaxTokensPerHour  int
	MaxCostUSDPerHour float64

	// Prices prices the usage that names its model and gives no cost
	// ([Usage.Model]): what the HTTP transport (package transport) reads in the
	// responses of OpenAI, Anthropic and Gemini, and what a host reports.
	// Nil means [DefaultPrices], the providers' list prices as of
	// [PricesDate]; to add or correct a model, start from DefaultPrices and
	// set its entry. A model missing from the table costs nothing, and
	// while a dollar cap is set a warning names it ([ReasonUnpricedModel]).
	// A price below zero, NaN or infinite is invalid.
	Prices Prices

	// OnStateChange, when not nil, is called after every transition of
	// the circuit (the ones [Stats.History] records, and Reset closing an
	// open circuit), never with the breaker's lock held, so it may call
	// the breaker, even make another transition. Calls are serialized and
	// come in the order the transitions happened. By the time a call
	// runs, the breaker may have moved on (another goroutine, or a later
	// transition of the same call): the Transition, not Stats, says what
	// changed. Usually the call that
	// made a transition runs the callback before it returns; when another
	// goroutine is running the callback at that moment, that goroutine
	// delivers the new transition after the current one instead, so a
	// method may return before its transition was delivered. A transition
	// the callback itself makes is delivered after the callback returns.
	// A panic in the callback drops the transitions not yet delivered and
	// goes on to the caller.
	OnStateChange func(Transition)

	// Now is the clock. Nil means time.Now. Tests drive time by hand by
	// setting it. It is called with the breaker's lock held, so it must not
	// call the breaker.
	Now func() time.Time

	// Sleep waits d, or until ctx is done, and then returns ctx.Err() (nil
	// when d has passed); [CircuitBreaker.Wait] waits with it. Nil means a
	// real timer, stopped when Sleep returns. A host that runs the breaker
	// on a clock of its own sets Sleep with Now: a test's fake clock
	// advances itself by d and returns at once. It is called without the
	// breaker's lock held.
	Sleep func(ctx context.Context, d time.Duration) error

	// Guard, when not nil, keeps the loop's files from its agent (see
	// [Guard]; package protect has one). After each recorded iteration
	// (Record, a neutral one included, RecordSuccess, RecordFailure) the
	// breaker calls its AfterIteration: when files were lost, the circuit
	// is held open with a reason of kind [ReasonProtectedFiles] whose
	// message is the Guard's summary. No cooldown ends it
	// ([CircuitBreaker.Wait] returns at once) until a person calls Resume,
	// Skip or Reset, and a snapshot keeps it held. Resume, Skip and Reset
	// call the Guard's Refresh before they close the circuit. The Guard
	// runs without the breaker's lock held. Nil: nothing is checked, at no
	// cost.
	Guard Guard
}

// DefaultConfig returns the default configuration: ralph-starter's 3
// consecutive failures, the same error 5 times and a 30 second cooldown,
// giving up after 10 openings in a row;
// the progress signals that ralph-claude-code and the Nity Loop share (3
// iterations without progress, a 70% output decline, 3 iterations with
// permission denials); and superkit's circular-approach and test-fix-loop
// signals, which stay idle until the host labels its iterations. The
// progress score, the same-error-in-a-row count and the doubling cooldown
// are off: the "autonomous" preset turns them on. The completion signals
// (2 done signals, 3 test-only iterations, a finished plan) are on and idle
// until the host reports them. GSD's exit.sh's
// same-task stop (3 failures in a row on one task) and superkit's warnings
// (a task past 20 iterations, tests declining or errors rising for 3
// iterations) are on and idle until the host names tasks or measures
// progress; the relapse watch is off; the last 1000 fingerprints keep a
// sample of their error text. OpenHands' step signals (the same action and
// observation 4 times, the same action failing 3 times, the same message 3
// times, two steps alternating over 6, 10 condensations in a row) are on
// and idle until the host reports its steps' actions. There is no call
// budget and no spend cap. A provider limit without a reset time lasts 60
// minutes, a throttle 5.
func DefaultConfig() Config {
	return Config{
		MaxConsecutiveFailures: DefaultMaxConsecutiveFailures,
		MaxSameErrorCount:      DefaultMaxSameErrorCount,
		Cooldown:               DefaultCooldown,
		MaxConsecutiveOpens:    DefaultMaxConsecutiveOpens,
		MaxFingerprints:        DefaultMaxFingerprints,

		NoProgressThreshold:       DefaultNoProgressThreshold,
		OutputDeclinePercent:      DefaultOutputDeclinePercent,
		PermissionDenialThreshold: DefaultPermissionDenialThreshold,

		CircularApproachWindow: DefaultCircularApproachWindow,
		TestFixWindow:          DefaultTestFixWindow,
		TestFixPercent:         DefaultTestFixPercent,

		DoneSignalThreshold: DefaultDoneSignalThreshold,
		TestOnlyThreshold:   DefaultTestOnlyThreshold,

		SameTaskThreshold:            DefaultSameTaskThreshold,
		MaxTaskIterations:            DefaultMaxTaskIterations,
		TestsDecliningThreshold:      DefaultTestsDecliningThreshold,
		ErrorsRisingThreshold:        DefaultErrorsRisingThreshold,
		MaxErrorSamples:              DefaultMaxErrorSamples,
		RepeatedActionThreshold:      DefaultRepeatedActionThreshold,
		RepeatedActionErrorThreshold: DefaultRepeatedActionErrorThreshold,
		MonologueThreshold:           DefaultMonologueThreshold,
		AlternatingActionsWindow:     DefaultAlternatingActionsWindow,
		CondensationThreshold:        DefaultCondensationThreshold,
		ProviderLimitWait:            DefaultProviderLimitWait,
		ProviderThrottleWait:         DefaultProviderThrottleWait,
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
	if c.MaxFingerprints < 0 || c.MaxFingerprints > math.MaxInt32 {
		bad("MaxFingerprints", c.MaxFingerprints, "must be between 0 (the default, 10000) and 2147483647")
	}
	if c.OutputDeclinePercent >= 100 {
		bad("OutputDeclinePercent", c.OutputDeclinePercent, "must be below 100 (an output cannot decline by 100% or more; negative switches the signal off)")
	}
	if c.ProgressScoreWindow > maxWindow {
		bad("ProgressScoreWindow", c.ProgressScoreWindow, "must be at most 1000 (zero or negative switches the signal off)")
	}
	if c.CircularApproachWindow > maxWindow || c.CircularApproachWindow > 0 && c.CircularApproachWindow < 4 {
		bad("CircularApproachWindow", c.CircularApproachWindow, "must be between 4 (two cycles of two approaches) and 1000 (zero means the default, 6; negative switches the signal off)")
	}
	if c.TestFixWindow > maxWindow {
		bad("TestFixWindow", c.TestFixWindow, "must be at most 1000 (zero means the default, 5; negative switches the signal off)")
	}
	if c.TestFixPercent >= 100 {
		bad("TestFixPercent", c.TestFixPercent, "must be below 100 (no share can be more than 100%; zero means the default, 80; negative switches the signal off)")
	}
	if c.RelapseWindow > maxWindow {
		bad("RelapseWindow", c.RelapseWindow, "must be at most 1000 (zero or negative switches the relapse watch off)")
	}
	if c.MaxErrorSamples > maxErrorSamples {
		bad("MaxErrorSamples", c.MaxErrorSamples, "must be at most 10000 (zero means the default, 1000; negative keeps no error text)")
	}
	for _, f := range []struct {
		name  string
		value int
		def   int
	}{
		{"RepeatedActionThreshold", c.RepeatedActionThreshold, DefaultRepeatedActionThreshold},
		{"RepeatedActionErrorThreshold", c.RepeatedActionErrorThreshold, DefaultRepeatedActionErrorThreshold},
		{"MonologueThreshold", c.MonologueThreshold, DefaultMonologueThreshold},
	} {
		if f.value == 1 || f.value > maxWindow {
			bad(f.name, f.value, fmt.Sprintf("must be between 2 (a repetition takes two) and 1000 (zero means the default, %d; negative switches the signal off)", f.def))
		}
	}
	if w := c.AlternatingActionsWindow; w > 0 && (w < 4 || w > maxWindow || w%2 != 0) {
		bad("AlternatingActionsWindow", w, "must be even, between 4 (two steps twice) and 1000 (zero means the default, 6; negative switches the signal off)")
	}
	if c.ProviderLimitWait < 0 || c.ProviderLimitWait > MaxProviderLimitWait {
		bad("ProviderLimitWait", c.ProviderLimitWait, "must be between 0 (the default, 1h) and 840h (35 days)")
	}
	if c.ProviderThrottleWait < 0 || c.ProviderThrottleWait > MaxProviderLimitWait {
		bad("ProviderThrottleWait", c.ProviderThrottleWait, "must be between 0 (the default, 5m) and 840h (35 days)")
	}
	for i, p := range c.LimitPatterns {
		field := fmt.Sprintf("LimitPatterns[%d]", i)
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
	}{{"MaxCostUSD", c.MaxCostUSD}, {"MaxCostUSDPerHour", c.MaxCostUSDPerHour}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			bad(f.name, f.v, "must be a number (zero or negative: no cap)")
		}
	}
	for _, model := range slices.Sorted(maps.Keys(c.Prices)) {
		if !validPrice(c.Prices[model], 0) {
			bad(fmt.Sprintf("Prices[%q]", model), c.Prices[model], "every rate must be a number of dollars, 0 or more, and a long-context tier must have a threshold above 0")
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
	setDefault(&c.MaxConsecutiveFailures, DefaultMaxConsecutiveFailures)
	setDefault(&c.MaxSameErrorCount, DefaultMaxSameErrorCount)
	setDefault(&c.Cooldown, DefaultCooldown)
	setDefault(&c.MaxConsecutiveOpens, DefaultMaxConsecutiveOpens)
	setDefault(&c.MaxFingerprints, DefaultMaxFingerprints)
	setDefault(&c.NoProgressThreshold, DefaultNoProgressThreshold)
	setDefault(&c.OutputDeclinePercent, DefaultOutputDeclinePercent)
	setDefault(&c.PermissionDenialThreshold, DefaultPermissionDenialThreshold)
	setDefault(&c.CircularApproachWindow, DefaultCircularApproachWindow)
	setDefault(&c.TestFixWindow, DefaultTestFixWindow)
	setDefault(&c.TestFixPercent, DefaultTestFixPercent)
	setDefault(&c.ScoreWeights, DefaultScoreWeights())
	setDefault(&c.DoneSignalThreshold, DefaultDoneSignalThreshold)
	setDefault(&c.TestOnlyThreshold, DefaultTestOnlyThreshold)
	setDefault(&c.SameTaskThreshold, DefaultSameTaskThreshold)
	setDefault(&c.MaxTaskIterations, DefaultMaxTaskIterations)
	setDefault(&c.TestsDecliningThreshold, DefaultTestsDecliningThreshold)
	setDefault(&c.ErrorsRisingThreshold, DefaultErrorsRisingThreshold)
	setDefault(&c.MaxErrorSamples, DefaultMaxErrorSamples)
	setDefault(&c.RepeatedActionThreshold, DefaultRepeatedActionThreshold)
	setDefault(&c.RepeatedActionErrorThreshold, DefaultRepeatedActionErrorThreshold)
	setDefault(&c.MonologueThreshold, DefaultMonologueThreshold)
	setDefault(&c.AlternatingActionsWindow, DefaultAlternatingActionsWindow)
	setDefault(&c.CondensationThreshold, DefaultCondensationThreshold)
	if c.CooldownPolicy == nil {
		c.CooldownPolicy = ConstantCooldown
	}
	setDefault(&c.ProviderLimitWait, DefaultProviderLimitWait)
	setDefault(&c.ProviderThrottleWait, DefaultProviderThrottleWait)
	if c.Prices == nil {
		c.Prices = DefaultPrices()
	}
	if c.Classify == nil {
		c.Classify = DefaultClassify
		if patterns := internalPatterns(c.LimitPatterns); patterns != nil {
			c.Classify = func(err error) Outcome { return classify(err, patterns) }
		}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Sleep == nil {
		c.Sleep = sleep
	}
	return c
}

func setDefault[T comparable](field *T, def T) {
	var zero T
	if *field == zero {
		*field = def
	}
}
