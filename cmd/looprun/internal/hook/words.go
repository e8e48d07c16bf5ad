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

// maxQuoted bounds the lines and bytes of a tool's error quoted to the
// model.
const (
	maxQuotedLines = 12
	maxQuotedBytes = 1500
)

// tripWords tells the model why its tool calls stop: the breaker's reason,
// what it means, the call and its error, and what to do.
func tripWords(r loopbreaker.Reason, ev *Event, errText string, retry time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "loopbreaker stopped your tool calls: %s.", r.String())
	if advice := adviceFor(r); advice != "" {
		b.WriteString(" " + advice)
	}
	if ev.Tool != "" && r.Action == "" {
		fmt.Fprintf(&b, "\nThe last call: %s", (&loopbreaker.Action{Tool: ev.Tool, Args: stepArgs(ev.Tool, ev.Input)}).String())
	}
	if q := quote(errText); q != "" {
		b.WriteString("\nIts error:\n" + q)
	}
	fmt.Fprintf(&b, "\nTool calls are refused %s. Do not make this call again: read the error and change your approach (another fix, another command), or end your turn and tell the user what blocks you.", forHowLong(retry))
	return b.String()
}

// adviceFor says what a reason means, for the model.
func adviceFor(r loopbreaker.Reason) string {
	switch r.Kind {
	case loopbreaker.ReasonRepeatedActionError:
		return fmt.Sprintf("You made the same call %d times in a row and it failed each time: it will fail again.", r.Count)
	case loopbreaker.ReasonRepeatedActionObservation:
		return fmt.Sprintf("You made the same call %d times in a row and it returned the same result each time: it will not change.", r.Count)
	case loopbreaker.ReasonCycle:
		return "You keep going back and forth between the same two calls, and their results do not change."
	case loopbreaker.ReasonConsecutiveFailures:
		return fmt.Sprintf("Your last %d tool calls all failed.", r.Count)
	case loopbreaker.ReasonSameError, loopbreaker.ReasonSameErrorInARow:
		return fmt.Sprintf("The same error came back %d times.", r.Count)
	}
	return ""
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

// warningWords is a warning the model reads beside a tool's result.
func warningWords(text string) string { return "loopbreaker warning: " + text }

// quote returns the first lines of an error, indented, cut to
// maxQuotedLines lines and maxQuotedBytes bytes; "" for none.
func quote(text string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	cut := len(lines) > maxQuotedLines
	if cut {
		lines = lines[:maxQuotedLines]
	}
	out := "  " + strings.Join(lines, "\n  ")
	if len(out) > maxQuotedBytes {
		out = strings.ToValidUTF8(out[:maxQuotedBytes], "")
		cut = true
	}
	if cut {
		out += "\n  ..."
	}
	return out
}
