package loopbreaker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker/internal/errtext"
)

// SnapshotVersion is the schema version Snapshot writes. A breaker reads
// every version up to it (a field an older version lacks is zero); a newer
// one is an error matching [ErrNewerState].
const SnapshotVersion = 2

// Snapshot is the whole state of a breaker, but not its Config, from
// [CircuitBreaker.Snapshot] for [CircuitBreaker.Restore]. It marshals to a
// stable, versioned JSON that [ParseSnapshot] reads. The zero Snapshot is
// no valid state.
type Snapshot struct {
	data snapshotData
}

// snapshotData is a Snapshot's JSON: snake-case keys; states, reason
// kinds, causes and work kinds by name, never by number; times in RFC 3339
// and durations in nanoseconds. The state of the iteration last recorded
// that only that iteration's evaluation reads (whether it was measured and
// made progress) is not stored.
type snapshotData struct {
	Version       int           `json:"version"`
	SavedAt       time.Time     `json:"saved_at"` // by Config.Now
	State         State         `json:"state"`
	Reason        Reason        `json:"reason"`    // kind "none" while closed
	OpenedAt      time.Time     `json:"opened_at"` // zero while closed
	Cooldown      time.Duration `json:"cooldown_ns"`
	ProbeInFlight bool          `json:"probe_in_flight"`
	counts

	Errors               []errorCount `json:"errors"` // least recently seen first
	EvictedErrors        int          `json:"evicted_errors"`
	LastFailed           bool         `json:"last_failed"`
	LastFingerprint      string       `json:"last_fingerprint"` // "" before the first failure
	LastFingerprintCount int          `json:"last_fingerprint_count"`

	Progress progressData `json:"progress"`

	// The windows, oldest first. Restored into a breaker with a smaller
	// window, the oldest are dropped.
	ProgressScores []int          `json:"progress_scores"`
	Approaches     []approachData `json:"approaches"`
	Works          []WorkKind     `json:"works"`
	Steps          []stepData     `json:"steps,omitempty"` // the last steps, for the step signals (version 2)

	Completion completionState `json:"completion"`

	// The calls of the call budget's rolling hour, oldest first. A breaker
	// with a budget does not write the calls that left the window; one
	// without a budget records none, but keeps (and writes back) the calls
	// it was restored with.
	Calls []callsData `json:"calls"`

	// The provider limit in force; absent when none is (and in version 1).
	ProviderLimit *providerLimitData `json:"provider_limit,omitempty"`
	// What the loop spent; absent before it spent anything (and in
	// version 1). Like the calls, the hour's entries are written by a
	// breaker with an hourly cap, and kept by one without.
	Spend *spendData `json:"spend,omitempty"`
	// The provider's usage windows, as last reported, and the window
	// share's stop; absent when there is neither.
	Windows *windowsData `json:"windows,omitempty"`

	History []Transition `json:"history"` // oldest first

	// Since version 2; absent from version 1, where they are zero.
	Tasks        taskData          `json:"tasks"`
	ErrorSamples []errorSampleData `json:"error_samples,omitempty"` // least recently seen first
	Trends       trendData         `json:"trends"`
	Relapse      *relapseState     `json:"relapse,omitempty"` // nil: no relapse watch
}

// taskData is what the task signals remember.
type taskData struct {
	taskCounts
	Skipped []string `json:"skipped,omitempty"` // oldest first
}

// errorSampleData is the error text of one fingerprint of the error
// history.
type errorSampleData struct {
	Fingerprint string `json:"fingerprint"`
	ErrorSample
}

// trendData is what the trend warnings remember.
type trendData struct {
	trendCounts
	Errors *int `json:"errors,omitempty"` // of the last measured iteration; nil before the first
}

// providerLimitData is the provider limit in force.
type providerLimitData struct {
	Reason Reason    `json:"reason"`           // kind provider_limit or provider_stopped
	Until  time.Time `json:"until,omitempty"`  // when a provider_limit lifts; absent for a stop
	Source string    `json:"source,omitempty"` // where it was seen, when known
}

// windowsData is what the breaker knows of the provider's usage windows.
type windowsData struct {
	Reports []windowData `json:"reports,omitempty"` // oldest first
	// Stopped is the stop of StopAtWindowShare (kind window_share), in
	// force until a person resumes; absent when there is none.
	Stopped *Reason `json:"stopped,omitempty"`
}

