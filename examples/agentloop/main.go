// Command agentloop runs a simulated agent under a loopbreaker.CircuitBreaker
// and prints one status line per iteration. It needs no network and no
// setup:
//
//	go run ./examples/agentloop
//	go run ./examples/agentloop -preset migration-safety
//	go run ./examples/agentloop -preset refactor -failures 4
//
// The agent's iterations are scripted: a flaky stretch that recovers, then
// the same error coming back until the breaker trips; after the cooldown
// one probe runs, fails the same way, and the loop stops. Time is
// simulated, so the cooldown passes at once.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agentloop:", err)
		os.Exit(2)
	}
}

// step is one scripted iteration: nil is a success.
type step error

// script returns the simulated agent's iterations.
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
	preset := fs.String("preset", "feature", "preset: "+strings.Join(loopbreaker.PresetNames(), ", "))
	failures := fs.Int("failures", 0, "consecutive failures that trip the breaker (overrides the preset; negative: off)")
	sameErrors := fs.Int("same-errors", 0, "times the same error may occur before the breaker trips (overrides the preset; negative: off)")
	cooldown := fs.Duration("cooldown", loopbreaker.DefaultCooldown, "how long the circuit stays open before one probe")
	if err := fs.Parse(args); err != nil {
		return err
	}

	cfg, err := loopbreaker.Preset(*preset)
	if err != nil {
		return err
	}
	// Flags given on the command line win over the preset.
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "failures":
			cfg.MaxConsecutiveFailures = *failures
		case "same-errors":
			cfg.MaxSameErrorCount = *sameErrors
		}
	})
	cfg.Cooldown = *cooldown

	now := time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)
	cfg.Now = func() time.Time { return now }
	cb, err := loopbreaker.New(cfg)
	if err != nil {
		return err
	}

	fmt.Fprintf(out, "preset %s: trip after %s consecutive failures or the same error %s times; cooldown %s\n\n",
		*preset, threshold(cfg.MaxConsecutiveFailures), threshold(cfg.MaxSameErrorCount), cfg.Cooldown)
	fmt.Fprintf(out, "%4s  %-8s  %-9s  %6s  %5s  %6s  %-11s  %s\n", "iter", "time", "state", "consec", "total", "unique", "fingerprint", "outcome")

	var stop error // why the loop stopped early, if it did
	for i, s := range script() {
		d := cb.Check()
		if !d.Allow && d.State == loopbreaker.Open && cb.Stats().Opens == 1 {
			// The first time, wait out the cooldown (simulated) and probe.
			fmt.Fprintf(out, "      circuit open: %s; waiting %s for the probe\n", d.Reason, d.RetryAfter)
			now = now.Add(d.RetryAfter)
			d = cb.Check()
		}
		if !d.Allow {
			stop = d.Err()
			break
		}
		cb.Record(loopbreaker.Iteration{Err: s})
		now = now.Add(20 * time.Second) // an iteration takes a while

		st := cb.Stats()
		outcome, fp := "ok", "-"
		if s != nil {
			outcome, fp = s.Error(), st.LastFingerprint
		}
		if d.Probe {
			outcome = "probe: " + outcome
		}
		fmt.Fprintf(out, "%4d  %-8s  %-9s  %6d  %5d  %6d  %-11s  %s\n",
			i+1, now.Format(time.TimeOnly), st.State, st.ConsecutiveFailures, st.TotalFailures, st.UniqueErrors, fp, outcome)
	}

	st := cb.Stats()
	fmt.Fprintln(out)
	if stop != nil {
		var open *loopbreaker.OpenError
		if errors.As(stop, &open) {
			fmt.Fprintf(out, "stopped: %s (reason kind %s)\n", open.Reason, open.Reason.Kind)
		}
	} else {
		fmt.Fprintln(out, "script finished with the circuit", st.State)
	}
	fmt.Fprintf(out, "stats: iterations=%d total_failures=%d unique_errors=%d opens=%d\n",
		st.Iterations, st.TotalFailures, st.UniqueErrors, st.Opens)
	fps := make([]string, 0, len(st.ErrorCounts))
	for fp := range st.ErrorCounts {
		fps = append(fps, fp)
	}
	sort.Slice(fps, func(i, j int) bool { // most seen first
		a, b := st.ErrorCounts[fps[i]], st.ErrorCounts[fps[j]]
		return a > b || a == b && fps[i] < fps[j]
	})
	for _, fp := range fps {
		fmt.Fprintf(out, "  %s  seen %d times\n", fp, st.ErrorCounts[fp])
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
