package loopbreaker

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// call is a tool step that succeeded with observation.
func call(tool, args, observation string) Iteration {
	return Iteration{Action: &Action{Tool: tool, Args: args}, Observation: observation}
}

// failedCall is a tool step that failed with errText as its result.
func failedCall(tool, args, errText string) Iteration {
	return Iteration{Action: &Action{Tool: tool, Args: args}, Observation: errText, Err: errors.New(errText)}
}

// say is a message-only turn.
func say(text string) Iteration { return Iteration{Action: &Action{Message: text}} }

// condensed is a condensation of the context.
func condensed() Iteration { return Iteration{Condensed: true} }

// repeated repeats a step n times.
func repeated(n int, it Iteration) []Iteration {
	its := make([]Iteration, n)
	for i := range its {
		its[i] = it
	}
	return its
}

// story joins the steps of a scenario.
func story(parts ...[]Iteration) []Iteration {
	var all []Iteration
	for _, p := range parts {
		all = append(all, p...)
	}
	return all
}

// stepsOnly is the default config with every signal but the step signals
// off, so that a story tests one rule.
func stepsOnly() Config {
	cfg := DefaultConfig()
	cfg.Failures.MaxConsecutive, cfg.Failures.MaxSameError, cfg.Progress.MaxNoProgress = -1, -1, -1
	return cfg
}

// runStory records the steps one by one, Check before each, and returns
// the index of the first step refused (-1: none) and the reason.
func runStory(t *testing.T, cfg Config, steps []Iteration) (int, Reason) {
	t.Helper()
	cb, _ := newTestBreaker(t, cfg)
	for i, it := range steps {
		if d := cb.Check(); !d.Allow {
			return i, d.Reason
		}
		cb.Record(it)
	}
	if d := cb.Check(); !d.Allow {
		return len(steps), d.Reason
	}
	return -1, Reason{}
}

