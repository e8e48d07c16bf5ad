package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/loopbreaker/loopbreaker/sessions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var start = time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)

// memStore is a Store in memory that counts its saves.
type memStore struct {
	mu    sync.Mutex
	snaps map[string]loopbreaker.Snapshot
	saves int
	fail  error
}

func newMemStore() *memStore { return &memStore{snaps: map[string]loopbreaker.Snapshot{}} }

func (m *memStore) Load(_ context.Context, loop string) (loopbreaker.Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.snaps[loop]
	if !ok {
		return loopbreaker.Snapshot{}, loopbreaker.ErrNoState
	}
	return s, nil
}

func (m *memStore) Save(_ context.Context, loop string, s loopbreaker.Snapshot) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.snaps[loop] = s
	m.saves++
	return nil
}

func (m *memStore) has(loop string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.snaps[loop]
	return ok
}

// newSet returns a set on a fake clock with the tool-steps preset.
func newSet(t *testing.T, opts sessions.Options) (*sessions.Set, *loopbreakertest.Clock) {
	t.Helper()
	clock := loopbreakertest.NewClock(start)
	if opts.Config.Now == nil {
		cfg, err := loopbreaker.Preset("tool-steps")
		require.NoError(t, err)
		cfg.Spend.MaxCallsPerHour = 100
		opts.Config = cfg
		opts.Config.Now, opts.Config.Sleep = clock.Now, clock.Sleep
	}
	set, err := sessions.New(opts)
	require.NoError(t, err)
	return set, clock
}

func get(t *testing.T, set *sessions.Set, key string) *sessions.Session {
	t.Helper()
	sess, err := set.Get(context.Background(), key)
	require.NoError(t, err)
	return sess
}

// stuck records the same failing call three times, as a host that asks
// nothing before a call does: the circuit opens.
func stuck(t *testing.T, sess *sessions.Session) {
	t.Helper()
	for i := range 3 {
		c := sessions.Call{ID: fmt.Sprint("stuck", i), Tool: "edit", Args: `{"old":"x"}`}
		sess.AfterModel(sessions.Turn{Calls: []sessions.Call{c}})
		sess.AfterTool(c, "", errors.New("no match for old text"))
	}
	require.Equal(t, loopbreaker.Open, sess.Breaker().State())
}

// Two keys are two breakers; the same key is the same session.
func TestEachKeyHasABreakerOfItsOwn(t *testing.T) {
	set, _ := newSet(t, sessions.Options{})
	a, b := get(t, set, "app/alice/1"), get(t, set, "app/bob/1")
	assert.NotSame(t, a.Breaker(), b.Breaker())
	assert.Same(t, a, get(t, set, "app/alice/1"))
	assert.Equal(t, "app/alice/1", a.Key())
	assert.Equal(t, 2, set.Len())

	stuck(t, a)
	assert.ErrorIs(t, a.BeforeModel(context.Background()), loopbreaker.ErrOpen, "alice's loop is stuck")
	assert.NoError(t, b.BeforeModel(context.Background()), "bob's is not")
}

// The set holds at most MaxSessions: one more frees the least recently
// used, saved, and a later Get restores it as it was.
func TestTheLeastRecentlyUsedSessionIsFreedAndRestored(t *testing.T) {
	store := newMemStore()
	set, _ := newSet(t, sessions.Options{Store: store, MaxSessions: 2})
	a := get(t, set, "a")
	stuck(t, a)
	get(t, set, "b")
	get(t, set, "a") // a used again: b is the least recent
	get(t, set, "c")
	assert.Equal(t, 2, set.Len())
	_, held := set.Lookup("b")
	assert.False(t, held, "b was freed")
	_, held = set.Lookup("a")
	assert.True(t, held)

	get(t, set, "d") // frees a, saved
	_, held = set.Lookup("a")
	require.False(t, held)
	again := get(t, set, "a")
	assert.NotSame(t, a, again)
	assert.Equal(t, loopbreaker.Open, again.Breaker().State(), "restored from the store")
}

