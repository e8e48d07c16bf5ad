package loopbreaker

import "github.com/loopbreaker/loopbreaker/internal/errtext"

// ExtractError returns the error in an agent's raw output (plain text,
// stream-JSON or both), or "" when it finds none, for RecordFailure,
// [Fingerprint] and people. Errors in JSON lines (an "is_error" or "error"
// field) win over text blocks (a panic, a traceback, a test failure, a
// compiler message, "error:"), the last over earlier ones, and summary
// lines such as "exit status 2" count only alone. The result is at most
// 4 KiB; the cost is linear in the output.
func ExtractError(output string) string { return errtext.ExtractError(output) }
