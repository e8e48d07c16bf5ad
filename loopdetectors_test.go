package loopbreaker

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// detectorFile is one file of testdata/loopdetectors: another agent
// tool's loop detector, its scenarios and what it decided on each.
type detectorFile struct {
	Tool      string             `json:"tool"`
	Scenarios []detectorScenario `json:"scenarios"`
}

type detectorScenario struct {
	Name       string          `json:"name"`
	Steps      []detectorStep  `json:"steps"`
	Verdict    detectorVerdict `json:"their_verdict"`
	Config     json.RawMessage `json:"config"`
	FromIssue  string          `json:"from_issue"`
	ReportedAs string          `json:"reported_as"`
	Notes      string          `json:"notes"`
}

type detectorStep struct {
	Tool    string  `json:"tool"`
	Args    string  `json:"args"`
	Result  string  `json:"result"`
	Failed  bool    `json:"failed"`
	Message *string `json:"message"`
	From    string  `json:"from"`
	Event   string  `json:"event"`
}

type detectorVerdict struct {
	Stops        bool `json:"stops"`
	AtStep       int  `json:"at_step"`
	BeforeItRuns bool `json:"before_it_runs"`
}

func loadDetectors(tb testing.TB) []detectorFile {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "loopdetectors", "*.json"))
	require.NoError(tb, err)
	require.NotEmpty(tb, paths)
	sort.Strings(paths)
	var files []detectorFile
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(tb, err)
		var f detectorFile
		require.NoError(tb, json.Unmarshal(data, &f), p)
		files = append(files, f)
	}
	return files
}

// detectorStop is where the breaker stopped a scenario: the 1-based step
// at which it stops, and whether the call was refused before it ran
// (CheckAction) or the run was stopped after the step (Check); at 0: never.
type detectorStop struct {
	at     int
	before bool
	reason Reason
}

// replayDetectorScenario runs a scenario step by step as a host with a
// pre-call check would: CheckAction before each tool call (a refusal
// stops it there, before the call runs), Record of the call's outcome,
// then Check (a refusal stops it after the step). With chunks (Gemini
// CLI's files), the model's messages in a row are the chunks of one
// streamed answer, one message step; otherwise each is a turn. A user's
// message and the tools' own events are no step of the agent's.
func replayDetectorScenario(tb *testing.T, cfg Config, sc detectorScenario, chunks bool) detectorStop {
	tb.Helper()
	cb, _ := newTestBreaker(tb, cfg)
	pending := ""
	havePending := false
	flush := func(at int) (detectorStop, bool) {
		if !havePending {
			return detectorStop{}, false
		}
		havePending = false
		cb.Record(Iteration{Action: &Action{Message: pending}})
		pending = ""
		if d := cb.Check(); !d.Allow {
			return detectorStop{at: at, reason: d.Reason}, true
		}
		return detectorStop{}, false
	}
	for i, s := range sc.Steps {
		at := i + 1
		switch {
		case s.Message != nil && s.From != "user":
			if !chunks {
				if stop, ok := flush(at - 1); ok {
					return stop
				}
			}
			pending += *s.Message
			havePending = true
			continue
		case s.Message != nil, s.Event == "thought", s.Event == "new_run":
			if stop, ok := flush(at - 1); ok {
				return stop
			}
			continue
		case s.Event == "condensation":
			if stop, ok := flush(at - 1); ok {
				return stop
			}
			cb.Record(Iteration{Condensed: true})
			if d := cb.Check(); !d.Allow {
				return detectorStop{at: at, reason: d.Reason}
			}
			continue
		}
		if stop, ok := flush(at - 1); ok {
			return stop
		}
		a := Action{Tool: s.Tool, Args: s.Args}
		if d := cb.CheckAction(a); !d.Allow {
			return detectorStop{at: at, before: true, reason: d.Reason}
		}
		it := Iteration{Action: &a, Observation: s.Result}
		if s.Failed {
			it.Err = errors.New(s.Result)
		}
		cb.Record(it)
		if d := cb.Check(); !d.Allow {
			return detectorStop{at: at, reason: d.Reason}
		}
	}
	if stop, ok := flush(len(sc.Steps)); ok {
		return stop
	}
	return detectorStop{}
}

