package report

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func render(t testing.TB, loops []*Loop, fleet *Fleet, o Options) string {
	t.Helper()
	if o.Location == nil {
		o.Location = time.UTC
	}
	var b bytes.Buffer
	require.NoError(t, Write(&b, loops, fleet, o))
	return b.String()
}

func TestTheReportTellsTheNightOfALoop(t *testing.T) {
	st := newStory(t)
	l, err := Read(st.dir, st.loop)
	require.NoError(t, err)
	require.Zero(t, l.Unreadable)
	html := render(t, []*Loop{l}, nil, Options{Now: st.clock.t, LinkBase: st.dir})

	// The figures are the state's.
	assert.Equal(t, st.stats.Iterations, l.Stats.Iterations)
	assert.Contains(t, html, `<h3>iterations</h3><p class=big>12</p><p>5 failed, 1 limited; 13 in this journal</p>`)
	assert.Contains(t, html, `<h3>openings</h3><p class=big>3</p>`)
	assert.Contains(t, html, `<p class=big>$8.05</p><p>of $10.00 (81%)</p>`)
	assert.Contains(t, html, `<p class=big>CLOSED</p>`)
	// The night: openings, the give-up, the skip, the limit, the warning.
	assert.Equal(t, 2, strings.Count(html, "<td>opened<td>"))
	assert.Contains(t, html, "<td>gave up<td>HALF_OPEN → OPEN<td>signal<td>Gave up: the circuit opened 3 times in a row without recovering (threshold: 3)")
	assert.Contains(t, html, "<td>closed<td>OPEN → CLOSED<td>skip")
	assert.Contains(t, html, "<td>You&#39;ve hit your limit · resets 8:04am<td>2026-01-20 06:12:40<td>30m0s<td>lifted")
	assert.Contains(t, html, `<circle class="mark spend_warning"`)
	assert.Contains(t, html, "Spend 80% of the cap: $8.05 of $10.00")
	// What it was stuck on, and what to try.
	assert.Contains(t, html, "<h2>Last stuck</h2><p>At iteration 7, 2026-01-19 22:37:30 (it has closed since)")
	assert.Contains(t, html, "<li>change the approach entirely</li>")
	// The errors by fingerprint, with their text and iterations.
	fp := loopbreaker.Fingerprint(storyError)
	assert.Contains(t, html, `<tr id="e`+fp+`"><td><code>`+fp+`</code><td>5<td>0<td><pre>--- FAIL: TestLogin (0.01s)`)
	// The tasks, the skipped one marked.
	assert.Contains(t, html, `<tr class="skipped"><td>login form<td>5<td>5`)
	assert.Contains(t, html, `<tr class="current"><td>logout`)
	// Each iteration, linked to its log, relative to the page.
	for n := 1; n <= 12; n++ {
		assert.Regexp(t, regexp.MustCompile(`<tr id=i`+itoa(n)+` class=(ok|failed)>.*<a href="logs/loop-`+itoa(n)+`.log">log</a>`), html)
	}
	assert.Contains(t, html, `<tr id=l9 class=limited><td>9<td>05:42:40<td>20s<td><b>limited</b>`)
	assert.Contains(t, html, `<tr id=i6 class=failed><td>6<td>22:23:25<td>2m0s<td><b>failed*</b><td>OPEN`, "the probe, marked")
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestThePageFetchesNothing(t *testing.T) {
	st := newStory(t)
	l, err := Read(st.dir, st.loop)
	require.NoError(t, err)
	html := render(t, []*Loop{l}, nil, Options{Now: st.clock.t, LinkBase: st.dir})
	for _, outside := range []string{"http://", "https://", "<script", "<link", "src=", "@import", "url(http"} {
		assert.NotContains(t, html, outside)
	}
	assert.True(t, strings.HasPrefix(html, "<!DOCTYPE html>"))
	assert.True(t, strings.HasSuffix(html, "</html>\n"))
}

func TestALoopWithoutAJournalIsDrawnFromItsState(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".loopbreaker")
	clock := &fakeClock{t: time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)}
	cfg := loopbreaker.DefaultConfig()
	cfg.Now = clock.now
	cb, err := loopbreaker.New(cfg)
	require.NoError(t, err)
	for range 3 {
		clock.advance(time.Minute)
		cb.Check()
		cb.Record(loopbreaker.Iteration{Err: errors.New("Error: Cannot find module 'left-pad'")})
	}
	require.NoError(t, loopbreaker.NewFileStore(dir).Save(context.Background(), "loop", cb.Snapshot()))

	l, err := Read(dir, "loop")
	require.NoError(t, err)
	assert.Empty(t, l.Entries)
	html := render(t, []*Loop{l}, nil, Options{Now: clock.t})
	assert.Contains(t, html, `<p class=big>OPEN</p><p>3 consecutive failures (threshold: 3)</p>`)
	assert.Contains(t, html, "<td>opened<td>CLOSED → OPEN<td>signal<td>3 consecutive failures (threshold: 3)", "the state's history")
	fp := loopbreaker.Fingerprint("Error: Cannot find module 'left-pad'")
	assert.Contains(t, html, `<td><code>`+fp+`</code><td>0<td>3<td><pre>Error: Cannot find module &#39;left-pad&#39;</pre>`)
}

