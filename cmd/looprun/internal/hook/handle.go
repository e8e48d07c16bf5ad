package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/agent"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/journal"
)

// ErrUnknownEvent is an event looprun does not answer.
var ErrUnknownEvent = errors.New("unknown hook event")

// handler answers one event of one project.
type handler struct {
	agent   *agent.Agent
	set     *settings
	project string // the project's directory
	store   *store
	log     *eventLog
	now     func() time.Time
	// getenv reads the environment, for where the events go (events.go);
	// nil tells nobody.
	getenv func(string) string
	notice string // a failure telling them, for the person
}

// newHandler returns the handler of the project at dir.
func newHandler(ag *agent.Agent, set *settings, dir string, now func() time.Time) *handler {
	hooks := filepath.Join(dir, stateDirName, "hooks")
	return &handler{
		agent: ag, set: set, project: dir, now: now,
		store: &store{dir: hooks, now: now},
		log:   &eventLog{path: filepath.Join(hooks, eventLogName), now: now},
	}
}

// handle answers ev. An error is the hook's own failure (its input, its
// state), which the caller reports, failing open or closed.
func (h *handler) handle(ev *Event) (Answer, error) {
	switch ev.Name {
	case PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop:
	case SessionStart:
		return Answer{}, h.store.prune()
	case SessionEnd:
		if ev.SessionID == "" {
			return Answer{}, errors.New("no session_id in the input")
		}
		return Answer{}, h.store.remove(ev.SessionID)
	default:
		return Answer{}, fmt.Errorf("%w %q", ErrUnknownEvent, ev.Name)
	}
	if ev.SessionID == "" {
		return Answer{}, errors.New("no session_id in the input")
	}
	if ev.Name == Stop && h.set.prompt == "" {
		return Answer{}, nil // no Ralph loop: the model stops when it will
	}
	unlock, err := h.store.lock(ev.SessionID)
	if err != nil {
		return Answer{}, err
	}
	defer unlock()
	s, err := h.open(ev)
	if err != nil {
		return Answer{}, err
	}
	var a Answer
	save := true
	switch ev.Name {
	case PreToolUse:
		a, save, err = s.beforeTool()
	case PostToolUse, PostToolUseFailure:
		a, err = s.afterTool()
	case UserPromptSubmit:
		a = s.newPrompt()
	case Stop:
		a, err = s.stop()
	}
	if err != nil {
		return Answer{}, err
	}
	if save {
		if err := h.store.save(ev.SessionID, s.st); err != nil {
			return a, err
		}
	}
	if h.notice != "" && a.Notice == "" {
		a.Notice = h.notice
	}
	return a, nil
}

// session is one session's state and breaker, for one event.
type session struct {
	h     *handler
	ev    *Event
	st    *state
	steps *loopbreaker.CircuitBreaker
}

// open loads the session's state and its tool steps' breaker. A state
// that cannot be read is moved aside, so that the next hook starts afresh,
// and is the error (unless fail-closed: then it stays).
func (h *handler) open(ev *Event) (*session, error) {
	st, err := h.store.load(ev.SessionID)
	if err == nil {
		var steps *loopbreaker.CircuitBreaker
		if steps, err = h.breaker(h.set.steps, st.Steps); err == nil {
			return &session{h: h, ev: ev, st: st, steps: steps}, nil
		}
		err = &CorruptError{Path: h.store.path(ev.SessionID), Err: err}
	}
	var corrupt *CorruptError
	if errors.As(err, &corrupt) && !h.set.failClosed {
		aside, mvErr := h.store.moveAside(ev.SessionID)
		if mvErr != nil {
			return nil, errors.Join(err, mvErr)
		}
		h.log.note(ev, "state moved aside to %s: %v", aside, corrupt.Err)
		return nil, fmt.Errorf("%w; moved aside to %s, and the session's breaker starts afresh at the next call", err, aside)
	}
	return nil, err
}

// breaker returns a breaker of cfg on the hook's clock, restored from
// snap when there is one.
func (h *handler) breaker(cfg loopbreaker.Config, snap *loopbreaker.Snapshot) (*loopbreaker.CircuitBreaker, error) {
	cfg.Now = h.now
	cb, err := loopbreaker.New(cfg)
	if err != nil {
		return nil, err
	}
	if snap != nil {
		if err := cb.Restore(*snap); err != nil {
			return nil, err
		}
	}
	return cb, nil
}

