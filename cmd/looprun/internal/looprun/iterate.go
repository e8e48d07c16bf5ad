package looprun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/agent"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/hook"
)

// maxErrorLines bounds the lines of an error looprun shows at the prompt
// and in the summary; the log holds the rest.
const maxErrorLines = 12

// banner says, before the first iteration, what runs where, what looprun
// watches, and the thresholds in force with the preset they start from.
func (r *runner) banner() {
	fmt.Fprintf(r.out, "looprun: %s in %s\n", r.agent.name(), r.o.dir)
	if r.about != "" {
		fmt.Fprintf(r.out, "breaker: %s\n", r.about)
	}
	var watched []string
	if _, simulated := r.agent.(simulatedAgent); simulated {
		watched = append(watched, "the simulated agent's exit status and errors")
	} else {
		watched = append(watched, "the exit status and the errors in the output (timeouts, signals)")
		if r.o.check != "" {
			watched = append(watched, "-check "+strconv.Quote(r.o.check))
		}
		if r.inGit {
			watched = append(watched, "the files changed in git")
		} else {
			watched = append(watched, "changes in the output (no git repository)")
		}
		watched = append(watched, "the status block (RALPH_STATUS)", agentOutput(r.o.argv))
	}
	marker := "the done marker " + strconv.Quote(r.o.doneMarker)
	if r.o.doneMarker == "" {
		marker = "no done marker"
	}
	watched = append(watched, marker)
	if r.o.plan != "" {
		watched = append(watched, "the plan "+r.o.plan)
	}
	watched = append(watched, fmt.Sprintf("%d protected paths", len(r.o.protect)))
	fmt.Fprintf(r.out, "watching: %s\n", strings.Join(watched, ", "))
	r.watchBanner()
	if advice := checkAdvice(r.o.argv, r.o.check); advice != "" {
		fmt.Fprintln(r.out, "warning:", advice)
	}

	preset := r.o.thresholds.Preset()
	if from := r.o.thresholds.Origin("preset"); from != "" && from != "flag" {
		preset += " from " + from
	}
	limits := []string{"timeout " + r.o.timeout.String()}
	if r.o.maxIterations > 0 {
		limits = append(limits, fmt.Sprintf("max-iterations %d", r.o.maxIterations))
	}
	if r.o.maxCost > 0 {
		limits = append(limits, fmt.Sprintf("max-cost $%.2f", r.o.maxCost))
	}
	if r.o.maxTokens > 0 {
		limits = append(limits, fmt.Sprintf("max-tokens %d", r.o.maxTokens))
	}
	if r.o.costPerMinute > 0 {
		limits = append(limits, fmt.Sprintf("max-cost-per-minute $%.2f", r.o.costPerMinute))
	}
	if r.o.windowShare > 0 {
		then := "wait for its reset"
		if r.o.windowStop {
			then = "stop"
		}
		limits = append(limits, fmt.Sprintf("max-window-share %d%% (then %s)", r.o.windowShare, then))
	}
	if r.o.wait {
		limits = append(limits, "wait")
		if r.o.maxOpens > 0 {
			limits = append(limits, fmt.Sprintf("max-opens %d", r.o.maxOpens))
		}
	}
	if r.o.commit {
		limits = append(limits, "commit after each successful iteration")
	}
	fmt.Fprintf(r.out, "thresholds (preset %s): %s; %s\n", preset,
		strings.Join(r.o.thresholds.Thresholds(r.o.cfg), ", "), strings.Join(limits, ", "))
}

