package looprun

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// refused handles a refused Check: done, a provider limit, the spend cap,
// the window share, the budget, the burn rate, or an open circuit.
func (r *runner) refused(ctx context.Context, d loopbreaker.Decision) (code int, stop bool) {
	r.refusal = d.Reason
	switch {
	case d.Complete:
		r.stopped = d.Reason.String()
		return exitDone, true
	case d.Reason.Kind == loopbreaker.ReasonProviderLimit:
		return r.providerLimit(ctx, d)
	case d.Reason.Kind == loopbreaker.ReasonProviderStopped:
		return r.providerStopped(ctx, d)
	case d.Reason.Kind == loopbreaker.ReasonSpendCap:
		r.stopped = d.Reason.String()
		return exitBudget, true
	case d.Reason.Kind == loopbreaker.ReasonWindowShare:
		return r.windowShare(ctx, d)
	case d.Reason.Kind == loopbreaker.ReasonCallBudget || d.Reason.Kind == loopbreaker.ReasonHourlySpendCap ||
		d.Reason.Kind == loopbreaker.ReasonBurnRate:
		if !r.o.wait {
			r.stopped = fmt.Sprintf("%s; next call in %s", d.Reason, d.RetryAfter.Round(time.Second))
			return exitBudget, true
		}
		fmt.Fprintf(r.out, "      %s; waiting %s, until %s\n", d.Reason, d.RetryAfter.Round(time.Second),
			r.clock.Now().Add(d.RetryAfter).Format(time.TimeOnly))
		what := "the call budget"
		switch d.Reason.Kind {
		case loopbreaker.ReasonHourlySpendCap:
			what = "the hourly spend cap"
		case loopbreaker.ReasonBurnRate:
			what = "the burn rate"
		}
		return r.waitWithCountdown(ctx, countdown{what: what, until: r.clock.Now().Add(d.RetryAfter)})
	}

	if d.State == loopbreaker.HalfOpen {
		// The probe is in flight elsewhere: this runner records every
		// iteration it runs, and a breaker restored with a probe in
		// flight opens again (probe lost), so only a runner of a shared
		// breaker gets here.
		fmt.Fprintf(r.out, "      circuit %s: another runner has the probe (%s)\n", d.State, d.Reason.Detail())
		if !r.o.wait {
			r.stopped = "another runner has the probe: " + d.Reason.Detail()
			return exitTripped, true
		}
		fmt.Fprintln(r.out, "      waiting for its outcome")
		return r.wait(ctx)
	}
	fmt.Fprintf(r.out, "      circuit %s: %s", d.State, d.Reason.Detail())
	if d.RetryAfter > 0 {
		fmt.Fprintf(r.out, "; probe in %s", d.RetryAfter.Round(time.Second))
	}
	fmt.Fprintln(r.out)
	r.showLastError()
	r.showStuck(d.Reason)
	if r.interactive {
		return r.ask(ctx, d)
	}
	if r.o.wait && d.WaitHelps() {
		return r.waitWithCountdown(ctx, countdown{what: "the probe", until: r.clock.Now().Add(d.RetryAfter)})
	}
	r.stopped = d.Reason.Detail()
	if d.Reason.Kind == loopbreaker.ReasonProtectedFiles {
		return exitProtected, true
	}
	return exitTripped, true
}

// showLastError shows the error of the last failed iteration, at most
// maxErrorLines of it, and where its whole output is: the iteration's
// log. In a run that has seen no failure yet (one that resumed an open
// circuit), the log of the last iteration, if it is there.
func (r *runner) showLastError() {
	last := r.last
	if last.text == "" {
		n := r.cb.Stats().Iterations
		if _, err := os.Stat(r.logs.path(n)); n == 0 || err != nil {
			return
		}
		fmt.Fprintf(r.out, "      output of iteration %d: %s\n", n, r.logs.path(n))
		return
	}
	from := "the command"
	if last.from == "check" {
		from = "the check, " + r.o.check
	}
	fmt.Fprintf(r.out, "      last error (iteration %d, from %s):\n", last.iteration, from)
	for _, line := range strings.Split(last.text, "\n") {
		fmt.Fprintf(r.out, "        %s\n", line)
	}
	fmt.Fprintf(r.out, "      its output: %s\n", last.log)
}

// choose asks the person question and returns the answer, trimmed and in
// lower case: onEnd when the input has ended. It is not ok when ctx ended
// first; r.stopped then says the loop was interrupted.
func (r *runner) choose(ctx context.Context, question, onEnd string) (answer string, ok bool) {
	fmt.Fprint(r.out, question)
	line, err := r.readAnswer(ctx)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(r.out)
		r.stopped = "interrupted"
		return "", false
	case err != nil:
		fmt.Fprintln(r.out, "(the input ended)")
		line = onEnd
	}
	return strings.ToLower(strings.TrimSpace(line)), true
}

// ask offers the choices of GSD's exit.sh pause menu to the person at the
// terminal.
func (r *runner) ask(ctx context.Context, d loopbreaker.Decision) (code int, stop bool) {
	for {
		// With the input ended nobody is left to ask: abort, as GSD's
		// exit.sh does without a terminal.
		answer, ok := r.choose(ctx, "      [r]esume, [s]kip, [w]ait for the probe, [a]bort? ", "abort")
		if !ok {
			return exitInterrupted, true
		}
		switch {
		case answer == "r" || answer == "resume":
			r.cb.Resume()
			fmt.Fprintln(r.out, "      resumed: counters reset, circuit closed")
			return 0, false
		case answer == "s" || answer == "skip":
			r.cb.Skip()
			fmt.Fprintln(r.out, "      skipped: the stuck task is left behind, circuit closed")
			return 0, false
		case answer == "w" || answer == "wait":
			if d.RetryAfter <= 0 {
				fmt.Fprintln(r.out, "      no cooldown ends this; resume, skip or abort")
				continue
			}
			return r.waitWithCountdown(ctx, countdown{what: "the probe", until: r.clock.Now().Add(d.RetryAfter)})
		case answer == "a" || answer == "abort":
			r.cb.Abort()
			r.stopped = "aborted: " + d.Reason.String()
			return exitAborted, true
		}
	}
}

// readAnswer returns the person's next line, or io.EOF when the input has
// ended. A read cannot be interrupted, so a goroutine reads the lines and
// readAnswer waits for one or for ctx: Ctrl+C at the prompt stops the loop
// at once. The goroutine lives until the input ends.
func (r *runner) readAnswer(ctx context.Context) (string, error) {
	r.startReading()
	select {
	case line, ok := <-r.answers:
		if !ok {
			return "", io.EOF
		}
		return line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// clockTime writes t as the runner's clock shows times, in its zone.
func (r *runner) clockTime(t time.Time) string {
	return t.In(r.clock.Now().Location()).Format("2006-01-02 15:04:05 MST")
}

// startReading starts the goroutine that reads the person's lines, once.
func (r *runner) startReading() {
	if r.answers != nil {
		return
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r.in)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	r.answers = lines
}

// wait waits, on the runner's clock, until the breaker lets the next
// iteration run (CircuitBreaker.Wait), or until ctx is done. A refusal
// that no waiting ends goes back to the loop, which handles it.
func (r *runner) wait(ctx context.Context) (code int, stop bool) {
	d, err := r.cb.Wait(ctx)
	if ctx.Err() != nil {
		r.stopped = "interrupted"
		return exitInterrupted, true
	}
	if err == nil {
		r.waited = d
	}
	return 0, false
}
