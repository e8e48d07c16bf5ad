package loopbreaker

// Plan is the host's task list (seed 002's fix_plan.md) as of the end of
// an iteration.
type Plan struct {
	// Done counts the tasks checked off.
	Done int `json:"done"`
	// Remaining counts the tasks still open. Zero remaining with at least
	// one done completes the loop; a plan with no tasks at all does not
	// (the agent may not have written it yet).
	Remaining int `json:"remaining"`
}

// completionState is what the completion signals remember.
type completionState struct {
	consecutiveDone     int // successful iterations in a row with a done signal
	consecutiveTestOnly int // successful iterations in a row that only ran tests
	plan                Plan
	planComplete        bool // the last successful iteration's plan was complete

	complete Reason // why the loop is complete; ReasonNone while it is not
}

// observeCompletion updates the completion signals. Only successful
// iterations can complete the loop: a failure breaks every streak.
// Called with b.mu held.
func (b *CircuitBreaker) observeCompletion(it *Iteration, failed bool) {
	cs := &b.completion
	if failed {
		cs.consecutiveDone, cs.consecutiveTestOnly, cs.planComplete = 0, 0, false
		return
	}
	if it.Done {
		cs.consecutiveDone++
	} else {
		cs.consecutiveDone = 0
	}
	if it.Work == WorkTestsOnly {
		cs.consecutiveTestOnly++
	} else if it.Work != WorkUnlabelled {
		cs.consecutiveTestOnly = 0
	}
	cs.planComplete = false
	if it.Plan != nil {
		cs.plan = *it.Plan
		cs.planComplete = it.Plan.Remaining == 0 && it.Plan.Done > 0
	}
}
