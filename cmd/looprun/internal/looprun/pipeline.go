package looprun

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/agent"
)

// An iteration goes in three steps: iterate gathers what it observed (the
// command's end and output, the check, the git tree, the plan), judge, a
// pure function of that, builds the breaker's Iteration, and the runner
// records it. Everything looprun concludes of a run is in judge, and its
// table tests.

// observed is what looprun saw of one iteration, before anything is
// judged.
type observed struct {
	res     result        // how the command ended
	out     outputSeen    // what its output showed
	timeout time.Duration // -timeout, which names a run it stopped
	now     time.Time     // when it ended: a provider limit's reset is read against it
	// command says a command ran; false for the simulated agent, which
	// counts its own files (res.files).
	command bool
	// markerGiven says the done marker is the person's (-done-marker),
	// which counts wherever it is.
	markerGiven bool
	// usage is what the run spent, named by its model and with its cost
	// as the session counts it.
	usage loopbreaker.Usage

	// checked says -check ran (the command passed); checkErr is its
	// failure, checkTests the test counts its output told.
	checked    bool
	checkErr   error
	checkTests testCounter

	// inGit says the directory is in a git repository: filesChanged
	// files changed, and reverted says changes were put back.
	inGit        bool
	filesChanged int
	reverted     bool

	// plan is -plan as the iteration left it (hasPlan: there is one that
	// could be read), and doneBefore its items done before.
	plan       plan
	hasPlan    bool
	doneBefore int
	hadPlan    bool // the plan could be read before the iteration
	// next is the task the plan's first open item named before the
	// iteration: its task, unless the agent says another.
	next string
	// tests is what looprun knew of the tests before the iteration.
	tests testsSeen
}

// outputSeen is what the command's output showed, as the capture read it.
type outputSeen struct {
	length int64
	// run is what the agent's output told of the run (Seen false for a
	// command whose output is no agent's).
	run agent.Run
	// sample is the end of the output, where ExtractError finds the
	// error of a failed run.
	sample string
	// limitText is where a provider limit is looked for, outputErr the
	// error of a run that passed, claimText the agent's last words.
	limitText, outputErr, claimText string
	// block is the agent's last status block (hasBlock: there is one);
	// example says a block was quoted as an example of the format.
	block    statusBlock
	hasBlock bool
	example  bool
	// done says the done marker is in the output where it is the agent's
	// word; changed that the output differs from the last iteration's.
	done, changed bool
}

// observe returns what the capture read of the output; changed says it
// differs from the last iteration's.
func (c *capture) observe(changed bool) outputSeen {
	block, hasBlock := c.statusBlock()
	return outputSeen{
		length: c.length(), run: c.run, sample: c.sample(),
		limitText: c.limitText(), outputErr: c.outputError(), claimText: c.claimText(),
		block: block, hasBlock: hasBlock, example: c.exampleSeen(), done: c.doneMarkerSeen(), changed: changed,
	}
}

// verdict is what judge made of an iteration.
type verdict struct {
	it loopbreaker.Iteration
	// from is where the iteration's error came from: "command" or
	// "check".
	from string
	// limited says the run failed on a provider limit: no failure, and no
	// iteration.
	limited bool
	// outputErr is the error the output of a run that passed showed, which
	// counts toward the same error (it.Noticed) when no check decided.
	outputErr string
	// outputCounted says the output's change stood for the files changed
	// (outside git, with no count of the agent's): the next iteration's
	// output is compared with this one's.
	outputCounted bool
	// tests is what looprun knows of the tests after the iteration.
	tests testsSeen
}

// commandError is the error of the command's run, before any check: a
// provider limit it failed on is a *loopbreaker.LimitError (limited).
func commandError(o *observed) (err error, limited bool) {
	err = runError(o.res, o.out, o.timeout)
	if err == nil || o.res.timedOut || o.res.stalled > 0 || o.out.run.HookEnded {
		return err, false
	}
	// A failed run may have failed on a provider limit: it is no
	// failure, and no iteration, and the same iteration runs again once
	// the limit lifts.
	l, ok := loopbreaker.ProviderLimitInText(o.out.limitText, o.now)
	if kind, named := agent.APIErrorLimit(o.out.run.APIError); named {
		// The agent named the API error it gave up on (Claude Code's
		// stream, or its StopFailure hook): a stop is one whatever the
		// text says; a throttle, unless the text tells more (a reset to
		// wait for, or a stop: a stop from either side wins).
		if !ok || kind == loopbreaker.LimitStop {
			why := firstLine(strings.TrimSpace(o.out.run.Words))
			if why == "" {
				why = err.Error()
			}
			l, ok = loopbreaker.Limit{Kind: kind, Why: why + " (" + o.out.run.APIError + ")"}, true
		}
	}
	if ok {
		return &loopbreaker.LimitError{Limit: l, Err: err}, true
	}
	return err, false
}