// windowData is the latest report of one window.
type windowData struct {
	Length time.Duration `json:"length_ns,omitempty"`
	Used   float64       `json:"used"`            // percent, 0 to 100
	Reset  time.Time     `json:"reset,omitempty"` // zero: not given
	Until  time.Time     `json:"until"`           // when the report stops counting
	Source string        `json:"source,omitempty"`
}

// usageData is a Usage, which names no model.
type usageData struct {
	InputTokens      int     `json:"input_tokens"`
	OutputTokens     int     `json:"output_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	CacheReadTokens  int     `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int     `json:"cache_write_tokens,omitempty"`
}

func (u usageData) usage() Usage {
	return Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CostUSD: u.CostUSD,
		CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens}
}

func dataOfUsage(u Usage) usageData {
	return usageData{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CostUSD: u.CostUSD,
		CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens}
}

// spendData is what the loop spent: over its life, and the spend of the
// rolling hour, oldest first.
type spendData struct {
	Total usageData        `json:"total"`
	Hour  []spendEntryData `json:"hour,omitempty"`
}

// spendEntryData is spend recorded at one time.
type spendEntryData struct {
	At time.Time `json:"at"`
	usageData
}

// errorCount is one fingerprint of the error history and how often it was
// seen.
type errorCount struct {
	Fingerprint string `json:"fingerprint"` // 8 lower-case hex digits
	Count       int    `json:"count"`       // at least 1
}

// approachData is one labelled iteration of the circular-approach window.
type approachData struct {
	Fingerprint string `json:"fingerprint"`
	Resolved    bool   `json:"resolved"`       // it resolved something, which breaks a circle
	Text        string `json:"text,omitempty"` // the label (version 2; empty in states saved before it was kept)
}

// stepData is one step of the step signals' window.
type stepData struct {
	Action  string `json:"action"` // the action's fingerprint
	Result  string `json:"result"` // the observation's fingerprint
	Message bool   `json:"message,omitempty"`
	Failed  bool   `json:"failed,omitempty"`
	Text    string `json:"text,omitempty"`  // the action's evidence text (before this was kept for each step, the last two only)
	Tool    string `json:"tool,omitempty"`  // the tool's fingerprint; absent for a message, and in older states
	Error   string `json:"error,omitempty"` // a failed step's error fingerprint; absent in older states
}

// progressData is what the progress signals remember between iterations.
type progressData struct {
	progressCounts
	TestsPassing *int  `json:"tests_passing"` // of the last measured iteration; nil before the first
	Outputs      []int `json:"outputs"`       // of the last (up to 10) measured iterations, oldest first
}

// callsData is a number of calls the call budget recorded at one time.
type callsData struct {
	At    time.Time `json:"at"`
	Calls int       `json:"calls"`
}

// SavedAt returns when the snapshot was made, by the breaker's clock
// ([Config.Now]); zero for the zero Snapshot.
func (s Snapshot) SavedAt() time.Time { return s.data.SavedAt }

// MarshalJSON returns the snapshot's JSON.
func (s Snapshot) MarshalJSON() ([]byte, error) { return json.Marshal(s.data) }

// UnmarshalJSON reads a snapshot's JSON as [ParseSnapshot] does, but does
// not validate it.
func (s *Snapshot) UnmarshalJSON(data []byte) error {
	// The version first: a newer build may have added fields this one
	// does not know, and its state is not corrupt.
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err == nil && head.Version > SnapshotVersion {
		return &StateError{Newer: head.Version}
	}
	var d snapshotData
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // an empty file: cut short
		}
		return &StateError{Err: fmt.Errorf("not a snapshot: %w", err)}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &StateError{Err: errors.New("not a snapshot: data after the JSON object")}
	}
	s.data = d
	return nil
}

