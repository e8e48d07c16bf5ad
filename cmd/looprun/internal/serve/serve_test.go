package serve

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopbreaker/loopbreaker"
)

// loop is a Source a test changes.
type loop struct {
	mu    sync.Mutex
	stats loopbreaker.Stats
	page  string
	logs  map[int]string
}

func (l *loop) Page(w io.Writer) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.page == "" {
		return errors.New("no state yet")
	}
	_, err := io.WriteString(w, l.page)
	return err
}

func (l *loop) Stats() loopbreaker.Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

func (l *loop) Log(n int) (string, bool) {
	p, ok := l.logs[n]
	return p, ok
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4"), resp.Header.Get("Content-Type"))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return families
}

// value returns the value of the metric of family name whose labels
// include labels (name, value pairs); ok false when there is none.
func value(families map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f, ok := families[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		}
	}
	return 0, false
}

func TestTheMetricsAreTheBreakersFiguresInPrometheusTextFormat(t *testing.T) {
	until := time.Date(2026, 1, 19, 17, 0, 0, 0, time.UTC)
	l := &loop{page: "<html>", stats: loopbreaker.Stats{
		State: loopbreaker.Open, Reason: loopbreaker.Reason{Kind: loopbreaker.ReasonConsecutiveFailures, Count: 3, Threshold: 3},
		Opens: 2, ConsecutiveOpens: 1, Iterations: 12, NeutralIterations: 1, LimitedIterations: 2,
		Failures: loopbreaker.FailureStats{Consecutive: 3, Total: 5, Counts: map[string]int{"8dc94f0b": 3, "5e1a9c02": 2}},
		Progress: loopbreaker.ProgressStats{ConsecutiveNoProgress: 2},
		Risk:     loopbreaker.RiskHigh,
		Budget:   loopbreaker.Budget{Limit: 50, Used: 12},
		Spend: loopbreaker.Spend{Total: loopbreaker.Usage{InputTokens: 182400, OutputTokens: 9100, CostUSD: 8.05},
			MaxCostUSD: 10},
		ProviderLimit:      loopbreaker.Reason{Kind: loopbreaker.ReasonProviderLimit, Message: "You've hit your limit"},
		ProviderLimitUntil: until,
	}}
	m := NewMetrics(Info{Loop: "loop", Dir: "/src/app", Version: "v0.1.0"}, l.Stats)
	m.Iteration("failed", 90*time.Second, until.Add(-time.Hour))
	m.Iteration("ok", 20*time.Second, until.Add(-time.Hour))
	m.Waited(30 * time.Minute)
	srv := httptest.NewServer(New(l, m))
	defer srv.Close()

	fs := scrape(t, srv.URL)
	for _, want := range []struct {
		name   string
		labels []string
		value  float64
	}{
		{"looprun_info", []string{"loop", "loop", "dir", "/src/app", "version", "v0.1.0"}, 1},
		{"looprun_circuit_state", []string{"state", "open"}, 1},
		{"looprun_circuit_state", []string{"state", "closed"}, 0},
		{"looprun_circuit_state", []string{"state", "half_open"}, 0},
		{"looprun_circuit_opens_total", nil, 2},
		{"looprun_circuit_consecutive_opens", nil, 1},
		{"looprun_circuit_held", nil, 0},
		{"looprun_iterations_total", []string{"outcome", "ok"}, 7},
		{"looprun_iterations_total", []string{"outcome", "failed"}, 5},
		{"looprun_iterations_total", []string{"outcome", "neutral"}, 1},
		{"looprun_iterations_total", []string{"outcome", "limited"}, 2},
		{"looprun_consecutive_failures", nil, 3},
		{"looprun_no_progress_iterations", nil, 2},
		{"looprun_errors", nil, 2},
		{"looprun_stagnation_risk", []string{"risk", "high"}, 1},
		{"looprun_cost_usd_total", nil, 8.05},
		{"looprun_tokens_total", []string{"direction", "input"}, 182400},
		{"looprun_tokens_total", []string{"direction", "output"}, 9100},
		{"looprun_cost_cap_usd", nil, 10},
		{"looprun_calls_last_hour", nil, 12},
		{"looprun_calls_per_hour_limit", nil, 50},
		{"looprun_provider_limit", []string{"kind", "wait"}, 1},
		{"looprun_provider_limit", []string{"kind", "stop"}, 0},
		{"looprun_provider_limit_until_timestamp_seconds", nil, float64(until.Unix())},
		{"looprun_provider_limit_wait_seconds_total", nil, 1800},
		{"looprun_complete", nil, 0},
	} {
		got, ok := value(fs, want.name, want.labels...)
		if assert.True(t, ok, "%s %v", want.name, want.labels) {
			assert.InDelta(t, want.value, got, 1e-9, "%s %v", want.name, want.labels)
		}
	}
	_, ok := fs["looprun_tokens_cap"]
	assert.False(t, ok, "no token cap: no metric")
	h := fs["looprun_iteration_duration_seconds"]
	require.NotNil(t, h)
	assert.Equal(t, dto.MetricType_HISTOGRAM, h.GetType())
	assert.Equal(t, dto.MetricType_COUNTER, fs["looprun_circuit_opens_total"].GetType())
	assert.Contains(t, fs, "go_goroutines", "the Go runtime's, as every Go program's")
	assert.Contains(t, fs, "process_cpu_seconds_total")

	// The next scrape reads the breaker again.
	l.mu.Lock()
	l.stats.State, l.stats.Reason = loopbreaker.Closed, loopbreaker.Reason{}
	l.mu.Unlock()
	got, _ := value(scrape(t, srv.URL), "looprun_circuit_state", "state", "closed")
	assert.Equal(t, 1.0, got)
}

func TestThePageAndTheLogsAreServed(t *testing.T) {
	log := filepath.Join(t.TempDir(), "loop-3.log")
	require.NoError(t, os.WriteFile(log, []byte("<b>the agent's output</b>\n"), 0o600))
	l := &loop{page: "<!DOCTYPE html><title>looprun: loop</title>", logs: map[int]string{3: log}}
	srv := httptest.NewServer(New(l, NewMetrics(Info{}, l.Stats)))
	defer srv.Close()
	get := func(path string) (*http.Response, string) {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(body)
	}
	resp, body := get("/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	assert.Equal(t, l.page, body)

	resp, body = get("/logs/3")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"), "the agent's output is never a page")
	assert.Equal(t, "<b>the agent's output</b>\n", body)
	for _, missing := range []string{"/logs/4", "/logs/..%2f..%2fetc%2fpasswd", "/logs/x", "/nothing"} {
		resp, _ = get(missing)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, missing)
	}

	l.page = ""
	resp, body = get("/")
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	assert.Contains(t, body, "no state yet")
}

func TestServeListensOnLoopbackUnlessToldOtherwise(t *testing.T) {
	for in, want := range map[string]string{
		"8080":           "127.0.0.1:8080",
		":8080":          "127.0.0.1:8080",
		"0.0.0.0:8080":   "0.0.0.0:8080",
		"[::1]:9000":     "[::1]:9000",
		"localhost:0":    "localhost:0",
		"10.0.0.5:80":    "10.0.0.5:80",
		"127.0.0.1:9090": "127.0.0.1:9090",
	} {
		got, err := Address(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "http://x:80", "host:port", "70000", "a:b:c"} {
		_, err := Address(bad)
		assert.Error(t, err, bad)
	}
}