// keep stores the tool steps' breaker in the state. It is taken before
// any Check of the hook: a half-open probe that Check lets through is the
// tool call's own, not saved as one in flight (the hook that records the
// call's outcome is another process, and would take it for lost).
func (s *session) keep() {
	snap := s.steps.Snapshot()
	s.st.Steps = &snap
}

// beforeTool answers PreToolUse: a call is refused while the circuit is
// open (and after -refusals such refusals the run is ended), or when it
// would destroy a protected path. For an agent with SilentFailures, the
// calls that failed since with no hook after them are recorded first
// (and a trip they make refuses this call, telling the model why), and
// a call let through is noted as pending. It reports whether the state
// changed.
func (s *session) beforeTool() (Answer, bool, error) {
	changed := false
	if s.h.agent.Hooks.SilentFailures {
		if err := s.readTranscript(); err != nil {
			return Answer{}, false, err
		}
		wasOpen := s.steps.State() == loopbreaker.Open
		recorded := s.recordEnded()
		s.keep() // the spend read, and the mark moved on: both saved
		changed = true
		if recorded && !wasOpen && s.steps.State() == loopbreaker.Open {
			// They tripped the breaker: this call is refused, and the
			// model told why, as after the call that trips it.
			d := s.steps.Check()
			s.st.Refused = 0
			s.h.log.note(s.ev, "tripped: %s", d.Reason)
			s.h.tell(s.ev, journal.CircuitOpened, d.Reason)
			return Answer{Deny: tripWords(d.Reason, d.RetryAfter)}, true, nil
		}
	}
	d := s.steps.Check() // not kept: see keep
	if !d.Allow {
		if !d.WaitHelps() {
			s.h.log.note(s.ev, endedNote, d.Reason)
			s.h.tell(s.ev, journal.SessionEnded, d.Reason)
			return Answer{Deny: refusedWords(d, false), End: endWords(d.Reason, false)}, changed, nil
		}
		s.st.Refused++
		if s.st.Refused > s.h.set.refusals {
			s.h.log.note(s.ev, endedRefusedNote, s.st.Refused-1, d.Reason)
			s.h.tell(s.ev, journal.SessionEnded, d.Reason)
			return Answer{Deny: refusedWords(d, false), End: endWords(d.Reason, true)}, true, nil
		}
		s.h.log.note(s.ev, "refused %s: %s", s.ev.Tool, d.Reason)
		return Answer{Deny: refusedWords(d, s.st.Refused == s.h.set.refusals)}, true, nil
	}
	changed = changed || s.st.Refused != 0
	s.st.Refused = 0
	// The call itself, judged before it runs: one that would close a
	// cycle, or repeat a step that keeps giving the same result, is
	// refused, and opens the circuit as it would have after it ran.
	if pd := s.steps.CheckAction(loopbreaker.Action{Tool: s.ev.Tool, Args: s.h.stepArgs(s.ev.Tool, s.ev.Input)}); !pd.Allow {
		s.keep()
		s.h.log.note(s.ev, "tripped: %s", pd.Reason)
		s.h.tell(s.ev, journal.CircuitOpened, pd.Reason)
		return Answer{Deny: tripWords(pd.Reason, pd.RetryAfter)}, true, nil
	}
	err := s.h.set.checkProtected(s.h.project, s.ev.Cwd, s.ev.Tool, s.ev.Input)
	if r, ok := refusal(err); ok {
		s.h.log.note(s.ev, "refused %s: %s", s.ev.Tool, r.Reason)
		return Answer{Deny: protectedWords(r)}, changed, nil
	}
	var a Answer
	if err != nil {
		// The protected paths could not be looked at (a bad -protect):
		// the call goes on, and the person hears of it.
		a.Notice = "looprun hook: protected paths not checked: " + err.Error()
	}
	if s.h.agent.Hooks.SilentFailures && s.ev.ToolUseID != "" {
		s.st.Transcript.await(pendingCall{ID: s.ev.ToolUseID, Tool: s.ev.Tool, Args: s.h.stepArgs(s.ev.Tool, s.ev.Input)})
		changed = true
	}
	return a, changed, nil
}