// Snapshot returns a copy of the breaker's state, dated by [Config.Now].
func (b *CircuitBreaker) Snapshot() Snapshot {
	b.mu.Lock()
	defer b.unlock()
	now := b.cfg.Now()
	b.advance(now)
	d := snapshotData{
		Version:       SnapshotVersion,
		SavedAt:       now,
		State:         b.state,
		Reason:        b.reason,
		OpenedAt:      b.openedAt,
		Cooldown:      b.cooldown,
		ProbeInFlight: b.state == HalfOpen && b.probeInFlight,
		counts:        b.count,
		Errors:        make([]errorCount, 0, b.errors.len()),
		EvictedErrors: b.errors.evicted,
		LastFailed:    b.lastFailed,
		Progress: progressData{
			progressCounts: b.progress.progressCounts,
			Outputs:        b.progress.outputTrend(),
		},
		ProgressScores: b.stagnation.scores.values(),
		Works:          b.stagnation.works.values(),
		Completion:     b.completion,
		History:        b.history.values(),
		Tasks:          taskData{taskCounts: b.tasks.taskCounts, Skipped: slices.Clone(b.tasks.skipped)},
		Trends:         trendData{trendCounts: b.trends.trendCounts},
	}
	b.samples.each(func(fp uint32, sample ErrorSample) {
		d.ErrorSamples = append(d.ErrorSamples, errorSampleData{Fingerprint: formatFingerprint(fp), ErrorSample: sample})
	})
	if b.trends.haveErrors {
		n := b.trends.errors
		d.Trends.Errors = &n
	}
	if b.relapse.watching() {
		r := b.relapse
		d.Relapse = &r
	}
	if b.cfg.Spend.MaxCallsPerHour > 0 {
		b.calls.prune(now)
	}
	for _, e := range b.calls.entries[b.calls.head:] {
		d.Calls = append(d.Calls, callsData{At: e.at, Calls: e.calls})
	}
	if _, _, ok := b.limitAt(now); ok {
		d.ProviderLimit = &providerLimitData{Reason: b.limit.reason, Until: b.limit.until, Source: b.limit.source}
	}
	if reports := b.windowsAt(now); len(reports) > 0 || b.windows.stopped.Kind != ReasonNone {
		d.Windows = &windowsData{}
		for _, r := range reports {
			d.Windows.Reports = append(d.Windows.Reports, windowData{Length: r.w.Length, Used: r.w.Used, Reset: r.w.Reset, Until: r.until, Source: r.w.Source})
		}
		if stopped := b.windows.stopped; stopped.Kind != ReasonNone {
			d.Windows.Stopped = &stopped
		}
	}
	b.spend.hour.prune(now)
	b.spend.burn.prune(now)
	// The hour's entries hold the burn window's; without an hourly cap,
	// the burn window's are all there is.
	hour := b.spend.hour.entries[b.spend.hour.head:]
	if b.spend.hour.window == 0 && len(hour) == 0 {
		hour = b.spend.burn.entries[b.spend.burn.head:]
	}
	if !b.spend.total.zero() || len(hour) > 0 {
		d.Spend = &spendData{Total: dataOfUsage(b.spend.total)}
		for _, e := range hour {
			d.Spend.Hour = append(d.Spend.Hour, spendEntryData{At: e.at, usageData: dataOfUsage(e.usage)})
		}
	}
	b.errors.each(func(fp uint32, count int) {
		d.Errors = append(d.Errors, errorCount{Fingerprint: formatFingerprint(fp), Count: count})
	})
	if b.anyFailure {
		d.LastFingerprint = formatFingerprint(b.lastFingerprint)
		d.LastFingerprintCount = b.lastFingerprintCount
	}
	if b.progress.haveTestsPassing {
		n := b.progress.testsPassing
		d.Progress.TestsPassing = &n
	}
	for i := range b.stagnation.approaches.n {
		a := b.stagnation.approaches.at(i)
		d.Approaches = append(d.Approaches, approachData{Fingerprint: formatFingerprint(a.fingerprint), Resolved: a.advanced, Text: a.text})
	}
	steps := &b.steps.steps
	for i := range steps.n {
		s := steps.at(i)
		sd := stepData{Action: formatFingerprint(s.action), Result: formatFingerprint(s.result), Message: s.message, Failed: s.failed, Text: s.text}
		if !s.message {
			sd.Tool = formatFingerprint(s.tool)
		}
		if s.failed {
			sd.Error = formatFingerprint(s.errFP)
		}
		d.Steps = append(d.Steps, sd)
	}
	return Snapshot{data: d}
}

