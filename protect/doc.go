// Package protect keeps a loop's plan, configuration and memory from its
// agent. superkit's circuit-breaker design makes that a hard gate: during
// autonomous operation the protected files are checked after every
// iteration, a missing one halts the loop at once and is restored, and a
// destructive command that would touch one is refused before it runs.
//
// A [Guard] does both for a directory tree:
//
//	guard, err := protect.New("/work/myproject", protect.Config{}) // the default paths
//	if err != nil {
//		return err
//	}
//	if err := guard.Refresh(); err != nil { // writes the copies; says what it could not read
//		log.Print(err)
//	}
//	cb, err := loopbreaker.New(loopbreaker.Config{Guard: guard})
//
// With the Guard in the breaker's config (it is a [loopbreaker.Guard]),
// a protected file deleted or emptied in an iteration is put back, from
// the Guard's copy or from git, and the circuit is held open until a
// person resumes. A host that does not use the breaker calls
// [Guard.Verify], [Guard.Restore] and [Guard.Refresh] itself.
//
// [Guard.CheckCommand] reads a shell command line as bash would (with
// mvdan.cc/sh's parser, running nothing) and refuses one that would
// delete, truncate, move or overwrite a protected path: rm -rf specs, git
// clean -fdx over an ignored state directory, git checkout . over a plan
// with changes, > CLAUDE.md, and the same through sudo, xargs, bash -c,
// $(...) and the like. Where it cannot tell (rm -rf "$OUT"), it refuses
// and says why.
package protect
