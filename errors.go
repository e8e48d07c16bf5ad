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