// Restore replaces the breaker's state with snap, or returns the error
// [Snapshot.Validate] gives and changes nothing. The breaker keeps its
// Config: what is larger than it allows loses its oldest entries. Time runs
// on by the wall clock: an open circuit's cooldown goes on from when it
// opened, a clock gone backwards restarts it, and a probe that was running
// reopens the circuit with [ReasonProbeLost]. [Config.OnStateChange] is
// not called.
func (b *CircuitBreaker) Restore(snap Snapshot) error {
	if err := snap.Validate(); err != nil {
		return err
	}
	s := &snap.data
	b.mu.Lock()
	defer b.unlock()
	now := b.cfg.Now()
	l := loop{
		state:      s.State,
		reason:     s.Reason,
		openedAt:   s.OpenedAt,
		cooldown:   s.Cooldown,
		count:      s.counts,
		errors:     newErrorCounts(b.cfg.Failures.MaxFingerprints),
		lastFailed: s.LastFailed,
		stagnation: newStagnationState(&b.cfg),
		steps:      newStepState(&b.cfg),
		completion: s.Completion,
		history:    newRing[Transition](historyLen),
		restored:   true,
		samples:    newErrorSamples(&b.cfg),
		tasks:      taskState{taskCounts: s.Tasks.taskCounts, skipped: slices.Clone(s.Tasks.Skipped)},
		trends:     trendState{trendCounts: s.Trends.trendCounts},
	}
	if s.Trends.Errors != nil {
		l.trends.errors, l.trends.haveErrors = *s.Trends.Errors, true
	}
	if r := s.Relapse; r != nil && r.Seen < b.cfg.RelapseWindow {
		l.relapse = *r
	}
	switch {
	case s.State != Open || heldKind(s.Reason.Kind):
	case now.Before(s.OpenedAt):
		l.restartedAt = now // see cooldownEnd
	case now.Before(s.SavedAt):
		l.openedAt = now
	}
	drop := max(len(s.Errors)-b.cfg.Failures.MaxFingerprints, 0)
	l.errors.evicted = s.EvictedErrors + drop
	for _, e := range s.Errors[drop:] {
		fp, _ := parseFingerprint(e.Fingerprint)
		l.errors.put(fp, e.Count)
	}
	// The samples of the fingerprints kept, the most recently seen.
	var kept []errorSampleData
	for _, e := range s.ErrorSamples {
		if fp, _ := parseFingerprint(e.Fingerprint); l.errors.has(fp) {
			kept = append(kept, e)
		}
	}
	for _, e := range kept[max(len(kept)-l.samples.max, 0):] {
		fp, _ := parseFingerprint(e.Fingerprint)
		l.samples.put(fp, e.ErrorSample)
	}
	if s.LastFingerprint != "" {
		l.anyFailure = true
		l.lastFingerprint, _ = parseFingerprint(s.LastFingerprint)
		l.lastFingerprintCount = s.LastFingerprintCount
	}

	ps := &l.progress
	ps.progressCounts = s.Progress.progressCounts
	if s.Progress.TestsPassing != nil {
		ps.testsPassing, ps.haveTestsPassing = *s.Progress.TestsPassing, true
	}
	copy(ps.outputs[:], s.Progress.Outputs)
	ps.outputCount = len(s.Progress.Outputs)
	ps.outputNext = ps.outputCount % outputTrendLen
	if c := ps.outputCount; c > 0 {
		// The output-decline evidence of the last measured iteration, as
		// observeProgress computed it.
		ps.output = s.Progress.Outputs[c-1]
		ps.baselineSize = min(c-1, outputBaselineLen)
		for _, n := range s.Progress.Outputs[c-1-ps.baselineSize : c-1] {
			ps.baselineSum = addSat(ps.baselineSum, n)
		}
	}

	st := &l.stagnation
	for _, v := range s.ProgressScores {
		st.scores.push(v)
	}
	for _, a := range s.Approaches {
		fp, _ := parseFingerprint(a.Fingerprint)
		st.approaches.push(approach{fingerprint: fp, advanced: a.Resolved, text: a.Text})
	}
	for _, w := range s.Works {
		st.works.push(w)
	}
	for _, sd := range s.Steps {
		action, _ := parseFingerprint(sd.Action)
		result, _ := parseFingerprint(sd.Result)
		tool, _ := parseFingerprint(sd.Tool)
		errFP, _ := parseFingerprint(sd.Error)
		l.steps.steps.push(stepRecord{action: action, result: result, tool: tool, errFP: errFP, message: sd.Message, failed: sd.Failed, text: sd.Text})
	}
	for _, t := range s.History {
		l.history.push(t)
	}
	b.loop = l
	b.refreshWarnings()
	b.wake()
	if s.ProbeInFlight {
		b.loseProbe(now)
	}
	b.calls = callBudget{}
	for _, c := range s.Calls[max(len(s.Calls)-maxCallEntries, 0):] {
		// No call lies in the future of this clock (see prune).
		b.calls.entries = append(b.calls.entries, callEntry{at: minTime(c.At, now), calls: c.Calls})
		b.calls.used = addSat(b.calls.used, c.Calls)
	}
	if pl := s.ProviderLimit; pl != nil {
		// The reset is a wall-clock time the provider gave: it stays as
		// it is, whatever this clock reads, but never further off than
		// any provider's window.
		b.limit = providerLimit{reason: pl.Reason, until: pl.Until, source: pl.Source}
		if !pl.Until.IsZero() {
			b.limit.until = minTime(pl.Until, now.Add(maxProviderLimitWait))
		}
	}
	if ws := s.Windows; ws != nil {
		// Like a provider limit's reset, a report's end stays as it is,
		// whatever this clock reads, but never further off than any
		// provider's window.
		for _, w := range ws.Reports[max(len(ws.Reports)-maxWindows, 0):] {
			b.windows.reports = append(b.windows.reports, windowReport{
				w:     Window{Length: w.Length, Used: w.Used, Reset: w.Reset, Source: w.Source},
				until: minTime(w.Until, now.Add(maxProviderLimitWait)),
			})
		}
		if ws.Stopped != nil {
			b.windows.stopped = *ws.Stopped
		}
	}
	b.spend = newSpendState(&b.cfg)
	if sp := s.Spend; sp != nil {
		b.spend.total = sp.Total.usage()
		b.spend.hour.restore(sp.Hour, now)
		if b.spend.burn.window > 0 {
			b.spend.burn.restore(sp.Hour, now)
		}
	}
	return nil
}

