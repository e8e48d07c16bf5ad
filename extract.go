package loopbreaker

import "github.com/loopbreaker/loopbreaker/internal/errtext"

// ExtractError returns the error in an agent's raw output (plain text,
// stream-JSON or both), or "" when it finds none, for RecordFailure,
// [Fingerprint] and people. An error in a JSON line (an "is_error" or
// "error" field) wins over a text block (a panic, a traceback, a test
// failure, a compiler message, "error:"), the last over earlier ones; a
// summary such as "exit status 2" counts only when nothing else does. The
// result is at most 4 KiB; the cost is linear in the output.
func ExtractError(output string) string { return errtext.ExtractError(output) }