// A session idle for longer than the idle timeout is freed at the next
// Get, and saved.
func TestAnIdleSessionIsFreed(t *testing.T) {
	store := newMemStore()
	set, clock := newSet(t, sessions.Options{Store: store, IdleTimeout: 10 * time.Minute})
	get(t, set, "idle")
	clock.Advance(5 * time.Minute)
	get(t, set, "busy")
	clock.Advance(6 * time.Minute)
	get(t, set, "busy")
	_, held := set.Lookup("idle")
	assert.False(t, held, "idle for 11 minutes")
	assert.True(t, store.has("idle"), "saved when freed")
	_, held = set.Lookup("busy")
	assert.True(t, held)
}

// End frees a session, saved; Close frees them all and the set makes no
// more.
func TestEndAndCloseSaveAndFree(t *testing.T) {
	store := newMemStore()
	set, _ := newSet(t, sessions.Options{Store: store})
	get(t, set, "one")
	get(t, set, "two")
	require.NoError(t, set.End(context.Background(), "one"))
	require.NoError(t, set.End(context.Background(), "never made"))
	assert.Equal(t, 1, set.Len())
	assert.True(t, store.has("one"))
	require.NoError(t, set.Close(context.Background()))
	assert.True(t, store.has("two"))
	_, err := set.Get(context.Background(), "three")
	assert.ErrorIs(t, err, sessions.ErrClosed)
}

// A snapshot that cannot be read is an error, never a fresh start.
func TestACorruptSnapshotIsAnError(t *testing.T) {
	set, _ := newSet(t, sessions.Options{Store: corruptStore{}})
	_, err := set.Get(context.Background(), "s")
	assert.ErrorIs(t, err, loopbreaker.ErrCorruptState)
}

type corruptStore struct{}

func (corruptStore) Load(context.Context, string) (loopbreaker.Snapshot, error) {
	return loopbreaker.Snapshot{}, fmt.Errorf("bad: %w", loopbreaker.ErrCorruptState)
}
func (corruptStore) Save(context.Context, string, loopbreaker.Snapshot) error { return nil }

// A failed save ends the next model call with the store's error: nothing
// is lost without a word.
func TestAFailedSaveEndsTheNextModelCall(t *testing.T) {
	store := newMemStore()
	set, _ := newSet(t, sessions.Options{Store: store})
	sess := get(t, set, "s")
	store.fail = errors.New("disk full")
	sess.AfterModel(sessions.Turn{Text: "hello"})
	err := sess.BeforeModel(context.Background())
	assert.ErrorContains(t, err, "disk full")
	assert.NoError(t, sess.BeforeModel(context.Background()), "said once")
}

// New rejects what cannot mean anything.
func TestNewRejectsABadConfig(t *testing.T) {
	_, err := sessions.New(sessions.Options{Config: loopbreaker.Config{Cooldown: -time.Second}})
	assert.ErrorIs(t, err, loopbreaker.ErrInvalidConfig)
	_, err = sessions.New(sessions.Options{MaxSessions: -1})
	assert.Error(t, err)
	set, err := sessions.New(sessions.Options{})
	require.NoError(t, err)
	o := set.Options()
	assert.Equal(t, sessions.DefaultMaxSessions, o.MaxSessions)
	assert.Equal(t, sessions.DefaultIdleTimeout, o.IdleTimeout)
	assert.Equal(t, sessions.DefaultMaxWait, o.MaxWait)
}