// recordEnded records the calls that ended with no hook after them
// (Agent.SilentFailures) as failed steps, their result the error, and
// reports whether there were any. The caller keeps the breaker, before
// its Check.
func (s *session) recordEnded() bool {
	ended := s.st.Transcript.Ended
	if len(ended) == 0 {
		return false
	}
	s.st.Transcript.Ended = nil
	for _, c := range ended {
		s.steps.Record(loopbreaker.Iteration{Action: &loopbreaker.Action{Tool: c.Tool, Args: c.Args}, Err: errors.New(c.Result)})
		line, _, _ := strings.Cut(strings.TrimSpace(c.Result), "\n")
		s.h.log.note(s.ev, "%s failed with no hook after it: %s", c.Tool, line)
	}
	s.st.Turn.LastError = ended[len(ended)-1].Result
	return true
}

// afterTool answers PostToolUse and PostToolUseFailure: the step is
// recorded with what the session spent since the last hook. A trip tells
// the model why; a refusal no waiting ends (a spend cap) ends the run; a
// signal one step short of tripping, or a spend or budget warning, is a
// warning the model reads.
func (s *session) afterTool() (Answer, error) {
	if err := s.readSpend(); err != nil {
		return Answer{}, err
	}
	wasOpen := s.steps.State() == loopbreaker.Open
	s.st.Transcript.arrived(s.ev.ToolUseID)
	s.recordEnded()
	errText, failed := s.ev.Error, s.ev.Name == PostToolUseFailure
	if !failed && s.st.Transcript.failed(s.ev.ToolUseID) {
		// The agent says the call failed in its transcript alone (Codex:
		// a command's exit code): its error is what it returned.
		errText, failed = agent.Observation(s.ev.Tool, s.ev.Response), true
	}
	it := loopbreaker.Iteration{Action: &loopbreaker.Action{Tool: s.ev.Tool, Args: s.h.stepArgs(s.ev.Tool, s.ev.Input)}}
	if failed {
		it.Err = errors.New(errText)
		if s.ev.Interrupted {
			it.Err = fmt.Errorf("%w: %s", context.Canceled, errText)
		}
	} else {
		it.Observation = agent.Observation(s.ev.Tool, s.ev.Response)
	}
	s.steps.Record(it)
	s.noteTurn(failed && !s.ev.Interrupted, errText)
	s.keep()

	d := s.steps.Check()
	switch {
	case !d.Allow && !d.WaitHelps():
		s.h.log.note(s.ev, endedNote, d.Reason)
		s.h.tell(s.ev, journal.SessionEnded, d.Reason)
		a := Answer{End: endWords(d.Reason, false)}
		if d.State == loopbreaker.Open && !wasOpen {
			a.Block = tripWords(d.Reason, 0)
		}
		return a, nil
	case !d.Allow && d.State == loopbreaker.Open && !wasOpen:
		s.st.Refused = 0
		s.h.log.note(s.ev, "tripped: %s", d.Reason)
		s.h.tell(s.ev, journal.CircuitOpened, d.Reason)
		return Answer{Block: tripWords(d.Reason, d.RetryAfter)}, nil
	case !d.Allow:
		return Answer{}, nil // refused before this call: the model was told
	}
	if w := s.warnings(d); len(w) > 0 {
		return Answer{Context: strings.Join(w, "\n")}, nil
	}
	return Answer{}, nil
}

// noteTurn keeps what the turn did for the Ralph loop: the files the
// agent's editing tools wrote, and whether its last call failed.
func (s *session) noteTurn(failed bool, errText string) {
	t := &s.st.Turn
	if writesFiles(s.h.agent.Hooks.Tools, s.ev.Tool) && !failed {
		t.Edits++
	}
	t.LastError = ""
	if failed {
		t.LastError = errText
	}
}

