package loopbreaker

import (
	"errors"
	"fmt"
	"time"
)

// [ErrOpen] is matched (errors.Is) by the error of a Decision refused
// because the circuit is open, or its one probe is in flight.
var ErrOpen = errors.New("loopbreaker: circuit open")

// [ErrGaveUp] is matched (errors.Is) by the error of a Decision refused
// because the breaker gave up on the loop: the circuit opened
// [Config.MaxConsecutiveOpens] times in a row without recovering. It
// matches [ErrOpen] too. No waiting ends it: a person
// looks at the loop, then calls Resume, Skip or Reset.
var ErrGaveUp = errors.New("loopbreaker: gave up on the loop")

// [ErrCallBudget] is matched (errors.Is) by the error of a Decision refused
// because the call budget of the rolling hour is spent. The circuit is not
// open: the loop may go on after [Decision.RetryAfter].
var ErrCallBudget = errors.New("loopbreaker: call budget exhausted")

// [ErrUnavailable] is matched (errors.Is) by the error of a Decision refused
// because the state a shared breaker decides on is out of reach and it was
// told to refuse rather than decide alone (reason kind [ReasonUnavailable];
// a fleet worker's FailClosed, module redisstore). The circuit is not open:
// ask again after [Decision.RetryAfter].
var ErrUnavailable = errors.New("loopbreaker: shared breaker unavailable")

// [ErrComplete] is matched (errors.Is) by the error of a Decision refused
// because the loop is complete. It is not a failure.
var ErrComplete = errors.New("loopbreaker: loop complete")

// [ErrProviderLimit] is matched (errors.Is) by the error of a Decision
// refused because the model provider refused for now: a usage limit, a
// rate limit, an overloaded server. The circuit is not open, and it is no
// failure: the loop may go on after [Decision.RetryAfter], when the limit
// lifts.
var ErrProviderLimit = errors.New("loopbreaker: provider limit")

// [ErrProviderStopped] is matched (errors.Is) by the error of a Decision
// refused because the model provider refused for good: no credit, a quota
// or billing cap, usage disabled by an admin. No waiting ends it: a person
// has to act, and then Resume, Skip or Reset.
var ErrProviderStopped = errors.New("loopbreaker: provider stopped the loop")

// [ErrSpendCap] is matched (errors.Is) by the error of a Decision refused
// because a spend cap is reached: over the loop's life ([SpendRules.MaxTokens],
// [SpendRules.MaxCostUSD]), which no waiting ends, or in the last hour, which
// ends after [Decision.RetryAfter].
var ErrSpendCap = errors.New("loopbreaker: spend cap reached")

// RefusedError is the error of a refused Decision ([Decision.Err]): why
// Check refused, and when asking again may help. It matches the sentinel
// of its reason: [ErrOpen] for an open circuit or a probe in flight (and
// [ErrGaveUp] when the breaker gave up); [ErrProviderLimit] or
// [ErrProviderStopped] for a provider limit; [ErrSpendCap], [ErrCallBudget]
// or [ErrUnavailable]; [ErrComplete] for a complete loop. Only ErrOpen is a
// failure of the loop.
type RefusedError struct {
	// State is the circuit's state: Open, or HalfOpen when the probe was
	// already in flight.
	State State
	// Reason is why Check refused.
	Reason Reason
	// RetryAfter is the time until asking again may help; zero for a
	// refusal no waiting ends.
	RetryAfter time.Duration
}

func (e *RefusedError) Error() string {
	k := e.Reason.Kind
	switch {
	case k == ReasonCallBudget:
		return fmt.Sprintf("loopbreaker: %s; next call in %s", e.Reason, e.RetryAfter)
	case k == ReasonUnavailable:
		return fmt.Sprintf("loopbreaker: %s; trying again in %s", e.Reason, e.RetryAfter)
	case k.Class() == ClassLimit || k.Class() == ClassComplete:
		if e.RetryAfter > 0 {
			return fmt.Sprintf("loopbreaker: %s; retry in %s", e.Reason, e.RetryAfter)
		}
		return fmt.Sprintf("loopbreaker: %s", e.Reason)
	case e.State == HalfOpen:
		return fmt.Sprintf("loopbreaker: circuit half-open, probe in flight: %s", e.Reason)
	}
	return fmt.Sprintf("loopbreaker: circuit open: %s", e.Reason)
}