// detectorOutcome is how the breaker's replay of a scenario compares
// with the other tool's verdict.
type detectorOutcome string

const (
	stoppedNoLater detectorOutcome = "stopped no later"
	stoppedLater   detectorOutcome = "stopped later"
	notStopped     detectorOutcome = "not stopped"
	letRun         detectorOutcome = "let run"
	stoppedIt      detectorOutcome = "stopped"
)

// outcome compares stop with what sc says should happen: a loop their
// detector stops (or a user reported it missed) should be stopped at their
// step or before; a sequence it lets run (or a user reported it stopped
// wrongly) should run to its end. A stop after the last step is a refusal
// of a call the scenario does not make: the sequence ran.
func (sc detectorScenario) outcome(stop detectorStop) detectorOutcome {
	shouldStop := sc.Verdict.Stops
	switch sc.ReportedAs {
	case "missed_loop":
		shouldStop = true
	case "false_stop":
		shouldStop = false
	}
	ranToTheEnd := stop.at == 0 || stop.at == len(sc.Steps) && !stop.before
	switch {
	case !shouldStop && ranToTheEnd:
		return letRun
	case !shouldStop:
		return stoppedIt
	case stop.at == 0:
		return notStopped
	case sc.ReportedAs == "missed_loop":
		return stoppedNoLater
	case stop.at < sc.Verdict.AtStep || stop.at == sc.Verdict.AtStep && (stop.before || !sc.Verdict.BeforeItRuns):
		return stoppedNoLater
	}
	return stoppedLater
}

// streamedText reports whether the scenario is text streamed within one
// model turn (Gemini CLI's repeated-content check): the breaker judges
// whole steps, not the text of one as it streams.
func (sc detectorScenario) streamedText() bool {
	for _, s := range sc.Steps {
		if s.Message == nil && s.Event == "" {
			return false
		}
	}
	return true
}

// detectorDisagreements are the scenarios, of those run with the other
// tool's own defaults, where the breaker does not do what that tool does,
// each with what the breaker does and why. Every other such scenario is
// stopped no later than the tool stops it, or let run as it lets it run.
var detectorDisagreements = map[string]struct {
	outcome detectorOutcome
	why     string
}{
	"Cline/ext-task-progress-ignored":                     {notStopped, "Cline leaves its own task_progress argument out of the comparison; to the breaker the arguments differ (a host strips its bookkeeping fields, as looprun's hooks strip Bash's description)"},
	"Gemini CLI/three-distinct-calls-round-three-times":   {stoppedIt, "a cycle gone round 3 times with the same results is a loop here (OpenHands' A B A B A B, generalised); Gemini waits for 5 rounds and judges calls only, the results being made up"},
	"Gemini CLI/alternation-broken-by-third-call":         {stoppedIt, "the same two reads with the same results 4 times in 9 steps: a repeat with something between; Gemini looks for unbroken cycles only"},
	"Gemini CLI/key-order-makes-a-new-call":               {stoppedIt, "the same arguments with their keys in another order are the same call here (issue 38 item 5); Gemini compares the JSON text"},
	"Gemini CLI/issue-same-command-varying-directory":     {notStopped, "ls -l of a new directory each time, each listing different: exploration, as the report's own notes grant"},
	"goose/rep002-success-resets":                         {stoppedIt, "the same call failing the same way 4 times in 5 steps, a success between, is a repeat here; goose resets on any success"},
	"goose/rep002-other-tool-not-denied":                  {stoppedIt, "three failures of the same call open the circuit for the whole loop, as in OpenHands; goose denies only that tool"},
	"loopguard/same-call-three-times":                     {notStopped, "the same call with the same result 3 times: the breaker stops at the 4th (3 in 30 steps stopped 2 healthy recorded runs)"},
	"loopguard/same-call-three-times-with-others-between": {notStopped, "as above: 3 repeats with others between run, the 4th is refused before it runs"},
	"opencode/three-identical-calls-one-message":          {notStopped, "opencode asks the person at the 3rd identical call in one answer; the breaker stops at the 4th in a row, OpenHands' threshold"},
	"opencode/issue-same-read-across-messages":            {notStopped, "3 reads of the same file: the 4th would be refused before it runs"},
	"opencode/issue-text-between-identical-calls":         {notStopped, "as above"},
	"OpenHands/syntax-error-moving-line":                  {stoppedIt, "OpenHands makes an exception of a Python cell's syntax error whose line moves; here the same action failing 3 times in a row is a loop whatever its errors"},
	"OpenHands/incomplete-input-moving-line":              {stoppedIt, "as above"},
	"OpenHands/unterminated-string-moving-line":           {stoppedIt, "as above"},
	"OpenHands/syntax-error-not-at-end":                   {stoppedIt, "as above"},
	"Roo Code/default-limit-fourth-refused":               {stoppedLater, "the 4th identical call with the same result runs and the circuit opens after it: a success may have done what its result does not show (a recorded healthy run went back in its browser 4 times, each 'Navigated back')"},
}

