package loopbreaker

import "github.com/loopbreaker/loopbreaker/internal/errtext"

// ExtractError returns the error in an agent's raw output (a whole
// iteration's stdout and stderr, plain text, stream-JSON or both), or ""
// when it finds none; the result is meant for [CircuitBreaker.RecordFailure],
// [Fingerprint] and people. A JSON line is read as data: an object with
// "is_error": true, an "error" field, an error type or level is an error.
// Other lines are read as text: a Go panic, a traceback, a test failure, a
// compiler location, "error:" and the like start a block. Of several, the
// last structured error wins, then the last text block; summary lines such
// as "exit status 2" count only when nothing else does. The result is at
// most 4 KiB; any input is accepted, and the cost is linear in its length.
func ExtractError(output string) string { return errtext.ExtractError(output) }
