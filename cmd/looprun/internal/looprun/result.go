package looprun

import (
	"encoding/json"
	"io"
	"sort"

	"github.com/loopbreaker/loopbreaker"
)

// jsonResult is what -json prints on stdout when the loop ends: why it
// stopped, and the loop's figures. Its fields are snake case and stable;
// new ones may be added.
type jsonResult struct {
	ExitCode int    `json:"exit_code"`
	Exit     string `json:"exit"`    // the exit code's name: done, tripped, ...
	Stopped  string `json:"stopped"` // why the loop stopped, as the summary says it
	// Reason is the breaker's reason, when the breaker stopped the loop:
	// the circuit's (open), the completion's, or the refusal's.
	Reason *jsonReason `json:"reason,omitempty"`
	State  string      `json:"state"` // the circuit's state at the end

	Iterations        int `json:"iterations"`         // run by this process
	TotalIterations   int `json:"total_iterations"`   // over the loop's life
	NeutralIterations int `json:"neutral_iterations"` // interrupted ones
	LimitedIterations int `json:"limited_iterations"` // refused by the provider
	Failures          int `json:"failures"`
	// ConsecutiveFailures are the failures in a row at the end.
	ConsecutiveFailures int `json:"consecutive_failures"`
	Opens               int `json:"opens"`
	// Risk is the stagnation risk at the end: LOW, MEDIUM or HIGH.
	Risk string `json:"risk"`
	// ProgressScore is the last iteration's progress score.
	ProgressScore int `json:"progress_score"`
	// Tests is what the last iteration told of the tests, when it told.
	Tests *jsonTests `json:"tests,omitempty"`
	// Stuck is the analysis of the circuit open at the end: the error,
	// the task, the approaches, and what to try.
	Stuck *jsonStuck `json:"stuck,omitempty"`

	Calls *jsonCalls `json:"calls,omitempty"` // with a call budget
	Spend *jsonSpend `json:"spend,omitempty"` // when anything was spent or capped

	Errors    []jsonError `json:"errors,omitempty"`     // by fingerprint, the most seen first
	LastError *jsonLast   `json:"last_error,omitempty"` // of this run
	StateFile string      `json:"state_file"`
	// Breaker says which breaker the loop asked, when it is not the
	// process's own: a fleet's, with its name and this runner's. The
	// figures above but the iterations are then the fleet's.
	Breaker   string `json:"breaker,omitempty"`
	Logs      string `json:"logs"`
	Session   string `json:"session,omitempty"`
	StateSave string `json:"state_not_saved,omitempty"` // the error, when the state could not be saved
}

type jsonReason struct {
	Kind   string `json:"kind"` // the reason's kind, as snapshots name it: same_error, ...
	Text   string `json:"text"`
	Sample string `json:"sample,omitempty"` // the error's latest text
}

type jsonTests struct {
	Passing *int   `json:"passing,omitempty"` // absent when not told
	Failing int    `json:"failing"`
	Errors  int    `json:"errors"` // outside tests: compile errors, suites that failed to run
	From    string `json:"from"`   // "check" or "status block"
}

type jsonStuck struct {
	Kind         string   `json:"kind"`
	Fingerprint  string   `json:"fingerprint,omitempty"`
	Seen         int      `json:"seen,omitempty"`
	Error        string   `json:"error,omitempty"`
	Task         string   `json:"task,omitempty"`
	TaskFailures int      `json:"task_failures,omitempty"`
	Approaches   string   `json:"approaches,omitempty"`
	Try          []string `json:"try,omitempty"`
	TryFrom      string   `json:"try_from,omitempty"` // whose strategies: superkit's, GSD's
}

type jsonCalls struct {
	Used  int `json:"used"`
	Limit int `json:"limit"`
}