// The other agent tools' own tests of their loop detectors, replayed
// step by step under the tool-steps preset with a pre-call check: every
// loop they stop is stopped no later, and every sequence they let run runs,
// but for the disagreements listed above. Scenarios run with settings of
// their own (a lowered limit) are replayed and counted, not judged; text
// streamed within one turn (Gemini's repeated-content check) is out of
// the breaker's sight. The log shows the table, tool by tool.
func TestOtherToolsLoopDetectorTestsReplayed(t *testing.T) {
	cfg := toolStepsPreset(t)
	type tally struct{ stops, noLater, later, missed, runs, ran, stopped, withConfig, streamed int }
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "tool\tloops to stop\tstopped no later\tlater\tnot stopped\tsequences to let run\tlet run\tstopped\twith their own settings\tstreamed text")
	seen := map[string]bool{}
	for _, f := range loadDetectors(t) {
		var n tally
		for _, sc := range f.Scenarios {
			chunks := f.Tool == "Gemini CLI"
			if chunks && sc.streamedText() {
				n.streamed++
				continue
			}
			stop := replayDetectorScenario(t, cfg, sc, chunks)
			o := sc.outcome(stop)
			if sc.hasConfig() {
				n.withConfig++
				continue
			}
			key := f.Tool + "/" + sc.Name
			want, listed := detectorDisagreements[key]
			switch {
			case listed:
				seen[key] = true
				assert.Equal(t, want.outcome, o, "%s: %s (stopped at step %d by %s)", key, want.why, stop.at, stop.reason.Kind)
			default:
				assert.Contains(t, []detectorOutcome{stoppedNoLater, letRun}, o, "%s: at step %d, before it ran %v: %s", key, stop.at, stop.before, stop.reason)
			}
			switch o {
			case stoppedNoLater:
				n.stops++
				n.noLater++
			case stoppedLater:
				n.stops++
				n.later++
			case notStopped:
				n.stops++
				n.missed++
			case letRun:
				n.runs++
				n.ran++
			case stoppedIt:
				n.runs++
				n.stopped++
			}
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", f.Tool, n.stops, n.noLater, n.later, n.missed, n.runs, n.ran, n.stopped, n.withConfig, n.streamed)
	}
	require.NoError(t, w.Flush())
	t.Log("\n" + b.String())
	for key := range detectorDisagreements {
		assert.True(t, seen[key], "%s is no scenario of the data", key)
	}
}

// hasConfig reports whether the scenario runs their detector with other
// settings than its defaults.
func (sc detectorScenario) hasConfig() bool {
	return len(sc.Config) > 0 && string(sc.Config) != "null"
}