func TestNoLoopIsAnError(t *testing.T) {
	_, err := Read(t.TempDir(), "loop")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorContains(t, err, `no loop "loop" in`)
}

func TestTheLivePageReloadsItself(t *testing.T) {
	st := newStory(t)
	l, err := Read(st.dir, st.loop)
	require.NoError(t, err)
	html := render(t, []*Loop{l}, nil, Options{Now: st.clock.t, Refresh: 5 * time.Second})
	assert.Contains(t, html, "<meta http-equiv=refresh content=5>")
	assert.Contains(t, html, "live, refreshed every 5s")
	assert.NotContains(t, render(t, []*Loop{l}, nil, Options{Now: st.clock.t}), "http-equiv")
}

func TestWhatTheAgentPrintedIsEscaped(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".loopbreaker")
	w := journal.NewWriter(journal.Path(dir, "loop"))
	at := time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)
	evil := `</pre><script>alert(1)</script><img src=x onerror=alert(2)>`
	require.NoError(t, w.Append(journal.Entry{Kind: journal.IterationRan, At: at, Loop: "loop", Iteration: 1, State: "CLOSED",
		Run: &journal.Run{Result: journal.ResultFailed, Started: at, Duration: time.Second, Fingerprint: "0badc0de", Error: evil, Task: evil}}))
	l, err := Read(dir, "loop")
	require.NoError(t, err)
	html := render(t, []*Loop{l}, nil, Options{Now: at})
	assert.NotContains(t, html, "<script>")
	assert.NotContains(t, html, "<img")
	assert.Contains(t, html, "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;")
}

func TestAFleetPageShowsTheSharedCircuitAndEachWorker(t *testing.T) {
	root := t.TempDir()
	at := time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)
	var loops []*Loop
	for i, name := range []string{"w1", "w2"} {
		dir := filepath.Join(root, name, ".loopbreaker")
		w := journal.NewWriter(journal.Path(dir, name))
		for n := 1; n <= 2+i; n++ {
			require.NoError(t, w.Append(journal.Entry{Kind: journal.IterationRan, At: at.Add(time.Duration(n) * time.Minute), Loop: name,
				Fleet: "nightly", Worker: "host-" + name, Iteration: n, State: "CLOSED",
				Run: &journal.Run{Result: journal.ResultFailed, Started: at, Duration: time.Minute, Fingerprint: "0badc0de", Error: "boom"}}))
		}
		l, err := Read(dir, name)
		require.NoError(t, err)
		loops = append(loops, l)
	}
	fleet := &Fleet{Name: "nightly", Redis: "redis://127.0.0.1:6379/0", Stats: loopbreaker.Stats{State: loopbreaker.Open,
		Reason: loopbreaker.Reason{Kind: loopbreaker.ReasonConsecutiveFailures, Count: 5, Threshold: 5}, Opens: 1,
		Failures: loopbreaker.FailureStats{Consecutive: 5, Total: 5}}}
	html := render(t, loops, fleet, Options{Now: at.Add(time.Hour)})
	assert.Contains(t, html, "<title>looprun: fleet nightly</title>")
	assert.Contains(t, html, `<h3>shared circuit</h3><p class=big>OPEN</p><p>5 consecutive failures (threshold: 5)</p><p class=note>on redis://127.0.0.1:6379/0</p>`)
	assert.Contains(t, html, `<tr><td><a href="#loop-w1">w1</a><td><code>host-w1</code><td>2<td>2`)
	assert.Contains(t, html, `<tr><td><a href="#loop-w2">w2</a><td><code>host-w2</code><td>3<td>3`)
	assert.Contains(t, html, `<section class=loop id=loop-w1>`)
	assert.Contains(t, html, `<section class=loop id=loop-w2>`)

	fleet.Err = errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")
	assert.Contains(t, render(t, loops, fleet, Options{Now: at}), "The shared breaker on redis://127.0.0.1:6379/0 could not be read: dial tcp")
}

func TestTheLoopsOfAStateDirectory(t *testing.T) {
	st := newStory(t)
	assert.Equal(t, []string{"loop"}, Loops(st.dir), "its state file and its journal: one loop; its session file is none")
}

// BenchmarkReport10000Iterations makes the page of a loop of 10,000
// iterations: its journal read, its state restored, the page written.
func BenchmarkReport10000Iterations(b *testing.B) {
	st := tellStory(b, b.TempDir(), 10000-12)
	size := 0
	for b.Loop() {
		l, err := Read(st.dir, st.loop)
		if err != nil {
			b.Fatal(err)
		}
		var c countWriter
		if err := Write(&c, []*Loop{l}, nil, Options{Now: st.clock.t, LinkBase: st.dir}); err != nil {
			b.Fatal(err)
		}
		size = c.n
	}
	b.ReportMetric(float64(size)/(1<<20), "MiB/page")
}

type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)