// A store's loop name is the key when it can be, else a name made of it
// and a hash of it, which two keys never share.
func TestLoopName(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{"chat-7", "chat-7"},
		{"a.b_c-D9", "a.b_c-D9"},
		{"app/user/chat", "app_user_chat-"},
		{"app:user:chat", "app_user_chat-"},
		{"", "-"},
		{".hidden", "_.hidden-"},
		{"NUL", "_NUL-"},
		{"com1.x", "_com1.x-"},
		{"héllo", "h__llo-"},
		{strings.Repeat("a", 101), strings.Repeat("a", 100) + "-"},
	} {
		got := sessions.LoopName(tc.key)
		if strings.HasSuffix(tc.want, "-") {
			assert.True(t, strings.HasPrefix(got, tc.want), "%q: %q", tc.key, got)
			assert.Len(t, got, len(tc.want)+16, "%q", tc.key)
		} else {
			assert.Equal(t, tc.want, got, tc.key)
		}
		_, err := loopbreaker.NewFileStore(t.TempDir()).Path(got)
		assert.NoError(t, err, "%q is a FileStore name", got)
	}
	assert.NotEqual(t, sessions.LoopName("a/b"), sessions.LoopName("a:b"))
}

func FuzzLoopName(f *testing.F) {
	for _, s := range []string{"chat", "app/user/chat", "", ".x", "NUL", "\xff"} {
		f.Add(s)
	}
	store := loopbreaker.NewFileStore(f.TempDir())
	f.Fuzz(func(t *testing.T, key string) {
		name := sessions.LoopName(key)
		if _, err := store.Path(name); err != nil {
			t.Fatalf("LoopName(%q) = %q: %v", key, name, err)
		}
		if name == key {
			return
		}
		if sessions.LoopName(key+"x") == name {
			t.Fatalf("%q and %q share %q", key, key+"x", name)
		}
	})
}

// A provider limit that ends within MaxWait is waited out on the
// breaker's clock before the model call; a longer one ends the run with
// the limit's error, at once.
func TestAProviderLimitIsWaitedOutWithinMaxWait(t *testing.T) {
	set, clock := newSet(t, sessions.Options{MaxWait: time.Minute})
	sess := get(t, set, "s")
	sess.ObserveLimit(loopbreaker.Limit{Kind: loopbreaker.LimitThrottle, Reset: start.Add(20 * time.Second), Source: "api"})
	require.NoError(t, sess.BeforeModel(context.Background()))
	assert.Equal(t, []time.Duration{20 * time.Second}, clock.Slept())

	sess.ObserveLimit(loopbreaker.Limit{Kind: loopbreaker.LimitWait, Reset: clock.Now().Add(2 * time.Hour), Source: "api"})
	err := sess.BeforeModel(context.Background())
	assert.ErrorIs(t, err, loopbreaker.ErrProviderLimit)
	assert.True(t, sessions.IsStop(err))
	assert.Len(t, clock.Slept(), 1, "not waited")
}

// A limit that outlasts the context's deadline is not waited for.
func TestALimitPastTheDeadlineIsNotWaitedFor(t *testing.T) {
	set, clock := newSet(t, sessions.Options{})
	sess := get(t, set, "s")
	sess.ObserveLimit(loopbreaker.Limit{Kind: loopbreaker.LimitThrottle, Reset: start.Add(30 * time.Second)})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	assert.ErrorIs(t, sess.BeforeModel(ctx), loopbreaker.ErrProviderLimit)
	assert.Empty(t, clock.Slept())
}

// An open circuit ends the run at once: its cooldown is not waited out.
// After the cooldown, the next model call is the probe.
func TestAnOpenCircuitEndsTheRunAndIsNotWaitedOut(t *testing.T) {
	set, clock := newSet(t, sessions.Options{})
	sess := get(t, set, "s")
	stuck(t, sess)
	err := sess.BeforeModel(context.Background())
	require.ErrorIs(t, err, loopbreaker.ErrOpen)
	assert.Contains(t, err.Error(), `loopbreaker stopped session "s": `)
	assert.Contains(t, err.Error(), `Same action failed 3 times in a row`)
	assert.Empty(t, clock.Slept())
	clock.Advance(30 * time.Second)
	assert.NoError(t, sess.BeforeModel(context.Background()), "the probe")
}

