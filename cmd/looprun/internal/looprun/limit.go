package looprun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// At a provider limit looprun does what ralph-claude-code does at Claude's
// usage limit: it shows when the limit lifts, and at a terminal it offers
// to wait or to terminate, terminating when nobody answers within
// answerWindow. Without a terminal it waits, up to -limit-wait.
const (
	// answerWindow is how long the prompt at a provider limit waits for
	// an answer before it terminates.
	answerWindow = 30 * time.Second
	// defaultLimitWait is -limit-wait's default: the longest limit
	// looprun waits out unattended.
	defaultLimitWait = 24 * time.Hour
	// countdownStep is how often the countdown of a wait is shown: every
	// second on a terminal, where the line is rewritten, and every
	// logStep in a log.
	countdownStep = time.Second
	logStep       = 15 * time.Minute
)

// errNoAnswer is what answerBy returns when the time ran out.
var errNoAnswer = errors.New("no answer")

// providerLimit handles a refusal at a provider limit that lifts: it
// waits, or terminates with exitProvider.
func (r *runner) providerLimit(ctx context.Context, d loopbreaker.Decision) (code int, stop bool) {
	until := r.clock.Now().Add(d.RetryAfter)
	fmt.Fprintf(r.out, "      %s\n      the limit lifts at %s, in %s\n", d.Reason, r.clockTime(until), d.RetryAfter.Round(time.Second))
	switch {
	case r.interactive:
		deadline := r.clock.Now().Add(answerWindow)
		for {
			answer, err := r.answerBy(ctx, deadline, func(left time.Duration) string {
				return fmt.Sprintf("      [w]ait until %s, or [t]erminate? (terminating in %s) ", until.In(r.clock.Now().Location()).Format(time.TimeOnly), left.Round(time.Second))
			})
			switch {
			case ctx.Err() != nil:
				fmt.Fprintln(r.out)
				r.stopped = "interrupted"
				return exitInterrupted, true
			case errors.Is(err, errNoAnswer):
				fmt.Fprintf(r.out, "\n      no answer in %s: terminating\n", answerWindow)
				r.stopped = fmt.Sprintf("%s; nobody answered within %s", d.Reason, answerWindow)
				return exitProvider, true
			case err != nil:
				fmt.Fprintln(r.out, "(the input ended)")
				r.stopped = fmt.Sprintf("%s; the input ended", d.Reason)
				return exitProvider, true
			}
			switch strings.ToLower(strings.TrimSpace(answer)) {
			case "w", "wait":
				return r.waitOutLimit(ctx, until)
			case "t", "terminate":
				r.stopped = fmt.Sprintf("%s; terminated", d.Reason)
				return exitProvider, true
			}
		}
	case r.o.limitWait > 0 && d.RetryAfter <= r.o.limitWait:
		return r.waitOutLimit(ctx, until)
	}
	r.stopped = fmt.Sprintf("%s; it lifts in %s, ", d.Reason, d.RetryAfter.Round(time.Second))
	if r.o.limitWait > 0 {
		r.stopped += fmt.Sprintf("later than -limit-wait (%s) allows", r.o.limitWait)
	} else {
		r.stopped += "and -limit-wait 0 never waits"
	}
	return exitProvider, true
}

// providerStopped handles a refusal no waiting ends. At a terminal the
// person may resume, once they have dealt with it (topped up the credit,
// raised the cap); otherwise looprun stops with exitProvider.
func (r *runner) providerStopped(ctx context.Context, d loopbreaker.Decision) (code int, stop bool) {
	fmt.Fprintf(r.out, "      %s\n", d.Reason)
	if r.interactive {
		for {
			answer, ok := r.choose(ctx, "      [r]esume (it is dealt with), or [t]erminate? ", "terminate")
			if !ok {
				return exitInterrupted, true
			}
			switch answer {
			case "r", "resume":
				r.cb.Resume()
				fmt.Fprintln(r.out, "      resumed")
				return 0, false
			case "t", "terminate":
				r.stopped = d.Reason.String()
				return exitProvider, true
			}
		}
	}
	r.stopped = d.Reason.String()
	return exitProvider, true
}

