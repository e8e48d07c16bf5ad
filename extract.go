package loopbreaker

import "github.com/loopbreaker/loopbreaker/internal/errtext"

// ExtractError finds the error in an agent's raw output (a whole iteration's
// stdout and stderr, plain text or stream-JSON or both) and returns it, or ""
// when there is none. It does not decide whether the iteration failed; it
// finds the text that says how. The result is meant for
// RecordFailure / Fingerprint and for people.
//
// Stage 1, structured. A line that is a JSON object (as agent CLIs print
// stream-JSON events) is read as data, never matched as text. An object
// signals an error when:
//   - it has "is_error": true. An explicit "is_error" decides: with
//     "is_error": false the object is not an error, whatever else it says;
//   - or its "type" is "error", or its "subtype" starts with "error";
//   - or its "error" is a non-empty string or a non-empty object;
//   - or its "level" or "severity" is error, fatal, critical or panic.
//
// A field whose text merely contains the word "error" signals nothing. The
// message of an error object is the first non-empty of: "error" (a string,
// or its object's "message", "msg", "detail" or "type"), "result",
// "content" (a string, or the "text" of its blocks, one per line),
// "message", "msg", "text", "detail". Failing those it is the "subtype" or,
// with none, the JSON line itself, and the error is weak: it says that
// something failed, not what. Signalling objects are searched at any depth
// (a tool result inside a message), in document order (object keys
// sorted), but not inside another signalling object. When stage 2 finds an
// error block inside a message, the result is that block, so a failing
// tool's output wrapped in stream-JSON gives the same error as the tool's
// own plain text; otherwise it is the whole message. Only JSON lines that hold
// "error" in some ASCII case are decoded, since no other line can signal one
// (short of spelling the field with \u escapes, which is not looked for). A
// pretty-printed, multi-line JSON document is plain text.
//
// Stage 2, plain text, reads the lines that are not JSON objects (a JSON
// line ends any block). An error block starts at a line that begins (after indentation and ANSI colour) with
// one of:
//   - "panic: " or "fatal error: " (a Go panic; the block takes the
//     goroutine traces that follow);
//   - "Traceback (most recent call last):" (the block ends with the
//     exception line, such as "KeyError: 'a'");
//   - "Exception in thread " (Java; with its frames and "Caused by:");
//   - "thread '…' panicked at" (Rust; with the message line after it);
//   - "--- FAIL", "FAIL ", "FAIL:", "FAILED " (test failures; with the
//     lines indented below). With go test -v a test's output comes before
//     its "--- FAIL" line, so the block then starts at its "=== RUN";
//   - a compiler location, not indented: "file.go:12:3: msg",
//     "main.c:4:10: error: msg", "Main.java:5: error: msg",
//     "a.ts(3,5): error TS2304: msg", "a.ts:3:5 - error TS2304: msg",
//     "vet: ./x.go:1:2: msg"; consecutive error and note location lines
//     are one block (a build's report), a warning ends it, and a location
//     whose message is a warning, note, info, hint or help starts nothing;
//   - a severity word followed by a colon or a bracket: "error:",
//     "error[E0425]:", "Error:", "ERROR:", "fatal:", "[ERROR]", "npm ERR!",
//     "error TS2304", "gcc: error:", an upper-case ERROR or FATAL after a
//     timestamp, "level=error";
//   - an exception name with a colon: "TypeError: …",
//     "java.lang.IllegalStateException: …";
//   - "CONFLICT (" (git), "curl: (7) …", and a line ending in
//     ": command not found", ": No such file or directory" or
//     ": Permission denied".
//
// A block goes on over the lines indented deeper than its first line, stack
// frames, rustc's " --> " and "|" context, "Caused by:", Node's
// "Require stack:". A blank line ends it, except inside a Python traceback,
// before a Go panic's next "goroutine N [...]:", before "Caused by:", and in
// a test failure before a line indented deeper. A word is not a start: "0 errors", "no errors
// found", "error handling refactored" and "Errors: 0" start nothing, since
// the severity word must open the line and be followed by a colon or a
// bracket (or be an upper-case log level).
//
// Summary lines are weak: "exit status 2", "Exit code 1", "FAIL" alone,
// "FAIL\tpkg\t0.01s", "error: aborting due to 1 previous error", "1 error",
// "make: *** […] Error 1". They count only when there is no other block,
// since they restate an error printed above them.
//
// Which error, when there are several: the last strong structured error;
// else the last strong plain-text block; else the last weak structured
// error; else the last weak plain-text line; else "". Structured first,
// since the agent CLI's own verdict on a tool call is more reliable than
// any reading of text. The last, because an agent's last error is the one
// it was left with; the earlier ones it has usually seen and worked past.
// A plain-text result is the input's own lines, from the start of the
// block's first line, with surrounding white space trimmed (ANSI colour is
// kept); any result is at most 4 KiB long.
//
// ExtractError reads its input once, line by line, with no regular
// expressions, so its cost is linear in the input. JSON lines are read
// without decoding; only those that may signal an error are decoded with
// encoding/json, the last first, until a strong error is found, so its
// allocations do not grow with the input. Any input is accepted; invalid
// UTF-8 is passed through, but a result cut to the bound never splits a
// UTF-8 sequence, so valid input gives a valid result.
func ExtractError(output string) string { return errtext.ExtractError(output) }