// A chat agent's answers are messages, not done signals: the person's
// next messages run. With DoneOnAnswer they complete the loop.
func TestAnAnswerIsNoDoneSignalUnlessTheHostSaysSo(t *testing.T) {
	for _, done := range []bool{false, true} {
		set, _ := newSet(t, sessions.Options{DoneOnAnswer: done})
		sess := get(t, set, "s")
		var err error
		for _, answer := range []string{"Hi.", "Done: 2 files.", "Anything else?"} {
			sess.UserMessage()
			if err = sess.BeforeModel(context.Background()); err != nil {
				break
			}
			sess.AfterModel(sessions.Turn{Text: answer})
		}
		if done {
			assert.ErrorIs(t, err, loopbreaker.ErrComplete)
		} else {
			assert.NoError(t, err)
		}
	}
}

// The calls of one turn that run in parallel are recorded in the model's
// order, whichever ends first, and the turn counts one call.
func TestParallelCallsAreRecordedInTheModelsOrder(t *testing.T) {
	set, _ := newSet(t, sessions.Options{})
	sess := get(t, set, "s")
	calls := []sessions.Call{
		{ID: "1", Tool: "read_file", Args: `{"path":"a"}`},
		{ID: "2", Tool: "read_file", Args: `{"path":"a"}`},
		{ID: "3", Tool: "run_tests", Args: `{}`},
	}
	require.NoError(t, sess.BeforeModel(context.Background()))
	sess.AfterModel(sessions.Turn{Calls: calls})
	for _, c := range calls {
		_, refused := sess.BeforeTool(c)
		require.False(t, refused)
	}
	sess.AfterTool(calls[2], "ok", nil)
	assert.Equal(t, 0, sess.Breaker().Stats().Iterations, "run_tests waits for the two reads")
	sess.AfterTool(calls[1], "A", nil)
	assert.Equal(t, 0, sess.Breaker().Stats().Iterations)
	sess.AfterTool(calls[0], "A", nil)
	st := sess.Breaker().Stats()
	assert.Equal(t, 3, st.Iterations)
	assert.Equal(t, 1, st.Steps.SameStepInARow, "read, read, run_tests: the last step is the tests (in the order they ended, two reads would be last)")
	assert.Equal(t, 1, st.Budget.Used, "one model call")
}

// Many tool calls ending at once from many goroutines: each recorded once.
func TestConcurrentToolCallsAreEachRecordedOnce(t *testing.T) {
	set, _ := newSet(t, sessions.Options{})
	sess := get(t, set, "s")
	var calls []sessions.Call
	for i := range 8 {
		calls = append(calls, sessions.Call{ID: fmt.Sprint(i), Tool: "read_file", Args: fmt.Sprintf(`{"path":"%d"}`, i)})
	}
	sess.AfterModel(sessions.Turn{Calls: calls})
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, refused := sess.BeforeTool(c); !refused {
				sess.AfterTool(c, "content", nil)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 8, sess.Breaker().Stats().Iterations)
}

// A call that never ends is passed over at the next model call, and the
// ended calls after it are recorded then.
func TestACallThatNeverEndsIsPassedOver(t *testing.T) {
	set, _ := newSet(t, sessions.Options{})
	sess := get(t, set, "s")
	a, b := sessions.Call{ID: "a", Tool: "wait_for_approval"}, sessions.Call{ID: "b", Tool: "ls"}
	sess.AfterModel(sessions.Turn{Calls: []sessions.Call{a, b}})
	sess.AfterTool(b, "x", nil)
	assert.Equal(t, 0, sess.Breaker().Stats().Iterations)
	require.NoError(t, sess.BeforeModel(context.Background()))
	assert.Equal(t, 1, sess.Breaker().Stats().Iterations)
}