// countdown is what a wait that shows a countdown waits for.
type countdown struct {
	what string // "the provider limit", "the call budget", "the probe"
	// inLog says the countdown is shown off a terminal too, a line every
	// logStep; else a line said what is waited for, and the wait is
	// silent there.
	inLog bool
	// until is when what is waited for comes, by the breaker's answer;
	// zero when it does not say. A breaker may wait in short sleeps (a
	// fleet's asks again every second): the countdown shows the time to
	// until, not to the end of the sleep.
	until time.Time
	shown time.Time // when the countdown was last shown
}

// waitWithCountdown waits until the breaker lets the next iteration run,
// showing the time left to what is waited for (r.wait): until c.until.
func (r *runner) waitWithCountdown(ctx context.Context, c countdown) (code int, stop bool) {
	r.countdown = &c
	defer func() { r.countdown = nil }()
	code, stop = r.wait(ctx)
	if r.outTerminal {
		fmt.Fprintln(r.out)
	}
	return code, stop
}

// waitOutLimit waits, showing a countdown, until the provider limit lifts;
// then the iteration it refused runs again.
func (r *runner) waitOutLimit(ctx context.Context, until time.Time) (code int, stop bool) {
	started := r.clock.Now()
	code, stop = r.waitWithCountdown(ctx, countdown{what: "the provider limit", inLog: true, until: until})
	r.watchLimitWaited(r.clock.Now().Sub(started), stop, code)
	if !stop {
		fmt.Fprintln(r.out, "      the limit has lifted: running the iteration again")
	}
	return code, stop
}

// sleep is the breaker's Config.Sleep: the clock's, and while a
// countdown is shown, in steps that show what is left of the wait.
func (r *runner) sleep(ctx context.Context, d time.Duration) error {
	c := r.countdown
	if c == nil || !r.outTerminal && !c.inLog {
		return r.clock.Sleep(ctx, d)
	}
	step := logStep
	if r.outTerminal {
		step = countdownStep
	}
	for d > 0 {
		now := r.clock.Now()
		if c.shown.IsZero() || now.Sub(c.shown) >= step {
			left := d
			if l := c.until.Sub(now); l > left {
				left = l
			}
			r.showCountdown(left)
			c.shown = now
		}
		s := min(d, step)
		if err := r.clock.Sleep(ctx, s); err != nil {
			return err
		}
		d -= s
	}
	return nil
}

// showCountdown shows what is left of a wait: on a terminal by rewriting
// one line, in a log a line each time.
func (r *runner) showCountdown(left time.Duration) {
	text := fmt.Sprintf("      waiting for %s: %s left", r.countdown.what, left.Round(time.Second))
	if r.outTerminal {
		fmt.Fprintf(r.out, "\r%s\x1b[K", text)
		return
	}
	fmt.Fprintln(r.out, text)
}

// answerBy asks with the prompt prompt(left), and returns the person's
// answer, or errNoAnswer when none came by deadline (on the runner's
// clock), io.EOF when the input ended, or ctx's error. On a terminal the
// prompt is shown again each second, with the time left.
func (r *runner) answerBy(ctx context.Context, deadline time.Time, prompt func(left time.Duration) string) (string, error) {
	r.startReading()
	shown := false
	for {
		left := deadline.Sub(r.clock.Now())
		if left <= 0 {
			return "", errNoAnswer
		}
		switch {
		case r.outTerminal:
			fmt.Fprintf(r.out, "\r%s\x1b[K", prompt(left))
		case !shown:
			fmt.Fprint(r.out, prompt(left))
		}
		shown = true
		line, answered, err := r.answerFor(ctx, min(left, countdownStep))
		if answered || ctx.Err() != nil {
			if r.outTerminal && answered && err == nil {
				fmt.Fprintln(r.out)
			}
			return line, err
		}
	}
}

// answerFor waits up to d, on the runner's clock, for the person's next
// line; answered is false when d passed first.
func (r *runner) answerFor(ctx context.Context, d time.Duration) (line string, answered bool, err error) {
	sleepCtx, cancel := context.WithCancel(ctx)
	slept := make(chan struct{})
	go func() {
		defer close(slept)
		_ = r.clock.Sleep(sleepCtx, d)
	}()
	defer func() {
		cancel()
		<-slept
	}()
	select {
	case line, ok := <-r.answers:
		if !ok {
			return "", true, io.EOF
		}
		return line, true, nil
	case <-ctx.Done():
		return "", false, ctx.Err()
	case <-slept:
		return "", false, nil
	}
}