// iterate runs one iteration and records it: it gathers what the
// iteration observed, judges it (judge) and records the Iteration.
func (r *runner) iterate(ctx context.Context, d loopbreaker.Decision) (code int, stop bool) {
	if d.Probe {
		// Save that the probe is running: if it takes the runner down
		// with it (kill -9, the machine), the next start counts it as a
		// failed probe and waits a cooldown, instead of running it again
		// at once.
		if !r.saveOrFail() {
			return exitError, true
		}
	}
	var before treeState
	inGit := false
	_, simulated := r.agent.(simulatedAgent)
	if !simulated {
		before, inGit = gitTree(r.o.dir)
	}
	planBefore, planErr := r.readPlan()
	skipped := r.cb.Stats().Failures.SkippedTasks
	next := ""
	if planErr == nil {
		next = nextTask(planBefore, skipped) // not one a person skipped
	}
	notes, notesFile := r.writeNotes(next, skipped)
	session, err := r.sessions.offer()
	if err != nil {
		fmt.Fprintln(r.errOut, "looprun: session:", err)
	}
	if a, ok := r.agent.(*commandAgent); ok {
		a.session = session
		a.notes, a.notesFile = notes, notesFile
	}
	started := r.clock.Now()
	r.iterations++
	iteration := r.cb.Stats().Iterations + 1
	out, log := r.openOutput(iteration, iteration == r.limited)
	defer r.closeLog(log)
	if !r.o.quiet {
		what := ""
		if next != "" {
			what = ": " + firstLine(next)
		}
		fmt.Fprintf(r.out, "----- iteration %d%s\n", iteration, what)
	}
	hooks := hook.MarkLog(r.o.dir)
	ticker := r.live.startStatus(r.statusText(iteration, "running"))
	res, err := r.agent.run(ctx, iteration, r.shown(out))
	ticker.stop()
	out.finish(res.exitCode)
	r.endLog(out, log)
	if run := &out.run; run.HookEnded && run.HookReason == "" {
		if why := hooks.EndedReason(run.Session); why != "" {
			run.HookReason, run.Err = why, why
		}
	}
	r.reportWindows(out)
	run := out.run
	usage := r.usage(out)
	if errors.Is(err, context.Canceled) {
		// Neutral: nobody failed. What it spent is spent.
		r.live.endLine()
		r.cb.Record(loopbreaker.Iteration{Err: err, Usage: usage})
		r.stopped = "interrupted"
		return exitInterrupted, true
	}
	if err != nil {
		r.live.endLine()
		r.fail(err.Error())
		return exitError, true
	}
	if err := r.sessions.ran(run.Session, run.CostUSD, run.HasCost); err != nil {
		fmt.Fprintln(r.errOut, "looprun: session:", err)
	}

	o := &observed{
		res: res, timeout: r.o.timeout, now: r.clock.Now(), command: len(r.o.argv) > 0,
		markerGiven: r.o.markerGiven, usage: usage, inGit: inGit,
		hadPlan: planErr == nil, doneBefore: planBefore.done, next: next, tests: r.tests,
	}
	sum := out.hash()
	o.out = out.observe(sum != r.lastOutput)
	runErr, limited := commandError(o)
	r.limited = 0
	if limited {
		r.limited = iteration
		r.iterations--
	}
	if runErr == nil && r.o.check != "" {
		checkErr, err := r.runCheck(ctx, iteration, log, &o.checkTests)
		switch {
		case errors.Is(err, context.Canceled):
			r.live.endLine()
			r.cb.Record(loopbreaker.Iteration{Err: err, Usage: usage})
			r.stopped = "interrupted"
			return exitInterrupted, true
		case err != nil:
			r.live.endLine()
			r.fail(err.Error())
			return exitError, true
		}
		o.checked, o.checkErr = true, checkErr
	}
	r.live.endLine()
	if inGit {
		after, _ := gitTree(r.o.dir)
		o.filesChanged = changedFiles(r.o.dir, before, after)
		o.reverted = reverted(r.o.dir, before, after)
	}
	if r.o.plan != "" {
		o.plan, err = r.readPlan()
		o.hasPlan = err == nil
	}

	v := judge(o)
	it := v.it
	r.tests = v.tests
	if v.outputCounted && o.out.changed {
		r.lastOutput = sum
	}
	r.cb.Record(it) // the Guard checks the protected files, and restores what was lost
	if it.Err == nil {
		r.stuck = nil // it got past what it was stuck on: nothing more to tell
	}

	s := r.cb.Stats()
	if s.State == loopbreaker.Open {
		// A stuck conversation is not the one to go on with.
		if err := r.sessions.drop(endCircuitOpen); err != nil {
			fmt.Fprintln(r.errOut, "looprun: session:", err)
		}
	}
	lost := s.State == loopbreaker.Open && s.Reason.Kind == loopbreaker.ReasonProtectedFiles
	r.row(iteration, started, d, it, s, run, usage)
	r.watchIteration(iteration, started, d, it, s, journalRun{cost: r.priced(usage), tokens: usage.Tokens(), turns: run.Turns, from: v.from})
	switch le := (*loopbreaker.LimitError)(nil); {
	case errors.As(it.Err, &le):
	case it.Err != nil:
		r.last = lastError{iteration: iteration, from: v.from, text: errorLines(it.Err.Error()), log: r.logs.path(iteration)}
		what := "error"
		switch {
		case v.from == "check":
			what = "check failed"
		case run.HookReason != "":
			what = "ended by a hook"
		}
		fmt.Fprintf(r.out, "      %s: %s\n", what, firstLine(it.Err.Error()))
	case it.Noticed != nil:
		fmt.Fprintf(r.out, "      note: the command exited 0, and its output has an error, which counts toward the same error (no -check to tell): %s\n", firstLine(v.outputErr))
	}
	if o.out.hasBlock {
		r.showBlock(o.out.block)
	}
	if r.o.commit && it.Err == nil && !limited && !lost && inGit {
		r.commit(iteration, it.Task, it.Progress.FilesChanged)
	}
	if lost {
		// No menu: a person looks at what the agent did before anything
		// runs again.
		r.stopped = s.Reason.String()
		return exitProtected, true
	}
	return 0, false
}