func TestStepSignals(t *testing.T) {
	ls := call("bash", `{"command": "ls /workspace/out"}`, "")
	grep := func(word string) Iteration {
		return failedCall("bash", `{"command":"grep -rn `+word+` src"}`, "exit status 1")
	}
	tests := []struct {
		name    string
		cfg     *Config // nil: stepsOnly
		steps   []Iteration
		stopAt  int // the step refused; -1: none
		kind    ReasonKind
		count   int
		action  string // the reason's Action, when it has one
		message string // a part of the reason's text
	}{
		{
			name:   "ls returns nothing four times",
			steps:  repeated(4, ls),
			stopAt: 4, kind: ReasonRepeatedActionObservation, count: 4,
			action:  `bash {"command": "ls /workspace/out"}`,
			message: "Same action with the same observation 4 times in a row (threshold: 4): bash",
		},
		{
			name:   "ls returns nothing three times, then something",
			steps:  story(repeated(3, ls), []Iteration{call("bash", `{"command":"ls /workspace/out"}`, "report.csv")}),
			stopAt: -1,
		},
		{
			name: "the same ls with other JSON spacing and a changing time in its output is the same step",
			steps: []Iteration{
				call("bash", `{"command": "ls -l"}`, "total 0 (took 12ms)"),
				call("bash", `{"command":"ls -l"}`, "total 0 (took 9ms)"),
				call("bash", `{ "command" : "ls -l" }`, "total 0 (took 30ms)"),
				call("bash", "{\n  \"command\": \"ls -l\"\n}", "total 0 (took 7ms)"),
			},
			stopAt: 4, kind: ReasonRepeatedActionObservation, count: 4,
		},
		{
			name: "paging through a file is not a repetition: the numbers are the model's choice",
			steps: []Iteration{
				call("view", `{"path":"a.go","range":[1,50]}`, "package a"),
				call("view", `{"path":"a.go","range":[51,100]}`, "package a"),
				call("view", `{"path":"a.go","range":[101,150]}`, "package a"),
				call("view", `{"path":"a.go","range":[151,200]}`, "package a"),
			},
			stopAt: -1,
		},
		{
			name:   "the same edit fails three times",
			steps:  repeated(3, failedCall("str_replace", `{"old":"x := 1"}`, "old_str not found in main.go")),
			stopAt: 3, kind: ReasonRepeatedActionError, count: 3,
			action:  `str_replace {"old":"x := 1"}`,
			message: "Same action failed 3 times in a row (threshold: 3, error ",
		},
		{
			name: "the same command fails three times with different errors",
			steps: []Iteration{
				failedCall("bash", "make", "make: *** [build] Error 1: cc: no such file"),
				failedCall("bash", "make", "make: *** [build] Error 2: ld: undefined symbol"),
				failedCall("bash", "make", "make: *** [test] Error 1: 3 tests failed"),
			},
			stopAt: 3, kind: ReasonRepeatedActionError, count: 3,
		},
		{
			name:   "three different greps find nothing: tries, not a loop",
			steps:  []Iteration{grep("loadUser"), grep("LoadUser"), grep("load_user"), grep("userLoader"), grep("fetchUser")},
			stopAt: -1,
		},
		{
			name: "five different greps of a folder that is not there: the same error whatever the pattern",
			steps: []Iteration{
				failedCall("bash", `{"command":"grep -rn loadUser srcs"}`, "grep: srcs: No such file or directory"),
				call("list_files", `{"path":"."}`, "go.mod main.go"),
				failedCall("bash", `{"command":"grep -rn LoadUser srcs"}`, "grep: srcs: No such file or directory"),
				failedCall("bash", `{"command":"grep -rn load_user srcs"}`, "grep: srcs: No such file or directory"),
				failedCall("bash", `{"command":"grep -rn userLoader srcs"}`, "grep: srcs: No such file or directory"),
				failedCall("bash", `{"command":"grep -rn fetchUser srcs"}`, "grep: srcs: No such file or directory"),
			},
			stopAt: 6, kind: ReasonSameToolError, count: 5,
			action:  `bash {"command":"grep -rn fetchUser srcs"}`,
			message: "Same tool, same error 5 times in a row of its calls, whatever the arguments (threshold: 5, error ",
		},
		{
			name:   "the same edit fails twice, then applies",
			steps:  story(repeated(2, failedCall("str_replace", `{"old":"x"}`, "not found")), []Iteration{call("str_replace", `{"old":"x"}`, "applied")}),
			stopAt: -1,
		},
		{
			name:   "the agent tells itself the same thing three times",
			steps:  repeated(3, say("I will now look at the tests.")),
			stopAt: 3, kind: ReasonMonologue, count: 3,
			action:  "(message) I will now look at the tests.",
			message: "Monologue: the same message 3 times in a row without a tool call (threshold: 3)",
		},
		{
			name:   "the model answers nothing three times",
			steps:  repeated(3, say("")),
			stopAt: 3, kind: ReasonMonologue, count: 3,
		},
		{
			name:   "the same message with a tool call between is no monologue",
			steps:  []Iteration{say("Let me check."), ls, say("Let me check."), call("bash", "cat a.txt", "hello"), say("Let me check.")},
			stopAt: -1,
		},
		{
			name: "click and look, the page never changes, three times",
			steps: story(
				repeated(3, Iteration{}), // steps the host does not describe are left out
				[]Iteration{
					call("browser_click", `{"index":1233}`, "Clicked element 1233"), call("browser_get_state", "{}", "login page"),
					call("browser_click", `{"index":1233}`, "Clicked element 1233"), call("browser_get_state", "{}", "login page"),
					call("browser_click", `{"index":1233}`, "Clicked element 1233"), call("browser_get_state", "{}", "login page"),
				}),
			stopAt: 9, kind: ReasonCycle, count: 2,
			action:  `browser_click {"index":1233} → browser_get_state {}`,
			message: "Cycle: the same 2 steps with the same observations, 3 times over the last 6 steps (actions: ",
		},
		{
			name: "click and look, the page changes: browsing, not a loop",
			steps: []Iteration{
				call("browser_click", `{"index":7}`, "Clicked element 7"), call("browser_get_state", "{}", "inbox"),
				call("browser_click", `{"index":7}`, "Clicked element 7"), call("browser_get_state", "{}", "settings"),
				call("browser_click", `{"index":7}`, "Clicked element 7"), call("browser_get_state", "{}", "profile"),
			},
			stopAt: -1,
		},
		{
			name:   "the context is condensed ten times in a row",
			steps:  story([]Iteration{ls}, repeated(10, condensed())),
			stopAt: 11, kind: ReasonCondensationLoop, count: 10,
			message: "Context condensed 10 times in a row with nothing between (threshold: 10)",
		},
		{
			name:   "condensations with steps between are the context doing its job",
			steps:  story(repeated(9, condensed()), []Iteration{call("bash", "make", "ok")}, repeated(9, condensed())),
			stopAt: -1,
		},
		{
			name:   "the rules are off with a negative threshold",
			cfg:    &Config{Steps: StepRules{MaxRepeatedAction: -1, MaxRepeatedActionError: -1, MaxMonologue: -1, CycleRepeats: -1, MaxSameToolError: -1, MaxRepeats: -1, MaxCondensations: -1}, Failures: FailureRules{MaxConsecutive: -1, MaxSameError: -1}},
			steps:  story(repeated(8, ls), repeated(8, failedCall("a", "b", "c")), repeated(8, say("hm")), repeated(12, condensed())),
			stopAt: -1,
		},
		{
			name:   "a threshold of two",
			cfg:    &Config{Steps: StepRules{MaxRepeatedAction: 2}},
			steps:  repeated(2, ls),
			stopAt: 2, kind: ReasonRepeatedActionObservation, count: 2,
		},
		{
			name: "a cycle of two, gone round twice",
			cfg:  &Config{Steps: StepRules{CycleRepeats: 2, MaxRepeatedAction: -1}},
			steps: []Iteration{
				call("a", "", "1"), call("b", "", "2"), call("a", "", "1"), call("b", "", "2"),
			},
			stopAt: 4, kind: ReasonCycle, count: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := stepsOnly()
			if tt.cfg != nil {
				cfg = *tt.cfg
			}
			at, reason := runStory(t, cfg, tt.steps)
			require.Equal(t, tt.stopAt, at, "stopped by %s", reason)
			if tt.stopAt < 0 {
				return
			}
			assert.Equal(t, tt.kind, reason.Kind, reason.String())
			assert.Equal(t, tt.count, reason.Count)
			if tt.action != "" {
				assert.Equal(t, tt.action, reason.Action)
			}
			assert.Contains(t, reason.String(), tt.message)
		})
	}
}