// Validate reports whether s is a state a breaker can be in, whatever its
// Config: known version and names, no negative counts, counts and states
// that agree, valid fingerprints, bounded windows. The error is a
// [*StateError] matching [ErrCorruptState] that says the first thing
// wrong, or [ErrNewerState] for a newer version.
func (s Snapshot) Validate() error {
	if s.data.Version > SnapshotVersion {
		return &StateError{Newer: s.data.Version}
	}
	if err := s.data.validate(); err != nil {
		return &StateError{Err: err}
	}
	return nil
}

// validate reports the first of the counters that is negative, by its
// JSON name: every counter of counts, those of the embedded structs too.
func (c *counts) validate() error {
	return nonNegative(reflect.ValueOf(c).Elem())
}

// nonNegative reports the first int field of the struct v, or of a struct
// it embeds, that is negative, but for those tagged signed.
func nonNegative(v reflect.Value) error {
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		switch {
		case f.Anonymous && fv.Kind() == reflect.Struct:
			if err := nonNegative(fv); err != nil {
				return err
			}
		case fv.Kind() == reflect.Int && fv.Int() < 0 && f.Tag.Get("signed") == "":
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			return fmt.Errorf("%s is negative (%d)", name, fv.Int())
		}
	}
	return nil
}

func (s *snapshotData) validate() error {
	if s.Version < 1 || s.Version > SnapshotVersion {
		return fmt.Errorf("unsupported version %d (this build reads versions 1 to %d)", s.Version, SnapshotVersion)
	}
	if s.SavedAt.IsZero() {
		return errors.New("saved_at is missing")
	}
	if _, err := s.State.MarshalText(); err != nil {
		return err
	}
	if err := validReason("reason", s.Reason); err != nil {
		return err
	}
	if k := s.Reason.Kind; k != ReasonNone && !opensCircuit(k) {
		return fmt.Errorf("reason %s is not a reason for the circuit to open", k)
	}
	held := heldKind(s.Reason.Kind)
	switch {
	case s.State == Closed && s.Reason.Kind != ReasonNone:
		return fmt.Errorf("closed circuit with reason %s", s.Reason.Kind)
	case s.State == Closed && s.ConsecutiveOpens != 0:
		return fmt.Errorf("closed circuit with %d consecutive opens", s.ConsecutiveOpens)
	case s.State != Closed && s.Reason.Kind == ReasonNone:
		return fmt.Errorf("%s circuit without a reason", s.State)
	case s.State == Open && s.OpenedAt.IsZero():
		return errors.New("open circuit without opened_at")
	case held && s.State != Open:
		return fmt.Errorf("%s circuit with reason %s, which only an open circuit has", s.State, s.Reason.Kind)
	case s.ProbeInFlight && s.State != HalfOpen:
		return fmt.Errorf("%s circuit with a probe in flight, which only a half-open circuit has", s.State)
	case s.Cooldown < 0:
		return fmt.Errorf("negative cooldown %d", s.Cooldown)
	}
	if err := s.validateLimitAndSpend(); err != nil {
		return err
	}
	if err := s.counts.validate(); err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		n    int
	}{
		{"evicted_errors", s.EvictedErrors},
		{"last_fingerprint_count", s.LastFingerprintCount},
		{"progress.consecutive_no_progress", s.Progress.ConsecutiveNoProgress},
		{"progress.consecutive_permission_denials", s.Progress.ConsecutivePermissionDenials},
	} {
		if c.n < 0 {
			return fmt.Errorf("%s is negative (%d)", c.name, c.n)
		}
	}
	switch {
	case s.ConsecutiveOpens > s.Opens:
		return fmt.Errorf("consecutive_opens %d above opens %d", s.ConsecutiveOpens, s.Opens)
	case s.ConsecutiveFailures > s.TotalFailures:
		return fmt.Errorf("consecutive_failures %d above total_failures %d", s.ConsecutiveFailures, s.TotalFailures)
	case s.TotalFailures > s.Iterations:
		return fmt.Errorf("total_failures %d above iterations %d", s.TotalFailures, s.Iterations)
	}

	seen := make(map[string]bool, len(s.Errors))
	for i, e := range s.Errors {
		if _, ok := parseFingerprint(e.Fingerprint); !ok {
			return fmt.Errorf("errors[%d]: fingerprint %q is not 8 lower-case hex digits", i, e.Fingerprint)
		}
		if seen[e.Fingerprint] {
			return fmt.Errorf("errors[%d]: fingerprint %s appears twice", i, e.Fingerprint)
		}
		seen[e.Fingerprint] = true
		if e.Count < 1 {
			return fmt.Errorf("errors[%d]: count %d below 1", i, e.Count)
		}
	}
	if s.LastFingerprint != "" {
		if _, ok := parseFingerprint(s.LastFingerprint); !ok {
			return fmt.Errorf("last_fingerprint %q is not 8 lower-case hex digits", s.LastFingerprint)
		}
	} else if s.LastFailed {
		return errors.New("last_failed without a last_fingerprint")
	}

	if n := len(s.Progress.Outputs); n > outputTrendLen {
		return fmt.Errorf("progress.outputs holds %d lengths, more than %d", n, outputTrendLen)
	}
	if len(s.ProgressScores) > maxWindow || len(s.Approaches) > maxWindow || len(s.Works) > maxWindow || len(s.Steps) > maxWindow {
		return fmt.Errorf("a window holds more than %d entries", maxWindow)
	}
	for i, a := range s.Approaches {
		if _, ok := parseFingerprint(a.Fingerprint); !ok {
			return fmt.Errorf("approaches[%d]: fingerprint %q is not 8 lower-case hex digits", i, a.Fingerprint)
		}
	}
	for i, sd := range s.Steps {
		_, okAction := parseFingerprint(sd.Action)
		_, okResult := parseFingerprint(sd.Result)
		switch {
		case !okAction || !okResult || !optionalFingerprint(sd.Tool) || !optionalFingerprint(sd.Error):
			return fmt.Errorf("steps[%d]: a fingerprint is not 8 lower-case hex digits", i)
		case len(sd.Text) > maxActionText+len("…"):
			return fmt.Errorf("steps[%d]: text of %d bytes, more than %d", i, len(sd.Text), maxActionText+len("…"))
		}
	}
	for i, w := range s.Works {
		if w == WorkUnlabelled || int(w) >= workKindCount {
			return fmt.Errorf("works[%d]: work kind %s is not a label", i, w)
		}
	}

	c := &s.Completion
	switch {
	case c.ConsecutiveDoneSignals < 0 || c.ConsecutiveTestOnly < 0 || c.Plan.Done < 0 || c.Plan.Remaining < 0:
		return errors.New("completion: a count is negative")
	case c.Complete.Kind != ReasonNone && c.Complete.Kind.Class() != ClassComplete:
		return fmt.Errorf("completion: %s is not a completion reason", c.Complete.Kind)
	case c.Complete.Kind != ReasonNone && s.State != Closed:
		return fmt.Errorf("completion: a complete loop with a %s circuit", s.State)
	case len(s.Calls) > maxCallEntries:
		return fmt.Errorf("calls: %d entries, more than %d", len(s.Calls), maxCallEntries)
	}
	if err := validReason("completion.Complete", c.Complete); err != nil {
		return err
	}
	for i, call := range s.Calls {
		switch {
		case call.Calls < 1:
			return fmt.Errorf("calls[%d]: %d calls, fewer than 1", i, call.Calls)
		case call.At.IsZero():
			return fmt.Errorf("calls[%d]: no time", i)
		case i > 0 && call.At.Before(s.Calls[i-1].At):
			return fmt.Errorf("calls[%d]: earlier than the call before it", i)
		}
	}

	if err := s.validateV2(seen); err != nil {
		return err
	}

	if len(s.History) > historyLen {
		return fmt.Errorf("history holds %d transitions, more than %d", len(s.History), historyLen)
	}
	for i, t := range s.History {
		switch {
		case t.From > HalfOpen || t.To > HalfOpen:
			return fmt.Errorf("history[%d]: unknown state", i)
		case int(t.Cause) >= len(causeNames):
			return fmt.Errorf("history[%d]: unknown cause %d", i, uint8(t.Cause))
		case t.Iteration < 0:
			return fmt.Errorf("history[%d]: iteration is negative (%d)", i, t.Iteration)
		}
		if err := validReason(fmt.Sprintf("history[%d].reason", i), t.Reason); err != nil {
			return err
		}
	}
	return nil
}