// usage is what the run spent: its usage as the agent's output told it,
// its cost as the session counts it (on --resume Claude Code's
// total_cost_usd is the session's), and, when the output names no model,
// the one the command line runs, for the breaker to price.
func (r *runner) usage(out *capture) loopbreaker.Usage {
	run := out.run
	u := run.Usage
	if run.HasCost {
		u.CostUSD = r.sessions.runCost(run.Session, run.CostUSD)
	}
	if ag, at := agent.Find(r.o.argv); run.HasUsage && u.Model == "" && ag != nil && ag == out.ran && ag.Model != nil {
		u.Model = ag.Model(r.o.argv, at, os.Getenv)
	}
	return u
}

// shown is where the command's output goes: to the capture, and to the
// terminal (or the log looprun's output goes to) unless -quiet.
func (r *runner) shown(c *capture) io.Writer {
	if r.o.quiet {
		return c
	}
	return tee{c, r.live}
}

// tee writes to the capture and shows what it writes. Neither fails.
type tee struct {
	c    *capture
	live *liveOutput
}

func (t tee) Write(p []byte) (int, error) {
	_, _ = t.live.Write(p)
	return t.c.Write(p)
}

// statusText returns the status line of an iteration: what runs, for how
// long, the circuit, and the budget or what was spent.
func (r *runner) statusText(iteration int, what string) func(time.Duration) string {
	s := r.cb.Stats()
	tail := "circuit " + stateName(s)
	switch sp := s.Spend; {
	case s.Budget.Limit > 0:
		used := s.Budget.Used
		if r.shared == nil {
			// The running iteration's call: the breaker counts it when
			// the iteration is recorded (a fleet's, at Check).
			used = min(used+1, s.Budget.Limit)
		}
		tail += fmt.Sprintf(", calls %d/%d this hour", used, s.Budget.Limit)
	case sp.MaxCostUSD > 0:
		tail += fmt.Sprintf(", spent $%.2f of $%.2f", sp.Total.CostUSD, sp.MaxCostUSD)
	case sp.MaxTokens > 0:
		tail += fmt.Sprintf(", spent %d of %d tokens", sp.Total.Tokens(), sp.MaxTokens)
	case sp.Total != (loopbreaker.Usage{}):
		tail += fmt.Sprintf(", spent $%.2f", sp.Total.CostUSD)
	}
	return func(elapsed time.Duration) string {
		return fmt.Sprintf("  ... iteration %d %s %s, %s", iteration, what, elapsed.Round(time.Second), tail)
	}
}

// stateName is the circuit's state as the table shows it: half-open
// before anything opened is the one more chance a signal gives (WATCH).
func stateName(s loopbreaker.Stats) string {
	if s.State == loopbreaker.HalfOpen && s.ConsecutiveOpens == 0 {
		return "WATCH"
	}
	return s.State.String()
}

