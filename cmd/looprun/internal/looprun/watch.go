package looprun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/journal"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/notify"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/report"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/serve"
)

// What a person watching the loop gets: its journal (which looprun
// report draws), the events sent to -notify and -on-event, and with
// -serve the live page and /metrics.

// eventsEnv names, in the command's environment, the file looprun's hooks
// inside the agent's session append their events to: looprun journals
// them and sends them on, so that the hooks never wait on a receiver.
const eventsEnv = "LOOPRUN_EVENTS"

// closeWait is how long looprun, once the loop is over, waits for the
// last events to be delivered (a variable for the tests).
var closeWait = 5 * time.Second

// Bounds of the watch.
const (
	// pageRefresh is how often the live page reloads itself.
	pageRefresh = 5 * time.Second
	// hookPoll is how often the hooks' events are read while an
	// iteration runs.
	hookPoll = time.Second
)

// FleetMember is a shared breaker that can say which fleet it is of, for
// the journal's entries and the report: its name, this runner's name in
// it, and where the fleet lives (without user or password).
type FleetMember interface {
	Fleet() string
	ID() string
	Redis() string
}

// watch is the loop's journal, notifications, page and metrics.
type watch struct {
	rec      *journal.Recorder
	notifier *notify.Notifier // nil without receivers
	metrics  *serve.Metrics   // nil without -serve
	server   *http.Server
	url      string // the live page's, with -serve
	stateDir string
	name     string

	tailMu sync.Mutex
	tail   *journal.Tail // the hooks' events
	stop   chan struct{} // ends the hooks' poll
	polled sync.WaitGroup

	mu   sync.Mutex
	said []string // failures to say, at the next safe moment
}

// startWatch starts the watch of the runner's loop: the journal begins
// (afresh with -reset), the receivers are made, and the server listens.
func (r *runner) startWatch() error {
	w := &watch{stateDir: filepath.Join(r.o.dir, stateDirName), name: r.o.name, stop: make(chan struct{})}
	r.watch = w
	writer := journal.NewWriter(journal.Path(w.stateDir, w.name))
	if r.o.reset {
		if err := writer.Remove(); err != nil {
			return fmt.Errorf("-reset: the journal: %w", err)
		}
	}
	var sinks []notify.Sink
	for _, u := range r.o.notify {
		hook, err := notify.NewWebhook(u, nil)
		if err != nil {
			return &UsageError{Err: fmt.Errorf("-notify: %w", err)}
		}
		sinks = append(sinks, hook)
	}
	if r.o.onEvent != "" {
		sinks = append(sinks, &notify.Command{Line: r.o.onEvent, Dir: r.o.dir})
	}
	if len(sinks) > 0 {
		w.notifier = notify.New(notify.Config{OnFailure: func(s notify.Sink, err error) {
			w.say(fmt.Sprintf("notifications to %s: %v (said once; later events are still sent)", s, err))
		}}, sinks...)
	}
	dir, err := filepath.Abs(r.o.dir)
	if err != nil {
		dir = r.o.dir
	}
	host, _ := os.Hostname()
	base := journal.Entry{Loop: r.o.name, Dir: dir, Host: host, Source: journal.FromLooprun}
	if m, ok := r.cb.(FleetMember); ok {
		base.Fleet, base.Worker = m.Fleet(), m.ID()
	}
	cfg := journal.RecorderConfig{
		Journal: writer, Base: base, Now: r.clock.Now,
		Failed: func(err error) { w.say("the journal: " + err.Error() + " (said once)") },
	}
	if w.notifier != nil {
		cfg.Notify = w.notifier.Notify
	}
	s := r.cb.Stats()
	w.rec = journal.NewRecorder(cfg, s)
	w.rec.Started(journal.Start{
		Command: r.agent.name(), Version: r.version, MaxCostUSD: r.o.maxCost, MaxTokens: r.o.maxTokens,
		CallsPerHour: s.Budget.Limit, Resumed: s.Iterations > 0,
	}, s)

	w.tail = journal.NewTail(filepath.Join(w.stateDir, w.name+".hook-events.jsonl"))
	if a, ok := r.agent.(*commandAgent); ok {
		a.events = w.tail.Path()
	}
	w.polled.Add(1)
	go w.pollHooks()

	if r.o.serve != "" {
		if err := w.listen(r); err != nil {
			w.close(context.Background())
			return err
		}
	}
	return nil
}