// An iteration without an Action (a host that does not describe its
// steps) leaves the step rules idle: today's hosts see nothing new.
func TestIterationsWithoutActionLeaveStepRulesIdle(t *testing.T) {
	cb, _ := newTestBreaker(t, Config{})
	for range 20 {
		require.True(t, cb.Check().Allow)
		cb.Record(Iteration{})
	}
	s := cb.Stats()
	assert.Zero(t, s.Steps.SameStepInARow)
	assert.Zero(t, s.Steps.SameMessageInARow)
	assert.Equal(t, Closed, s.State)
}

// A condensation is neither a success nor a failure: it leaves the
// failure counts as they were, and a half-open probe slot goes back.
func TestCondensationIsNoOutcome(t *testing.T) {
	cb, _ := newTestBreaker(t, Config{Failures: FailureRules{MaxConsecutive: 2}})
	cb.Record(Iteration{Err: errA(1)})
	cb.Record(Iteration{Condensed: true, Err: errB(2)}) // Err is ignored
	s := cb.Stats()
	assert.Equal(t, 1, s.Failures.Consecutive)
	assert.Equal(t, 1, s.Iterations)
	assert.Equal(t, 1, s.Steps.Condensations)
	assert.Equal(t, 1, s.Steps.ConsecutiveCondensations)
	cb.Record(Iteration{Err: errA(3)})
	require.Equal(t, Open, cb.State(), "the condensation did not break the failure streak")
	assert.Zero(t, cb.Stats().Steps.ConsecutiveCondensations)
}

func TestCondensationGivesTheProbeSlotBack(t *testing.T) {
	cb, clock := tripped(t, Config{})
	clock.Advance(DefaultConfig().Cooldown)
	d := cb.Check()
	require.True(t, d.Probe)
	cb.Record(condensed())
	assert.Equal(t, HalfOpen, cb.State())
	d = cb.Check()
	assert.True(t, d.Probe, "the next Check gets the probe")
}

// After the circuit opened on a repeated step, a probe that repeats it
// again opens it again; one that does something else closes it.
func TestRepeatedStepProbe(t *testing.T) {
	ls := call("bash", "ls", "")
	for _, tc := range []struct {
		name  string
		probe Iteration
		want  State
	}{
		{"the probe repeats the step", ls, Open},
		{"the probe does something else", call("bash", "ls -a", ".hidden"), Closed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cb, clock := newTestBreaker(t, stepsOnly())
			for range 4 {
				cb.Record(ls)
			}
			require.Equal(t, Open, cb.State())
			clock.Advance(DefaultConfig().Cooldown)
			require.True(t, cb.Check().Probe)
			cb.Record(tc.probe)
			assert.Equal(t, tc.want, cb.State())
		})
	}
}

