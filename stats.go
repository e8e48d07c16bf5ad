package loopbreaker

import (
	"strconv"
	"strings"
	"time"
)

// Reason says why the circuit opened, with the evidence; in
// [Decision.Warnings] and [Stats.Warnings], what a warning is about. Its
// String is the trip reason text, e.g. "3 consecutive failures
// (threshold: 3)"; [Reason.Detail] adds the error text behind it. The zero
// Reason (kind [ReasonNone]) prints as "".
type Reason struct {
	// Kind is the signal that fired.
	Kind ReasonKind `json:"kind"`
	// Count is the evidence: failures in a row, how often the error was
	// seen, iterations in a row without progress or with permission
	// denials, or the percentage by which the output declined.
	Count int `json:"count,omitempty"`
	// Threshold is the configured limit that Count reached.
	Threshold int `json:"threshold,omitempty"`
	// Window is how many recent iterations the evidence covers, for the
	// signals that judge a window (progress score, circular approach,
	// test-fix loop).
	Window int `json:"window,omitempty"`
	// Baseline is the output-decline evidence: the mean output length of
	// the previous (up to three) measured iterations.
	Baseline float64 `json:"baseline,omitempty"`
	// Current is the output length of the iteration that declined.
	Current int `json:"current,omitempty"`
	// Fingerprint is the error involved, where there is one; for the
	// step signals, the action repeated (see each [ReasonKind]).
	Fingerprint string `json:"fingerprint,omitempty"`
	// Message is the text given with ForceOpen, for Abort the reason the
	// circuit had before, for a provider limit what the provider said, and
	// when the breaker gave up the last opening's reason; empty for the
	// signals.
	Message string `json:"message,omitempty"`
	// Task is the task involved ([Iteration.Task]), for the signals about a
	// task (same task, long task, and a relapse of the same-task signal).
	Task string `json:"task,omitempty"`
	// Sample is the error text behind Fingerprint, its latest sample
	// ([Stats.ErrorSamples]), where one is kept: for the same-error signals,
	// a failed probe, the same-task signal and a relapse of one of them.
	Sample string `json:"sample,omitempty"`
	// Relapsed is, for a relapse, the signal that showed again.
	Relapsed ReasonKind `json:"relapsed,omitempty"`
	// Last is, when the breaker gave up ([ReasonGaveUp]), the kind of the
	// reason the last opening had.
	Last ReasonKind `json:"last,omitempty"`
	// Action is, for the step signals, the action repeated (two for
	// alternating actions, joined with " | ") as [Action.String] shows it;
	// for the circular approach, the approaches' texts joined with " | ".
	// Cut at 200 bytes.
	Action string `json:"action,omitempty"`
	// CostUSD is the spend-cap evidence when the cap on cost was reached:
	// the cost spent, in US dollars; MaxCostUSD is the cap.
	CostUSD    float64 `json:"cost_usd,omitempty"`
	MaxCostUSD float64 `json:"max_cost_usd,omitempty"`
}

// String returns the human-readable trip reason. It never includes the
// error text (see Detail): the texts of the consecutive-failure and
// same-error reasons are ralph-starter's, word for word.
func (r Reason) String() string {
	if int(r.Kind) >= len(rules) {
		return r.Kind.String()
	}
	return rules[r.Kind].text(r)
}

// Detail returns String followed, when the reason has a Sample, by ": "
// and the sample quoted in Go syntax, as the Nity Loop quotes the message
// of a repeated error, e.g.
//
//	Same error repeated 5 times (threshold: 5): "TypeError: Cannot read property 'id' of undefined"
func (r Reason) Detail() string {
	s := r.String()
	if r.Sample == "" {
		return s
	}
	return s + ": " + strconv.Quote(r.Sample)
}

// joinReasons returns the texts of rs joined with "; ".
func joinReasons(rs []Reason) string {
	texts := make([]string, len(rs))
	for i, r := range rs {
		texts[i] = r.String()
	}
	return strings.Join(texts, "; ")
}