// listen starts -serve's server.
func (w *watch) listen(r *runner) error {
	addr, err := serve.Address(r.o.serve)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("-serve %s: %w", r.o.serve, err)}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("-serve: %w", err)
	}
	info := serve.Info{Loop: r.o.name, Version: r.version}
	info.Dir, _ = filepath.Abs(r.o.dir)
	if m, ok := r.cb.(FleetMember); ok {
		info.Fleet, info.Worker = m.Fleet(), m.ID()
	}
	w.metrics = serve.NewMetrics(info, r.cb.Stats)
	w.server = &http.Server{Handler: serve.New(&livePage{r: r}, w.metrics), ReadHeaderTimeout: 10 * time.Second}
	w.url = "http://" + ln.Addr().String() + "/"
	go func() { _ = w.server.Serve(ln) }()
	return nil
}

// livePage is the loop's page as -serve serves it, drawn afresh at each
// request from the journal and the breaker's figures now.
type livePage struct{ r *runner }

func (p *livePage) Page(out io.Writer) error {
	w := p.r.watch
	l, err := report.Read(w.stateDir, w.name)
	if errors.Is(err, os.ErrNotExist) {
		l, err = &report.Loop{Name: w.name, StateDir: w.stateDir, Logs: map[int]string{}}, nil
	}
	if err != nil {
		return err
	}
	now := p.r.clock.Now()
	l.Saved, l.Stats, l.SavedAt = true, p.r.cb.Stats(), now
	return report.Write(out, []*report.Loop{l}, nil, report.Options{
		Now: now, Refresh: pageRefresh,
		LogLink: func(n int, _ string) string { return fmt.Sprintf("/logs/%d", n) },
	})
}

func (p *livePage) Stats() loopbreaker.Stats { return p.r.cb.Stats() }

func (p *livePage) Log(n int) (string, bool) {
	path, ok := report.Logs(filepath.Join(p.r.watch.stateDir, logsDirName), p.r.watch.name)[n]
	return path, ok
}

// pollHooks reads the hooks' events while the loop runs.
func (w *watch) pollHooks() {
	defer w.polled.Done()
	t := time.NewTicker(hookPoll)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.readHooks()
		}
	}
}

// readHooks journals and sends on the events the hooks wrote since the
// last read.
func (w *watch) readHooks() {
	w.tailMu.Lock()
	entries, err := w.tail.Next()
	w.tailMu.Unlock()
	if err != nil {
		w.say("the hooks' events: " + err.Error())
	}
	for _, e := range entries {
		e.Source = journal.FromHook
		w.rec.Add(e)
	}
}

// say keeps a failure to say at the next safe moment (not while the
// command's output or the status line is on the terminal).
func (w *watch) say(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.said {
		if s == msg {
			return
		}
	}
	w.said = append(w.said, msg)
}

// flush says, on errOut, the failures kept since the last flush.
func (w *watch) flush(errOut io.Writer) {
	w.mu.Lock()
	said := w.said
	w.said = nil
	w.mu.Unlock()
	for _, s := range said {
		fmt.Fprintln(errOut, "looprun:", s)
	}
}

// close ends the watch: the hooks' last events are read, the last events
// delivered (until ctx ends), the server stopped.
func (w *watch) close(ctx context.Context) {
	close(w.stop)
	w.polled.Wait()
	w.readHooks()
	if w.notifier != nil {
		w.notifier.Close(ctx)
	}
	if w.server != nil {
		_ = w.server.Close()
	}
}

