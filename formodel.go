package loopbreaker

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// What a model in the loop reads. A model that is told only "circuit
// open" calls the same tool again; told the rule, the call it repeated,
// the error it got and what to try instead, it changes course. Every
// integration (looprun's hooks, the framework adapters, the examples)
// gives the model these words, so that they all say the same thing.

// The bounds of an error quoted to the model.
const (
	maxQuotedLines = 12
	maxQuotedBytes = 1500
)

// ForModel returns what a model in the loop should read about r, in terms
// it can act on: for a stop, what the rule saw (the call it repeated, its
// error) and what to do instead; for a signal one step short
// ([Reason.Short]), a warning that one more such step stops its calls; for
// a limit, a completion or a warning, what it means. "" for the zero
// Reason.
func (r Reason) ForModel() string {
	if r.Kind == ReasonNone || int(r.Kind) >= len(rules) {
		return ""
	}
	row := &rules[r.Kind]
	if r.Short {
		return r.warningForModel(row)
	}
	var b strings.Builder
	switch row.class {
	case ClassStop:
		fmt.Fprintf(&b, "loopbreaker stopped your tool calls: %s.", r.String())
	case ClassLimit:
		fmt.Fprintf(&b, "loopbreaker paused the loop: %s. This is not your doing, and no tool call changes it.", r.String())
		return b.String()
	case ClassComplete:
		fmt.Fprintf(&b, "loopbreaker ended the loop: %s.", r.String())
		return b.String()
	case ClassWarning:
		return "loopbreaker warning: " + r.String() + "."
	}
	if row.advice != nil {
		if a := row.advice(r); a != "" {
			b.WriteString(" " + a)
		}
	}
	if q := quote(r.Sample); q != "" {
		b.WriteString("\nIts error:\n" + q)
	}
	b.WriteString("\n" + tryInstead(row))
	return b.String()
}

// warningForModel is ForModel of a signal one step short.
func (r Reason) warningForModel(row *rule) string {
	text := ""
	if row.warning != nil {
		text = row.warning(r)
	}
	if text == "" {
		text = fmt.Sprintf("%s is one step short of stopping your tool calls (%d of %d)", row.name, r.Count, r.Threshold)
	}
	return "loopbreaker warning: " + text
}

// tryInstead says what a stopped model should do instead.
func tryInstead(row *rule) string {
	if row.try != "" {
		return "Do not make this call again: " + row.try + ", or end your turn and tell the user what blocks you."
	}
	return "Do not make this call again: read the error and change your approach (another fix, another command), or end your turn and tell the user what blocks you."
}

// ForModel returns what a model should read of d: when d refuses, its
// reason's [Reason.ForModel] and for how long calls stay refused; when it
// allows, the warnings of the signals one step short ([Decision.Short]),
// one per line, or "" when there are none.
func (d Decision) ForModel() string {
	if d.Allow {
		lines := make([]string, 0, len(d.Short))
		for _, r := range d.Short {
			lines = append(lines, r.ForModel())
		}
		return strings.Join(lines, "\n")
	}
	text := d.Reason.ForModel()
	if d.Reason.Kind.Class() != ClassStop {
		return text
	}
	return text + "\nTool calls are refused " + forHowLong(d.RetryAfter) + "."
}

// forHowLong says how long calls stay refused.
func forHowLong(d time.Duration) string {
	if d <= 0 {
		return "until a person resumes the loop"
	}
	return "for the next " + d.Round(time.Second).String()
}

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

// ordinal returns n as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 22nd.
func ordinal(n int) string {
	suffix := "th"
	switch n % 10 {
	case 1:
		suffix = "st"
	case 2:
		suffix = "nd"
	case 3:
		suffix = "rd"
	}
	if n%100 >= 11 && n%100 <= 13 {
		suffix = "th"
	}
	return strconv.Itoa(n) + suffix
}