// Resume and Skip start the step counts and window again, so that the
// loop is not stopped at once by what stopped it.
func TestResumeForgetsTheSteps(t *testing.T) {
	cb, _ := newTestBreaker(t, stepsOnly())
	for range 4 {
		cb.Record(call("bash", "ls", ""))
	}
	require.Equal(t, Open, cb.State())
	cb.Resume()
	cb.Record(call("bash", "ls", ""))
	assert.Equal(t, Closed, cb.State())
	assert.Equal(t, 1, cb.Stats().Steps.SameStepInARow)
}

// The step window and counts survive a restart: a loop that repeated a
// step three times before the restart is stopped by the fourth after it.
func TestStepsSurviveARestart(t *testing.T) {
	cb, clock := newTestBreaker(t, stepsOnly())
	click := call("browser_click", `{"index":8}`, "Clicked element 8")
	look := call("browser_get_state", "{}", "login page")
	for _, it := range []Iteration{click, look, click, look, click} {
		cb.Record(it)
	}
	cb.Record(condensed())
	nb, _ := restart(t, cb, stepsOnly(), clock.Now())
	assert.Equal(t, 1, nb.Stats().Steps.ConsecutiveCondensations)
	nb.Record(look)
	d := nb.Check()
	require.False(t, d.Allow)
	assert.Equal(t, ReasonCycle, d.Reason.Kind)
	assert.Equal(t, `browser_click {"index":8} → browser_get_state {}`, d.Reason.Action)
}

func TestStepConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		cfg   Config
		field string
	}{
		{Config{Steps: StepRules{MaxRepeatedAction: 1}}, "Steps.MaxRepeatedAction"},
		{Config{Steps: StepRules{MaxRepeatedActionError: 1001}}, "Steps.MaxRepeatedActionError"},
		{Config{Steps: StepRules{MaxMonologue: 1}}, "Steps.MaxMonologue"},
		{Config{Steps: StepRules{CycleRepeats: 1}}, "Steps.CycleRepeats"},
		{Config{Steps: StepRules{CycleRepeats: 201}}, "Steps.CycleRepeats"},
		{Config{Steps: StepRules{MaxSameToolError: 1}}, "Steps.MaxSameToolError"},
		{Config{Steps: StepRules{MaxRepeats: 1}}, "Steps.MaxRepeats"},
		{Config{Steps: StepRules{RepeatWindow: 1001}}, "Steps.RepeatWindow"},
	} {
		err := tc.cfg.Validate()
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, tc.field)
		assert.Equal(t, tc.field, ce.Field)
		assert.ErrorIs(t, err, ErrInvalidConfig)
	}
	for _, ok := range []Config{
		{Steps: StepRules{MaxRepeatedAction: 2, MaxRepeatedActionError: 1000, MaxMonologue: -1, CycleRepeats: 2, MaxCondensations: 1}},
		{Steps: StepRules{CycleRepeats: 200, RepeatWindow: 1000, MaxCondensations: -5}},
	} {
		assert.NoError(t, ok.Validate())
	}
}

func TestActionFingerprint(t *testing.T) {
	same := [][2]Action{
		{{Tool: "bash", Args: `{"command": "ls"}`}, {Tool: "bash", Args: `{"command":"ls"}`}},
		{{Tool: "bash", Args: "{\n\t\"command\" : \"ls\"\n}"}, {Tool: "bash", Args: `{"command":"ls"}`}},
		{{Tool: "bash", Args: "ls   -la"}, {Tool: "bash", Args: " ls -la "}},
		{{Message: "Let me  check."}, {Message: "Let me check."}},
		{{Message: "x", Args: "ignored"}, {Message: "x"}},
	}
	for _, p := range same {
		assert.Equal(t, p[0].Fingerprint(), p[1].Fingerprint(), "%v and %v", p[0], p[1])
	}
	different := [][2]Action{
		{{Tool: "bash", Args: `{"command":"ls a b"}`}, {Tool: "bash", Args: `{"command":"ls ab"}`}}, // spaces inside strings count
		{{Tool: "view", Args: `{"range":[1,50]}`}, {Tool: "view", Args: `{"range":[51,100]}`}},
		{{Tool: "bash", Args: "ls"}, {Tool: "sh", Args: "ls"}},
		{{Tool: "bash", Args: "ls"}, {Message: "ls"}},
		{{Tool: "read", Args: "/src/a/main.go"}, {Tool: "read", Args: "/src/b/main.go"}},
		{{Tool: "bash", Args: "LS"}, {Tool: "bash", Args: "ls"}},
	}
	for _, p := range different {
		assert.NotEqual(t, p[0].Fingerprint(), p[1].Fingerprint(), "%v and %v", p[0], p[1])
	}
	assert.Len(t, (&Action{Tool: "x"}).Fingerprint(), 8)
}

