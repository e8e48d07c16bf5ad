package notify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// receiver is a webhook that keeps what it was sent, in order.
type receiver struct {
	mu     sync.Mutex
	bodies []map[string]any
	got    chan string // each event's kind, as it arrives
	answer func(n int) int
}

func newReceiver(t *testing.T, answer func(n int) int) (*receiver, *httptest.Server) {
	r := &receiver{got: make(chan string, 100), answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body map[string]any
		data, _ := io.ReadAll(req.Body)
		if assert.NoError(t, json.Unmarshal(data, &body), "%s", data) {
			assert.Equal(t, "application/json", req.Header.Get("Content-Type"))
			assert.Equal(t, http.MethodPost, req.Method)
		}
		r.mu.Lock()
		r.bodies = append(r.bodies, body)
		n := len(r.bodies)
		r.mu.Unlock()
		code := http.StatusOK
		if r.answer != nil {
			code = r.answer(n)
		}
		w.WriteHeader(code)
		r.got <- body["event"].(string)
	}))
	t.Cleanup(srv.Close)
	return r, srv
}

func event(kind journal.Kind, text string) journal.Entry {
	return journal.Entry{Kind: kind, Text: text, Loop: "loop", At: time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)}
}

// noWait is a Sleep that returns at once, and counts what it was asked.
type noWait struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (n *noWait) sleep(ctx context.Context, d time.Duration) error {
	n.mu.Lock()
	n.waits = append(n.waits, d)
	n.mu.Unlock()
	return ctx.Err()
}

func TestAWebhookGetsTheEventsInOrderWithTheirText(t *testing.T) {
	rcv, srv := newReceiver(t, nil)
	hook, err := NewWebhook(srv.URL+"/services/T000/B000/secret", nil)
	require.NoError(t, err)
	n := New(Config{}, hook)
	kinds := []journal.Kind{journal.CircuitOpened, journal.ProviderLimit, journal.SpendWarning, journal.GaveUp, journal.Ended}
	for _, k := range kinds {
		n.Notify(event(k, "loop: "+string(k)))
	}
	n.Close(context.Background())

	require.Len(t, rcv.bodies, len(kinds))
	for i, k := range kinds {
		assert.Equal(t, string(k), rcv.bodies[i]["event"])
		assert.Equal(t, "loop: "+string(k), rcv.bodies[i]["text"], "the field Slack shows")
		assert.Equal(t, "loop", rcv.bodies[i]["loop"])
	}
	assert.Equal(t, []Stats{{Sink: hook.String(), Delivered: 5}}, n.Stats())
	assert.NotContains(t, hook.String(), "secret", "a webhook's path is its token: never shown")
}