// warnings returns the warnings the model has not been given while they
// hold, in the breaker's words for a model: the signals one step short of
// tripping (Decision.Short), and the breaker's own warnings (80% of a
// spend cap or of the call budget).
func (s *session) warnings(d loopbreaker.Decision) []string {
	type warning struct{ key, text string }
	var now []warning
	for _, r := range d.Short {
		now = append(now, warning{r.Kind.String(), r.ForModel()})
	}
	for _, w := range d.Warnings {
		now = append(now, warning{w.Kind.String(), "loopbreaker warning: " + w.String() + "."})
	}
	var keys, texts []string
	for _, w := range now {
		keys = append(keys, w.key)
		if !slices.Contains(s.st.Warned, w.key) {
			texts = append(texts, w.text)
		}
	}
	s.st.Warned = keys
	return texts
}

// newPrompt answers UserPromptSubmit: a person who writes a new prompt
// has seen why the circuit opened, and it closes; the Ralph loop starts
// over with the new task.
func (s *session) newPrompt() Answer {
	s.st.Refused = 0
	s.st.Turn = turnState{Tree: s.st.Turn.Tree}
	s.st.Ralph = nil
	if s.steps.State() == loopbreaker.Closed {
		return Answer{}
	}
	r := s.steps.Stats().Reason
	s.steps.Resume()
	s.keep()
	s.h.log.note(s.ev, "resumed by a new prompt: %s", r)
	return Answer{Notice: fmt.Sprintf("looprun: the circuit was open (%s); your prompt closed it.", r)}
}

// callWait bounds how long a hook after a tool call waits for the answer
// that asked for the call to be in the transcript: Claude Code writes its
// transcript on its own time, and a hook may come first.
const callWait = 100 * time.Millisecond

// readSpend adds what the session spent since the last hook, read from
// its transcript, to the tool steps' breaker. After a tool call it reads
// on until the answer that asked for the call is in, for up to callWait.
func (s *session) readSpend() error {
	deadline := time.Now().Add(callWait)
	for {
		if err := s.readTranscript(); err != nil {
			return err
		}
		if s.ev.ToolUseID == "" || s.st.Transcript.took(s.ev.ToolUseID) || time.Now().After(deadline) {
			return nil
		}
		if _, err := os.Stat(s.ev.TranscriptPath); err != nil {
			return nil // no transcript to wait for
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// readTranscript reads what the session's transcript gained since the
// last hook: its spend, and the usage windows it reports, go to the tool
// steps' breaker.
func (s *session) readTranscript() error {
	spent, windows, err := readSpend(s.ev.TranscriptPath, &s.st.Transcript, s.h.agent.Hooks.Message)
	for _, w := range windows {
		s.steps.ObserveWindow(w)
	}
	for _, u := range spent {
		if u.Model == "" {
			u.Model = s.ev.Model // Codex's transcript names it apart
		}
		s.steps.AddUsage(u)
	}
	if err != nil {
		return fmt.Errorf("reading the transcript: %w", err)
	}
	return nil
}

// stepArgs returns a tool call's arguments as the step signals compare
// them: its input with its keys in order, without the members the
// agent's tool says nothing by (the description a model gives each shell
// call, which says nothing of what runs).
func (h *handler) stepArgs(tool string, input json.RawMessage) string {
	var in map[string]json.RawMessage
	if json.Unmarshal(input, &in) != nil {
		return string(input)
	}
	for _, k := range h.agent.Hooks.Tools[tool].Ignore {
		delete(in, k)
	}
	out, err := json.Marshal(in)
	if err != nil {
		return string(input)
	}
	return string(out)
}

// eventLogName is the hooks' log in the state directory: what they did
// that the person may want to know afterwards (trips, refusals, runs
// ended), since claude -p shows none of it.
const eventLogName = "events.log"

// maxEventLog bounds the log; past it the log starts anew, the old one
// kept as events.log.1.
const maxEventLog = 1 << 20

// eventLog appends lines to the hooks' log. Writing it never fails a
// hook.
type eventLog struct {
	path string
	now  func() time.Time
}

// note appends a line about ev.
func (l *eventLog) note(ev *Event, format string, args ...any) {
	if info, err := os.Stat(l.path); err == nil && info.Size() > maxEventLog {
		_ = os.Rename(l.path, l.path+".1")
	}
	f, err := os.OpenFile(l.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s session %s %s: %s\n", l.now().UTC().Format(time.RFC3339), ev.SessionID, ev.Name, fmt.Sprintf(format, args...))
}
