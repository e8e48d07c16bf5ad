package loopbreaker

import (
	"strconv"
	"time"
)

// Reason says why the circuit opened, or a Check refused, or what a warning
// is about, with the evidence; each [ReasonKind] says which fields it sets.
// Its String is the text, e.g. "3 consecutive failures (threshold: 3)";
// the zero Reason prints as "".
type Reason struct {
	// Kind is the signal that fired.
	Kind ReasonKind `json:"kind"`
	// Count is what the signal counted, Threshold the config value it
	// reached, Window the recent iterations a window signal judged.
	Count     int `json:"count,omitempty"`
	Threshold int `json:"threshold,omitempty"`
	Window    int `json:"window,omitempty"`
	// Baseline and Current are where a measured figure (output length,
	// passing tests, errors) was and is.
	Baseline float64 `json:"baseline,omitempty"`
	Current  int     `json:"current,omitempty"`
	// Fingerprint is the error, or the action, involved.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Message is a text given with the reason: ForceOpen's, the provider's,
	// or the reason before it.
	Message string `json:"message,omitempty"`
	// Task is the task involved.
	Task string `json:"task,omitempty"`
	// Sample is the latest text of the error behind Fingerprint, if kept.
	Sample string `json:"sample,omitempty"`
	// Relapsed is the signal a relapse saw again; Last, when the breaker
	// gave up, the kind of the last opening's reason.
	Relapsed ReasonKind `json:"relapsed,omitempty"`
	Last     ReasonKind `json:"last,omitempty"`
	// Action is the text of the repeated action(s) or approaches, joined
	// with " | ", cut at 200 bytes.
	Action string `json:"action,omitempty"`
	// CostUSD is the dollars spent against the cap MaxCostUSD.
	CostUSD    float64 `json:"cost_usd,omitempty"`
	MaxCostUSD float64 `json:"max_cost_usd,omitempty"`
}

// String returns the reason's text, without the error text (see Detail);
// the consecutive-failure and same-error texts are ralph-starter's.
func (r Reason) String() string {
	if int(r.Kind) >= len(rules) {
		return r.Kind.String()
	}
	return rules[r.Kind].text(r)
}

// Detail returns String followed, when the reason has a Sample, by ": "
// and the sample quoted in Go syntax.
func (r Reason) Detail() string {
	s := r.String()
	if r.Sample == "" {
		return s
	}
	return s + ": " + strconv.Quote(r.Sample)
}

// Stats is a snapshot of the breaker: a copy the caller may keep and change.
type Stats struct {
	// State is the circuit's state.
	State State
	// Reason is why the circuit last opened; zero while it is closed.
	Reason Reason
	// OpenedAt is when it opened; zero while it is closed.
	OpenedAt time.Time
	// RetryAfter is the cooldown left while the circuit is open; Cooldown
	// the whole of the current one, zero while it is closed.
	RetryAfter time.Duration
	Cooldown   time.Duration
	// Opens counts the openings since New or Reset; ConsecutiveOpens those
	// since the circuit last closed.
	Opens, ConsecutiveOpens int
	// RelapseWatch is how many more iterations are watched for a relapse.
	RelapseWatch int
	// Complete is why the loop is complete; zero while it is not.
	Complete Reason

	// Iterations counts the successes and failures recorded;
	// NeutralIterations and LimitedIterations the neutral ones and those
	// the provider refused, which count nowhere else.
	Iterations, NeutralIterations, LimitedIterations int

	Failures FailureStats
	Progress ProgressStats
	Steps    StepStats

	// Budget is the call budget; BudgetRetryAfter, while it is spent, the
	// time until a call leaves the hour.
	Budget           Budget
	BudgetRetryAfter time.Duration
	// Spend is what the loop spent, and its caps.
	Spend Spend
	// ProviderLimit is the provider limit in force, zero when none is;
	// ProviderLimitUntil when it lifts, zero for a stop.
	ProviderLimit      Reason
	ProviderLimitUntil time.Time

	// Risk is superkit's stagnation risk.
	Risk Risk
	// Warnings are the warnings in force; nil when there are none.
	Warnings []Reason
	// History holds the last 50 transitions, oldest first.
	History []Transition
}

// FailureStats are the counts of failed iterations and their errors
// ([Stats.Failures]).
type FailureStats struct {
	// Consecutive counts the failures since the last success, Total all,
	// SameErrorInARow those in a row with the last failure's error.
	Consecutive, Total, SameErrorInARow int
	// Unique counts the errors in the history; Evicted those forgotten.
	Unique, Evicted int
	// LastFingerprint is the last failure's; "" before the first.
	LastFingerprint string
	// Counts maps each fingerprint in the history to how often it was seen.
	Counts map[string]int
	// Samples maps the fingerprints that keep one to their error text; nil
	// when none does.
	Samples map[string]ErrorSample
	// Task is the last task an iteration named, "" after Resume or Skip;
	// TaskIterations and TaskFailures count the iterations, and failures,
	// in a row on it.
	Task                         string
	TaskIterations, TaskFailures int
	// SkippedTasks are the tasks Skip skipped, oldest first, at most 100.
	SkippedTasks []string
}

// ProgressStats are the counts of what measured iterations achieved
// ([Stats.Progress]).
type ProgressStats struct {
	// ConsecutiveNoProgress and ConsecutivePermissionDenials count the
	// measured iterations in a row without progress, and with denials.
	ConsecutiveNoProgress, ConsecutivePermissionDenials int
	// LastProgress is when an iteration last made progress; zero if none.
	LastProgress time.Time
	// OutputTrend holds up to the last 10 output lengths, oldest first.
	OutputTrend []int
	// LastScore is the last progress score; Score the window's sum.
	LastScore, Score int
	// ConsecutiveDoneSignals and ConsecutiveTestOnly count the successful
	// iterations in a row that reported Done, and that only ran tests.
	ConsecutiveDoneSignals, ConsecutiveTestOnly int
	// Plan is the last plan reported.
	Plan Plan
	// ConsecutiveTestDeclines and ConsecutiveErrorRises count the measured
	// iterations in a row whose passing tests fell, and whose errors rose.
	ConsecutiveTestDeclines, ConsecutiveErrorRises int
}

// StepStats are the step signals' counts ([Stats.Steps]): the steps in a
// row with the same action and observation, with the same action failing,
// and with the same message-only turn; the condensations in a row, and in
// all.
type StepStats struct {
	SameStepInARow, SameActionFailedInARow, SameMessageInARow int
	ConsecutiveCondensations, Condensations                   int
}
