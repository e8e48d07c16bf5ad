package looprun

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The session takes the placeholder's place in the command's arguments;
// without a session, the placeholder goes, and the flag that takes it.
func TestWithSession(t *testing.T) {
	cases := []struct {
		name string
		argv []string
		id   string
		want []string
	}{
		{"a session", []string{"claude", "-p", "--resume", "{session}"}, "s-1", []string{"claude", "-p", "--resume", "s-1"}},
		{"no session: the flag goes too", []string{"claude", "-p", "--resume", "{session}", "--verbose"}, "", []string{"claude", "-p", "--verbose"}},
		{"in a longer argument", []string{"claude", "--resume={session}", "-p"}, "s-1", []string{"claude", "--resume=s-1", "-p"}},
		{"in a longer argument, no session", []string{"claude", "--resume={session}", "-p"}, "", []string{"claude", "-p"}},
		{"a placeholder after a non-flag stays alone", []string{"agent", "run", "{session}"}, "", []string{"agent", "run"}},
		{"Codex's resume", []string{"codex", "exec", "--json", "resume", "{session}", "-"}, "t-1", []string{"codex", "exec", "--json", "resume", "t-1", "-"}},
		{"Codex's resume, no session: a new thread", []string{"codex", "exec", "--json", "resume", "{session}", "-"}, "", []string{"codex", "exec", "--json", "-"}},
		{"the command itself is never dropped", []string{"-x", "{session}"}, "", []string{"-x"}},
		{"no placeholder", []string{"./agent.sh", "--fast"}, "s-1", []string{"./agent.sh", "--fast"}},
		{"twice in one argument", []string{"a", "{session}/{session}"}, "s", []string{"a", "s/s"}},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, withSession(tc.argv, tc.id), tc.name)
	}
}

// sessionClock is a clock for the sessions, moved by hand.
type sessionClock struct{ now time.Time }

func (c *sessionClock) Now() time.Time { return c.now }

// A session is kept across runs of looprun, offered until it expires 24
// hours after it started, and replaced when the agent starts another;
// every session that ended goes to the history, with why.
func TestSessionLifecycle(t *testing.T) {
	dir := t.TempDir()
	clk := &sessionClock{now: time.Date(2026, 1, 29, 9, 0, 0, 0, time.UTC)}
	s := openSessions(dir, "loop", clk.Now)
	require.NoError(t, s.load())
	id, err := s.offer()
	require.NoError(t, err)
	assert.Empty(t, id, "no session before the first iteration")

	require.NoError(t, s.ran("s-1", 0, false))
	require.NoError(t, s.ran("", 0, false), "an iteration that named no session keeps the current one")
	clk.now = clk.now.Add(23 * time.Hour)
	require.NoError(t, s.ran("s-1", 0, false))

	again := openSessions(dir, "loop", clk.Now) // looprun started again
	require.NoError(t, again.load())
	id, err = again.offer()
	require.NoError(t, err)
	assert.Equal(t, "s-1", id)
	assert.Equal(t, 2, again.current.Iterations)

	clk.now = clk.now.Add(time.Hour)
	id, err = again.offer()
	require.NoError(t, err)
	assert.Empty(t, id, "24 hours after it started, the session has expired")
	assert.NoFileExists(t, again.file)

	require.NoError(t, again.ran("s-2", 0, false))
	require.NoError(t, again.ran("s-3", 0, false))
	require.NoError(t, again.drop(endCircuitOpen))
	require.NoError(t, again.drop(endInterrupted), "no session: nothing to drop")

	history := readHistory(t, again.history)
	require.Len(t, history, 3)
	assert.Equal(t, []string{"s-1", "s-2", "s-3"}, []string{history[0].ID, history[1].ID, history[2].ID})
	assert.Equal(t, []string{endExpired, endReplaced, endCircuitOpen}, []string{history[0].End, history[1].End, history[2].End})
	assert.Equal(t, time.Date(2026, 1, 29, 9, 0, 0, 0, time.UTC), history[0].Started)
	assert.Equal(t, 2, history[0].Iterations)
	require.NotNil(t, history[2].Ended)
}

// The history keeps the last 50 sessions.
func TestSessionHistoryKeepsTheLast50(t *testing.T) {
	dir := t.TempDir()
	clk := &sessionClock{now: time.Date(2026, 1, 29, 9, 0, 0, 0, time.UTC)}
	s := openSessions(dir, "loop", clk.Now)
	for i := range sessionHistoryLen + 7 {
		require.NoError(t, s.ran(fmt.Sprintf("s-%d", i), 0, false))
	}
	require.NoError(t, s.drop(endComplete))
	history := readHistory(t, s.history)
	require.Len(t, history, sessionHistoryLen)
	assert.Equal(t, "s-7", history[0].ID)
	assert.Equal(t, fmt.Sprintf("s-%d", sessionHistoryLen+6), history[sessionHistoryLen-1].ID)
	assert.Equal(t, endComplete, history[sessionHistoryLen-1].End)
}

// A session file that cannot be read is no session: it goes, and the next
// iteration starts a new one.
func TestUnreadableSessionFileIsNoSession(t *testing.T) {
	dir := t.TempDir()
	s := openSessions(dir, "loop", time.Now)
	require.NoError(t, os.WriteFile(s.file, []byte("{not json"), 0o600))
	require.NoError(t, s.load())
	id, err := s.offer()
	require.NoError(t, err)
	assert.Empty(t, id)
	assert.NoFileExists(t, s.file)
}

func readHistory(t *testing.T, path string) []agentSession {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []agentSession
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s agentSession
		require.NoError(t, json.Unmarshal(sc.Bytes(), &s), sc.Text())
		out = append(out, s)
	}
	return out
}