type jsonSpend struct {
	CostUSD      float64 `json:"cost_usd"`
	Tokens       int     `json:"tokens"`
	MaxCostUSD   float64 `json:"max_cost_usd,omitempty"`
	MaxTokens    int     `json:"max_tokens,omitempty"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
}

type jsonError struct {
	Fingerprint string `json:"fingerprint"`
	Count       int    `json:"count"`
	Sample      string `json:"sample,omitempty"` // its first line, as first seen (in an earlier run too, when the breaker kept it)
}

type jsonLast struct {
	Iteration int    `json:"iteration"`
	From      string `json:"from"` // "command" or "check"
	Text      string `json:"text"`
	Log       string `json:"log,omitempty"`
}

// reasonJSON is r as -json prints it; nil for no reason.
func reasonJSON(r loopbreaker.Reason) *jsonReason {
	if r.Kind == loopbreaker.ReasonNone {
		return nil
	}
	kind, err := r.Kind.MarshalText()
	if err != nil {
		kind = []byte(r.Kind.String())
	}
	return &jsonReason{Kind: string(kind), Text: r.String(), Sample: r.Sample}
}

// writeJSON writes the loop's result as one JSON object on a line.
func (r *runner) writeJSON(w io.Writer, code int, saveErr error) error {
	s := r.cb.Stats()
	res := jsonResult{
		ExitCode: code, Exit: exitNames[code], Stopped: r.stopped, State: s.State.String(),
		Iterations: r.iterations, TotalIterations: s.Iterations, NeutralIterations: s.NeutralIterations,
		LimitedIterations: s.LimitedIterations, Failures: s.Failures.Total, Opens: s.Opens,
		ConsecutiveFailures: s.Failures.Consecutive, Risk: s.Risk.String(), ProgressScore: s.Progress.LastScore,
		StateFile: r.state.path(), Logs: r.logs.dir, Breaker: r.about,
	}
	if m := r.tests.last; m.from != "" {
		res.Tests = &jsonTests{Failing: m.counts.failed, Errors: m.counts.errors, From: m.from}
		if m.passedKnown {
			res.Tests.Passing = &m.counts.passed
		}
	}
	if s.State == loopbreaker.Open && s.Reason.Kind != loopbreaker.ReasonNone {
		a := r.analyze(s.Reason)
		kind, _ := s.Reason.Kind.MarshalText()
		res.Stuck = &jsonStuck{Kind: string(kind), Fingerprint: a.fingerprint, Seen: a.seen, Error: a.text,
			Task: a.task, TaskFailures: a.taskFailures, Approaches: a.approaches,
			Try: a.strategies.steps, TryFrom: a.strategies.source}
	}
	switch {
	case s.Complete.Kind != loopbreaker.ReasonNone:
		res.Reason = reasonJSON(s.Complete)
	case s.State != loopbreaker.Closed:
		res.Reason = reasonJSON(s.Reason)
	default:
		res.Reason = reasonJSON(r.refusal)
	}
	if s.Budget.Limit > 0 {
		res.Calls = &jsonCalls{Used: s.Budget.Used, Limit: s.Budget.Limit}
	}
	if sp := s.Spend; sp.Total != (loopbreaker.Usage{}) || sp.MaxCostUSD > 0 || sp.MaxTokens > 0 {
		res.Spend = &jsonSpend{CostUSD: sp.Total.CostUSD, Tokens: sp.Total.Tokens(), MaxCostUSD: sp.MaxCostUSD,
			MaxTokens: sp.MaxTokens, InputTokens: sp.Total.InputTokens, OutputTokens: sp.Total.OutputTokens}
	}
	for fp, n := range s.Failures.Counts {
		res.Errors = append(res.Errors, jsonError{Fingerprint: fp, Count: n, Sample: r.errorSample(fp, s)})
	}
	sort.Slice(res.Errors, func(i, j int) bool {
		a, b := res.Errors[i], res.Errors[j]
		return a.Count > b.Count || a.Count == b.Count && a.Fingerprint < b.Fingerprint
	})
	if r.last.text != "" {
		res.LastError = &jsonLast{Iteration: r.last.iteration, From: r.last.from, Text: r.last.text, Log: r.last.log}
	}
	res.Session, _ = r.sessions.offer()
	if saveErr != nil {
		res.StateSave = saveErr.Error()
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(res)
}

// errorSample is the first line of the error fp stands for, as first
// seen: in this run, or before it, as the breaker kept it (its samples
// outlive a restart); "" when neither has it.
func (r *runner) errorSample(fp string, s loopbreaker.Stats) string {
	if sample := r.samples[fp]; sample != "" {
		return sample
	}
	return firstLine(s.Failures.Samples[fp].First)
}