// Stats is a snapshot of the breaker. It is a copy: the caller may keep and
// change it.
type Stats struct {
	// State is the circuit's state at the time of the snapshot.
	State State
	// Reason is why the circuit last opened; zero while it is closed.
	Reason Reason
	// OpenedAt is when the circuit last opened; zero while it is closed.
	OpenedAt time.Time
	// RetryAfter is, while the circuit is open, the time left until the
	// probe may run; zero otherwise.
	RetryAfter time.Duration
	// Cooldown is, while the circuit is open or half-open after a
	// cooldown, the length of the current open's cooldown as
	// [Config.CooldownPolicy] set it; zero otherwise.
	Cooldown time.Duration
	// Complete is why the loop is complete (a completion reason); zero
	// while it is not.
	Complete Reason
	// Budget is the call budget of the rolling hour; zero without one.
	// Reset does not clear it: the calls were made.
	Budget Budget
	// BudgetRetryAfter is, while the budget is spent, the time until a
	// call leaves the rolling hour; zero otherwise.
	BudgetRetryAfter time.Duration
	// ProviderLimit is the provider limit in force (kind
	// [ReasonProviderLimit] or [ReasonProviderStopped]; Message is what the
	// provider said); zero when none is. The circuit does not open for it.
	ProviderLimit Reason
	// ProviderLimitUntil is when the provider limit in force lifts, by
	// [Config.Now]; zero for a stop, which no time ends, and when none is
	// in force.
	ProviderLimitUntil time.Time
	// Spend is what the loop spent, and its caps. Reset does not clear
	// it: it was spent.
	Spend Spend
	// Opens counts how often the circuit has opened since New or Reset.
	Opens int
	// ConsecutiveOpens counts the opens since the circuit last closed: 1
	// after a trip, 2 after a failed probe, and so on. A relapse
	// ([Config.RelapseWindow]) goes on with the count of the open it
	// recovered from. The cooldown policy reads it.
	ConsecutiveOpens int

	// Iterations counts the recorded successes and failures.
	Iterations int
	// NeutralIterations counts the iterations [Config.Classify] found
	// neutral (by default, cancelled ones); they count nowhere else.
	NeutralIterations int
	// LimitedIterations counts the iterations the provider refused
	// (ProviderLimit and ProviderStop outcomes); they count nowhere else.
	LimitedIterations int
	// ConsecutiveFailures counts the failures since the last success.
	ConsecutiveFailures int
	// TotalFailures counts every failure.
	TotalFailures int
	// SameErrorInARow counts the failures in a row, up to the last
	// iteration, that had the last failure's fingerprint.
	SameErrorInARow int
	// ConsecutiveNoProgress counts the measured iterations in a row that
	// made no progress (iterations without Progress are not counted).
	ConsecutiveNoProgress int
	// ConsecutivePermissionDenials counts the measured iterations in a row
	// that had permission denials.
	ConsecutivePermissionDenials int
	// LastProgress is when an iteration last made progress; zero if none
	// has.
	LastProgress time.Time
	// OutputTrend holds the output lengths of the last (up to 10) measured
	// iterations, oldest first.
	OutputTrend []int
	// ConsecutiveDoneSignals counts the successful iterations in a row that
	// reported Done.
	ConsecutiveDoneSignals int
	// ConsecutiveTestOnly counts the successful iterations in a row that
	// only ran tests (unlabelled ones left out).
	ConsecutiveTestOnly int
	// Plan is the last plan an iteration reported; zero if none did.
	Plan Plan
	// LastProgressScore is the progress score of the last measured
	// iteration ([ProgressRules.ScoreWeights]).
	LastProgressScore int
	// ProgressScore is the sum of the scores in the progress-score window
	// ([ProgressRules.ScoreWindow]); zero while the signal is off.
	ProgressScore int

	// SameStepInARow counts the tool steps in a row, up to the last
	// iteration, that were the same action with the same observation
	// ([Iteration.Action]).
	SameStepInARow int
	// SameActionFailedInARow counts the tool steps in a row, up to the
	// last iteration, that were the same action and failed.
	SameActionFailedInARow int
	// SameMessageInARow counts the message-only turns in a row, up to the
	// last iteration, with the same message.
	SameMessageInARow int
	// ConsecutiveCondensations counts the condensations
	// ([Iteration.Condensed]) since the last iteration that was not one.
	ConsecutiveCondensations int
	// Condensations counts every condensation; they count nowhere else.
	Condensations int

	// UniqueErrors is the number of distinct error fingerprints in the
	// history.
	UniqueErrors int
	// EvictedErrors counts the fingerprints dropped from the history
	// because it held [FailureRules.MaxFingerprints] of them.
	EvictedErrors int
	// LastFingerprint is the fingerprint of the most recent failure; ""
	// before the first.
	LastFingerprint string
	// ErrorCounts maps each fingerprint in the history to the number of
	// times it was seen.
	ErrorCounts map[string]int

	// History holds the last [HistoryLen] transitions, oldest first; nil
	// before the first.
	History []Transition

	// ErrorSamples maps each fingerprint that keeps a sample
	// ([FailureRules.MaxSamples], the most recently seen) to the error text
	// it stands for: the first and the latest, each cut to
	// [ErrorSampleRunes] runes. Nil when none is kept.
	ErrorSamples map[string]ErrorSample

	// Task is the task of the last iteration that named one
	// ([Iteration.Task]); "" before the first, and after Resume or Skip.
	Task string
	// TaskIterations counts the iterations in a row on Task (iterations
	// that name no task are left out); above [ProgressRules.MaxTaskIterations] it
	// is a warning ([ReasonLongTask]).
	TaskIterations int
	// TaskFailures counts the failed iterations in a row on Task; at
	// [FailureRules.MaxSameTask] the circuit opens ([ReasonSameTask]).
	TaskFailures int
	// SkippedTasks lists the tasks Skip skipped, oldest first, at most
	// [MaxSkippedTasks]; nil when none was.
	SkippedTasks []string

	// ConsecutiveTestDeclines counts the measured iterations in a row
	// whose passing tests fell ([ReasonTestsDeclining]).
	ConsecutiveTestDeclines int
	// ConsecutiveErrorRises counts the measured iterations in a row whose
	// [Progress.Errors] rose ([ReasonErrorsRising]).
	ConsecutiveErrorRises int

	// RelapseWatch is how many more iterations are watched for a relapse
	// after the circuit recovered ([Config.RelapseWindow]); zero when none
	// are.
	RelapseWatch int

	// Risk is the stagnation risk, LOW, MEDIUM or HIGH, as superkit's
	// per-iteration status shows it (see Risk).
	Risk Risk
	// Warnings are the warnings in force, as Check reports them in
	// [Decision.Warnings]: the call budget's, a long task, declining tests,
	// rising errors. Nil when there are none.
	Warnings []Reason
}
