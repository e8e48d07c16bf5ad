package hook

import (
	"fmt"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/protect"
)

// What the model and the person read. The model is told what happened in
// terms it can act on: the rule, the call it repeated, the error it got,
// and what to do instead.

// tripWords tells the model why its tool calls stop, in the breaker's
// words for a model (Reason.ForModel: the rule, the call it repeated, the
// error it got, what to do instead), and for how long calls are refused.
func tripWords(r loopbreaker.Reason, retry time.Duration) string {
	return r.ForModel() + "\nTool calls are refused " + forHowLong(retry) + "."
}

// forHowLong says how long calls stay refused.
func forHowLong(d time.Duration) string {
	if d <= 0 {
		return "for now"
	}
	return "for the next " + d.Round(time.Second).String()
}

// refusedWords tells the model that a call was refused while the circuit
// is open; last says that the next call ends its run.
func refusedWords(d loopbreaker.Decision, last bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "loopbreaker refused this call: %s.", d.Reason.String())
	if d.RetryAfter > 0 {
		fmt.Fprintf(&b, " Tool calls are refused %s.", forHowLong(d.RetryAfter))
	}
	b.WriteString(" Do not call a tool to try again: change your approach, or end your turn and tell the user what blocks you.")
	if last {
		b.WriteString(" If you call a tool again now, your run ends.")
	}
	return b.String()
}

// endWords tells the person why looprun ended the run.
func endWords(r loopbreaker.Reason, keptGoing bool) string {
	if keptGoing {
		return fmt.Sprintf("looprun ended the run: %s, and the model went on calling tools after it was refused.", r.String())
	}
	return fmt.Sprintf("looprun ended the run: %s.", r.String())
}

// protectedWords tells the model why a call that would destroy a
// protected path was refused.
func protectedWords(r *protect.RefusalError) string {
	what := "a protected path"
	if r.Path != "" {
		what = r.Path + ", a protected path"
	}
	return fmt.Sprintf("loopbreaker refused this call: %s (%s: the project's plan, configuration and memory are not yours to delete, empty or move). Leave it as it is and do your work around it.", r.Reason, what)
}
