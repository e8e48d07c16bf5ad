package sessions

import (
	"fmt"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// checkAction asks the breaker about a proposed call before it runs: it is
// refused while the circuit is open, and when it would complete a repeat
// (the same call failing, or returning the same result, one time short of
// the threshold, as the last call did). last is the session's last
// recorded tool call. It takes no probe slot: a half-open circuit's probe
// is the model call.
//
// Until the breaker judges a proposed call itself, this is the judgement,
// of the two repeats; the breaker's own will judge cycles too.
func checkAction(cb *loopbreaker.CircuitBreaker, cfg loopbreaker.Config, a, last *loopbreaker.Action) loopbreaker.Decision {
	if st := cb.State(); st != loopbreaker.Open {
		if last == nil || last.Fingerprint() != a.Fingerprint() {
			return loopbreaker.Decision{Allow: true, State: st}
		}
		steps := cb.Stats().Steps
		def := loopbreaker.DefaultConfig().Steps
		if n := threshold(cfg.Steps.MaxRepeatedActionError, def.MaxRepeatedActionError); n > 1 && steps.SameActionFailedInARow >= n-1 {
			return loopbreaker.Decision{State: st, Reason: loopbreaker.Reason{
				Kind: loopbreaker.ReasonRepeatedActionError, Count: steps.SameActionFailedInARow, Threshold: n,
				Fingerprint: cb.Stats().Failures.LastFingerprint, Action: a.String()}}
		}
		if n := threshold(cfg.Steps.MaxRepeatedAction, def.MaxRepeatedAction); n > 1 && steps.SameStepInARow >= n-1 {
			return loopbreaker.Decision{State: st, Reason: loopbreaker.Reason{
				Kind: loopbreaker.ReasonRepeatedActionObservation, Count: steps.SameStepInARow, Threshold: n, Action: a.String()}}
		}
		return loopbreaker.Decision{Allow: true, State: st}
	}
	st := cb.Stats()
	return loopbreaker.Decision{State: loopbreaker.Open, Reason: st.Reason, RetryAfter: st.RetryAfter}
}

// threshold returns a threshold in force: v, def when v is 0, and 0 when
// the signal is off.
func threshold(v, def int) int {
	if v == 0 {
		v = def
	}
	return max(v, 0)
}

// wordsForModel is what the model reads instead of a refused call's
// result: the call, the rule, and what to do instead.
func wordsForModel(d loopbreaker.Decision, c Call) string {
	var b strings.Builder
	if d.State == loopbreaker.Open {
		fmt.Fprintf(&b, "loopbreaker refused this call (%s): your tool calls are stopped: %s.", c.action().String(), d.Reason.String())
		if d.RetryAfter > 0 {
			fmt.Fprintf(&b, " Tool calls are refused for the next %s.", d.RetryAfter.Round(time.Second))
		}
	} else {
		fmt.Fprintf(&b, "loopbreaker refused this call (%s) before it ran: %s. Made once more, it would stop your run.", c.action().String(), d.Reason.String())
	}
	b.WriteString(" It did not run. Do not make this call again: change your approach (another tool, other arguments, another fix), or end your turn and tell the user what blocks you.")
	return b.String()
}
