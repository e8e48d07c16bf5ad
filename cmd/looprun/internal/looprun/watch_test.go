package looprun

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/journal"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
)

// nightScript is a night of an agent: two iterations that pass and cost
// $3 each (Claude Code's JSON result), a usage limit, one more that takes
// the spend past 80% of -max-cost 10, then the same error every time.
const nightScript = `case $n in
1|2) echo '{"type":"result","subtype":"success","is_error":false,"total_cost_usd":3,"usage":{"input_tokens":1000,"output_tokens":200},"result":"done a step","session_id":"s'$n'"}'; echo "step $n" > "work_$n.txt" ;;
3) echo "Claude AI usage limit reached|1800000300"; exit 1 ;;
4) echo '{"type":"result","subtype":"success","is_error":false,"total_cost_usd":2.5,"usage":{"input_tokens":800,"output_tokens":100},"result":"another","session_id":"s4"}'; echo "step $n" > "work_$n.txt" ;;
*) echo "Error: Cannot find module 'left-pad'" >&2; exit 1 ;;
esac
`

// lockedBuffer is the runner's output, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// pausingClock is a test clock that holds the loop in its first wait of
// at least hold, until the test lets it go: the loop, at that moment, is
// running, its circuit open, waiting for the probe.
type pausingClock struct {
	*loopbreakertest.Clock
	hold    time.Duration
	once    sync.Once
	waiting chan struct{} // closed when the loop waits
	release chan struct{} // closed by the test
}

func (c *pausingClock) Sleep(ctx context.Context, d time.Duration) error {
	if d >= c.hold {
		c.once.Do(func() {
			close(c.waiting)
			<-c.release
		})
	}
	return c.Clock.Sleep(ctx, d)
}

// receiver is a webhook that keeps the events it was posted, in order.
type receiver struct {
	mu     sync.Mutex
	events []map[string]any
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var e map[string]any
	if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	rc.events = append(rc.events, e)
	rc.mu.Unlock()
}

func (rc *receiver) kinds() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var ks []string
	for _, e := range rc.events {
		ks = append(ks, e["event"].(string))
	}
	return ks
}

