// Package serve is looprun's -serve: a web server, on loopback unless
// told otherwise, that serves the loop's page (the report, reloading
// itself as the loop runs), its iterations' logs, and /metrics in
// Prometheus' text format.
package serve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/loopbreaker/loopbreaker"
)

// Source is the loop the server shows. Its methods are called from the
// server's goroutines, while the loop runs.
type Source interface {
	// Page writes the loop's page, as it is now.
	Page(w io.Writer) error
	// Stats returns the breaker's figures now.
	Stats() loopbreaker.Stats
	// Log returns the log file of an iteration, and false when it has
	// none (any longer).
	Log(iteration int) (string, bool)
}

// Info names the loop in the metrics' looprun_info.
type Info struct {
	Loop, Dir, Fleet, Worker, Version string
}

// Address returns the address -serve ADDR listens on: a port alone
// ("8080", ":8080") is on loopback (127.0.0.1); a host given is kept
// (0.0.0.0:8080, [::]:8080 for every interface).
func Address(addr string) (string, error) {
	if addr == "" {
		return "", errors.New("an address is needed: a port (8080), or host:port")
	}
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("%q is no port", port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Server is the loop's web server.
type Server struct {
	src     Source
	metrics *Metrics
	mux     *http.ServeMux
}

// New returns the server of src, with its metrics.
func New(src Source, m *Metrics) *Server {
	s := &Server{src: src, metrics: m, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /{$}", s.page)
	s.mux.HandleFunc("GET /report.html", s.page)
	s.mux.HandleFunc("GET /logs/{iteration}", s.log)
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	return s
}

// ServeHTTP serves the page at /, an iteration's log at /logs/N and the
// metrics at /metrics.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	if err := s.src.Page(&b); err != nil {
		http.Error(w, "the page could not be made: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b.Bytes())
}

func (s *Server) log(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.PathValue("iteration"))
	path, ok := s.src.Log(n)
	if err != nil || !ok {
		http.Error(w, "no such log (looprun keeps the newest 100)", http.StatusNotFound)
		return
	}
	f, err := os.Open(path)
	if err != nil {
		http.Error(w, "no such log (looprun keeps the newest 100)", http.StatusNotFound)
		return
	}
	defer f.Close()
	// The agent's output as text, never as a page of its own.
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = io.Copy(w, f)
}

// Metrics are the loop's metrics: the breaker's figures, read at each
// scrape, the durations of this run's iterations, and the Go runtime's
// and the process's, as every Go program's.
type Metrics struct {
	registry  *prometheus.Registry
	durations *prometheus.HistogramVec
	last      prometheus.Gauge
	waits     prometheus.Counter
}

// NewMetrics returns the metrics of the loop that stats reads.
func NewMetrics(info Info, stats func() loopbreaker.Stats) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "looprun_iteration_duration_seconds",
			Help: "How long this run's iterations took, by result (ok, failed, limited, stopped).",
			// From a few seconds to looprun's 15-minute timeout and beyond.
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600},
		}, []string{"result"}),
		last: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "looprun_last_iteration_timestamp_seconds",
			Help: "When this run's last iteration ended, in seconds since the epoch.",
		}),
		waits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "looprun_provider_limit_wait_seconds_total",
			Help: "The time this run waited for provider limits to lift.",
		}),
	}
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.durations, m.last, m.waits,
		&breakerCollector{info: info, stats: stats},
	)
	return m
}

// Iteration counts an iteration of this run that took d, with its
// result, ending at end.
func (m *Metrics) Iteration(result string, d time.Duration, end time.Time) {
	m.durations.WithLabelValues(result).Observe(d.Seconds())
	m.last.Set(float64(end.UnixNano()) / 1e9)
}

// Waited counts a wait for a provider limit.
func (m *Metrics) Waited(d time.Duration) { m.waits.Add(d.Seconds()) }

