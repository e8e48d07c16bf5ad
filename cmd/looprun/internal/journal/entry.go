// Package journal is a loop's journal: what happened, one JSON line per
// iteration and per event, in .loopbreaker/<loop>.journal.jsonl. The
// state file holds what the breaker needs to go on; the journal holds
// what a person needs to see what the loop did (looprun report draws it),
// and its events are what looprun's notifications send.
package journal

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// Kind names what an entry tells. The names are stable: a receiver of the
// notifications switches on them.
type Kind string

// The kinds of entries. Those that Notified reports true for are sent to
// -notify and -on-event; the others are the journal's alone.
const (
	// Started: looprun started the loop (its command, its caps).
	Started Kind = "loop_started"
	// IterationRan: an iteration ran and was recorded, or the provider
	// refused it (a limit).
	IterationRan Kind = "iteration"
	// CircuitOpened: the circuit opened: a signal, a failed or lost probe,
	// a person's abort, a host's ForceOpen. Reason says why, Stuck what
	// the loop was stuck on.
	CircuitOpened Kind = "circuit_opened"
	// GaveUp: the circuit opened once too often in a row: the breaker
	// gives up, and a person must look.
	GaveUp Kind = "gave_up"
	// HalfOpen: the cooldown is over; the next iteration is the probe.
	HalfOpen Kind = "half_open"
	// CircuitClosed: the circuit closed again: the probe passed, or a
	// person resumed or skipped.
	CircuitClosed Kind = "circuit_closed"
	// ProviderLimit: the provider refused (a usage or rate limit, no
	// credit); Limit says until when, and whether it is waited out.
	ProviderLimit Kind = "provider_limit"
	// LimitWaited: a wait for a provider limit ended (waited out, or
	// stopped).
	LimitWaited Kind = "limit_waited"
	// SpendWarning: the spend reached 80% of a cap.
	SpendWarning Kind = "spend_warning"
	// SpendCap: the spend reached a cap; the loop stops.
	SpendCap Kind = "spend_cap"
	// ProtectedFiles: protected files were lost, and restored.
	ProtectedFiles Kind = "protected_files"
	// SessionEnded: looprun's hook ended the agent's session (the
	// breaker inside it tripped, or a spend cap).
	SessionEnded Kind = "session_ended"
	// Ended: looprun stopped, for the reason Exit says.
	Ended Kind = "loop_ended"
)

// KindOf returns the kind of entry that tells of transition t: what it
// means to a person. A transition of no kind of its own (a resume of a
// closed circuit, a completion) is named by its cause.
func KindOf(t loopbreaker.Transition) Kind {
	switch {
	case t.Cause == loopbreaker.CauseProviderLimit:
		return ProviderLimit
	case t.To == loopbreaker.Open && t.Reason.Kind == loopbreaker.ReasonGaveUp:
		return GaveUp
	case t.To == loopbreaker.Open && t.Cause == loopbreaker.CauseProtectedFiles:
		return ProtectedFiles
	case t.To == loopbreaker.Open:
		return CircuitOpened
	case t.To == loopbreaker.HalfOpen:
		return HalfOpen
	case t.To == loopbreaker.Closed && t.From != loopbreaker.Closed:
		return CircuitClosed
	}
	return Kind(t.Cause.String())
}

// Notified reports whether entries of kind k are sent as notifications.
func (k Kind) Notified() bool {
	switch k {
	case CircuitOpened, GaveUp, CircuitClosed, ProviderLimit, SpendWarning, SpendCap, ProtectedFiles, SessionEnded, Ended:
		return true
	}
	return false
}

// NotifiedKinds are the kinds Notified reports true for, in the order the
// documentation lists them.
var NotifiedKinds = []Kind{CircuitOpened, GaveUp, CircuitClosed, ProviderLimit, SpendWarning, SpendCap, ProtectedFiles, SessionEnded, Ended}

// Sources of entries.
const (
	FromLooprun = "looprun" // the loop runner
	FromHook    = "hook"    // looprun's hook inside the agent's session
)