// A night of a loop, watched: the events come to a webhook and a command
// in the order they happened, a receiver that hangs holds nothing up, the
// live page and /metrics answer while the loop waits for its probe, and
// looprun report draws the night afterwards.
func TestANightOfALoopIsToldAsItHappensAndDrawnAfter(t *testing.T) {
	r := newRepo(t, nightScript)
	wait := closeWait
	closeWait = 2 * time.Second // the hanging receiver holds the exit this long
	defer func() { closeWait = wait }()
	good := &receiver{}
	goodSrv := httptest.NewServer(good)
	defer goodSrv.Close()
	hung := make(chan struct{})
	arrived := make(chan struct{}, 1)
	hangSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		select { // never answers while the loop runs
		case <-hung:
		case <-req.Context().Done():
		}
	}))
	defer func() { close(hung); hangSrv.Close() }()
	events := filepath.Join(t.TempDir(), "events.txt")

	clk := &pausingClock{Clock: loopbreakertest.NewClock(start), hold: 10 * time.Minute,
		waiting: make(chan struct{}), release: make(chan struct{})}
	t.Setenv("COUNTER", r.counter)
	var out lockedBuffer
	done := make(chan int)
	go func() {
		args := []string{"-dir", r.dir, "-interactive", "no", "-quiet", "-wait", "-max-opens", "3", "-cooldown", "20m", "-output-decline", "-1",
			"-max-cost", "10", "-serve", "127.0.0.1:0", "-notify", goodSrv.URL + "/hooks/T0/B0/secret", "-notify", hangSrv.URL,
			"-on-event", `printf '%s %s\n' "$LOOPRUN_EVENT" "$(cat | head -c 1)" >> ` + events, "--", "./agent.sh"}
		done <- run(context.Background(), clk, args, strings.NewReader(""), &out, &out)
	}()

	// While the loop waits for its probe.
	<-clk.waiting
	url := regexp.MustCompile(`the live page at (http://127\.0\.0\.1:\d+/)`).FindStringSubmatch(out.String())
	require.Len(t, url, 2, out.String())
	page := get(t, url[1])
	assert.Contains(t, page, "<meta http-equiv=refresh content=5>")
	assert.Contains(t, page, `<p class=big>OPEN</p><p>3 consecutive failures (threshold: 3)</p>`)
	assert.Contains(t, page, `<tr id=i6 class=failed>`, "the iterations so far")
	assert.Contains(t, page, `<a href="/logs/6">log</a>`)
	assert.Contains(t, get(t, url[1]+"logs/6"), "Cannot find module 'left-pad'")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(get(t, url[1]+"metrics")))
	require.NoError(t, err)
	for name, want := range map[string]float64{"looprun_circuit_opens_total": 1, "looprun_cost_usd_total": 8.5, "looprun_cost_cap_usd": 10} {
		f := families[name]
		require.NotNil(t, f, name)
		m := f.GetMetric()[0]
		got := m.GetGauge().GetValue() + m.GetCounter().GetValue()
		assert.InDelta(t, want, got, 1e-9, name)
	}
	for _, m := range families["looprun_circuit_state"].GetMetric() {
		if m.GetLabel()[0].GetValue() == "open" {
			assert.Equal(t, 1.0, m.GetGauge().GetValue())
		}
	}
	<-arrived // the hanging receiver holds the first event
	close(clk.release)
	code := <-done

	// The loop ran to its end, whatever the hanging receiver did.
	assert.Equal(t, exitTripped, code, out.String())
	assert.Contains(t, out.String(), "Gave up: the circuit opened 3 times in a row")
	assert.Equal(t, 9, r.runs(t), "two passes, the limit, one more, three failures and two failed probes")
	assert.Regexp(t, `looprun: notifications to http://127\.0\.0\.1:\d+: \d+ events not delivered`, out.String())
	assert.NotContains(t, out.String(), "secret", "a webhook's path is never shown")

	// The events, in the order they happened, to the webhook and the command.
	want := []string{"provider_limit", "spend_warning", "circuit_opened", "circuit_opened", "gave_up", "loop_ended"}
	assert.Equal(t, want, good.kinds())
	data, err := os.ReadFile(events)
	require.NoError(t, err)
	assert.Equal(t, "provider_limit {\nspend_warning {\ncircuit_opened {\ncircuit_opened {\ngave_up {\nloop_ended {\n", string(data),
		"the event's name in LOOPRUN_EVENT, its JSON on stdin")
	good.mu.Lock()
	first, last := good.events[2], good.events[5]
	good.mu.Unlock()
	assert.Regexp(t, `^looprun loop on \S+ in .+: the circuit opened at iteration 6: 3 consecutive failures \(threshold: 3\); probe in 20m0s$`, first["text"])
	assert.Equal(t, "consecutive_failures", first["reason"].(map[string]any)["kind"])
	assert.Equal(t, "Error: Cannot find module 'left-pad'", first["stuck"].(map[string]any)["error"])
	assert.Regexp(t, `: stopped \(tripped, exit code 3\) after 8 iterations: Gave up: `, last["text"])

	// Afterwards, the page of the night.
	var rep bytes.Buffer
	assert.Equal(t, exitDone, Report(Options{}, []string{"-dir", r.dir}, &rep, &rep), rep.String())
	assert.Contains(t, rep.String(), "looprun report: wrote "+filepath.Join(r.dir, ".loopbreaker", "loop.report.html"))
	html, err := os.ReadFile(filepath.Join(r.dir, ".loopbreaker", "loop.report.html"))
	require.NoError(t, err)
	for _, s := range []string{
		`<p class=big>OPEN</p><p>Gave up: the circuit opened 3 times in a row without recovering (threshold: 3)`,
		`<h2>Stuck</h2><p>The circuit opened at iteration 8`,
		"<td>Claude AI usage limit reached (resets 2027-01-15 08:05 UTC)<td>",
		`<circle class="mark spend_warning"`,
		`<tr id=l3 class=limited>`,
		`<a href="logs/loop-8.log">log</a>`,
	} {
		assert.True(t, strings.Contains(string(html), s), "the page has %s", s)
	}
	entries, _, err := journal.Read(journal.Path(filepath.Join(r.dir, ".loopbreaker"), "loop"))
	require.NoError(t, err)
	assert.Equal(t, journal.Started, entries[0].Kind)
	assert.Equal(t, journal.Ended, entries[len(entries)-1].Kind)
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", url, body)
	return string(body)
}

func TestWatchFlagsAreChecked(t *testing.T) {
	r := newRepo(t, "exit 0\n")
	for _, tc := range []struct {
		flags []string
		says  string
	}{
		{[]string{"-notify", "hooks.slack.com/x"}, "-notify: not an http:// or https:// URL"},
		{[]string{"-serve", "host:port"}, "-serve host:port: "},
	} {
		out, code := r.looprun(t, "", append(tc.flags, "-max-iterations", "1")...)
		assert.Equal(t, exitUsage, code, out)
		assert.Contains(t, out, tc.says)
	}
}

func TestReportWithoutALoopSaysSo(t *testing.T) {
	var out bytes.Buffer
	dir := t.TempDir()
	assert.Equal(t, exitError, Report(Options{}, []string{"-dir", dir}, &out, &out))
	assert.Contains(t, out.String(), "looprun report: no loop in "+filepath.Join(dir, ".loopbreaker"))
	out.Reset()
	assert.Equal(t, exitUsage, Report(Options{}, []string{"-bogus"}, &out, &out))
	assert.Contains(t, out.String(), "looprun report -h lists the flags")
}
