package hook

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/journal"
)

// tripAndEnd makes the session's circuit open (three failures of one
// call), then ends the run (the calls refused while it is open).
func tripAndEnd(p *project) {
	for range 3 {
		p.call(bashFailed("make", "Exit code 2\nmake: *** [all] Error 2"))
	}
	p.call(preBash("make"))
	p.call(tool(PreToolUse, "Read", map[string]any{"file_path": "/etc/hosts"}))
}

func TestUnderLooprunTheHooksLeaveTheirEventsToLooprun(t *testing.T) {
	p := newProject(t, nil)
	events := filepath.Join(t.TempDir(), "loop.hook-events.jsonl")
	p.env[EventsEnv] = events
	p.env[NotifyEnv] = "http://127.0.0.1:9/never-called" // looprun sends them on, not the hook
	tripAndEnd(p)

	entries, skipped, err := journal.Read(events)
	require.NoError(t, err)
	assert.Zero(t, skipped)
	require.Len(t, entries, 2)
	opened, ended := entries[0], entries[1]
	assert.Equal(t, journal.CircuitOpened, opened.Kind)
	assert.Equal(t, journal.FromHook, opened.Source)
	assert.Equal(t, p.session, opened.Session)
	assert.Equal(t, "repeated_action_error", opened.Reason.Kind)
	assert.Contains(t, opened.Text, "looprun hook (Claude Code session "+p.session+") in "+p.dir+": the tool steps' circuit opened: Same action failed 3 times in a row")
	assert.Equal(t, journal.SessionEnded, ended.Kind)
	assert.Contains(t, ended.Text, ": ended the session: Same action failed 3 times in a row")
}

func TestOutsideLooprunTheHooksSendTheirEventsThemselves(t *testing.T) {
	var mu sync.Mutex
	var got []journal.Entry
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e journal.Entry
		assert.NoError(t, json.NewDecoder(r.Body).Decode(&e))
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
	}))
	defer srv.Close()
	p := newProject(t, nil)
	p.env[NotifyEnv] = srv.URL
	out := filepath.Join(t.TempDir(), "events.txt")
	p.env[OnEventEnv] = `echo "$LOOPRUN_EVENT" >> ` + out
	tripAndEnd(p)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 2)
	assert.Equal(t, []journal.Kind{journal.CircuitOpened, journal.SessionEnded}, []journal.Kind{got[0].Kind, got[1].Kind})
	assert.Equal(t, "hooks", got[0].Loop)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "circuit_opened\nsession_ended\n", string(data))
}

func TestAReceiverThatFailsIsSaidOnceByTheHooks(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	p := newProject(t, nil)
	p.env[NotifyEnv] = srv.URL + "/gone"
	var notices []string
	for range 3 {
		a := p.call(bashFailed("make", "Exit code 2"))
		notices = append(notices, a.Notice)
	}
	p.call(preBash("make"))
	a := p.call(tool(PreToolUse, "Read", map[string]any{"file_path": "/etc/hosts"}))
	assert.Equal(t, []string{"", "", "looprun hook: notifications failed: " + srv.URL + "/…: answered 404 Not Found (said once)"}, notices)
	assert.NotContains(t, a.Notice, "notifications failed", "said once: the end of the run is not said again")
}