func TestActionTextIsCapped(t *testing.T) {
	long := &Action{Tool: "write", Args: strings.Repeat("é", 300)}
	text := actionText(long)
	assert.LessOrEqual(t, len(text), maxActionText+len("…"))
	assert.True(t, strings.HasSuffix(text, "…"))
	assert.Equal(t, "(message) hello world", actionText(&Action{Message: "hello\n\n  world"}))
	assert.Equal(t, "bash", actionText(&Action{Tool: "bash"}))
}

// FuzzActionFingerprint: any text is a tool's arguments or a message;
// nothing panics, the fingerprint is 8 hex digits, the evidence text is
// valid UTF-8 within its cap, and JSON spacing never changes the identity.
func FuzzActionFingerprint(f *testing.F) {
	for _, s := range []string{"", "{", `{"a": "b c"}`, `["x", 1, {"y": "\"q\" "}]`, "ls -la\n", "\xff\xfe", `{"a":"\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a := &Action{Tool: "t", Args: s}
		fp := a.Fingerprint()
		_, ok := parseFingerprint(fp)
		require.True(t, ok, fp)
		text := actionText(a)
		require.LessOrEqual(t, len(text), maxActionText+len("…"))
		require.True(t, strings.ToValidUTF8(text, "") == text, "valid UTF-8")
		m := &Action{Message: s}
		_, ok = parseFingerprint(m.Fingerprint())
		require.True(t, ok)
		if dec := json.NewDecoder(strings.NewReader(s)); strings.HasPrefix(s, "{") && len(s) < maxNormalizedInput {
			// The order of the keys is not identity either.
			dec.UseNumber()
			var obj map[string]any
			if dec.Decode(&obj) == nil && !dec.More() {
				sorted, err := json.Marshal(obj)
				require.NoError(t, err)
				require.Equal(t, fp, (&Action{Tool: "t", Args: string(sorted)}).Fingerprint(), "%q vs %q", s, sorted)
			}
		}
		if strings.HasPrefix(s, "{") && len(s) < maxNormalizedInput {
			// Spacing between tokens, outside strings, is not identity.
			spaced := strings.NewReplacer(`{`, `{ `, `}`, ` }`).Replace(s)
			if !strings.Contains(s, `"`) {
				require.Equal(t, fp, (&Action{Tool: "t", Args: spaced}).Fingerprint(), "%q vs %q", s, spaced)
			}
		}
	})
}

func ExampleAction() {
	cb, _ := New(DefaultConfig())
	ls := &Action{Tool: "bash", Args: `{"command": "ls /workspace/out"}`}
	for i := range 5 {
		if d := cb.Check(); !d.Allow {
			fmt.Printf("step %d refused: %s\n", i+1, d.Reason)
			fmt.Println("kind:", d.Reason.Kind)
			break
		}
		// The agent runs ls and gets nothing, again and again.
		cb.Record(Iteration{Action: ls, Observation: ""})
	}
	// Output:
	// step 5 refused: Same action with the same observation 4 times in a row (threshold: 4): bash {"command": "ls /workspace/out"}
	// kind: repeated_action_observation
}

func ExampleIteration_condensed() {
	cb, _ := New(DefaultConfig())
	for i := range 11 {
		if d := cb.Check(); !d.Allow {
			fmt.Printf("refused after %d condensations: %s\n", i, d.Reason)
			break
		}
		// The context overflowed; the host condensed it instead of taking
		// a step, and it still does not fit.
		cb.Record(Iteration{Condensed: true})
	}
	// Output:
	// refused after 10 condensations: Context condensed 10 times in a row with nothing between (threshold: 10)
}