func TestAReceiverThatIsDownIsTriedAgainAFewTimes(t *testing.T) {
	rcv, srv := newReceiver(t, func(n int) int {
		if n <= 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	hook, err := NewWebhook(srv.URL, nil)
	require.NoError(t, err)
	clock := &noWait{}
	n := New(Config{Sleep: clock.sleep}, hook)
	n.Notify(event(journal.CircuitOpened, "opened"))
	n.Close(context.Background())

	assert.Len(t, rcv.bodies, 3, "two 503s, then delivered")
	assert.Equal(t, []time.Duration{2 * time.Second, 4 * time.Second}, clock.waits, "a backoff that doubles")
	assert.Equal(t, 1, n.Stats()[0].Delivered)
}

func TestAFailingReceiverIsSaidOnceAndStillGetsLaterEvents(t *testing.T) {
	rcv, srv := newReceiver(t, func(int) int { return http.StatusNotFound })
	hook, err := NewWebhook(srv.URL+"/hooks/gone", nil)
	require.NoError(t, err)
	var said []string
	n := New(Config{Sleep: (&noWait{}).sleep, OnFailure: func(s Sink, err error) {
		said = append(said, s.String()+": "+err.Error())
	}}, hook)
	for range 3 {
		n.Notify(event(journal.CircuitOpened, "opened"))
	}
	n.Close(context.Background())

	assert.Len(t, rcv.bodies, 3, "a 404 is not tried again, and each event is tried once")
	require.Len(t, said, 1, "said once")
	assert.Equal(t, srv.URL+"/…: answered 404 Not Found", said[0])
	st := n.Stats()[0]
	assert.Equal(t, 3, st.Failed)
	assert.EqualError(t, st.FirstError, "answered 404 Not Found")
}

func TestAHangingReceiverHoldsNothingUp(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	hanging, err := NewWebhook(srv.URL, nil)
	require.NoError(t, err)
	working := &recording{sent: make(chan journal.Entry)}

	n := New(Config{Queue: 4}, hanging, working)
	for i := range 10 {
		n.Notify(event(journal.IterationRan, string(rune('a'+i)))) // returns at once: the test would hang otherwise
		<-working.sent                                             // the other receiver gets each event meanwhile
		if i == 0 {
			<-arrived // the hanging receiver holds the first
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the loop is over and gives no time
	n.Close(ctx)

	st := n.Stats()
	assert.Equal(t, 0, st[0].Delivered)
	assert.Equal(t, 10, st[0].Dropped, "each dropped: from the full queue, waiting at Close, or under way then")
	assert.Equal(t, 10, st[1].Delivered)
}

// recording is a receiver that says each event it was sent.
type recording struct{ sent chan journal.Entry }

func (r *recording) Send(ctx context.Context, e journal.Entry) error {
	r.sent <- e
	return nil
}

func (r *recording) String() string { return "recording" }

func TestDeliverGivesUpAtItsDeadline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	}))
	t.Cleanup(srv.Close)
	hook, err := NewWebhook(srv.URL, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { cancel() }() // the deadline, come
	err = Deliver(ctx, Config{Sleep: (&noWait{}).sleep}, event(journal.CircuitOpened, "opened"), hook)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.True(t, strings.HasPrefix(err.Error(), srv.URL+": "), err.Error())
}

func TestACommandGetsTheEventOnStdinAndInItsEnvironment(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh")
	}
	dir := t.TempDir()
	c := &Command{Line: `cat > stdin.json; printf '%s\n%s\n' "$LOOPRUN_EVENT" "$LOOPRUN_EVENT_TEXT" > env.txt`, Dir: dir}
	e := event(journal.GaveUp, "loop gave up: the circuit opened 10 times in a row")
	require.NoError(t, Deliver(context.Background(), Config{}, e, c))

	data, err := os.ReadFile(filepath.Join(dir, "stdin.json"))
	require.NoError(t, err)
	var got journal.Entry
	require.NoError(t, json.Unmarshal(data, &got))
	assert.Equal(t, e, got)
	env, err := os.ReadFile(filepath.Join(dir, "env.txt"))
	require.NoError(t, err)
	assert.Equal(t, "gave_up\nloop gave up: the circuit opened 10 times in a row\n", string(env))
}

func TestAFailingCommandIsRunOncePerEventAndSaysItsLastLine(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh")
	}
	dir := t.TempDir()
	c := &Command{Line: `echo run >> runs; echo "notify-send: no display" >&2; exit 3`, Dir: dir}
	err := Deliver(context.Background(), Config{Sleep: (&noWait{}).sleep}, event(journal.Ended, "done"), c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exit status 3: notify-send: no display")
	runs, rerr := os.ReadFile(filepath.Join(dir, "runs"))
	require.NoError(t, rerr)
	assert.Equal(t, "run\n", string(runs), "not run again: it would notify twice")
}

func TestAWebhookURLIsChecked(t *testing.T) {
	for _, bad := range []string{"", "hooks.slack.com/services/x", "ftp://example.com/x", "http://", "://x"} {
		_, err := NewWebhook(bad, nil)
		assert.EqualError(t, err, "not an http:// or https:// URL", bad)
	}
	w, err := NewWebhook("https://hooks.slack.com/services/T0/B0/XYZ?x=1", nil)
	require.NoError(t, err)
	assert.Equal(t, "https://hooks.slack.com/…", w.String())
	w, err = NewWebhook("http://127.0.0.1:9", nil)
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:9", w.String())
}

func TestANetworkErrorDoesNotQuoteTheURL(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/secret-token"
	srv.Close() // nobody listens there now
	hook, err := NewWebhook(url, nil)
	require.NoError(t, err)
	err = hook.Send(context.Background(), event(journal.Ended, "done"))
	require.Error(t, err)
	assert.False(t, isPermanent(err), "a receiver that is down may come back")
	assert.NotContains(t, err.Error(), "secret-token")
	var perm permanent
	assert.False(t, errors.As(err, &perm))
}
