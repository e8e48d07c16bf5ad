package loopbreaker

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/json"
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
	// Message is a message-only turn's text (an empty one counts too).
	// Beside a Tool, it is what the model wrote to the user in the same
	// turn: no part of the action (Fingerprint and String leave it out),
	// it says the step was not silent ([ReasonStalled]).
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
// characters: the same tool with the same arguments, or the same message,
// is the same action. Arguments that are JSON are compared as JSON (the
// order of an object's keys and the white space between tokens do not
// count); other arguments up to white space.
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
// (see Action.Fingerprint): JSON with its keys sorted and no white space
// between its tokens, strings and numbers as they are; other text with
// each run of white space made one space.
func canonicalArgs(s string) string {
	if len(s) > maxNormalizedInput {
		s = s[:maxNormalizedInput]
	}
	t := strings.TrimSpace(s)
	if t == "" || t[0] != '{' && t[0] != '[' {
		return strings.Join(strings.Fields(s), " ")
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) == nil && !dec.More() {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if enc.Encode(v) == nil {
			return strings.TrimSuffix(b.String(), "\n")
		}
	}
	return compactJSONSpace(t) // cut short, or only starts like JSON
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
	StalledSteps             int `json:"stalled_steps,omitempty"`               // tool steps in a row that reported no progress and said nothing
}

// stepFacts is what the step signals learn from one recorded iteration,
// worked out before the breaker's lock is taken (fingerprinting is the
// costly part).
type stepFacts struct {
	step stepRecord
	// said: a tool step whose turn had words for the user (its
	// Action.Message).
	said bool
}

// keepResultNumbers: an observation's numbers are its content
// (errtext.ResultDigest), not noise (errtext.Digest); see the tool-steps
// guide for the measure that chose it. A variable for that measure.
var keepResultNumbers = true

// newStepFacts fingerprints the iteration's action and observation. errText
// is the error's text when the iteration failed: it stands in for an empty
// observation; errFP is its fingerprint.
func newStepFacts(it *Iteration, failed bool, errText string, errFP uint32) stepFacts {
	a := it.Action
	s := stepRecord{message: a.IsMessage(), failed: failed, text: actionText(a)}
	s.action = a.fingerprint32()
	if !s.message {
		s.tool = toolFingerprint(a.Tool)
	}
	if failed && saysWhy(errText) {
		s.errFP = errFP
	}
	observation := it.Observation
	if observation == "" && failed {
		observation = errText
	}
	// The whole observation counts, not the 500 runes an error's
	// fingerprint reads: a log polled while it grows is a new result each
	// time.
	if keepResultNumbers {
		s.result = errtext.ResultDigest(observation)
	} else {
		s.result = errtext.Digest(observation)
	}
	return stepFacts{step: s, said: !s.message && strings.TrimSpace(a.Message) != ""}
}

// saysWhy reports whether an error's text says something of its cause:
// not empty, and more than an exit status ("exit status 1", as a grep that
// finds nothing ends). A tool failing with the same such text under new
// arguments is no loop: nothing says it failed for the same reason.
func saysWhy(errText string) bool {
	t := strings.ToLower(strings.TrimSpace(errText))
	for _, prefix := range []string{"exit status ", "exit code ", "exited with code ", "exit code: "} {
		if rest, ok := strings.CutPrefix(t, prefix); ok {
			t = strings.TrimLeft(rest, "-0123456789")
			break
		}
	}
	return strings.Trim(t, " .:") != ""
}

// toolFingerprint is a tool's name as the same-tool signal compares it.
func toolFingerprint(tool string) uint32 {
	sum := md5.Sum([]byte("tool\n" + tool))
	return binary.BigEndian.Uint32(sum[:4])
}

// stepRecord is one step in the step signals' window.
type stepRecord struct {
	action  uint32 // fingerprint of the tool and its arguments, or of the message
	result  uint32 // digest of the whole observation (errtext.ResultDigest)
	tool    uint32 // fingerprint of the tool's name; 0 for a message
	errFP   uint32 // fingerprint of a failed step's error; 0 when it succeeded, or its error says nothing (saysWhy)
	message bool   // a message-only turn
	failed  bool   // the step failed
	text    string // the action's evidence text (actionText)
}