// Entry is one line of the journal, and one notification. Fields an
// entry's kind does not carry are left out of its JSON.
type Entry struct {
	// Kind is what the entry tells; Text says it in a sentence, as a chat
	// shows it (Slack-compatible webhooks show the JSON's text).
	Kind Kind      `json:"event"`
	Text string    `json:"text"`
	At   time.Time `json:"at"`

	// Where: the loop, its working directory and the machine; the
	// source (looprun or its hook) and, for the hook, the agent's session;
	// on a fleet, the fleet and this runner's name in it.
	Loop    string `json:"loop"`
	Dir     string `json:"dir,omitempty"`
	Host    string `json:"host,omitempty"`
	Source  string `json:"source,omitempty"`
	Session string `json:"session,omitempty"`
	Fleet   string `json:"fleet,omitempty"`
	Worker  string `json:"worker,omitempty"`

	// Iteration is the loop's iteration count when it happened (the
	// iteration's own number, for an iteration); State the circuit after
	// it: CLOSED, OPEN, HALF_OPEN.
	Iteration int    `json:"iteration,omitempty"`
	State     string `json:"state,omitempty"`

	Transition *Transition `json:"transition,omitempty"`
	Reason     *Reason     `json:"reason,omitempty"`
	Run        *Run        `json:"run,omitempty"`
	Spend      *Spend      `json:"spend,omitempty"`
	Limit      *Limit      `json:"limit,omitempty"`
	Stuck      *Stuck      `json:"stuck,omitempty"`
	Start      *Start      `json:"start,omitempty"`
	Exit       *Exit       `json:"exit,omitempty"`
}

// Transition is a change of the circuit's state, as the breaker's
// history records it.
type Transition struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Cause string `json:"cause"` // signal, cooldown_over, probe_succeeded, resume, skip, ...
}

// Reason is why the circuit opened, the loop completed, or the provider
// refused: the reason's kind as snapshots name it, and its text.
type Reason struct {
	Kind   string `json:"kind"`
	Text   string `json:"text"`
	Sample string `json:"sample,omitempty"` // the error's latest text, when the reason is an error's
}

// ReasonOf returns r as an entry tells it; nil for no reason.
func ReasonOf(r loopbreaker.Reason) *Reason {
	if r.Kind == loopbreaker.ReasonNone {
		return nil
	}
	kind, err := r.Kind.MarshalText()
	if err != nil {
		kind = []byte(r.Kind.String())
	}
	return &Reason{Kind: string(kind), Text: r.String(), Sample: r.Sample}
}

// Results of an iteration (Run.Result).
const (
	ResultOK      = "ok"      // it passed
	ResultFailed  = "failed"  // the command or its check failed
	ResultLimited = "limited" // a provider limit that lifts: no iteration, run again later
	ResultStopped = "stopped" // a provider limit no waiting ends
)

// Run is what an iteration did.
type Run struct {
	Result string `json:"result"` // ok, failed, limited, stopped
	// Probe says it was the half-open probe.
	Probe    bool          `json:"probe,omitempty"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration_ns"`
	// Files changed; the tests it told (nil when it told none); its
	// progress score; the stagnation risk after it.
	Files int    `json:"files"`
	Tests *Tests `json:"tests,omitempty"`
	Score int    `json:"score"`
	Risk  string `json:"risk,omitempty"`
	// The failures in a row and in all, and the iterations in a row
	// without progress, after it.
	Consecutive int `json:"consecutive_failures"`
	Failures    int `json:"failures"`
	NoProgress  int `json:"no_progress"`
	// The error: its fingerprint, its first lines, and where it came
	// from (command, check); Noticed says the run passed and its output
	// had the error, which counts toward the same error.
	Fingerprint string `json:"fingerprint,omitempty"`
	Error       string `json:"error,omitempty"`
	ErrorFrom   string `json:"error_from,omitempty"`
	Noticed     bool   `json:"noticed,omitempty"`
	// What the iteration spent, and its agent's turns (Claude Code's).
	CostUSD float64 `json:"cost_usd,omitempty"`
	Tokens  int     `json:"tokens,omitempty"`
	Turns   int     `json:"turns,omitempty"`
	// Calls is the call budget used after it, of Budget (0: no budget).
	Calls  int `json:"calls,omitempty"`
	Budget int `json:"budget,omitempty"`
	// Task is the task it worked on.
	Task string `json:"task,omitempty"`
	// Log is the iteration's log, relative to the state directory
	// (logs/loop-3.log).
	Log string `json:"log,omitempty"`
}

