package looprun

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// summary prints how the loop ended and what it saw.
func (r *runner) summary(code int, saveErr error) {
	s := r.cb.Stats()
	fmt.Fprintln(r.out)
	fmt.Fprintf(r.out, "stopped: %s (exit %d)\n", r.stopped, code)
	fmt.Fprintf(r.out, "iterations: %d in this run, %d in all (%d neutral); failures: %d; circuit opened %d times; state %s\n",
		r.iterations, s.Iterations, s.NeutralIterations, s.Failures.Total, s.Opens, stateName(s))
	if s.Budget.Limit > 0 {
		fmt.Fprintf(r.out, "calls: %d of %d in the last hour\n", s.Budget.Used, s.Budget.Limit)
	}
	if sp := s.Spend; sp.Total != (loopbreaker.Usage{}) || sp.MaxCostUSD > 0 || sp.MaxTokens > 0 {
		fmt.Fprintf(r.out, "spent: $%.4f and %d tokens", sp.Total.CostUSD, sp.Total.Tokens())
		if sp.MaxCostUSD > 0 {
			fmt.Fprintf(r.out, "; $%.4f of -max-cost $%.2f left", sp.CostLeftUSD(), sp.MaxCostUSD)
		}
		if sp.MaxTokens > 0 {
			fmt.Fprintf(r.out, "; %d of -max-tokens %d left", sp.TokensLeft(), sp.MaxTokens)
		}
		fmt.Fprintln(r.out)
	}
	if s.LimitedIterations > 0 {
		fmt.Fprintf(r.out, "runs refused by the provider: %d (counted as no iteration)\n", s.LimitedIterations)
	}
	if id, _ := r.sessions.offer(); id != "" {
		fmt.Fprintf(r.out, "session: %s, offered to the next iteration\n", id)
	}
	if saveErr != nil {
		fmt.Fprintf(r.out, "state NOT saved in %s: %v\n", r.state.path(), saveErr)
	} else {
		fmt.Fprintf(r.out, "state saved in %s\n", r.state.path())
	}
	if r.iterations > 0 {
		fmt.Fprintf(r.out, "output of each iteration in %s%c\n", r.logs.dir, filepath.Separator)
	}
	if r.last.text != "" && code != exitDone {
		fmt.Fprintf(r.out, "last error: iteration %d, from the %s; its output: %s\n", r.last.iteration, r.last.from, r.last.log)
	}
	switch {
	case code == exitTripped && s.RetryAfter > 0:
		fmt.Fprintf(r.out, "the circuit is open: run again after %s for the probe, with -wait to wait here, or with -reset to start afresh%s\n",
			s.RetryAfter.Round(time.Second), r.resetScope())
	case code == exitTripped && s.State == loopbreaker.Open:
		fmt.Fprintln(r.out, "the circuit is held open, and no cooldown ends that: run again at a terminal to resume or skip, or with -reset to start afresh"+r.resetScope())
	case code == exitProtected:
		fmt.Fprintln(r.out, "the circuit is held open for the protected files: look at what the agent did (its log), then run again at a terminal to resume or skip, or with -reset to start afresh"+r.resetScope())
	case code == exitProvider && s.ProviderLimit.Kind == loopbreaker.ReasonProviderStopped:
		fmt.Fprintln(r.out, "the provider stopped the loop, and no waiting ends that: deal with it (credit, billing, the admin's cap), then run again at a terminal to resume, or with -reset to start afresh"+r.resetScope())
	case code == exitProvider && !s.ProviderLimitUntil.IsZero():
		fmt.Fprintf(r.out, "the provider limit lifts at %s: run again then, or with a longer -limit-wait to wait here\n", r.clockTime(s.ProviderLimitUntil))
	}
	r.lostSummary()
	if len(s.Failures.Counts) == 0 {
		return
	}
	fps := make([]string, 0, len(s.Failures.Counts))
	for fp := range s.Failures.Counts {
		fps = append(fps, fp)
	}
	sort.Slice(fps, func(i, j int) bool {
		a, b := s.Failures.Counts[fps[i]], s.Failures.Counts[fps[j]]
		return a > b || a == b && fps[i] < fps[j]
	})
	fmt.Fprintf(r.out, "\n%-8s  %5s  %s\n", "error", "seen", "first seen as")
	for _, fp := range fps {
		sample := r.errorSample(fp, s)
		if sample == "" {
			sample = "(before this run)"
		}
		fmt.Fprintf(r.out, "%-8s  %5d  %s\n", fp, s.Failures.Counts[fp], sample)
	}
}

// resetScope says, after "-reset to start afresh", what else -reset
// starts afresh: the shared breaker, for every runner.
func (r *runner) resetScope() string {
	if r.shared == nil {
		return ""
	}
	return " (the shared breaker too, for every runner)"
}

// firstLine returns the first line of s, at most 100 bytes of it.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return s
}