// judge builds the breaker's Iteration of what was observed.
func judge(o *observed) verdict {
	v := verdict{from: "command", tests: o.tests}
	runErr, limited := commandError(o)
	it := loopbreaker.Iteration{
		Err:      runErr,
		Progress: &loopbreaker.Progress{OutputLength: int(min(o.out.length, math.MaxInt)), FilesChanged: o.res.files},
		Usage:    o.usage,
	}
	v.limited = limited
	if o.out.run.Seen {
		it.Progress.PermissionDenials = o.out.run.Denials
	}
	// Errors are read from every output: a run that exited 0 may say one.
	v.outputErr = o.out.outputErr
	if it.Err == nil && o.checked {
		it.Err, v.from = o.checkErr, "check"
	}
	if it.Err == nil && !o.checked && v.outputErr != "" {
		// An agent that exits 0 after failing tool calls: the error
		// counts toward the same error, not as a failure.
		it.Noticed = errors.New(v.outputErr)
	}

	block, hasBlock := o.out.block, o.out.hasBlock
	switch {
	case o.inGit:
		it.Progress.FilesChanged = o.filesChanged
	case o.command && hasBlock && block.hasFiles:
		// Outside a git repository, the agent's own count is the best
		// there is.
		it.Progress.FilesChanged = block.filesModified
	case o.command:
		// Outside a git repository nothing tells which files changed: new
		// output counts as one change, the same output as none.
		v.outputCounted = true
		if o.out.changed {
			it.Progress.FilesChanged = 1
		}
	}
	if o.hasPlan {
		it.Plan = &loopbreaker.Plan{Done: o.plan.done, Remaining: o.plan.remaining}
		if o.hadPlan && o.plan.done > o.doneBefore {
			it.Progress.TasksCompleted = o.plan.done - o.doneBefore
		}
	}
	// The marker a person chose counts wherever it is; the default one,
	// EXIT_SIGNAL: true, not in a status block quoted as an example.
	it.Done = o.out.done && (o.markerGiven || !o.out.example)
	claimed := claimsDone(o.out.claimText)
	if hasBlock {
		// The block says what the agent thinks it did; a marker the
		// person chose still counts.
		it.Done = block.done() || o.markerGiven && o.out.done
		it.Progress.TasksCompleted = max(it.Progress.TasksCompleted, block.tasksCompleted)
		it.Work = block.work(it.Progress.FilesChanged)
		it.Approach = block.approach
		it.Task = block.task
	}
	if it.Task == "" {
		it.Task = o.next
	}
	it.Claimed = claimed && !it.Done // done in words, without the done signal
	checkTests := o.checkTests
	v.tests.feed(it.Progress, measureTests(&checkTests, o.checked, block, hasBlock))
	if o.inGit {
		it.Progress.Reverted = o.reverted
	}
	v.it = it
	return v
}

// runError is the error of the command's run: nil for a clean exit that
// the agent's output, if any, does not call a failure. A run looprun's
// -timeout stopped, one -stall ended ("no output for 10m0s"), one that
// exited 124 (the status timeout(1) gives) and
// one a signal ended are named so ("timed out after 15m0s", "timed out
// (exit 124)", "killed by signal 9 (SIGKILL)"): each is a failure, whose
// name is its fingerprint. Otherwise it is the error the agent's output
// tells (Codex's failed turn, or its last command, which failed: Codex
// exits 0 whatever its commands did; a session a hook ended; a Claude
// Code stream cut before its result), the error ExtractError finds in the
// end of the output (see sampleBytes), the agent's own word for it, or
// the exit status.
func runError(res result, out outputSeen, timeout time.Duration) error {
	switch {
	case res.stalled > 0:
		return fmt.Errorf("no output for %s", res.stalled)
	case res.timedOut:
		return fmt.Errorf("timed out after %s", timeout)
	case res.signal != "":
		return fmt.Errorf("killed by %s", res.signal)
	case res.exitCode == 124:
		return errors.New("timed out (exit 124)")
	}
	run := out.run
	if res.exitCode == 0 && !run.Failed {
		return nil
	}
	if run.Err != "" {
		return errors.New(run.Err)
	}
	if msg := loopbreaker.ExtractError(out.sample); msg != "" {
		return errors.New(msg)
	}
	if run.Fallback != "" {
		return errors.New(run.Fallback)
	}
	return fmt.Errorf("exit status %d", res.exitCode)
}

// priced returns what u cost: its CostUSD (Claude Code reports its own),
// else its tokens at its model's price in the breaker's table (Codex and
// Gemini CLI report tokens alone, and the breaker prices them so); 0 for
// a model the table does not price.
func (r *runner) priced(u loopbreaker.Usage) float64 {
	if u.CostUSD > 0 {
		return u.CostUSD
	}
	prices := r.o.cfg.Spend.Prices
	if prices == nil {
		prices = loopbreaker.DefaultPrices()
	}
	cost, _ := prices.Cost(u)
	return cost
}
