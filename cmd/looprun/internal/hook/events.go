package hook

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/journal"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/notify"
)

// The hook tells a person what looprun tells: when the session's circuit
// opens, and when the hook ends the session. Under looprun (which sets
// EventsEnv for its command) the events go to the file looprun reads:
// looprun journals them and sends them on, and the hook never waits on a
// receiver. A session outside looprun sends them itself, to the
// receivers of NotifyEnv and OnEventEnv, within notifyWait in all: a
// hook holds the agent's tool call while it runs.
const (
	EventsEnv  = "LOOPRUN_EVENTS"
	NotifyEnv  = "LOOPRUN_NOTIFY"
	OnEventEnv = "LOOPRUN_ON_EVENT"

	notifyWait = 2 * time.Second
	// notifyFailed, in the hooks' directory, says the receivers failed
	// and the person was told: a later failure is not said again, until
	// one gets through.
	notifyFailed = "notify-failed"
)

// tell sends the event of kind for ev, with its reason.
func (h *handler) tell(ev *Event, kind journal.Kind, reason loopbreaker.Reason) {
	if h.getenv == nil {
		return
	}
	who := fmt.Sprintf("looprun hook (%s session %s) in %s", h.agent.Name, ev.SessionID, h.project)
	e := journal.Entry{Kind: kind, At: h.now(), Dir: h.project, Source: journal.FromHook, Session: ev.SessionID,
		Reason: journal.ReasonOf(reason)}
	switch kind {
	case journal.CircuitOpened:
		e.Text = fmt.Sprintf("%s: the tool steps' circuit opened: %s", who, reason.Detail())
	default:
		e.Text = fmt.Sprintf("%s: ended the session: %s", who, reason.Detail())
	}
	if path := h.getenv(EventsEnv); path != "" {
		if err := journal.NewWriter(path).Append(e); err != nil {
			h.notice = "looprun hook: telling looprun: " + err.Error()
		}
		return
	}
	var sinks []notify.Sink
	if u := h.getenv(NotifyEnv); u != "" {
		w, err := notify.NewWebhook(u, nil)
		if err != nil {
			h.failed(fmt.Errorf("%s: %w", NotifyEnv, err))
			return
		}
		sinks = append(sinks, w)
	}
	if c := h.getenv(OnEventEnv); c != "" {
		sinks = append(sinks, &notify.Command{Line: c, Dir: h.project, Timeout: notifyWait})
	}
	if len(sinks) == 0 {
		return
	}
	e.Loop = "hooks"
	ctx, cancel := context.WithTimeout(context.Background(), notifyWait)
	defer cancel()
	if err := notify.Deliver(ctx, notify.Config{Attempts: 2, Backoff: 200 * time.Millisecond}, e, sinks...); err != nil {
		h.failed(err)
		return
	}
	if err := os.Remove(filepath.Join(h.store.dir, notifyFailed)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		h.notice = "looprun hook: " + err.Error()
	}
}

// failed says, once until a notification gets through, that one failed.
func (h *handler) failed(err error) {
	marker := filepath.Join(h.store.dir, notifyFailed)
	if _, serr := os.Stat(marker); serr == nil {
		return // said
	}
	_ = os.MkdirAll(h.store.dir, 0o755)
	_ = os.WriteFile(marker, []byte(err.Error()+"\n"), 0o600)
	h.notice = fmt.Sprintf("looprun hook: notifications failed: %v (said once)", err)
}