// A restart keeps what the new step signals judge: the tool and the error
// of each step, and every step's text, so that one tool failing the same
// way goes on counting and a cycle's reason still names its steps.
func TestARestartKeepsTheToolErrorsAndTheCycle(t *testing.T) {
	cfg, _ := Preset("tool-steps")
	cb, clock := newTestBreaker(t, cfg)
	for i := range 4 {
		cb.Record(failedCall("run_query", fmt.Sprintf(`{"sql":"select %d"}`, i), "ERROR: relation \"users\" does not exist"))
		cb.Record(call("list_tables", fmt.Sprintf(`{"schema":"s%d"}`, i), "orders, items"))
	}
	require.Equal(t, Closed, cb.State())
	nb, _ := restart(t, cb, cfg, clock.Now())
	nb.Record(failedCall("run_query", `{"sql":"select 9"}`, "ERROR: relation \"users\" does not exist"))
	d := nb.Check()
	require.False(t, d.Allow)
	assert.Equal(t, ReasonSameToolError, d.Reason.Kind)
	assert.Equal(t, 5, d.Reason.Count)
	assert.Equal(t, `ERROR: relation "users" does not exist`, d.Reason.Sample)

	cb, clock = newTestBreaker(t, cfg)
	steps := []Iteration{call("read_file", `{"p":"a"}`, "A"), call("apply_patch", `{"p":"a"}`, "ok"), failedCall("go_test", "{}", "FAIL")}
	for i := range 8 {
		cb.Record(steps[i%3])
	}
	nb, _ = restart(t, cb, cfg, clock.Now())
	nb.Record(steps[2])
	d = nb.Check()
	require.False(t, d.Allow)
	assert.Equal(t, ReasonCycle, d.Reason.Kind)
	assert.Equal(t, `read_file {"p":"a"} → apply_patch {"p":"a"} → go_test {}`, d.Reason.Action)
}

// Arguments that differ only in the order of their JSON keys or in white
// space are one action; a value that differs is another.
func TestTheSameCallWrittenDifferentlyIsTheSameCall(t *testing.T) {
	same := []string{
		`{"path":"a.go","line":3}`,
		`{"line":3,"path":"a.go"}`,
		"{\n  \"line\": 3,\n  \"path\": \"a.go\"\n}",
		`{"path":"a\u002ego","line":3}`,
	}
	for _, args := range same {
		assert.Equal(t, (&Action{Tool: "view", Args: same[0]}).Fingerprint(), (&Action{Tool: "view", Args: args}).Fingerprint(), args)
	}
	for _, args := range []string{`{"path":"a.go","line":4}`, `{"path":"a.go","line":3.0}`, `{"path":"A.go","line":3}`, `{"path":"a.go","line":3,"x":null}`} {
		assert.NotEqual(t, (&Action{Tool: "view", Args: same[0]}).Fingerprint(), (&Action{Tool: "view", Args: args}).Fingerprint(), args)
	}
	assert.Equal(t, (&Action{Tool: "t", Args: `{"a": [1, {"c":2,"b":1}]}`}).Fingerprint(), (&Action{Tool: "t", Args: `{"a":[1,{"b":1,"c":2}]}`}).Fingerprint(), "nested objects too")
}

// FuzzStepStory: any story of tool steps, from a few tools, arguments
// and results, asked about with CheckAction and recorded: nothing panics,
// a refused call is never recorded, a circuit CheckAction opened stays
// open, and the state saves and restores.
func FuzzStepStory(f *testing.F) {
	f.Add([]byte{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2})
	f.Add([]byte{5, 5, 5, 5, 5, 5, 9, 9, 9, 9, 9})
	f.Add([]byte{0x81, 0x82, 0x81, 0x82, 0x81, 0x82, 0x81})
	f.Fuzz(func(t *testing.T, story []byte) {
		cfg, _ := Preset("tool-steps")
		cb, clock := newTestBreaker(t, cfg)
		for _, c := range story {
			a := Action{Tool: fmt.Sprintf("tool%d", c&3), Args: fmt.Sprintf(`{"n":%d}`, c>>2&3)}
			if c&0x40 != 0 {
				a = Action{Message: "thinking"}
			}
			before := cb.Stats().Iterations
			d := cb.CheckAction(a)
			if !d.Allow {
				require.Equal(t, before, cb.Stats().Iterations, "a refused call is not recorded")
				if d.Reason.Proposed {
					require.Equal(t, Open, cb.State())
				}
				clock.Advance(time.Minute)
				continue
			}
			it := Iteration{Action: &a, Observation: fmt.Sprintf("result %d", c>>4&1)}
			if c&0x80 != 0 {
				it.Err = errors.New("boom")
			}
			cb.Record(it)
		}
		snap := roundTrip(t, cb.Snapshot())
		require.NoError(t, snap.Validate())
		nb, _ := newTestBreaker(t, cfg)
		require.NoError(t, nb.Restore(snap))
	})
}
