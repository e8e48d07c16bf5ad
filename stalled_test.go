package loopbreaker

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// search is a tool step that looked (a new search each time, each with its
// own result) and reported that it changed nothing.
func search(i int) Iteration {
	it := call("grep", fmt.Sprintf(`{"pattern":"term%d"}`, i), fmt.Sprintf("no match for term%d", i))
	it.Progress = &Progress{}
	return it
}

// searches are n such steps, from the i-th search on.
func searches(from, n int) []Iteration {
	its := make([]Iteration, n)
	for i := range its {
		its[i] = search(from + i)
	}
	return its
}

// edit is a tool step that changed a file.
func edit() Iteration {
	it := call("edit", `{"path":"a.go"}`, "ok")
	it.Progress = &Progress{FilesChanged: 1}
	return it
}

func TestStalledSteps(t *testing.T) {
	spoken := search(1000)
	spoken.Action.Message = "Nothing in src/ yet; looking in the tests next."
	failedSearch := func(i int) Iteration {
		it := failedCall("grep", fmt.Sprintf(`{"pattern":"term%d"}`, i), fmt.Sprintf("grep: term%d: exit 2, no such file", i))
		it.Progress = &Progress{}
		return it
	}
	tests := []struct {
		name   string
		steps  []Iteration
		stopAt int // the step refused; -1: none
	}{
		{"50 searches that change nothing and say nothing", searches(0, 50), 50},
		{"49 of them, an edit, 49 more", story(searches(0, 49), []Iteration{edit()}, searches(49, 49)), -1},
		{"49 of them, words to the user beside a call, 49 more", story(searches(0, 49), []Iteration{spoken}, searches(49, 49)), -1},
		{"49 of them, a message-only turn, 49 more", story(searches(0, 49), []Iteration{say("Still looking.")}, searches(49, 49)), -1},
		{"failed searches count as well", story(searches(0, 25), []Iteration{failedSearch(100)}, searches(25, 24)), 50},
		{"a step that reports no progress leaves the run as it was", story(searches(0, 30), []Iteration{call("grep", `{"pattern":"x"}`, "x")}, searches(30, 20)), 51},
		{"words of blanks are no words", story(searches(0, 49), []Iteration{{Action: &Action{Tool: "grep", Args: `{"pattern":"y"}`, Message: " \n"}, Observation: "y", Progress: &Progress{}}}), 50},
		{"a host that reports no progress with its steps is never stalled", func() []Iteration {
			its := searches(0, 200)
			for i := range its {
				its[i].Progress = nil
			}
			return its
		}(), -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			at, r := runStory(t, stepsOnly(), tc.steps)
			assert.Equal(t, tc.stopAt, at)
			if tc.stopAt >= 0 {
				assert.Equal(t, ReasonStalled, r.Kind)
				assert.Equal(t, 50, r.Count)
				assert.Equal(t, "Stalled: 50 tool calls in a row changed no file and said nothing to the user (threshold: 50)", r.String())
			}
		})
	}
}

// One call short of the stall, the model is warned in words it can act on;
// at the stall it is told what to do instead. Its words beside the next
// call end the run of silent steps.
func TestAStallIsWarnedThenStopped(t *testing.T) {
	cb, _ := newTestBreaker(t, stepsOnly())
	for _, it := range searches(0, 49) {
		require.True(t, cb.Check().Allow)
		cb.Record(it)
	}
	d := cb.Check()
	require.True(t, d.Allow)
	require.Len(t, d.Short, 1)
	assert.Equal(t, ReasonStalled, d.Short[0].Kind)
	assert.Equal(t, "loopbreaker warning: your last 49 tool calls changed no file and you have said nothing to the user; one more such call and your tool calls are stopped. Tell the user what you found and what you will do, or make the change.", d.ForModel())

	cb.Record(search(49))
	d = cb.Check()
	require.False(t, d.Allow)
	assert.ErrorIs(t, d.Err(), ErrOpen)
	assert.Equal(t, "loopbreaker stopped your tool calls: Stalled: 50 tool calls in a row changed no file and said nothing to the user (threshold: 50). "+
		"You made 50 tool calls in a row without changing a file or writing a word to the user.\n"+
		"Do not make this call again: tell the user what you have found and what blocks you, or make the change you were looking for, or end your turn and tell the user what blocks you.",
		d.Reason.ForModel())
	assert.Equal(t, 50, cb.Stats().Steps.StalledSteps)
}

