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
	// What the signal counted, the threshold it reached, the window judged.
	Count     int `json:"count,omitempty"`
	Threshold int `json:"threshold,omitempty"`
	Window    int `json:"window,omitempty"`
	// Where a measured figure (output, passing tests, errors) was and is.
	Baseline float64 `json:"baseline,omitempty"`
	Current  int     `json:"current,omitempty"`
	// Fingerprint is the error, or the action, involved.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Message is a text given with it: ForceOpen's, the provider's, the Guard's.
	Message string `json:"message,omitempty"`
	// Task is the task involved.
	Task string `json:"task,omitempty"`
	// Sample is the latest text of the error behind Fingerprint, if kept.
	Sample string `json:"sample,omitempty"`
	// The signal a relapse saw again; when the breaker gave up, the last kind.
	Relapsed ReasonKind `json:"relapsed,omitempty"`
	Last     ReasonKind `json:"last,omitempty"`
	// Action is the repeated actions' or approaches' text, cut at 200 bytes.
	Action string `json:"action,omitempty"`
	// CostUSD is the dollars spent against the cap MaxCostUSD.
	CostUSD    float64 `json:"cost_usd,omitempty"`
	MaxCostUSD float64 `json:"max_cost_usd,omitempty"`
	// Short says the signal has not tripped but is one step short of it
	// ([Decision.Short]): Count is one below Threshold.
	Short bool `json:"short,omitempty"`
	// Proposed says the call that would have tripped the signal was
	// refused before it ran ([CircuitBreaker.CheckAction]): Count is what
	// the steps before it made, one below Threshold.
	Proposed bool `json:"proposed,omitempty"`
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
	// The circuit: its state, why it last opened and when (zero while it
	// is closed), the cooldown left and the whole of it, the openings since
	// New or Reset and since it last closed, the iterations still watched
	// for a relapse, and why the loop is complete (zero while it is not).
	State                   State
	Reason                  Reason
	OpenedAt                time.Time
	RetryAfter              time.Duration
	Cooldown                time.Duration
	Opens, ConsecutiveOpens int
	RelapseWatch            int
	Complete                Reason

	// Iterations counts the successes and failures recorded;
	// NeutralIterations and LimitedIterations the neutral ones and those
	// the provider refused, which count nowhere else.
	Iterations, NeutralIterations, LimitedIterations int

	Failures FailureStats
	Progress ProgressStats
	Steps    StepStats

	// The call budget and, while it is spent, the time until a call
	// leaves the hour; the spend and its caps; the provider limit in force
	// and when it lifts (zero: none, or a stop).
	Budget             Budget
	BudgetRetryAfter   time.Duration
	Spend              Spend
	ProviderLimit      Reason
	ProviderLimitUntil time.Time

	Risk     Risk         // superkit's stagnation risk
	Warnings []Reason     // the warnings in force; nil when none is
	History  []Transition // the last 50 transitions, oldest first
}

// FailureStats are the counts of failed iterations and their errors
// ([Stats.Failures]).
type FailureStats struct {
	// Failures since the last success, in all, and in a row with one error.
	Consecutive, Total, SameErrorInARow int
	// Errors in the history, and those it forgot.
	Unique, Evicted int
	// LastFingerprint is the last failure's; "" before the first.
	LastFingerprint string
	// Counts maps each fingerprint in the history to how often it was seen;
	// Samples those that keep one to their text (nil: none).
	Counts  map[string]int
	Samples map[string]ErrorSample
	// Task is the last task named ("" after Resume or Skip), with the
	// iterations and failures in a row on it.
	Task                         string
	TaskIterations, TaskFailures int
	// SkippedTasks are the tasks Skip skipped, oldest first, at most 100.
	SkippedTasks []string
}

// ProgressStats are the counts of what measured iterations achieved
// ([Stats.Progress]).
type ProgressStats struct {
	// Measured iterations in a row without progress, and with denials.
	ConsecutiveNoProgress, ConsecutivePermissionDenials int
	// LastProgress is when an iteration last made progress; zero if none.
	LastProgress time.Time
	// OutputTrend holds up to the last 10 output lengths, oldest first.
	OutputTrend []int
	// LastScore is the last progress score; Score the window's sum.
	LastScore, Score int
	// Successful iterations in a row that reported Done, and only ran
	// tests; iterations in a row that claimed done without it ([Iteration.Claimed]).
	ConsecutiveDoneSignals, ConsecutiveTestOnly, ConsecutiveClaims int
	// Plan is the last plan reported.
	Plan Plan
	// Measured iterations in a row whose passing tests fell, errors rose.
	ConsecutiveTestDeclines, ConsecutiveErrorRises int
}
