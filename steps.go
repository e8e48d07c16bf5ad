package loopbreaker

import (
	"crypto/md5"
	"encoding/binary"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loopbreaker/loopbreaker/internal/errtext"
)

// Action is what one step of a tool-calling agent did ([Iteration.Action]):
// a tool call, or a turn in which the model only wrote a message. Actions
// are not normalized: the model's numbers are its choices.
type Action struct {
	// Tool is the tool called; empty for a message-only turn.
	Tool string
	// Args are the tool call's arguments as the model wrote them.
	Args string
	// Message is a message-only turn's text (an empty one counts too);
	// ignored when Tool is set.
	Message string
}

// IsMessage reports whether no tool was called.
func (a *Action) IsMessage() bool { return a.Tool == "" }

// String returns the tool and its arguments, or "(message) " and the
// message, with every run of white space made one space.
func (a *Action) String() string {
	if a.IsMessage() {
		return "(message) " + collapseSpace(a.Message)
	}
	if a.Args == "" {
		return collapseSpace(a.Tool)
	}
	return collapseSpace(a.Tool + " " + a.Args)
}

// Fingerprint returns the action's identity for the step signals, 8 hex
// characters: the same tool with the same arguments up to white space (also
// between JSON tokens), or the same message, is the same action.
func (a *Action) Fingerprint() string { return formatFingerprint(a.fingerprint32()) }

// fingerprint32 is Fingerprint as a number.
func (a *Action) fingerprint32() uint32 {
	h := md5.New()
	if a.IsMessage() {
		io.WriteString(h, "message\n")
		io.WriteString(h, canonicalArgs(a.Message))
	} else {
		io.WriteString(h, a.Tool)
		io.WriteString(h, "\n")
		io.WriteString(h, canonicalArgs(a.Args))
	}
	var sum [md5.Size]byte
	return binary.BigEndian.Uint32(h.Sum(sum[:0]))
}

// canonicalArgs is the arguments' text as an action's fingerprint reads it
// (see Action.Fingerprint).
func canonicalArgs(s string) string {
	if len(s) > maxNormalizedInput {
		s = s[:maxNormalizedInput]
	}
	if t := strings.TrimSpace(s); t != "" && (t[0] == '{' || t[0] == '[') {
		return compactJSONSpace(t)
	}
	return strings.Join(strings.Fields(s), " ")
}

// maxActionText caps the action text a Reason carries, in bytes.
const maxActionText = 200

// actionText is the action's text for a Reason: its String, cut
// (evidenceText).
func actionText(a *Action) string { return evidenceText(a.String()) }

// evidenceText is s as the Action of a Reason carries it: cut at
// maxActionText bytes on a rune boundary (with "…" added), in memory of its
// own, so that the breaker never keeps the host's long strings alive.
func evidenceText(s string) string {
	if len(s) <= maxActionText {
		return strings.Clone(s)
	}
	cut := maxActionText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.Clone(s[:cut]) + "…"
}

// collapseSpace makes every run of white space one space and trims the
// ends, reading at most maxNormalizedInput bytes: the evidence is capped
// anyway.
func collapseSpace(s string) string {
	if len(s) > maxNormalizedInput {
		s = s[:maxNormalizedInput]
	}
	return strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
}

