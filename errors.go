package loopbreaker

import (
	"errors"
	"fmt"
	"time"
)

// ErrOpen matches (errors.Is) a refusal because the circuit is open or its
// probe is in flight.
var ErrOpen = errors.New("loopbreaker: circuit open")

// ErrGaveUp matches a refusal because the breaker gave up after
// [Config.MaxConsecutiveOpens] openings in a row; it matches [ErrOpen] too.
// Only Resume, Skip or Reset end it.
var ErrGaveUp = errors.New("loopbreaker: gave up on the loop")

// ErrCallBudget matches a refusal because the rolling hour's call budget is
// spent; the circuit is not open.
var ErrCallBudget = errors.New("loopbreaker: call budget exhausted")

// ErrUnavailable matches a refusal because a shared breaker's state is out
// of reach and it was told to refuse ([ReasonUnavailable]); the circuit is
// not open.
var ErrUnavailable = errors.New("loopbreaker: shared breaker unavailable")

// ErrComplete matches a refusal because the loop is complete: no failure.
var ErrComplete = errors.New("loopbreaker: loop complete")

// ErrProviderLimit matches a refusal because the model provider refused
// for now; the circuit is not open, and it is no failure.
var ErrProviderLimit = errors.New("loopbreaker: provider limit")

// ErrProviderStopped matches a refusal because the model provider refused
// for good; only Resume, Skip or Reset end it.
var ErrProviderStopped = errors.New("loopbreaker: provider stopped the loop")

// ErrSpendCap matches a refusal because a spend cap is reached: the
// lifetime caps no waiting ends, the hourly ones end after
// [Decision.RetryAfter].
var ErrSpendCap = errors.New("loopbreaker: spend cap reached")

// RefusedError is the error of a refused Decision ([Decision.Err]). It
// matches the sentinel of its reason's kind: [ErrOpen] for a stop (and
// [ErrGaveUp]), [ErrComplete], or the limit's own.
type RefusedError struct {
	// State is the circuit's state.
	State State
	// Reason is why Check refused.
	Reason Reason
	// RetryAfter is when asking again may help; zero: waiting cannot.
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

// Is reports whether target is the sentinel of e's reason: the kind's
// own, and [ErrOpen] for a stop, [ErrComplete] for a completion.
func (e *RefusedError) Is(target error) bool {
	k := e.Reason.Kind
	if int(k) >= len(rules) {
		return target == ErrOpen
	}
	r := &rules[k]
	switch {
	case r.sentinel != nil && target == r.sentinel:
		return true
	case r.class == ClassComplete:
		return target == ErrComplete
	case r.class == ClassLimit:
		return false
	}
	return target == ErrOpen
}

// ErrCorruptState matches every error that says a saved state cannot be
// used (a [*StateError]).
var ErrCorruptState = errors.New("loopbreaker: corrupt state")

// ErrNewerState matches the error that says a saved state was written by a
// newer loopbreaker (a [*StateError]): not corrupt; keep it.
var ErrNewerState = errors.New("loopbreaker: state written by a newer loopbreaker")

// StateError says why a saved state cannot be used, and where it is. With
// Newer set it matches [ErrNewerState]; otherwise [ErrCorruptState], and it
// unwraps to Err.
type StateError struct {
	// Path is the state's file; empty when it came from no file.
	Path string
	// Newer is the state's version when it is newer than [SnapshotVersion].
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

// Is reports whether target is the sentinel e matches.
func (e *StateError) Is(target error) bool {
	if e.Newer > 0 {
		return target == ErrNewerState
	}
	return target == ErrCorruptState
}

// Unwrap returns the cause.
func (e *StateError) Unwrap() error { return e.Err }

// ErrNoState matches the error of a Store's Load when nothing was saved:
// the loop starts fresh.
var ErrNoState = errors.New("loopbreaker: no saved state")

// ErrInvalidLoopName matches a FileStore's error for a loop name it cannot
// make a file name of.
var ErrInvalidLoopName = errors.New("loopbreaker: invalid loop name")

// ErrNotCorrupt matches [FileStore.MoveAside]'s error for a valid state
// file, which is not moved.
var ErrNotCorrupt = errors.New("loopbreaker: state is not corrupt")
