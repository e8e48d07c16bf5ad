package loopbreaker

import (
	"errors"
	"fmt"
	"time"
)

// ErrOpen is matched (errors.Is) by the error of every refused Decision.
var ErrOpen = errors.New("loopbreaker: circuit open")

// OpenError is the error of a refused Decision (Decision.Err). It matches
// ErrOpen and carries why the circuit opened.
type OpenError struct {
	// State is Open, or HalfOpen when the probe was already in flight.
	State State
	// Reason is why the circuit opened.
	Reason Reason
	// RetryAfter is the time left until a probe may run, when known.
	RetryAfter time.Duration
}

func (e *OpenError) Error() string {
	if e.State == HalfOpen {
		return fmt.Sprintf("loopbreaker: circuit half-open, probe in flight: %s", e.Reason)
	}
	return fmt.Sprintf("loopbreaker: circuit open: %s", e.Reason)
}

// Is makes every OpenError match ErrOpen.
func (e *OpenError) Is(target error) bool { return target == ErrOpen }

// ErrCallBudget is matched (errors.Is) by the error of a Decision refused
// because the call budget of the rolling hour is spent. The circuit is not
// open: the loop may go on after Decision.RetryAfter.
var ErrCallBudget = errors.New("loopbreaker: call budget exhausted")

// ErrComplete is matched (errors.Is) by the error of a Decision refused
// because the loop is complete. It is not a failure.
var ErrComplete = errors.New("loopbreaker: loop complete")

// StopError is the error of a Decision refused for a reason other than an
// open circuit: the call budget is spent (it matches ErrCallBudget) or the
// loop is complete (it matches ErrComplete).
type StopError struct {
	// Reason is the budget or completion reason.
	Reason Reason
	// RetryAfter is, for a spent budget, the time until a call leaves the
	// rolling hour; zero for a complete loop.
	RetryAfter time.Duration
}

func (e *StopError) Error() string {
	if e.Reason.Kind == ReasonCallBudget {
		return fmt.Sprintf("loopbreaker: %s; next call in %s", e.Reason, e.RetryAfter)
	}
	return fmt.Sprintf("loopbreaker: %s", e.Reason)
}

// Is makes a StopError match ErrCallBudget or ErrComplete, by its reason.
func (e *StopError) Is(target error) bool {
	if e.Reason.Kind == ReasonCallBudget {
		return target == ErrCallBudget
	}
	return target == ErrComplete
}