// same reports whether s and o are the same step: the same action with
// the same observation, both failed or both not.
func (s stepRecord) same(o stepRecord) bool {
	return s.action == o.action && s.result == o.result && s.message == o.message && s.failed == o.failed
}

// stepState is what the step signals remember between iterations. Their
// counters live in counts (Stats and snapshots spell them out).
type stepState struct {
	// steps holds the last steps, oldest first: the window of the cycle,
	// same-tool and recurring-step signals, and never fewer than two, as
	// the counters compare a step with the one before.
	steps ring[stepRecord]
	// added: the last recorded iteration was a step (it reported an
	// Action). The step signals judge only such an iteration, so that an
	// iteration without one, a host's or a probe's, is judged on its
	// outcome.
	added bool
}

func newStepState(cfg *Config) stepState {
	return stepState{steps: newRing[stepRecord](stepWindow(cfg))}
}

// maxCyclePeriod is the longest cycle of steps the cycle signal looks for.
const maxCyclePeriod = 5

// stepWindow is how many steps the breaker keeps: what the cycle signal
// judges (its longest cycle, repeated), and the recurring-step window,
// those that are on, and at least two.
func stepWindow(cfg *Config) int {
	return max(maxCyclePeriod*cfg.Steps.CycleRepeats, cfg.Steps.RepeatWindow, 2)
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
	prev, havePrev := st.last()
	same := havePrev && prev.same(s)
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
	// A stall is a run of tool steps that each reported their progress,
	// none of it, and had no word for the user; a message-only turn, a
	// step with words, or one that made progress ends it, and a step that
	// reported no progress says nothing of it.
	switch {
	case s.message || f.said || b.progress.measured && b.progress.made:
		c.StalledSteps = 0
	case b.progress.measured:
		c.StalledSteps = addSat(c.StalledSteps, 1)
	}
	st.steps.push(s)
}

// NewPrompt tells the breaker that a person gave the agent a new prompt:
// the step signals start afresh, their window and their runs in a row, so
// that the same short answer to new questions is no monologue and the
// last turn's calls count toward no repeat of this one. The failures, the
// spend, the circuit's state and its history are kept, and no transition
// is recorded: a host that wants a new prompt to close an open circuit
// calls Resume too.
func (b *CircuitBreaker) NewPrompt() {
	b.mu.Lock()
	defer b.unlock()
	b.steps = newStepState(&b.cfg)
	b.count.StepStats = StepStats{Condensations: b.count.Condensations}
}

// countOn returns n+1 when the run goes on, else 1 (the run starts again
// with this step).
func countOn(goesOn bool, n int) int {
	if goesOn {
		return addSat(n, 1)
	}
	return 1
}

// cycle returns the period of the shortest cycle of 2 to 5 steps that the
// last steps went round repeats times, each step with the same
// observation each time (A B C A B C A B C for 3 steps, 3 times); 0 for
// none. A cycle is no repetition of one step: that is the repeated-action
// signal's. With next set, it judges the steps as if next were the last.
func (st *stepState) cycle(repeats int, next *stepRecord) int {
	r := &st.steps
	n := r.n
	at := r.at
	if next != nil {
		n++
		at = func(i int) stepRecord {
			if i == r.n {
				return *next
			}
			return r.at(i)
		}
	}
	if repeats < 2 {
		return 0
	}
periods:
	for p := 2; p <= maxCyclePeriod; p++ {
		window := p * repeats
		if n < window {
			continue
		}
		start := n - window
		for i := start + p; i < n; i++ {
			if !at(i).same(at(i - p)) {
				continue periods
			}
		}
		first := at(n - p)
		for i := n - p + 1; i < n; i++ {
			if !at(i).same(first) {
				return p
			}
		}
	}
	return 0
}