// The run of silent steps survives a restart; Resume and a person's new
// prompt start it again.
func TestTheStallCountIsKeptAndStartedAgain(t *testing.T) {
	cfg := stepsOnly()
	cb, _ := newTestBreaker(t, cfg)
	for _, it := range searches(0, 30) {
		cb.Record(it)
	}
	restored, _ := newTestBreaker(t, cfg)
	require.NoError(t, restored.Restore(cb.Snapshot()))
	assert.Equal(t, 30, restored.Stats().Steps.StalledSteps)
	for _, it := range searches(30, 20) {
		restored.Record(it)
	}
	assert.Equal(t, ReasonStalled, restored.Stats().Reason.Kind, "30 before the restart, 20 after")
	restored.Resume()
	assert.Zero(t, restored.Stats().Steps.StalledSteps)

	cb.NewPrompt()
	assert.Zero(t, cb.Stats().Steps.StalledSteps)
}

func TestStalledConfig(t *testing.T) {
	var ce *ConfigError
	require.ErrorAs(t, Config{Steps: StepRules{MaxStalled: 1}}.Validate(), &ce)
	assert.Equal(t, "Steps.MaxStalled", ce.Field)
	assert.NoError(t, Config{Steps: StepRules{MaxStalled: 2}}.Validate())
	assert.NoError(t, Config{Steps: StepRules{MaxStalled: -1}}.Validate())
	assert.Equal(t, 50, DefaultConfig().Steps.MaxStalled)

	cfg := stepsOnly()
	cfg.Steps.MaxStalled = -1
	at, _ := runStory(t, cfg, searches(0, 200))
	assert.Equal(t, -1, at, "switched off")
}

// The words beside a call are no part of it: the same call with other
// words is the same action.
func TestTheWordsBesideACallAreNoPartOfIt(t *testing.T) {
	a := Action{Tool: "grep", Args: `{"pattern":"x"}`}
	b := a
	b.Message = "Looking for x."
	assert.Equal(t, a.Fingerprint(), b.Fingerprint())
	assert.Equal(t, a.String(), b.String())
}

// The recorded runs, each step reporting its progress as a host that
// cannot tell what a shell command did would: only the file editors'
// edits change files, and the agent's messages are its words. The longest
// run of silent steps of a healthy run is 29 (a Moatless run that
// searched to its step limit and edited nothing); none reaches the
// threshold of 50. The stuck OpenHands run that clicked through a page 97
// steps without a word is caught by its cycle first.
func TestNoHealthyRecordedRunStalls(t *testing.T) {
	cfg := toolStepsPreset(t)
	onlyEdits := func(s trajectoryStep) *Progress {
		if s.Kind == "action" && editTools[s.Tool] && !s.Error && !viewCommand.MatchString(s.Args) {
			return &Progress{FilesChanged: 1}
		}
		return &Progress{}
	}
	longest := 0
	for _, tr := range loadTrajectories(t) {
		run := 0
		for _, s := range tr.Steps {
			if p := onlyEdits(s); s.Kind == "message" || p.FilesChanged > 0 {
				run = 0
			} else if s.Kind == "action" {
				run++
			}
			if tr.Label == "healthy" {
				longest = max(longest, run)
			}
		}
		stop := replaySteps(t, cfg, tr, onlyEdits)
		assert.NotEqual(t, ReasonStalled, stop.reason.Kind, "%s %s", tr.Source, tr.Instance)
	}
	assert.Equal(t, 29, longest, "the longest silent run of a healthy recorded run")
}