// validateLimitAndSpend checks the provider limit in force and what was
// spent.
func (s *snapshotData) validateLimitAndSpend() error {
	if pl := s.ProviderLimit; pl != nil {
		if err := validReason("provider_limit.reason", pl.Reason); err != nil {
			return err
		}
		switch k := pl.Reason.Kind; {
		case k == ReasonProviderLimit && pl.Until.IsZero():
			return errors.New("provider_limit: a wait without the time it lifts")
		case k == ReasonProviderStopped && !pl.Until.IsZero():
			return errors.New("provider_limit: a stop with a time it lifts")
		case k != ReasonProviderLimit && k != ReasonProviderStopped:
			return fmt.Errorf("provider_limit: %s is not a provider limit", k)
		}
	}
	if err := s.validateWindows(); err != nil {
		return err
	}
	sp := s.Spend
	if sp == nil {
		return nil
	}
	if err := sp.Total.validate("spend.total"); err != nil {
		return err
	}
	if len(sp.Hour) > maxSpendEntries {
		return fmt.Errorf("spend.hour: %d entries, more than %d", len(sp.Hour), maxSpendEntries)
	}
	for i, e := range sp.Hour {
		switch {
		case e.At.IsZero():
			return fmt.Errorf("spend.hour[%d]: no time", i)
		case i > 0 && e.At.Before(sp.Hour[i-1].At):
			return fmt.Errorf("spend.hour[%d]: earlier than the entry before it", i)
		}
		if err := e.usageData.validate(fmt.Sprintf("spend.hour[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

// validateWindows checks the reports of the provider's usage windows and
// the window share's stop.
func (s *snapshotData) validateWindows() error {
	ws := s.Windows
	if ws == nil {
		return nil
	}
	if len(ws.Reports) > maxWindows {
		return fmt.Errorf("windows.reports: %d reports, more than %d", len(ws.Reports), maxWindows)
	}
	for i, w := range ws.Reports {
		switch {
		case !(w.Used >= 0 && w.Used <= 100):
			return fmt.Errorf("windows.reports[%d]: used %v is not a share from 0 to 100", i, w.Used)
		case w.Length < 0:
			return fmt.Errorf("windows.reports[%d]: a negative length", i)
		case w.Until.IsZero():
			return fmt.Errorf("windows.reports[%d]: no time it stops counting", i)
		}
	}
	if st := ws.Stopped; st != nil {
		if err := validReason("windows.stopped", *st); err != nil {
			return err
		}
		if st.Kind != ReasonWindowShare {
			return fmt.Errorf("windows.stopped: %s is not a window share", st.Kind)
		}
	}
	return nil
}

// validate checks that u spent nothing negative.
func (u usageData) validate(field string) error {
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.CostUSD < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 {
		return fmt.Errorf("%s: a negative spend", field)
	}
	return nil
}

// validReason checks that a reason's kinds are known. Its evidence is not
// checked: some of it may be negative (a progress score, an output length
// the host reported).
func validReason(field string, r Reason) error {
	if int(r.Kind) >= len(rules) {
		return fmt.Errorf("%s: unknown kind %d", field, uint8(r.Kind))
	}
	if int(r.Relapsed) >= len(rules) {
		return fmt.Errorf("%s: unknown relapsed kind %d", field, uint8(r.Relapsed))
	}
	if int(r.Last) >= len(rules) {
		return fmt.Errorf("%s: unknown last kind %d", field, uint8(r.Last))
	}
	return nil
}

// optionalFingerprint reports whether s is empty or a fingerprint.
func optionalFingerprint(s string) bool {
	_, ok := parseFingerprint(s)
	return s == "" || ok
}

// validateV2 checks the fields version 2 added; errors is the set of the
// error history's fingerprints.
func (s *snapshotData) validateV2(errors map[string]bool) error {
	t := &s.Tasks
	switch {
	case t.TaskIterations < 0 || t.TaskFailures < 0:
		return fmt.Errorf("tasks: a count is negative")
	case t.TaskFailures > t.TaskIterations:
		return fmt.Errorf("tasks: task_failures %d above task_iterations %d", t.TaskFailures, t.TaskIterations)
	case t.Task == "" && t.TaskIterations > 0:
		return fmt.Errorf("tasks: %d iterations on no task", t.TaskIterations)
	case t.Task != "" && taskName(t.Task) != t.Task:
		return fmt.Errorf("tasks: task %q is not a task name (trimmed, at most %d runes of UTF-8)", t.Task, taskNameRunes)
	case len(t.Skipped) > maxSkippedTasks:
		return fmt.Errorf("tasks: %d skipped tasks, more than %d", len(t.Skipped), maxSkippedTasks)
	}
	skipped := make(map[string]bool, len(t.Skipped))
	for i, name := range t.Skipped {
		switch {
		case name == "" || taskName(name) != name:
			return fmt.Errorf("tasks.skipped[%d]: %q is not a task name", i, name)
		case skipped[name]:
			return fmt.Errorf("tasks.skipped[%d]: %q appears twice", i, name)
		}
		skipped[name] = true
	}

	if len(s.ErrorSamples) > maxErrorSamples {
		return fmt.Errorf("error_samples: %d, more than %d", len(s.ErrorSamples), maxErrorSamples)
	}
	sampled := make(map[string]bool, len(s.ErrorSamples))
	for i, e := range s.ErrorSamples {
		switch {
		case !errors[e.Fingerprint]:
			return fmt.Errorf("error_samples[%d]: fingerprint %q is not in the error history", i, e.Fingerprint)
		case sampled[e.Fingerprint]:
			return fmt.Errorf("error_samples[%d]: fingerprint %s appears twice", i, e.Fingerprint)
		case sampleOf(e.First) != e.First || sampleOf(e.Latest) != e.Latest || e.First == "" && e.Latest != "":
			return fmt.Errorf("error_samples[%d]: not a sample (trimmed, at most %d runes of UTF-8)", i, errtext.SampleRunes)
		}
		sampled[e.Fingerprint] = true
	}

	tr := &s.Trends
	if tr.ConsecutiveTestDeclines < 0 || tr.ConsecutiveErrorRises < 0 {
		return fmt.Errorf("trends: a count is negative")
	}

	if r := s.Relapse; r != nil {
		switch {
		case s.State != Closed:
			return fmt.Errorf("relapse watch with a %s circuit, which only a closed one has", s.State)
		case !opensCircuit(r.Reason.Kind) || heldKind(r.Reason.Kind):
			return fmt.Errorf("relapse: %s is not a reason a probe recovers from", r.Reason.Kind)
		case r.Reason.Kind == ReasonRelapse && (!opensCircuit(r.Reason.Relapsed) || r.Reason.Relapsed == ReasonRelapse || heldKind(r.Reason.Relapsed)):
			return fmt.Errorf("relapse: relapsed kind %s is not a signal", r.Reason.Relapsed)
		case r.Seen < 0 || r.Seen >= maxWindow:
			return fmt.Errorf("relapse: seen %d is not between 0 and %d", r.Seen, maxWindow-1)
		case r.Opens < 1 || r.Opens > s.Opens:
			return fmt.Errorf("relapse: opens %d is not between 1 and opens %d", r.Opens, s.Opens)
		}
		if err := validReason("relapse.reason", r.Reason); err != nil {
			return err
		}
	}
	return nil
}

// parseFingerprint parses 8 lower-case hex digits.
func parseFingerprint(s string) (uint32, bool) {
	if len(s) != 8 {
		return 0, false
	}
	var fp uint32
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			fp = fp<<4 | uint32(c-'0')
		case 'a' <= c && c <= 'f':
			fp = fp<<4 | uint32(c-'a'+10)
		default:
			return 0, false
		}
	}
	return fp, true
}

// ParseSnapshot reads a snapshot from JSON and validates it. A newer
// version is a [*StateError] matching [ErrNewerState]; anything else wrong
// (not JSON, cut short, an unknown field, an inconsistent state) is a
// [*StateError] matching [ErrCorruptState].
func ParseSnapshot(data []byte) (Snapshot, error) {
	var s Snapshot
	if err := s.UnmarshalJSON(data); err != nil {
		return Snapshot{}, err
	}
	if err := s.Validate(); err != nil {
		return Snapshot{}, err
	}
	return s, nil
}
