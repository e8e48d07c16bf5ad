package protect_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/protect"
)

// A Guard in the breaker: the agent deletes the plan, the breaker holds
// the circuit open at once and the plan is back. Only a person's Resume
// ends the hold.
func ExampleGuard() {
	project, _ := os.MkdirTemp("", "project")
	defer os.RemoveAll(project)
	plan := filepath.Join(project, "IMPLEMENTATION_PLAN.md")
	os.WriteFile(plan, []byte("- [x] parser\n- [ ] printer\n"), 0o644)

	guard, err := protect.New(project, protect.Config{}) // the default paths
	if err != nil {
		panic(err)
	}
	cb, _ := loopbreaker.New(loopbreaker.Config{Guard: guard})

	os.WriteFile(plan, []byte("- [x] parser\n- [x] printer\n"), 0o644) // the agent updates its plan
	cb.Record(loopbreaker.Iteration{})
	fmt.Println(cb.State())

	os.Remove(plan) // the agent "cleans up"
	cb.Record(loopbreaker.Iteration{})
	fmt.Println(cb.State(), cb.TripReason())
	data, _ := os.ReadFile(plan)
	fmt.Printf("%s", data)
	// Output:
	// CLOSED
	// OPEN Protected files lost: IMPLEMENTATION_PLAN.md deleted, restored from its copy
	// - [x] parser
	// - [x] printer
}

// CheckCommand before a tool call runs: a refusal goes back to the agent
// instead of the command running (a host would count it in
// Progress.PermissionDenials, as any refused tool call).
func ExampleGuard_CheckCommand() {
	project, _ := os.MkdirTemp("", "project")
	defer os.RemoveAll(project)
	guard, err := protect.New(project, protect.Config{Protected: []string{"specs/", "AGENTS.md"}})
	if err != nil {
		panic(err)
	}
	for _, cmd := range []string{
		"cd build && rm -rf *",
		"cd build; rm -rf *",
		"mv AGENTS.md docs/",
		`rm -rf "$OUT"`,
	} {
		if err := guard.CheckCommand(cmd, ""); err != nil {
			var refusal *protect.RefusalError
			if errors.As(err, &refusal) {
				fmt.Printf("refused %q (%s): %v\n", refusal.Command, refusal.Path, errors.Is(err, protect.ErrProtected))
			}
			continue
		}
		fmt.Printf("allowed %q\n", cmd)
	}
	// Output:
	// allowed "cd build && rm -rf *"
	// refused "rm -rf *" (specs): true
	// refused "mv AGENTS.md docs/" (AGENTS.md): true
	// refused "rm -rf \"$OUT\"" (): true
}