// cycleEvidence returns the fingerprints of the actions of the last p
// steps, in order, joined with "/", and their texts joined with " → ".
// With next set (a proposed call, the step p back that it repeats), the
// cycle is the last p-1 steps and it.
func (st *stepState) cycleEvidence(p int, next bool) (fingerprints, texts string) {
	r := &st.steps
	fps := make([]string, 0, p)
	txt := make([]string, 0, p)
	order := make([]int, 0, p)
	for i := max(r.n-p, 0); i < r.n; i++ {
		order = append(order, i)
	}
	if next && len(order) > 1 {
		order = append(order[1:], order[0])
	}
	for _, i := range order {
		s := r.at(i)
		fps = append(fps, formatFingerprint(s.action))
		txt = append(txt, s.text)
	}
	return strings.Join(fps, "/"), strings.Join(txt, " → ")
}

// shortPeriod returns the period of the cycle the next step completes if
// it is the one the cycle goes on with (the steps but the first of the
// cycle's window already go round it), or 0.
func (st *stepState) shortPeriod(repeats int) int {
	r := &st.steps
	for p := 2; p <= maxCyclePeriod && p <= r.n; p++ {
		next := r.at(r.n - p)
		if q := st.cycle(repeats, &next); q != 0 {
			return q
		}
	}
	return 0
}

// cycleNext returns the period of the cycle that a proposed call of
// action would complete, coming out as the step it repeats did, or 0.
func (st *stepState) cycleNext(repeats int, action uint32) int {
	r := &st.steps
	for p := 2; p <= maxCyclePeriod && p <= r.n; p++ {
		next := r.at(r.n - p)
		if next.action != action || next.message {
			continue
		}
		if q := st.cycle(repeats, &next); q != 0 {
			return q
		}
	}
	return 0
}

// cycleReason is the evidence of a cycle of period p, gone round repeats
// times: the actions of its last p steps, in order; next: as a proposed
// call would complete it (cycleEvidence).
func (st *stepState) cycleReason(p, repeats int, next bool) Reason {
	fps, texts := st.cycleEvidence(p, next)
	return Reason{Count: p, Threshold: repeats, Window: p * repeats, Fingerprint: fps, Action: texts}
}

// sameToolErrors returns how many times in a row the last step's tool
// failed with the last step's error, in the window, counting its calls
// alone (other tools' steps between do not break the run; a call of the
// tool that succeeded or failed otherwise does); 0 when the last step did
// not fail.
func (st *stepState) sameToolErrors() int {
	last, ok := st.last()
	if !ok || !last.failed || last.message || last.errFP == 0 {
		return 0
	}
	n := 0
	r := &st.steps
	for i := r.n - 1; i >= 0; i-- {
		s := r.at(i)
		if s.message || s.tool != last.tool {
			continue
		}
		if !s.failed || s.errFP != last.errFP {
			break
		}
		n++
	}
	return n
}

// recurrences returns how many of the last window steps (s among them,
// if it is there) are the step s.
func (st *stepState) recurrences(s stepRecord, window int) int {
	r := &st.steps
	n := 0
	for i := max(r.n-window, 0); i < r.n; i++ {
		if r.at(i).same(s) {
			n++
		}
	}
	return n
}

// recurring returns how many times the last step, a tool call, came in
// the recurring-step window, itself included; 0 for a message or no step,
// and when every one of them is in the run of it that the window ends
// with (inARow: the same step in a row), which is the repeated-action
// signal's to judge.
func (st *stepState) recurring(window, inARow int) int {
	last, ok := st.last()
	if !ok || last.message {
		return 0
	}
	n := st.recurrences(last, window)
	if n <= inARow {
		return 0
	}
	return n
}

// recurringNext returns the last call of action in the window and how
// many times a proposed call of it would have come in the window, if it
// ran, coming out as that call did: in the window's last window-1 steps,
// and it; 0 when the window holds no call of action.
func (st *stepState) recurringNext(action uint32, window, inARow int) (stepRecord, int) {
	r := &st.steps
	for i := r.n - 1; i >= max(r.n-window+1, 0); i-- {
		if s := r.at(i); s.action == action && !s.message {
			n := st.recurrences(s, window-1) + 1
			if i == r.n-1 && n <= inARow+1 {
				return stepRecord{}, 0 // all in a row: the repeated-action signal's
			}
			return s, n
		}
	}
	return stepRecord{}, 0
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

// lastText returns the evidence text of the last step's action.
func (st *stepState) lastText() string {
	last, _ := st.last()
	return last.text
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