// row prints the iteration's line of the table.
func (r *runner) row(iteration int, started time.Time, d loopbreaker.Decision, it loopbreaker.Iteration, s loopbreaker.Stats, run agent.Run, usage loopbreaker.Usage) {
	outcome, fp := "ok", "-"
	switch le := (*loopbreaker.LimitError)(nil); {
	case errors.As(it.Err, &le):
		outcome = "LIMIT"
		if le.Limit.Kind == loopbreaker.LimitStop {
			outcome = "STOP"
		}
	case it.Err != nil:
		outcome, fp = "FAIL", loopbreaker.Fingerprint(it.Err.Error())
		if _, seen := r.samples[fp]; !seen {
			r.samples[fp] = firstLine(it.Err.Error())
		}
	case it.Noticed != nil:
		fp = loopbreaker.Fingerprint(it.Noticed.Error())
		if _, seen := r.samples[fp]; !seen {
			r.samples[fp] = firstLine(it.Noticed.Error())
		}
	}
	if d.Probe {
		outcome += "*"
	}
	calls := "-"
	if s.Budget.Limit > 0 {
		calls = fmt.Sprintf("%d/%d", s.Budget.Used, s.Budget.Limit)
	}
	took := r.clock.Now().Sub(started).Round(time.Millisecond).String()
	if run.Seen && run.Turns > 0 {
		took += ", " + strconv.Itoa(run.Turns) + " turn"
		if run.Turns != 1 {
			took += "s"
		}
	}
	if run.HasUsage {
		took += fmt.Sprintf(", $%.4f, %d tokens", r.priced(usage), usage.Tokens())
	}
	fmt.Fprintf(r.out, "%5d  %-8s  %-9s  %-6s  %5d  %7s  %5s  %-6s  %6d  %5d  %6d  %-8s  %s  (%s)\n",
		iteration, started.Format(time.TimeOnly), stateName(s), outcome, it.Progress.FilesChanged,
		r.tests.last.column(), score(s.Progress.LastScore), s.Risk, s.Failures.Consecutive, s.Failures.Total,
		s.Progress.ConsecutiveNoProgress, fp, calls, took)
}

// showBlock prints what the agent's status block said, on a line.
func (r *runner) showBlock(b statusBlock) {
	var parts []string
	if b.status != "" {
		parts = append(parts, b.status)
	}
	if b.hasTasks {
		parts = append(parts, fmt.Sprintf("tasks done %d", b.tasksCompleted))
	}
	if b.hasFiles {
		parts = append(parts, fmt.Sprintf("files modified %d", b.filesModified))
	}
	if b.testsStatus != "" {
		parts = append(parts, "tests "+b.testsStatus)
	}
	if b.workType != "" {
		parts = append(parts, b.workType)
	}
	if b.hasExitSignal {
		parts = append(parts, "exit signal "+strconv.FormatBool(b.exitSignal))
	}
	text := "      agent: " + strings.Join(parts, ", ")
	if b.task != "" {
		text += "; task: " + b.task
	}
	if b.recommendation != "" {
		text += "; next: " + b.recommendation
	}
	fmt.Fprintln(r.out, text)
}

// readPlan reads -plan; an error when there is none or it cannot be read.
func (r *runner) readPlan() (plan, error) {
	if r.o.plan == "" {
		return plan{}, errors.New("no plan")
	}
	return readPlan(filepath.Join(r.o.dir, r.o.plan))
}

