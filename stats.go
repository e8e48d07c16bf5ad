package loopbreaker

import (
	"strconv"
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
	// ([FailureStats.Samples]), where one is kept: for the same-error signals,
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
	// Cooldown is the length of the current opening's cooldown, as
	// [Config.CooldownPolicy] set it; zero while the circuit is closed.
	Cooldown time.Duration
	// Opens counts the openings since New or Reset; ConsecutiveOpens those
	// since the circuit last closed (1 after a trip, 2 after a failed
	// probe), which the cooldown policy and [Config.MaxConsecutiveOpens]
	// read.
	Opens, ConsecutiveOpens int
	// RelapseWatch is how many more iterations are watched for a relapse
	// ([Config.RelapseWindow]); zero when none are.
	RelapseWatch int
	// Complete is why the loop is complete; zero while it is not.
	Complete Reason

	// Iterations counts the recorded successes and failures;
	// NeutralIterations the iterations [Config.Classify] found neutral, and
	// LimitedIterations those the provider refused, which count nowhere
	// else.
	Iterations, NeutralIterations, LimitedIterations int
	// Failures are the failure and error counts.
	Failures FailureStats
	// Progress are the progress, stagnation, trend and completion counts.
	Progress ProgressStats
	// Steps are the step signals' counts.
	Steps StepStats

	// Budget is the call budget of the rolling hour; zero without one.
	// BudgetRetryAfter is, while it is spent, the time until a call leaves
	// the hour. Reset does not give calls back.
	Budget           Budget
	BudgetRetryAfter time.Duration
	// Spend is what the loop spent, and its caps. Reset does not give it
	// back.
	Spend Spend
	// ProviderLimit is the provider limit in force (kind
	// [ReasonProviderLimit] or [ReasonProviderStopped]), zero when none is;
	// ProviderLimitUntil is when it lifts, zero for a stop.
	ProviderLimit      Reason
	ProviderLimitUntil time.Time

	// Risk is superkit's stagnation risk: LOW, MEDIUM or HIGH.
	Risk Risk
	// Warnings are the warnings in force, as Check reports them; nil when
	// there are none.
	Warnings []Reason
	// History holds the last 50 transitions, oldest first.
	History []Transition
}

// FailureStats are the counts of failed iterations and their errors
// ([Stats.Failures]).
type FailureStats struct {
	// Consecutive counts the failures since the last success; Total every
	// failure; SameErrorInARow the failures in a row, up to the last
	// iteration, with the last failure's fingerprint.
	Consecutive, Total, SameErrorInARow int
	// Unique is the number of distinct fingerprints in the error history;
	// Evicted counts those dropped because it held
	// [FailureRules.MaxFingerprints].
	Unique, Evicted int
	// LastFingerprint is the most recent failure's; "" before the first.
	LastFingerprint string
	// Counts maps each fingerprint in the history to how often it was
	// seen.
	Counts map[string]int
	// Samples maps each fingerprint that keeps one
	// ([FailureRules.MaxSamples]) to the text of its first and latest
	// error, each cut to 200 runes; nil when none is kept.
	Samples map[string]ErrorSample
	// Task is the task of the last iteration that named one; "" before
	// the first, and after Resume or Skip. TaskIterations counts the
	// iterations in a row on it, TaskFailures the failed ones.
	Task                         string
	TaskIterations, TaskFailures int
	// SkippedTasks lists the tasks Skip skipped, oldest first, at most
	// 100; nil when none was.
	SkippedTasks []string
}

// ProgressStats are the counts of what measured iterations achieved
// ([Stats.Progress]).
type ProgressStats struct {
	// ConsecutiveNoProgress and ConsecutivePermissionDenials count the
	// measured iterations in a row without progress, and with permission
	// denials.
	ConsecutiveNoProgress, ConsecutivePermissionDenials int
	// LastProgress is when an iteration last made progress; zero if none
	// has.
	LastProgress time.Time
	// OutputTrend holds the output lengths of the last (up to 10) measured
	// iterations, oldest first.
	OutputTrend []int
	// LastScore is the progress score of the last measured iteration;
	// Score the sum of the score window ([ProgressRules.ScoreWindow]), zero
	// while it is off.
	LastScore, Score int
	// ConsecutiveDoneSignals and ConsecutiveTestOnly count the successful
	// iterations in a row that reported Done, and that only ran tests.
	ConsecutiveDoneSignals, ConsecutiveTestOnly int
	// Plan is the last plan an iteration reported; zero if none did.
	Plan Plan
	// ConsecutiveTestDeclines and ConsecutiveErrorRises count the measured
	// iterations in a row whose passing tests fell, and whose errors rose.
	ConsecutiveTestDeclines, ConsecutiveErrorRises int
}

// StepStats are the step signals' counts ([Stats.Steps]).
type StepStats struct {
	// SameStepInARow counts the tool steps in a row, up to the last, that
	// were the same action with the same observation;
	// SameActionFailedInARow those that were the same action and failed;
	// SameMessageInARow the message-only turns in a row with one message.
	SameStepInARow, SameActionFailedInARow, SameMessageInARow int
	// ConsecutiveCondensations counts the condensations since the last
	// iteration that was not one; Condensations every condensation.
	ConsecutiveCondensations, Condensations int
}