// Is makes a RefusedError match the sentinel of its reason (see
// RefusedError).
func (e *RefusedError) Is(target error) bool {
	switch k := e.Reason.Kind; {
	case k == ReasonCallBudget:
		return target == ErrCallBudget
	case k == ReasonProviderLimit:
		return target == ErrProviderLimit
	case k == ReasonProviderStopped:
		return target == ErrProviderStopped
	case k == ReasonSpendCap || k == ReasonHourlySpendCap:
		return target == ErrSpendCap
	case k == ReasonUnavailable:
		return target == ErrUnavailable
	case k.Class() == ClassComplete:
		return target == ErrComplete
	case k == ReasonGaveUp:
		return target == ErrOpen || target == ErrGaveUp
	}
	return target == ErrOpen
}

// [ErrCorruptState] is matched (errors.Is) by every error that says a saved
// state cannot be used: it is not JSON, is cut short, has the wrong types,
// an unknown schema version or name, negative counts, or counts that
// contradict each other. The error is a *StateError.
var ErrCorruptState = errors.New("loopbreaker: corrupt state")

// [ErrNewerState] is matched (errors.Is) by the error that says a saved
// state was written by a newer loopbreaker, whose snapshot version this
// build does not read. The state is not corrupt: keep it, and read it with
// the newer build. The error is a *StateError.
var ErrNewerState = errors.New("loopbreaker: state written by a newer loopbreaker")

// StateError says why a saved state cannot be used, and where it is. With
// Newer set it matches [ErrNewerState] (never [ErrCorruptState]): the
// state was written by a newer loopbreaker. Otherwise it matches
// [ErrCorruptState] and unwraps to Err (e.g. a *json.SyntaxError).
type StateError struct {
	// Path is the file the state was read from; empty when it did not come
	// from a file ([ParseSnapshot], Restore).
	Path string
	// Newer is the state's snapshot version when it is newer than
	// [SnapshotVersion]; zero otherwise.
	Newer int
	// Err is what is wrong; nil when Newer is set.
	Err error
}

func (e *StateError) Error() string {
	where := ""
	if e.Path != "" {
		where = " in " + e.Path
	}
	if e.Newer > 0 {
		return fmt.Sprintf("loopbreaker: the state%s was written by a newer loopbreaker (version %d; this build reads version %d): run the newer build, or keep the file until you do",
			where, e.Newer, SnapshotVersion)
	}
	return fmt.Sprintf("loopbreaker: corrupt state%s: %v", where, e.Err)
}

// Is makes a StateError match [ErrNewerState] or [ErrCorruptState] (see
// StateError).
func (e *StateError) Is(target error) bool {
	if e.Newer > 0 {
		return target == ErrNewerState
	}
	return target == ErrCorruptState
}

// Unwrap returns the cause.
func (e *StateError) Unwrap() error { return e.Err }

// [ErrNoState] is matched (errors.Is) by the error a Store returns from Load
// when nothing was saved for the loop: not corruption, but a loop that
// starts fresh.
var ErrNoState = errors.New("loopbreaker: no saved state")

// [ErrInvalidLoopName] is matched (errors.Is) by the error a FileStore
// returns for a loop name it cannot make a file name of.
var ErrInvalidLoopName = errors.New("loopbreaker: invalid loop name")

// [ErrNotCorrupt] is matched (errors.Is) by the error [FileStore.MoveAside]
// returns for a state file that holds a valid snapshot: only a corrupt one
// is moved aside.
var ErrNotCorrupt = errors.New("loopbreaker: state is not corrupt")
