package sessions

import (
	"fmt"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// checkAction asks the breaker about a proposed call before it runs. It
// takes no probe slot: a half-open circuit's probe is the model call.
//
// Until the breaker judges a proposed call itself, a call is refused only
// while the circuit is open.
func checkAction(cb *loopbreaker.CircuitBreaker, a *loopbreaker.Action) loopbreaker.Decision {
	if cb.State() != loopbreaker.Open {
		return loopbreaker.Decision{Allow: true, State: cb.State()}
	}
	st := cb.Stats()
	return loopbreaker.Decision{State: loopbreaker.Open, Reason: st.Reason, RetryAfter: st.RetryAfter}
}

// wordsForModel is what the model reads instead of a refused call's
// result: the call, the rule and what to do instead.
func wordsForModel(d loopbreaker.Decision, c Call) string {
	var b strings.Builder
	fmt.Fprintf(&b, "loopbreaker refused this call (%s): %s.", c.action().String(), d.Reason.String())
	if d.RetryAfter > 0 {
		fmt.Fprintf(&b, " Tool calls are refused for the next %s.", d.RetryAfter.Round(time.Second))
	}
	b.WriteString(" It did not run. Do not make this call again: change your approach (another tool, other arguments, another fix), or end your turn and tell the user what blocks you.")
	return b.String()
}
