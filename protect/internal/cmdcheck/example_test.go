package cmdcheck_test

import (
	"fmt"

	"github.com/loopbreaker/loopbreaker/protect/internal/cmdcheck"
)

func ExampleChecker_Check() {
	g, err := cmdcheck.New([]string{"/repo/specs/", "/repo/AGENTS.md"}, cmdcheck.Options{})
	if err != nil {
		panic(err)
	}
	for _, cmd := range []string{
		"cd build && rm -rf *",
		"cd build; rm -rf *",
		`rm -rf "$OUT"`,
	} {
		if r := g.Check(cmd, "/repo"); r != nil {
			fmt.Printf("refused %q: %s\n", r.Command, r.Why)
		} else {
			fmt.Printf("allowed %q\n", cmd)
		}
	}
	// Output:
	// allowed "cd build && rm -rf *"
	// refused "rm -rf *": rm -rf may remove /repo/*, which matches protected /repo/specs
	// refused "rm -rf \"$OUT\"": cannot tell what $OUT holds, so cannot tell what rm -rf would remove
}
