package looprun

import (
	"fmt"
	"strings"

	"github.com/loopbreaker/loopbreaker"
)

// stuckAnalysis is what looprun makes of a loop whose circuit opened, as
// GSD's exit.sh shows an analysis of the failures at its pause menu: why
// it opened, the error it kept meeting, the task it kept failing on, the
// approaches it went round, and what to try instead, from superkit's
// table of recovery strategies. The pause shows it, -json has it, and
// the next iteration's agent is told it (see notes.go).
type stuckAnalysis struct {
	reason loopbreaker.Reason // why the circuit opened

	// The error the loop kept meeting: its fingerprint, how often it was
	// seen, and its latest text (the whole error, for the last failure of
	// this run: up to maxErrorLines lines).
	fingerprint string
	seen        int
	text        string
	from        string // "the command", "the check, go test ./..."; "" when not known

	task         string // the task it was on
	taskFailures int    // failures in a row on it

	approaches string // the approaches that went round, " | " between them

	tests testMeasure // what the last iteration told of the tests
	score int         // the progress score of the last iteration
	risk  loopbreaker.Risk

	strategies strategies
}

// analyze makes the analysis of the circuit that opened for reason, from
// the breaker's figures (before a person's Resume or Skip forgets the
// errors).
func (r *runner) analyze(reason loopbreaker.Reason) *stuckAnalysis {
	s := r.cb.Stats()
	a := &stuckAnalysis{reason: reason, tests: r.tests.last, score: s.Progress.LastScore, risk: s.Risk}
	fp := reason.Fingerprint
	if strings.Contains(fp, "/") || fp == "" {
		fp = "" // a circle's approaches, or no error: the last failure's
		if s.Failures.Consecutive > 0 {
			fp = s.Failures.LastFingerprint
		}
	}
	if fp != "" {
		a.fingerprint, a.seen = fp, s.Failures.Counts[fp]
		a.text = s.Failures.Samples[fp].Latest
		if a.text == "" {
			a.text = reason.Sample
		}
		if r.last.text != "" && loopbreaker.Fingerprint(r.last.text) == fp {
			a.text, a.from = r.last.text, "the command"
			if r.last.from == "check" {
				a.from = "the check, " + r.o.check
			}
		}
	}
	if s.Failures.TaskFailures > 0 {
		a.task, a.taskFailures = s.Failures.Task, s.Failures.TaskFailures
	} else if reason.Task != "" {
		a.task = reason.Task
	}
	kind := reason.Kind
	if kind == loopbreaker.ReasonGaveUp || kind == loopbreaker.ReasonAborted && reason.Last != loopbreaker.ReasonNone {
		kind = reason.Last // the signal behind it
	}
	if kind == loopbreaker.ReasonCircularApproach {
		a.approaches = reason.Action
	}
	a.strategies = strategiesFor(kind)
	return a
}

// showStuck shows, at the pause, the analysis of the circuit that opened
// for reason, and keeps it for the agent of the next iteration.
func (r *runner) showStuck(reason loopbreaker.Reason) {
	r.stuck = r.analyze(reason)
	if len(r.stuck.strategies.steps) == 0 {
		return // not stuck: held for protected files, aborted, forced open
	}
	for _, line := range r.stuck.lines() {
		fmt.Fprintf(r.out, "      %s\n", line)
	}
}

// lines returns the analysis as the pause shows it, under the reason and
// the last error: a few short lines.
func (a *stuckAnalysis) lines() []string {
	var out []string
	var what []string
	if a.fingerprint != "" && a.seen > 0 {
		what = append(what, fmt.Sprintf("error %s seen %d times", a.fingerprint, a.seen))
	}
	if a.task != "" {
		t := fmt.Sprintf("task %q", firstLine(a.task))
		if a.taskFailures > 0 {
			t += fmt.Sprintf(", %d failures in a row", a.taskFailures)
		}
		what = append(what, t)
	}
	if a.approaches != "" {
		what = append(what, "approaches going round: "+a.approaches)
	}
	if len(what) > 0 {
		out = append(out, "stuck: "+strings.Join(what, "; "))
	}
	state := []string{}
	if a.tests.from != "" {
		state = append(state, "tests "+a.tests.words())
	}
	state = append(state, "progress score "+score(a.score), "risk "+a.risk.String())
	out = append(out, strings.Join(state, "; "))
	if len(a.strategies.steps) > 0 {
		out = append(out, "try ("+a.strategies.source+"):")
		for i, step := range a.strategies.steps {
			out = append(out, fmt.Sprintf("  %d. %s", i+1, step))
		}
	}
	return out
}