// Tests are the test counts an iteration told.
type Tests struct {
	Passing *int   `json:"passing,omitempty"` // nil: not told
	Failing int    `json:"failing"`
	Errors  int    `json:"errors"`
	From    string `json:"from,omitempty"` // check, status block
}

// Spend is what the loop has spent over its life, and its caps (zero: no
// cap).
type Spend struct {
	CostUSD      float64 `json:"cost_usd"`
	Tokens       int     `json:"tokens"`
	InputTokens  int     `json:"input_tokens,omitempty"`
	OutputTokens int     `json:"output_tokens,omitempty"`
	MaxCostUSD   float64 `json:"max_cost_usd,omitempty"`
	MaxTokens    int     `json:"max_tokens,omitempty"`
}

// SpendOf returns the spend s holds; nil when nothing was spent or capped.
func SpendOf(s loopbreaker.Spend) *Spend {
	if s.Total == (loopbreaker.Usage{}) && s.MaxCostUSD <= 0 && s.MaxTokens <= 0 {
		return nil
	}
	return &Spend{
		CostUSD: s.Total.CostUSD, Tokens: s.Total.Tokens(), InputTokens: s.Total.InputTokens,
		OutputTokens: s.Total.OutputTokens, MaxCostUSD: s.MaxCostUSD, MaxTokens: s.MaxTokens,
	}
}

// Limit is a provider limit: the provider's words and when it lifts
// (zero for a stop, which no waiting ends), and for LimitWaited how long
// the loop waited and how the wait ended.
type Limit struct {
	Kind   string        `json:"kind"` // wait, stop
	Text   string        `json:"text,omitempty"`
	Until  time.Time     `json:"until,omitzero"`
	Waited time.Duration `json:"waited_ns,omitempty"`
	Ended  string        `json:"ended,omitempty"` // lifted, terminated, interrupted
}

// Stuck is what the loop was stuck on when the circuit opened: the error
// it kept meeting, the task, the approaches that went round, and what to
// try instead.
type Stuck struct {
	Fingerprint  string   `json:"fingerprint,omitempty"`
	Seen         int      `json:"seen,omitempty"`
	Error        string   `json:"error,omitempty"`
	ErrorFrom    string   `json:"error_from,omitempty"`
	Task         string   `json:"task,omitempty"`
	TaskFailures int      `json:"task_failures,omitempty"`
	Approaches   string   `json:"approaches,omitempty"`
	Tests        string   `json:"tests,omitempty"` // "40 passing, 2 failing (check)"
	Score        int      `json:"score"`
	Risk         string   `json:"risk,omitempty"`
	Try          []string `json:"try,omitempty"`
	TryFrom      string   `json:"try_from,omitempty"`
}

// Start is how the loop was started: its command and the caps in force.
type Start struct {
	Command      string  `json:"command"`
	Version      string  `json:"version,omitempty"`
	MaxCostUSD   float64 `json:"max_cost_usd,omitempty"`
	MaxTokens    int     `json:"max_tokens,omitempty"`
	CallsPerHour int     `json:"calls_per_hour,omitempty"`
	Resumed      bool    `json:"resumed,omitempty"` // from a saved state
}

// Exit is why looprun stopped: its exit code, the code's name (done,
// tripped, ...) and the reason in words.
type Exit struct {
	Code    int    `json:"code"`
	Name    string `json:"name"`
	Stopped string `json:"stopped"`
	// This run's iterations, and the loop's over its life.
	Iterations      int `json:"iterations"`
	TotalIterations int `json:"total_iterations"`
}

// Encode returns e as one line of JSON, newline included.
func (e Entry) Encode() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // an error's <nil> stays readable
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
