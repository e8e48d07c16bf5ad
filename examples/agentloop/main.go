// Command agentloop runs a simulated agent under a loopbreaker.CircuitBreaker
// and prints one status line per iteration. It needs no network and no
// setup:
//
//	go run ./examples/agentloop
//	go run ./examples/agentloop -preset migration-safety
//	go run ./examples/agentloop -preset refactor -failures 4
//	go run ./examples/agentloop -scenario stall
//
// The agent's iterations are scripted. In the default scenario, same-error,
// a flaky stretch recovers, then the same error keeps coming back until the
// breaker trips; after the cooldown one probe runs, fails the same way, and
// the loop stops. In the stall scenario the agent never fails: it changes
// files for a while, then keeps succeeding without changing anything, its
// output shrinking, and the breaker stops it. Time is simulated, so the
// cooldown passes at once.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/thresholdflags"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agentloop:", err)
		os.Exit(2)
	}
}

// step is one scripted iteration: nil is a success.
type step error

// scenarios are the simulated agents, by name.
var scenarios = map[string]func() []loopbreaker.Iteration{
	"same-error": sameErrorScript,
	"stall":      stallScript,
}

// stallScript returns an agent that makes progress for a while, then keeps
// succeeding without changing anything.
func stallScript() []loopbreaker.Iteration {
	worked := func(files, tests, output int) loopbreaker.Iteration {
		return loopbreaker.Iteration{Progress: &loopbreaker.Progress{FilesChanged: files, TestsPassing: tests, OutputLength: output}}
	}
	return []loopbreaker.Iteration{
		worked(3, 10, 4200),
		worked(2, 14, 3900),
		worked(0, 14, 3100), // nothing changed...
		worked(1, 15, 3500), // ...but it recovers
		worked(0, 15, 2600), // then it stalls for good
		worked(0, 15, 2400),
		worked(0, 15, 2300), // the one more chance, wasted
		worked(0, 15, 2200),
		worked(0, 15, 2100),
	}
}

// sameErrorScript returns the default agent's iterations.
func sameErrorScript() []loopbreaker.Iteration {
	its := []loopbreaker.Iteration{}
	for _, s := range script() {
		its = append(its, loopbreaker.Iteration{Err: s})
	}
	return its
}

// script returns the failures of the same-error agent.
func script() []step {
	timeout := func(secs string) step {
		return fmt.Errorf("dial tcp 10.0.0.7:443: i/o timeout after %ss", secs)
	}
	typeErr := func(line, col int) step {
		return fmt.Errorf("TypeError: Cannot read property 'id' of undefined at UserController (/src/controllers/user.ts:%d:%d)", line, col)
	}
	return []step{
		nil,
		timeout("30.2"), // a flaky stretch...
		timeout("31.9"),
		nil, // ...that recovers
		nil,
		typeErr(42, 15), // then the same error keeps coming back
		nil,
		typeErr(57, 15),
		typeErr(61, 9),
		nil,
		typeErr(63, 15),
		nil,
		typeErr(70, 22),
		typeErr(71, 22), // the probe after the cooldown
		nil,
		nil,
	}
}

// run parses the flags, runs the loop and writes the log to out.
func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("agentloop", flag.ContinueOnError)
	fs.SetOutput(out)
	thresholds := thresholdflags.Register(fs, "failures", "same-errors", "no-progress", "cooldown")
	scenario := fs.String("scenario", "same-error", "simulated agent: same-error or stall")
	if err := fs.Parse(args); err != nil {
		return err
	}
	agent, ok := scenarios[*scenario]
	if !ok {
		return fmt.Errorf("unknown scenario %q (known: same-error, stall)", *scenario)
	}
	cfg, err := thresholds.Config()
	if err != nil {
		return err
	}
	preset := thresholds.Preset()

	now := time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)
	// Simulated time: Sleep advances the clock, so waiting out a cooldown
	// takes no time. A real host leaves Now and Sleep nil.
	cfg.Now = func() time.Time { return now }
	cfg.Sleep = func(ctx context.Context, d time.Duration) error {
		now = now.Add(d)
		return ctx.Err()
	}
	// One probe after the cooldown: if it fails too, the breaker gives up.
	cfg.MaxConsecutiveOpens = 2
	cb, err := loopbreaker.New(cfg)
	if err != nil {
		return err
	}

	fmt.Fprintf(out, "scenario %s, preset %s: trip after %s consecutive failures, the same error %s times or %s iterations without progress; cooldown %s\n\n",
		*scenario, preset, threshold(cfg.Failures.MaxConsecutive), threshold(cfg.Failures.MaxSameError), threshold(cfg.Progress.MaxNoProgress), cfg.Cooldown)
	fmt.Fprintf(out, "%4s  %-8s  %-9s  %6s  %5s  %6s  %10s  %-11s  %s\n", "iter", "time", "state", "consec", "total", "unique", "noprogress", "fingerprint", "outcome")

	var stop error // why the loop stopped early, if it did
	for i, it := range agent() {
		d := cb.Check()
		if !d.Allow && d.WaitHelps() {
			// Wait out the cooldown, and probe.
			fmt.Fprintf(out, "      circuit open: %s; waiting %s for the probe\n", d.Reason, d.RetryAfter)
			d, _ = cb.Wait(context.Background())
		}
		if !d.Allow {
			stop = d.Err()
			break
		}
		cb.Record(it)
		now = now.Add(20 * time.Second) // an iteration takes a while

		st := cb.Stats()
		outcome, fp := "ok", "-"
		if it.Err != nil {
			outcome, fp = it.Err.Error(), st.Failures.LastFingerprint
		} else if p := it.Progress; p != nil {
			outcome = fmt.Sprintf("ok: %d files changed, %d tests passing, %d bytes of output", p.FilesChanged, p.TestsPassing, p.OutputLength)
		}
		if d.Probe {
			outcome = "probe: " + outcome
		}
		fmt.Fprintf(out, "%4d  %-8s  %-9s  %6d  %5d  %6d  %10d  %-11s  %s\n",
			i+1, now.Format(time.TimeOnly), st.State, st.Failures.Consecutive, st.Failures.Total, st.Failures.Unique, st.Progress.ConsecutiveNoProgress, fp, outcome)
	}

	st := cb.Stats()
	fmt.Fprintln(out)
	if stop != nil {
		var open *loopbreaker.RefusedError
		if errors.As(stop, &open) {
			fmt.Fprintf(out, "stopped: %s (reason kind %s)\n", open.Reason, open.Reason.Kind)
		}
	} else {
		fmt.Fprintln(out, "script finished with the circuit", st.State)
	}
	fmt.Fprintf(out, "stats: iterations=%d total_failures=%d unique_errors=%d opens=%d no_progress=%d output_trend=%v\n",
		st.Iterations, st.Failures.Total, st.Failures.Unique, st.Opens, st.Progress.ConsecutiveNoProgress, st.Progress.OutputTrend)
	fps := make([]string, 0, len(st.Failures.Counts))
	for fp := range st.Failures.Counts {
		fps = append(fps, fp)
	}
	sort.Slice(fps, func(i, j int) bool { // most seen first
		a, b := st.Failures.Counts[fps[i]], st.Failures.Counts[fps[j]]
		return a > b || a == b && fps[i] < fps[j]
	})
	for _, fp := range fps {
		fmt.Fprintf(out, "  %s  seen %d times\n", fp, st.Failures.Counts[fp])
	}
	return nil
}

// threshold renders a threshold for the header: negative means off.
func threshold(n int) string {
	if n < 0 {
		return "off"
	}
	return fmt.Sprint(n)
}
