package loopbreaker_test

import (
	"errors"
	"fmt"

	"github.com/loopbreaker/loopbreaker"
)

// A tool-calling host asks before each call runs. The model reads the
// same file between two failing test runs, round after round; the call
// that would close the third round is refused before it runs, and the
// model reads why in place of the tool's result.
func ExampleCircuitBreaker_CheckAction() {
	cfg, _ := loopbreaker.Preset("tool-steps")
	cb, _ := loopbreaker.New(cfg)
	read := loopbreaker.Action{Tool: "read_file", Args: `{"path":"parse.go"}`}
	test := loopbreaker.Action{Tool: "run_tests", Args: `{}`}
	for step := 1; ; step++ {
		action := read
		if step%2 == 0 {
			action = test
		}
		d := cb.CheckAction(action)
		if !d.Allow {
			fmt.Printf("step %d refused: %s\n", step, d.Reason)
			break
		}
		it := loopbreaker.Iteration{Action: &action, Observation: "package parse"}
		if action == test {
			it.Err = errors.New("--- FAIL: TestParse")
		}
		cb.Record(it)
	}
	// Output:
	// step 6 refused: Cycle: the same 2 steps with the same observations, 3 times over the last 6 steps; its last call was refused before it ran (actions: c0ecb70c/ef2e7c4a): read_file {"path":"parse.go"} → run_tests {}
}

// One step short of a stop, Check says so, and the model is warned.
func ExampleDecision_ForModel() {
	cfg, _ := loopbreaker.Preset("tool-steps")
	cb, _ := loopbreaker.New(cfg)
	edit := loopbreaker.Action{Tool: "edit_file", Args: `{"old":"x := 1"}`}
	for range 2 {
		cb.Record(loopbreaker.Iteration{Action: &edit, Err: errors.New("old text not found")})
	}
	fmt.Println(cb.Check().ForModel())
	// Output:
	// loopbreaker warning: this call has failed 2 times in a row (edit_file {"old":"x := 1"}); if it fails once more, your tool calls are stopped. Try something different.
}