// watchBanner says, in the banner, where the loop can be watched.
func (r *runner) watchBanner() {
	w := r.watch
	var parts []string
	if w.url != "" {
		parts = append(parts, fmt.Sprintf("the live page at %s, metrics at %smetrics", w.url, w.url))
	}
	if n := len(r.o.notify); n > 0 {
		parts = append(parts, fmt.Sprintf("events to %d webhook%s", n, plural(n)))
	}
	if r.o.onEvent != "" {
		parts = append(parts, "events to -on-event")
	}
	if len(parts) > 0 {
		fmt.Fprintf(r.out, "watch: %s\n", strings.Join(parts, "; "))
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// watchDecision tells the watch what Check said, and what changed.
func (r *runner) watchDecision(d loopbreaker.Decision) {
	s := r.cb.Stats()
	r.watch.rec.Observe(s, r.stuckEntry(s))
	if !d.Allow {
		r.watch.rec.Refused(d, s)
	}
	r.watch.flush(r.errOut)
}

// watchIteration journals the iteration that ran: what it did, and what
// the breaker said after it (s).
func (r *runner) watchIteration(iteration int, started time.Time, d loopbreaker.Decision, it loopbreaker.Iteration, s loopbreaker.Stats, run journalRun) {
	w := r.watch
	jr := journal.Run{
		Result: journal.ResultOK, Probe: d.Probe, Started: started, Duration: r.clock.Now().Sub(started),
		Score: s.Progress.LastScore, Risk: s.Risk.String(), Consecutive: s.Failures.Consecutive,
		Failures: s.Failures.Total, NoProgress: s.Progress.ConsecutiveNoProgress,
		CostUSD: run.cost, Tokens: run.tokens, Turns: run.turns, Task: it.Task,
	}
	if it.Progress != nil {
		jr.Files = it.Progress.FilesChanged
	}
	if s.Budget.Limit > 0 {
		jr.Calls, jr.Budget = s.Budget.Used, s.Budget.Limit
	}
	if m := r.tests.last; m.from != "" {
		jr.Tests = &journal.Tests{Failing: m.counts.failed, Errors: m.counts.errors, From: m.from}
		if m.passedKnown {
			passing := m.counts.passed
			jr.Tests.Passing = &passing
		}
	}
	var le *loopbreaker.LimitError
	switch {
	case errors.As(it.Err, &le):
		jr.Result = journal.ResultLimited
		if le.Limit.Kind == loopbreaker.LimitStop {
			jr.Result = journal.ResultStopped
		}
	case it.Err != nil:
		jr.Result, jr.Fingerprint, jr.Error, jr.ErrorFrom = journal.ResultFailed, loopbreaker.Fingerprint(it.Err.Error()), errorLines(it.Err.Error()), run.from
	case it.Noticed != nil:
		jr.Fingerprint, jr.Error, jr.Noticed = loopbreaker.Fingerprint(it.Noticed.Error()), errorLines(it.Noticed.Error()), true
	}
	if _, err := os.Stat(r.logs.path(iteration)); err == nil {
		jr.Log = logsDirName + "/" + filepath.Base(r.logs.path(iteration))
	}
	w.readHooks() // what the session's hooks said comes before what it ended as
	w.rec.Iteration(iteration, jr, s, r.stuckEntry(s))
	if w.metrics != nil {
		w.metrics.Iteration(jr.Result, jr.Duration, r.clock.Now())
	}
	w.flush(r.errOut)
}

// journalRun is what the iteration's run told, for its journal entry.
type journalRun struct {
	cost          float64
	tokens, turns int
	from          string // where its error came from: command, check
}

// stuckEntry returns, for the recorder, the analysis of a circuit that
// opened, as the pause shows it.
func (r *runner) stuckEntry(s loopbreaker.Stats) func() *journal.Stuck {
	return func() *journal.Stuck {
		reason := s.Reason
		if reason.Kind == loopbreaker.ReasonNone {
			return nil
		}
		a := r.analyze(reason)
		st := &journal.Stuck{
			Fingerprint: a.fingerprint, Seen: a.seen, Error: a.text, ErrorFrom: a.from, Task: a.task,
			TaskFailures: a.taskFailures, Approaches: a.approaches, Score: a.score, Risk: a.risk.String(),
			Try: a.strategies.steps, TryFrom: a.strategies.source,
		}
		if a.tests.from != "" {
			st.Tests = a.tests.words()
		}
		return st
	}
}

// watchLimitWaited tells how a wait for a provider limit ended.
func (r *runner) watchLimitWaited(waited time.Duration, stop bool, code int) {
	ended := "lifted"
	if stop {
		ended = exitNames[code]
	}
	r.watch.rec.LimitWaited(waited, ended, r.cb.Stats())
	if r.watch.metrics != nil {
		r.watch.metrics.Waited(waited)
	}
}

// endWatch tells that the loop stopped, with its exit code, and ends the
// watch: the last events are delivered, for closeWait at most.
func (r *runner) endWatch(code int) {
	s := r.cb.Stats()
	r.watch.rec.Ended(journal.Exit{Code: code, Name: exitNames[code], Stopped: r.stopped,
		Iterations: r.iterations, TotalIterations: s.Iterations}, s)
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	r.watch.close(ctx)
	r.watch.flush(r.errOut)
	if r.watch.notifier != nil {
		for _, st := range r.watch.notifier.Stats() {
			if st.Dropped > 0 {
				fmt.Fprintf(r.errOut, "looprun: notifications to %s: %d events not delivered\n", st.Sink, st.Dropped)
			}
		}
	}
}

// moduleVersion is the version of the module looprun was built from, as
// the go command stamps it: v0.1.0, or "(devel)" in a clone.
func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		return info.Main.Version
	}
	return ""
}