// Registry returns the metrics' registry.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// The descriptions of the breaker's metrics.
var (
	descInfo = prometheus.NewDesc("looprun_info", "The loop: its name, working directory, fleet and worker (on a fleet) and looprun's version; always 1.",
		[]string{"loop", "dir", "fleet", "worker", "version"}, nil)
	descState = prometheus.NewDesc("looprun_circuit_state", "The circuit's state: 1 for the state it is in (closed, open, half_open), 0 for the others.",
		[]string{"state"}, nil)
	descOpens  = prometheus.NewDesc("looprun_circuit_opens_total", "Times the circuit opened over the loop's life (the fleet's, on a fleet).", nil, nil)
	descInARow = prometheus.NewDesc("looprun_circuit_consecutive_opens", "Openings in a row without recovering; the breaker gives up at -max-opens.", nil, nil)
	descHeld   = prometheus.NewDesc("looprun_circuit_held", "1 while the circuit is held open until a person resumes or skips (gave up, aborted, protected files lost).", nil, nil)
	descIters  = prometheus.NewDesc("looprun_iterations_total", "Iterations recorded over the loop's life, by outcome: ok, failed (successes and failures), neutral (interrupted), limited (refused by the provider).",
		[]string{"outcome"}, nil)
	descConsecutive = prometheus.NewDesc("looprun_consecutive_failures", "Failed iterations in a row.", nil, nil)
	descNoProgress  = prometheus.NewDesc("looprun_no_progress_iterations", "Iterations in a row without progress.", nil, nil)
	descErrors      = prometheus.NewDesc("looprun_errors", "Distinct errors (fingerprints) the breaker keeps.", nil, nil)
	descRisk        = prometheus.NewDesc("looprun_stagnation_risk", "The stagnation risk: 1 for the level it is at (low, medium, high), 0 for the others.", []string{"risk"}, nil)
	descCost        = prometheus.NewDesc("looprun_cost_usd_total", "What the loop has cost over its life, in US dollars.", nil, nil)
	descTokens      = prometheus.NewDesc("looprun_tokens_total", "Tokens the loop has spent over its life, by direction (input, output).", []string{"direction"}, nil)
	descCostCap     = prometheus.NewDesc("looprun_cost_cap_usd", "The spend cap in US dollars (-max-cost); absent without one.", nil, nil)
	descTokenCap    = prometheus.NewDesc("looprun_tokens_cap", "The token cap (-max-tokens); absent without one.", nil, nil)
	descCalls       = prometheus.NewDesc("looprun_calls_last_hour", "Calls made in the last hour, of the call budget.", nil, nil)
	descCallLimit   = prometheus.NewDesc("looprun_calls_per_hour_limit", "The call budget per rolling hour (-calls-per-hour); absent without one.", nil, nil)
	descLimit       = prometheus.NewDesc("looprun_provider_limit", "1 while a provider limit is in force, by kind: wait (it lifts), stop (no waiting ends it).", []string{"kind"}, nil)
	descLimitUntil  = prometheus.NewDesc("looprun_provider_limit_until_timestamp_seconds", "When the provider limit in force lifts, in seconds since the epoch; absent when none is, or for a stop.", nil, nil)
	descComplete    = prometheus.NewDesc("looprun_complete", "1 once the loop is complete (the agent said it is done, or the plan is finished).", nil, nil)
)

// breakerCollector collects the breaker's figures at each scrape.
type breakerCollector struct {
	info  Info
	stats func() loopbreaker.Stats
}

func (c *breakerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descInfo, descState, descOpens, descInARow, descHeld, descIters, descConsecutive,
		descNoProgress, descErrors, descRisk, descCost, descTokens, descCostCap, descTokenCap, descCalls, descCallLimit,
		descLimit, descLimitUntil, descComplete} {
		ch <- d
	}
}

func (c *breakerCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	flag := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	gauge(descInfo, 1, c.info.Loop, c.info.Dir, c.info.Fleet, c.info.Worker, c.info.Version)
	for _, st := range []loopbreaker.State{loopbreaker.Closed, loopbreaker.Open, loopbreaker.HalfOpen} {
		gauge(descState, flag(s.State == st), strings.ToLower(st.String()))
	}
	counter(descOpens, float64(s.Opens))
	gauge(descInARow, float64(s.ConsecutiveOpens))
	gauge(descHeld, flag(s.State == loopbreaker.Open && s.Reason.Kind.Held()))
	counter(descIters, float64(s.Iterations-s.Failures.Total), "ok")
	counter(descIters, float64(s.Failures.Total), "failed")
	counter(descIters, float64(s.NeutralIterations), "neutral")
	counter(descIters, float64(s.LimitedIterations), "limited")
	gauge(descConsecutive, float64(s.Failures.Consecutive))
	gauge(descNoProgress, float64(s.Progress.ConsecutiveNoProgress))
	gauge(descErrors, float64(len(s.Failures.Counts)))
	for _, r := range []loopbreaker.Risk{loopbreaker.RiskLow, loopbreaker.RiskMedium, loopbreaker.RiskHigh} {
		gauge(descRisk, flag(s.Risk == r), strings.ToLower(r.String()))
	}
	counter(descCost, s.Spend.Total.CostUSD)
	counter(descTokens, float64(s.Spend.Total.InputTokens), "input")
	counter(descTokens, float64(s.Spend.Total.OutputTokens), "output")
	if s.Spend.MaxCostUSD > 0 {
		gauge(descCostCap, s.Spend.MaxCostUSD)
	}
	if s.Spend.MaxTokens > 0 {
		gauge(descTokenCap, float64(s.Spend.MaxTokens))
	}
	if s.Budget.Limit > 0 {
		gauge(descCalls, float64(s.Budget.Used))
		gauge(descCallLimit, float64(s.Budget.Limit))
	}
	stop := s.ProviderLimit.Kind == loopbreaker.ReasonProviderStopped
	gauge(descLimit, flag(s.ProviderLimit.Kind != loopbreaker.ReasonNone && !stop), "wait")
	gauge(descLimit, flag(stop), "stop")
	if !s.ProviderLimitUntil.IsZero() {
		gauge(descLimitUntil, float64(s.ProviderLimitUntil.UnixNano())/1e9)
	}
	gauge(descComplete, flag(s.Complete.Kind != loopbreaker.ReasonNone))
}
