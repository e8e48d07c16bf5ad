package loopbreaker

// Plan is the host's task list after an iteration (ralph-claude-code's
// fix_plan.md). Tasks done and none remaining complete the loop.
type Plan struct {
	// Done counts the tasks checked off, Remaining those still open.
	Done      int `json:"done"`
	Remaining int `json:"remaining"`
}

// completionState is what the completion signals remember, as Stats
// reports it, under the same names, and a snapshot stores it, under its
// JSON names.
type completionState struct {
	ConsecutiveDoneSignals int    `json:"consecutive_done_signals"`     // successful iterations in a row with a done signal
	ConsecutiveTestOnly    int    `json:"consecutive_test_only"`        // successful iterations in a row that only ran tests
	ConsecutiveClaims      int    `json:"consecutive_claims,omitempty"` // iterations in a row that claimed done without the done signal
	Plan                   Plan   `json:"plan"`
	PlanComplete           bool   `json:"plan_complete"` // the last successful iteration's plan was complete
	Complete               Reason `json:"complete"`      // why the loop is complete; ReasonNone while it is not
}

// observeCompletion updates the completion signals. Only successful
// iterations can complete the loop: a failure breaks every streak.
// Called with b.mu held.
func (b *CircuitBreaker) observeCompletion(it *Iteration, failed bool) {
	cs := &b.completion
	claims := cs.ConsecutiveClaims
	if it.Claimed && !it.Done {
		cs.ConsecutiveClaims++ // a false claim, whatever the outcome
	} else {
		cs.ConsecutiveClaims = 0
	}
	if failed {
		cs.ConsecutiveDoneSignals, cs.ConsecutiveTestOnly, cs.PlanComplete = 0, 0, false
		return
	}
	if it.Done {
		// The claims just before count as the agent saying it is done:
		// its done signal after them completes the loop at once, as
		// ralph-claude-code's exit gate wants the words and the signal.
		cs.ConsecutiveDoneSignals = addSat(max(cs.ConsecutiveDoneSignals, claims), 1)
	} else {
		cs.ConsecutiveDoneSignals = 0
	}
	if it.Work == WorkTestsOnly {
		cs.ConsecutiveTestOnly++
	} else if it.Work != WorkUnlabelled {
		cs.ConsecutiveTestOnly = 0
	}
	cs.PlanComplete = false
	if it.Plan != nil {
		cs.Plan = *it.Plan
		cs.PlanComplete = it.Plan.Remaining == 0 && it.Plan.Done > 0
	}
}