// runCheck runs -check after the command passed, in -dir, with the same
// time limit, its output shown as the command's is, added to the
// iteration's log and read by tests for its test counts. failed is the
// iteration's error when the check failed: the error ExtractError finds
// in its output, or how it ended. err is an error that stops the loop: a
// check that cannot run, or ctx's.
func (r *runner) runCheck(ctx context.Context, iteration int, log *os.File, tests *testCounter) (failed, err error) {
	c := newCapture("", nil)
	if log != nil {
		if _, err := fmt.Fprintf(log, "\n[looprun: check: %s]\n", r.o.check); err == nil {
			c = newCapture("", log)
		}
	}
	if !r.o.quiet {
		fmt.Fprintf(r.out, "----- check: %s\n", r.o.check)
	}
	argv := []string{"sh", "-c", r.o.check}
	if runtime.GOOS == "windows" {
		argv = []string{"cmd", "/C", r.o.check}
	}
	ticker := r.live.startStatus(r.statusText(iteration, "check running"))
	res, err := runCommand(ctx, argv, r.o.dir, nil, os.Environ(), r.o.timeout, io.MultiWriter(r.shown(c), tests))
	ticker.stop()
	c.finish(res.exitCode)
	if log != nil {
		if err := c.finishLog(); err != nil {
			fmt.Fprintf(r.errOut, "looprun: iteration log %s: %v\n", log.Name(), err)
		}
	}
	if err != nil {
		return nil, err
	}
	switch {
	case res.timedOut:
		return fmt.Errorf("check timed out after %s", r.o.timeout), nil
	case res.signal != "":
		return fmt.Errorf("check killed by %s", res.signal), nil
	case res.exitCode == 0:
		return nil, nil
	}
	if msg := loopbreaker.ExtractError(c.sample()); msg != "" {
		return errors.New(msg), nil
	}
	return fmt.Errorf("check failed: exit status %d", res.exitCode), nil
}

// commit commits the changes of a successful iteration (-commit), with a
// message that names it. The command is checked as the agent's would be:
// it must not delete a protected path.
func (r *runner) commit(iteration int, task string, files int) {
	message := commitMessage(iteration, task, files)
	if err := r.guard.CheckCommand(commitLine(message), r.o.dir); err != nil {
		fmt.Fprintln(r.errOut, "looprun: not committing:", err)
		return
	}
	hash, committed, err := commitChanges(r.o.dir, message)
	switch {
	case err != nil && err.Error() == r.commitFailed:
		// Said already: a missing git identity fails every commit alike.
	case err != nil:
		r.commitFailed = err.Error()
		fmt.Fprintln(r.errOut, "looprun: commit:", err, "(said once; -commit tries again after each successful iteration)")
	case committed:
		r.commitFailed = ""
		fmt.Fprintf(r.out, "      committed %s: %s\n", hash, message)
	default:
		fmt.Fprintln(r.out, "      nothing to commit")
	}
}

// errorLines returns at most maxErrorLines lines of an error's text.
func errorLines(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > maxErrorLines {
		lines = append(lines[:maxErrorLines], fmt.Sprintf("... (%d more lines)", len(lines)-maxErrorLines))
	}
	for i, l := range lines {
		if len(l) > 300 {
			lines[i] = clip(l, 300)
		}
	}
	return strings.Join(lines, "\n")
}

// openOutput makes the capture of an iteration's output, which writes it
// to the iteration's log. A log that cannot be created is an error on
// stderr, and the iteration runs without one.
// again says the iteration runs again after a provider limit: its log
// goes on after the limited run's.
func (r *runner) openOutput(iteration int, again bool) (*capture, *os.File) {
	log, err := r.logs.create(iteration, again)
	if err != nil {
		fmt.Fprintln(r.errOut, "looprun: iteration log:", err)
		return newCapture(r.o.doneMarker, nil), nil
	}
	return newCapture(r.o.doneMarker, log), log
}

// endLog completes the log with the end of the command's output the
// capture holds.
func (r *runner) endLog(out *capture, log *os.File) {
	if log == nil {
		return
	}
	if err := out.finishLog(); err != nil {
		fmt.Fprintf(r.errOut, "looprun: iteration log %s: %v\n", log.Name(), err)
	}
}

// closeLog closes the iteration's log, and deletes the loop's logs beyond
// the caps.
func (r *runner) closeLog(log *os.File) {
	if log == nil {
		return
	}
	if err := log.Close(); err != nil {
		fmt.Fprintf(r.errOut, "looprun: iteration log %s: %v\n", log.Name(), err)
	}
	if err := r.logs.prune(); err != nil {
		fmt.Fprintln(r.errOut, "looprun: deleting old iteration logs:", err)
	}
}