// The step one short of a repeat comes with a warning for the model, said
// once while it holds; the third failure of the same call runs (it might
// pass), is recorded and opens the circuit: the next model call ends the
// run.
func TestTheStepOneShortComesWithAWarningOnce(t *testing.T) {
	set, _ := newSet(t, sessions.Options{})
	sess := get(t, set, "s")
	step := func(id, tool, args string, err error) string {
		c := sessions.Call{ID: id, Tool: tool, Args: args}
		sess.AfterModel(sessions.Turn{Calls: []sessions.Call{c}})
		_, refused := sess.BeforeTool(c)
		require.False(t, refused, "%s %s", tool, args)
		return sess.AfterTool(c, "", err)
	}
	noMatch := errors.New("no match")
	assert.Empty(t, step("1", "edit", `{"old":"x"}`, noMatch))
	assert.Contains(t, step("2", "edit", `{"old":"x"}`, noMatch),
		`loopbreaker warning: this call has failed 2 times in a row (edit {"old":"x"}); if it fails once more, your tool calls are stopped`)
	assert.NotContains(t, step("3", "edit", `{"old":"x"}`, noMatch), "this call has failed 2 times", "said once")
	assert.Equal(t, loopbreaker.Open, sess.Breaker().State())
	err := sess.BeforeModel(context.Background())
	assert.ErrorIs(t, err, loopbreaker.ErrOpen)
	assert.True(t, sessions.IsStop(err))
}

// The call that would complete a loop (the same call with the same result
// again, other calls between) is refused before it runs, with words the
// model can act on, is no step, and opens the circuit.
func TestTheCallThatWouldCompleteALoopIsRefusedBeforeItRuns(t *testing.T) {
	set, _ := newSet(t, sessions.Options{})
	sess := get(t, set, "s")
	ls := sessions.Call{Tool: "ls", Args: `{"dir":"out"}`}
	var words string
	refused := false
	for i := 0; i < 10 && !refused; i++ {
		ls.ID = fmt.Sprint("ls", i)
		other := sessions.Call{ID: fmt.Sprint("cat", i), Tool: "cat", Args: fmt.Sprintf(`{"path":"%d"}`, i)}
		sess.AfterModel(sessions.Turn{Calls: []sessions.Call{ls, other}})
		if words, refused = sess.BeforeTool(ls); refused {
			break
		}
		sess.AfterTool(ls, "", nil)
		_, otherRefused := sess.BeforeTool(other)
		require.False(t, otherRefused)
		sess.AfterTool(other, fmt.Sprint("file ", i), nil)
	}
	require.True(t, refused, "ls, again and again, with nothing in out/")
	assert.Contains(t, words, `loopbreaker stopped your tool calls: Same action with the same observation`)
	assert.Contains(t, words, "refused before it ran")
	assert.Contains(t, words, "Tool calls are refused for the next 30s.")
	before := sess.Breaker().Stats().Iterations
	err := sess.BeforeModel(context.Background())
	assert.ErrorIs(t, err, loopbreaker.ErrOpen)
	var refusedErr *loopbreaker.RefusedError
	require.ErrorAs(t, err, &refusedErr)
	assert.True(t, refusedErr.Reason.Proposed)
	assert.Equal(t, before, sess.Breaker().Stats().Iterations, "the refused call is no step")
}

// While the circuit is open every call is refused, and the model is told
// for how long.
func TestACallWhileTheCircuitIsOpenIsRefused(t *testing.T) {
	set, _ := newSet(t, sessions.Options{})
	sess := get(t, set, "s")
	stuck(t, sess)
	words, refused := sess.BeforeTool(sessions.Call{Tool: "ls", Args: `{}`})
	require.True(t, refused)
	assert.Contains(t, words, `loopbreaker stopped your tool calls: Same action failed 3 times in a row`)
	assert.Contains(t, words, "Tool calls are refused for the next 30s.")
}