// sessionScript records, each run, the session it was offered (in the
// environment, and in its arguments), and prints Claude Code's result
// event with the session s-<first run of the session>: runs 1 and 2 are in
// s-1; from run 3 on the agent starts a new session each run and fails.
const sessionScript = `echo "$n env=$LOOPRUN_SESSION_ID args=$*" >> "$COUNTER.sessions"
echo "step $n" > "work_$n.txt"
if [ $n -le 2 ]; then
	printf '{"type":"result","is_error":false,"session_id":"s-1"}\n'
else
	printf '{"type":"result","is_error":true,"result":"TypeError: x is undefined","session_id":"s-%s"}\n' $n
	exit 1
fi
`

// offered returns what each run of the script was offered.
func (r *repo) offered(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(r.counter + ".sessions")
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// The last iteration's session is offered to the next, in the environment
// and in place of {session}; the first iteration, without one, runs
// without the flag. When the circuit opens the session is dropped, and
// kept in the history.
func TestSessionIsOfferedToTheNextIterationAndDroppedWhenTheCircuitOpens(t *testing.T) {
	r := newRepo(t, sessionScript)
	out, code := r.runScriptOnClock(t, loopbreakertest.NewClock(start), []string{"-interactive", "no", "-no-progress", "-1", "-max-iterations", "6"}, "-p", "--resume", "{session}")
	require.Equal(t, exitTripped, code, out)
	assert.Equal(t, []string{
		"1 env= args=-p",
		"2 env=s-1 args=-p --resume s-1",
		"3 env=s-1 args=-p --resume s-1",
		"4 env=s-3 args=-p --resume s-3",
		"5 env=s-4 args=-p --resume s-4",
	}, r.offered(t))
	assert.NotContains(t, out, "session: s-", "no session is left to offer")

	history := readHistory(t, filepath.Join(r.dir, stateDirName, "loop.sessions.jsonl"))
	var ends []string
	for _, s := range history {
		ends = append(ends, s.ID+" "+s.End)
	}
	assert.Equal(t, []string{"s-1 replaced", "s-3 replaced", "s-4 replaced", "s-5 circuit_open"}, ends)
	assert.Equal(t, 2, history[0].Iterations, "runs 1 and 2 ran in s-1; run 3, offered it, started s-3")
}

// A session is dropped when the loop completes, and one older than 24
// hours is not offered: a new run of looprun a day later starts afresh.
func TestSessionEndsOnCompletionAndExpires(t *testing.T) {
	r := newRepo(t, `echo "$n env=$LOOPRUN_SESSION_ID args=$*" >> "$COUNTER.sessions"
echo "step $n" > "work_$n.txt"
printf '{"type":"result","is_error":false,"session_id":"s-%s"}\n' $n
if [ $n -ge 3 ]; then echo "EXIT_SIGNAL: true"; fi
`)
	clk := loopbreakertest.NewClock(start)
	out, code := r.runScriptOnClock(t, clk, []string{"-interactive", "no", "-max-iterations", "1"}, "{session}")
	require.Equal(t, exitLimit, code, out)
	assert.Contains(t, out, "session: s-1, offered to the next iteration")

	clk.Advance(25 * time.Hour)
	out, code = r.runScriptOnClock(t, clk, []string{"-interactive", "no"}, "{session}")
	require.Equal(t, exitDone, code, out)
	assert.Equal(t, []string{"1 env= args=", "2 env= args=", "3 env=s-2 args=s-2", "4 env=s-3 args=s-3"}, r.offered(t)[:4],
		"a day later, s-1 has expired")
	history := readHistory(t, filepath.Join(r.dir, stateDirName, "loop.sessions.jsonl"))
	require.NotEmpty(t, history)
	assert.Equal(t, "s-1", history[0].ID)
	assert.Equal(t, endExpired, history[0].End)
	last := history[len(history)-1]
	assert.Equal(t, "s-4", last.ID)
	assert.Equal(t, endComplete, last.End)
	assert.NoFileExists(t, filepath.Join(r.dir, stateDirName, "loop.session.json"))
}

// runScriptOnClock runs looprun in this process on the repository's script
// with args, with flags, with time from clk, and returns its output and
// exit code.
func (r *repo) runScriptOnClock(t *testing.T, clk clock, flags []string, args ...string) (string, int) {
	t.Helper()
	t.Setenv("COUNTER", r.counter)
	var out bytes.Buffer
	argv := append(append(append([]string{"-dir", r.dir}, flags...), "--", "./agent.sh"), args...)
	code := run(context.Background(), clk, argv, strings.NewReader(""), &out, &out)
	return out.String(), code
}

// FuzzWithSession: any arguments and session give arguments with no
// placeholder left, no more of them than were given, and the command
// itself kept.
func FuzzWithSession(f *testing.F) {
	f.Add("claude", "--resume", "{session}", "s-1")
	f.Add("claude", "--resume={session}", "-p", "")
	f.Add("{session}", "-r", "{session}{session}", "")
	f.Fuzz(func(t *testing.T, a0, a1, a2, id string) {
		if strings.Contains(id, sessionPlaceholder) {
			t.Skip("a session id that holds the placeholder is no Claude Code id")
		}
		argv := []string{a0, a1, a2}
		got := withSession(argv, id)
		if len(got) > len(argv) {
			t.Fatalf("%q -> %q", argv, got)
		}
		for _, a := range got {
			if strings.Contains(a, sessionPlaceholder) {
				t.Fatalf("%q -> %q: a placeholder is left", argv, got)
			}
		}
		if !strings.Contains(a0, sessionPlaceholder) && (len(got) == 0 || got[0] != a0) {
			t.Fatalf("%q -> %q: the command is gone", argv, got)
		}
	})
}
