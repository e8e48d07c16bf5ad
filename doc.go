// Package loopbreaker stops AI-agent loops that are stuck.
//
// A host runs an agent in a loop. Before each iteration it asks the breaker
// whether it may go on ([CircuitBreaker.Check], or [CircuitBreaker.Wait],
// which sleeps out a refusal that time ends), and after it tells the breaker
// what happened ([CircuitBreaker.Record]). When a signal fires (failures in a
// row, the same error again, no progress, a repeated tool call, ...) the
// circuit opens with a [Reason], waits out [Config.Cooldown], then lets one
// probe iteration through. After [Config.MaxConsecutiveOpens] openings in a
// row it gives up ([ErrGaveUp]), so this loop ends by itself:
//
//	cb, err := loopbreaker.New(loopbreaker.DefaultConfig())
//	if err != nil {
//		return err
//	}
//	for {
//		if _, err := cb.Wait(ctx); err != nil {
//			return err // gave up, done, stopped, or ctx ended
//		}
//		err := agent.Step(ctx)
//		cb.Record(loopbreaker.Iteration{Err: err})
//	}
//
// [Config] holds the thresholds, grouped by signal family, and [Preset]
// gives ready ones. Provider limits, spend caps and the call budget refuse
// without opening the circuit ([ErrProviderLimit], [ErrSpendCap],
// [ErrCallBudget]); [Decision.WaitHelps] says whether waiting can end a
// refusal. [CircuitBreaker.Snapshot] and a [Store] such as [FileStore] keep
// the state across restarts; [CircuitBreaker.Resume], [CircuitBreaker.Skip]
// and [CircuitBreaker.Abort] are GSD's exit.sh pause menu. With
// [Config.Guard] set (package protect has one) the breaker holds the circuit
// open when the agent deletes the loop's own files.
// Tests set Config.Now and Config.Sleep to a loopbreakertest.Clock, and
// run hours of cooldowns in no time.
//
// # Guides
//
// The guides in the repository's docs/ folder explain each part with
// examples: signals.md (every signal, its threshold and evidence),
// fingerprints.md (what makes two errors the same, [ExtractError]),
// provider-limits.md (limits, spend caps, prices), tool-steps.md (tool-calling
// agents), persistence.md (snapshots, stores, manual controls),
// protected-files.md and performance.md.
package loopbreaker