// words says the tests in words: "40 passing, 2 failing".
func (m testMeasure) words() string {
	var parts []string
	if m.passedKnown {
		parts = append(parts, fmt.Sprintf("%d passing", m.counts.passed))
	}
	if m.failedKnown {
		parts = append(parts, fmt.Sprintf("%d failing", m.counts.failed))
		if m.counts.errors > 0 {
			parts = append(parts, fmt.Sprintf("%d errors", m.counts.errors))
		}
	}
	return strings.Join(parts, ", ") + " (" + m.from + ")"
}

// strategies are the ways out of a kind of stuck, and whose table they
// come from.
type strategies struct {
	source string   // "superkit's recovery strategies for the same error"
	steps  []string // in the order to try them
}

// escalate is superkit's last strategy for every kind, "escalate", said
// to the agent: tell the person, in the status block.
const escalate = "if none works, stop and say so: STATUS: BLOCKED, with what you tried"

// strategiesFor returns what to try when the circuit opened for kind:
// superkit's recovery strategy table for no progress, identical errors,
// the test-fix loop and the circular approach, in its order; GSD's
// exit.sh, for a task that keeps failing, checks its prerequisites first.
func strategiesFor(kind loopbreaker.ReasonKind) strategies {
	switch kind {
	case loopbreaker.ReasonSameTask:
		return strategies{"GSD's exit.sh, then superkit's recovery strategies for no progress", []string{
			"check what the task needs first: a step before it, a dependency, a setting",
			"break the task into three or more smaller ones",
			"leave it for the next task, and come back to it later",
			escalate,
		}}
	case loopbreaker.ReasonNoProgress, loopbreaker.ReasonProgressScore, loopbreaker.ReasonOutputDecline:
		return strategies{"superkit's recovery strategies for no progress", []string{
			"plan the task again from a fresh look at it",
			"break the task into three or more smaller ones",
			"leave it for the next task, and come back to it later",
			escalate,
		}}
	case loopbreaker.ReasonSameError, loopbreaker.ReasonSameErrorInARow, loopbreaker.ReasonConsecutiveFailures,
		loopbreaker.ReasonProbeFailed, loopbreaker.ReasonProbeLost, loopbreaker.ReasonRepeatedActionError,
		loopbreaker.ReasonRepeatedActionObservation:
		return strategies{"superkit's recovery strategies for the same error", []string{
			"change the approach entirely",
			"check whether the error comes from the environment (a tool, a service, a setting), not the code",
			"look for a known issue or a workaround for this error",
			escalate + ", and the error",
		}}
	case loopbreaker.ReasonTestFixLoop:
		return strategies{"superkit's recovery strategies for a test-fix loop", []string{
			"question what the tests assume",
			"check whether the way the code is built is what fails them",
			"make what you implement smaller",
			escalate + ", and what the tests check",
		}}
	case loopbreaker.ReasonFalseCompletion:
		return strategies{"ralph-claude-code's exit gate: the words and the signal together", []string{
			"read the plan again: if every item is done and the tests pass, end the status block with EXIT_SIGNAL: true",
			"otherwise take the next open item, and do not say the work is done",
			escalate,
		}}
	case loopbreaker.ReasonCircularApproach, loopbreaker.ReasonCycle, loopbreaker.ReasonMonologue:
		return strategies{"superkit's recovery strategies for a circular approach", []string{
			"step back and look for the root cause again",
			"try an approach you have not tried yet",
			"cut the scope down to the smallest version that works",
			escalate + ", and the approaches",
		}}
	}
	return strategies{}
}