// compactJSONSpace drops the white space between JSON tokens, outside
// strings, so that {"a": 1} and {"a":1} are one action. JSON cut short, or
// text that only starts like JSON, goes through as far as it goes: a
// string left open keeps the rest as it is.
func compactJSONSpace(t string) string {
	var b strings.Builder
	b.Grow(len(t))
	inString, escaped := false, false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// StepStats are the step signals' counts ([Stats.Steps]): the steps in a
// row with the same action and observation, with the same action failing,
// and with the same message-only turn; the condensations in a row, and in
// all.
type StepStats struct {
	SameStepInARow           int `json:"same_step_in_a_row,omitempty"`          // tool steps in a row with one action and one observation
	SameActionFailedInARow   int `json:"same_action_failed_in_a_row,omitempty"` // failed tool steps in a row with one action
	SameMessageInARow        int `json:"same_message_in_a_row,omitempty"`       // message-only turns in a row with one message
	ConsecutiveCondensations int `json:"consecutive_condensations,omitempty"`   // condensations with nothing between
	Condensations            int `json:"condensations,omitempty"`               // since New or Reset
}

// stepFacts is what the step signals learn from one recorded iteration,
// worked out before the breaker's lock is taken (fingerprinting is the
// costly part).
type stepFacts struct {
	step stepRecord
	text string // the action's evidence text (actionText)
}

// newStepFacts fingerprints the iteration's action and observation. errText
// is the error's text when the iteration failed: it stands in for an empty
// observation.
func newStepFacts(it *Iteration, failed bool, errText string) stepFacts {
	a := it.Action
	s := stepRecord{message: a.IsMessage(), failed: failed}
	s.action = a.fingerprint32()
	observation := it.Observation
	if observation == "" && failed {
		observation = errText
	}
	// The whole observation counts, not the 500 runes an error's
	// fingerprint reads: a log polled while it grows is a new result each
	// time.
	s.result = errtext.Digest(observation)
	return stepFacts{step: s, text: actionText(a)}
}

// stepRecord is one step in the alternating-actions window.
type stepRecord struct {
	action  uint32 // fingerprint of the tool and its arguments, or of the message
	result  uint32 // digest of the whole observation (errtext.Digest)
	message bool   // a message-only turn
	failed  bool   // the step failed
}

// stepState is what the step signals remember between iterations. Their
// counters live in counts (Stats and snapshots spell them out).
type stepState struct {
	// steps holds the last steps, oldest first: the alternating-actions
	// window, and never fewer than two, as the counters compare a step
	// with the one before.
	steps ring[stepRecord]
	// texts are the evidence texts of the last two steps; texts[1] is the
	// last.
	texts [2]string
	// added: the last recorded iteration was a step (it reported an
	// Action). The step signals judge only such an iteration, so that an
	// iteration without one, a host's or a probe's, is judged on its
	// outcome.
	added bool
}

func newStepState(cfg *Config) stepState {
	return stepState{steps: newRing[stepRecord](stepWindow(cfg))}
}

// stepWindow is how many steps the breaker keeps: the alternating-actions
// window when it is on, and at least two.
func stepWindow(cfg *Config) int {
	return max(cfg.Steps.AlternatingWindow, 2)
}

// observeSteps updates the step signals for a success or a failure; f is
// nil when the iteration reported no action. Called with b.mu held.
func (b *CircuitBreaker) observeSteps(f *stepFacts) {
	b.count.ConsecutiveCondensations = 0
	st := &b.steps
	st.added = f != nil
	if f == nil {
		return
	}
	s := f.step
	var prev stepRecord
	havePrev := st.steps.n > 0
	if havePrev {
		prev = st.steps.at(st.steps.n - 1)
	}
	same := havePrev && prev == s
	c := &b.count
	switch {
	case s.message:
		c.SameStepInARow, c.SameActionFailedInARow = 0, 0
		c.SameMessageInARow = countOn(same, c.SameMessageInARow)
	default:
		c.SameMessageInARow = 0
		c.SameStepInARow = countOn(same, c.SameStepInARow)
		if s.failed {
			c.SameActionFailedInARow = countOn(havePrev && !prev.message && prev.failed && prev.action == s.action, c.SameActionFailedInARow)
		} else {
			c.SameActionFailedInARow = 0
		}
	}
	st.steps.push(s)
	st.texts[0], st.texts[1] = st.texts[1], f.text
}

// countOn returns n+1 when the run goes on, else 1 (the run starts again
// with this step).
func countOn(goesOn bool, n int) int {
	if goesOn {
		return addSat(n, 1)
	}
	return 1
}

// alternates reports whether the full window alternates between two steps,
// A B A B A B: every step equals the one two before it. (Two equal steps
// are a repetition, which the repeated-action signal reports first.)
func (st *stepState) alternates(window int) bool {
	r := &st.steps
	if window <= 0 || r.n < window {
		return false
	}
	start := r.n - window
	for i := start + 2; i < r.n; i++ {
		if r.at(i) != r.at(i-2) {
			return false
		}
	}
	return true
}

// alternatingFingerprints returns the fingerprints of the two actions the
// window alternates between, oldest first, joined with "/".
func (st *stepState) alternatingFingerprints() string {
	r := &st.steps
	return formatFingerprint(r.at(r.n-2).action) + "/" + formatFingerprint(r.at(r.n-1).action)
}

// alternatingText returns the evidence texts of the two actions the window
// alternates between, oldest first.
func (st *stepState) alternatingText() string {
	return st.texts[0] + " | " + st.texts[1]
}

// last returns the last step; false before the first.
func (st *stepState) last() (stepRecord, bool) {
	if st.steps.n == 0 {
		return stepRecord{}, false
	}
	return st.steps.at(st.steps.n - 1), true
}

// lastAction returns the fingerprint of the last step's action.
func (st *stepState) lastAction() string {
	if st.steps.n == 0 {
		return ""
	}
	return formatFingerprint(st.steps.at(st.steps.n - 1).action)
}

// recordCondensation counts a condensation (or overflow) of the context,
// recorded at now: it is neither a success nor a failure, and changes no
// counter but its own. Called with b.mu held.
func (b *CircuitBreaker) recordCondensation(now time.Time) {
	b.count.Condensations = addSat(b.count.Condensations, 1)
	b.count.ConsecutiveCondensations = addSat(b.count.ConsecutiveCondensations, 1)
	b.steps.added = false
	if b.completion.Complete.Kind != ReasonNone || b.state == Open {
		return
	}
	if b.cfg.Steps.MaxCondensations >= 0 && rules[ReasonCondensationLoop].judge(b) == trip {
		b.trip(rules[ReasonCondensationLoop].reason(b, ReasonCondensationLoop), now)
		return
	}
	b.releaseProbe()
}