// With UserMessageCloses, the person's new message closes an open circuit.
func TestANewMessageClosesTheCircuitWhenTheHostOptsIn(t *testing.T) {
	for _, closes := range []bool{false, true} {
		set, _ := newSet(t, sessions.Options{UserMessageCloses: closes})
		sess := get(t, set, "s")
		stuck(t, sess)
		sess.UserMessage()
		err := sess.BeforeModel(context.Background())
		if closes {
			assert.NoError(t, err)
		} else {
			assert.ErrorIs(t, err, loopbreaker.ErrOpen)
		}
	}
}

// A model error that is a rate limit puts the limit in force; any other
// is a failure.
func TestAModelErrorThatIsALimitIsRecordedAsOne(t *testing.T) {
	set, _ := newSet(t, sessions.Options{MaxWait: -1})
	sess := get(t, set, "s")
	sess.ModelFailed(errors.New("429 Too Many Requests: rate limit exceeded"))
	assert.ErrorIs(t, sess.BeforeModel(context.Background()), loopbreaker.ErrProviderLimit)
	st := sess.Breaker().Stats()
	assert.Equal(t, 0, st.Failures.Total)
	assert.Equal(t, 1, st.Budget.Used)
}

// The usage a turn reports is priced at its model, so a dollar cap holds.
func TestTheTurnsUsageIsPriced(t *testing.T) {
	cfg, err := loopbreaker.Preset("tool-steps")
	require.NoError(t, err)
	cfg.Spend.MaxCostUSD = 0.01
	cfg.Spend.Prices = loopbreaker.Prices{"m": {Input: 1, Output: 10}} // per million tokens
	set, err := sessions.New(sessions.Options{Config: cfg})
	require.NoError(t, err)
	sess := get(t, set, "s")
	require.NoError(t, sess.BeforeModel(context.Background()))
	sess.AfterModel(sessions.Turn{Text: "hi", Usage: loopbreaker.Usage{Model: "m", InputTokens: 5000, OutputTokens: 600}})
	err = sess.BeforeModel(context.Background())
	assert.ErrorIs(t, err, loopbreaker.ErrSpendCap)
}

// One model client shared by many sessions: each request is routed to the
// breaker of its session, by its context or by the route header, which is
// never sent; a request of no session is sent unmetered.
func TestTheTransportRoutesEachRequestToItsSession(t *testing.T) {
	var gotHeaders []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHeaders = append(gotHeaders, r.Header.Get("Loopbreaker-Route"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"model":"gpt-4o","usage":{"prompt_tokens":100,"completion_tokens":10}}`)
	}))
	defer server.Close()
	set, _ := newSet(t, sessions.Options{})
	alice, bob := get(t, set, "alice"), get(t, set, "bob")
	client := &http.Client{Transport: set.Transport(nil)}

	send := func(ctx context.Context, header string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, server.URL, strings.NewReader("{}"))
		require.NoError(t, err)
		if header != "" {
			req.Header.Set("Loopbreaker-Route", header)
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
	}
	send(sessions.NewContext(context.Background(), alice), "")
	send(context.Background(), "bob")
	send(context.Background(), "bob")
	send(context.Background(), "")
	send(context.Background(), "nobody")

	assert.Equal(t, 1, alice.Breaker().Stats().Budget.Used)
	assert.Equal(t, 2, bob.Breaker().Stats().Budget.Used)
	assert.Equal(t, 200, bob.Breaker().Stats().Spend.Total.InputTokens)
	assert.Equal(t, []string{"", "", "", "", ""}, gotHeaders, "the header is never sent")

	bob.AfterModel(sessions.Turn{Text: "hi", Usage: loopbreaker.Usage{Model: "gpt-4o", InputTokens: 100}})
	assert.Equal(t, 2, bob.Breaker().Stats().Budget.Used, "the transport counted it")
	assert.Equal(t, 200, bob.Breaker().Stats().Spend.Total.InputTokens, "and priced it")
}
