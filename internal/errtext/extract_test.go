package errtext

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type extractCase struct {
	name, in, want string
}

func runExtractCases(t *testing.T, cases []extractCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ExtractError(tc.in))
		})
	}
}

// Stage 1: JSON lines are data. Which fields signal an error, and which
// one carries its message.
func TestExtractErrorStructured(t *testing.T) {
	runExtractCases(t, []extractCase{
		{
			name: "result with is_error true",
			in:   `{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529 overloaded"}`,
			want: "API Error: 529 overloaded",
		},
		{
			name: "is_error false is not an error, whatever its text says",
			in:   `{"type":"result","subtype":"success","is_error":false,"result":"Refactored the error handling; 0 errors remain."}`,
			want: "",
		},
		{
			name: "an explicit is_error false decides over other fields",
			in:   `{"type":"error","is_error":false,"error":"stale"}`,
			want: "",
		},
		{
			name: "type error with an error object: its message",
			in:   `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			want: "Overloaded",
		},
		{
			name: "error object without a message: its type",
			in:   `{"type":"error","error":{"type":"rate_limit_error"}}`,
			want: "rate_limit_error",
		},
		{
			name: "error as a string",
			in:   `{"event":"turn","error":"context window exceeded"}`,
			want: "context window exceeded",
		},
		{
			name: "empty or null error fields signal nothing",
			in:   "{\"error\":null,\"text\":\"a\"}\n{\"error\":\"\",\"text\":\"b\"}\n{\"error\":{},\"text\":\"c\"}\n{\"error\":false}",
			want: "",
		},
		{
			name: "a tool result nested in a message, content a string",
			in:   `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"fatal: not a git repository (or any of the parent directories): .git"}]}}`,
			want: "fatal: not a git repository (or any of the parent directories): .git",
		},
		{
			name: "a tool result whose content is text blocks",
			in:   `{"type":"user","message":{"content":[{"type":"tool_result","is_error":true,"content":[{"type":"text","text":"Exit code 2"},{"type":"text","text":"./main.go:3:5: undefined: x"}]}]}}`,
			want: "./main.go:3:5: undefined: x",
		},
		{
			name: "the error block inside a message wins over the message",
			in:   `{"type":"user","message":{"content":[{"type":"tool_result","is_error":true,"content":"Exit code 1\n$ go build ./...\n# example.com/app\n./main.go:3:5: undefined: x\n./main.go:4:5: undefined: y\n"}]}}`,
			want: "./main.go:3:5: undefined: x\n./main.go:4:5: undefined: y",
		},
		{
			name: "a message with only a summary line is kept whole",
			in:   `{"type":"tool_result","is_error":true,"content":"Exit code 1\nno output"}`,
			want: "Exit code 1\nno output",
		},
		{
			name: "an error subtype without a message: the subtype",
			in:   `{"type":"result","subtype":"error_during_execution","duration_ms":1200}`,
			want: "error_during_execution",
		},
		{
			name: "a signalling object without any message: the line",
			in:   `{"type":"result","is_error":true,"duration_ms":1200}`,
			want: `{"type":"result","is_error":true,"duration_ms":1200}`,
		},
		{
			name: "a structured log line",
			in:   `{"level":"ERROR","msg":"database unreachable","attempt":3}`,
			want: "database unreachable",
		},
		{
			name: "a log line at info level that mentions errors",
			in:   `{"level":"info","msg":"retrying after error","errors":2}`,
			want: "",
		},
		{
			name: "fields that merely mention error signal nothing",
			in: `{"type":"assistant","message":{"content":[{"type":"text","text":"Error: I will now look at the error handling."},{"type":"tool_use","name":"Bash","input":{"command":"grep -rn 'error:' ."}}]}}
{"type":"user","message":{"content":[{"type":"tool_result","is_error":false,"content":"main.go:12: return fmt.Errorf(\"error: %w\", err)"}]}}`,
			want: "",
		},
		{
			name: "the last error object wins",
			in: `{"type":"user","message":{"content":[{"type":"tool_result","is_error":true,"content":"first failure"}]}}
{"type":"user","message":{"content":[{"type":"tool_result","is_error":true,"content":"second failure"}]}}
{"type":"result","is_error":false,"result":"done"}`,
			want: "second failure",
		},
		{
			name: "within one line, array order",
			in:   `{"content":[{"is_error":true,"content":"one"},{"is_error":false,"content":"two"},{"is_error":true,"content":"three"}]}`,
			want: "three",
		},
		{
			name: "a structured error wins over plain text",
			in:   "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: 'a'\n" + `{"type":"result","is_error":true,"result":"max turns reached"}`,
			want: "max turns reached",
		},
		{
			name: "plain text still counts when no JSON line signals an error",
			in:   `{"type":"system","subtype":"init","tools":["Bash"]}` + "\nfatal: unable to access 'https://example.invalid/': Could not resolve host\n" + `{"type":"result","is_error":false,"result":"ok"}`,
			want: "fatal: unable to access 'https://example.invalid/': Could not resolve host",
		},
		{
			name: "a strong structured error beats a later weak one",
			in:   `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` + "\n" + `{"type":"result","subtype":"error_during_execution","is_error":true}`,
			want: "Overloaded",
		},
		{
			name: "a plain-text block beats a weak structured error",
			in:   "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: 'a'\n" + `{"type":"result","subtype":"error_max_turns","is_error":true}`,
			want: "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: 'a'",
		},
		{
			name: "a weak structured error beats a weak plain-text line",
			in:   "exit status 1\n" + `{"type":"result","subtype":"error_max_turns","is_error":true}`,
			want: "error_max_turns",
		},
		{
			name: "a broken JSON line is plain text and starts nothing",
			in:   `{"type":"result","is_error":true,"result":"trunc`,
			want: "",
		},
		{
			name: "a JSON array line is not an event",
			in:   `[{"is_error":true,"content":"x"}]`,
			want: "",
		},
		{
			name: "a key and a value written with escapes",
			in:   `{"\u0074ype":"\u0065rror","message":"an error from an encoder that escapes"}`,
			want: "an error from an encoder that escapes",
		},
		{
			name: "an error key written with escapes",
			in:   `{"type":"other","\u0065rror":"an escaped error key"}`,
			want: "an escaped error key",
		},
		{
			name: "blanks around the colon",
			in:   `{"is_error"` + " \t: \t" + `true, "result":"a spaced error"}`,
			want: "a spaced error",
		},
		{
			name: "the last strong error, before weak errors, mentions and broken lines",
			in: `{"type":"result","is_error":true,"result":"the strong one"}` + "\n" +
				`{"type":"result","subtype":"error_max_turns","is_error":true}` + "\r\n" +
				`{"type":"user","message":{"content":[{"type":"tool_result","is_error":false,"content":"no error here"}]}}` + "\n" +
				`{"type":"result","is_error":true,"result":"trunc}` + "\n",
			want: "the strong one",
		},
		{
			name: "of weak structured errors only, the last",
			in:   `{"type":"result","subtype":"error_during_execution","is_error":true}` + "\n" + `{"type":"result","subtype":"error_max_turns","is_error":true}` + "\n" + `{"type":"system","subtype":"init"}`,
			want: "error_max_turns",
		},
		{
			name: "JSON lines indented, coloured and ended by CRLF",
			in:   "\x1b[2m  " + `{"type":"error","error":{"message":"first"}}` + "\x1b[0m\r\n\t" + `{"type":"error","error":{"message":"second"}}` + "\r\n" + "plain text\r\n",
			want: "second",
		},
		{
			name: "invalid UTF-8 in a JSON string is decoded as U+FFFD",
			in:   "{\"is_error\":true,\"content\":\"bad \xff byte\"}",
			want: "bad \uFFFD byte",
		},
	})
}

// Stage 2: the error blocks of plain text, each with all its lines.
func TestExtractErrorPlainTextBlocks(t *testing.T) {
	runExtractCases(t, []extractCase{
		{
			name: "Go panic with its goroutine trace",
			in: "Running the server...\npanic: runtime error: invalid memory address or nil pointer dereference\n" +
				"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x47a750]\n\n" +
				"goroutine 1 [running]:\nmain.(*Server).handle(0xc000126000)\n\t/app/server.go:117 +0x1bc\nmain.main()\n\t/app/main.go:9 +0x10\n" +
				"exit status 2\nI'll look into it.\n",
			want: "panic: runtime error: invalid memory address or nil pointer dereference\n" +
				"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x47a750]\n\n" +
				"goroutine 1 [running]:\nmain.(*Server).handle(0xc000126000)\n\t/app/server.go:117 +0x1bc\nmain.main()\n\t/app/main.go:9 +0x10",
		},
		{
			name: "Go runtime fatal error with two goroutines",
			in:   "fatal error: all goroutines are asleep - deadlock!\n\ngoroutine 1 [chan receive]:\nmain.main()\n\t/app/main.go:5 +0x2d\n\ngoroutine 5 [select]:\nmain.worker()\n\t/app/main.go:9 +0x1f\ncreated by main.main in goroutine 1\n\t/app/main.go:4 +0x1a\n\nThe program hangs.",
			want: "fatal error: all goroutines are asleep - deadlock!\n\ngoroutine 1 [chan receive]:\nmain.main()\n\t/app/main.go:5 +0x2d\n\ngoroutine 5 [select]:\nmain.worker()\n\t/app/main.go:9 +0x1f\ncreated by main.main in goroutine 1\n\t/app/main.go:4 +0x1a",
		},
		{
			name: "Python traceback up to its exception line",
			in:   "$ python3 app.py\nTraceback (most recent call last):\n  File \"/app/app.py\", line 8, in <module>\n    main()\n  File \"/app/app.py\", line 5, in main\n    return users['a']\n           ~~~~~^^^^^\nKeyError: 'a'\nThe key is missing; let me check.\n",
			want: "Traceback (most recent call last):\n  File \"/app/app.py\", line 8, in <module>\n    main()\n  File \"/app/app.py\", line 5, in main\n    return users['a']\n           ~~~~~^^^^^\nKeyError: 'a'",
		},
		{
			name: "chained Python exceptions: the last traceback",
			in:   "Traceback (most recent call last):\n  File \"a.py\", line 2, in <module>\nKeyError: 'a'\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"a.py\", line 4, in <module>\nValueError: bad config\n",
			want: "Traceback (most recent call last):\n  File \"a.py\", line 4, in <module>\nValueError: bad config",
		},
		{
			name: "Go compiler: consecutive messages are one block",
			in:   "# example.com/app\n./main.go:12:3: undefined: x\n./main.go:14:9: cannot use s (variable of type string) as int value in return statement\nLet me fix these.",
			want: "./main.go:12:3: undefined: x\n./main.go:14:9: cannot use s (variable of type string) as int value in return statement",
		},
		{
			name: "go vet prefixes its program name",
			in:   "# [example.com/app]\nvet: ./main.go:3:27: cannot use \"five\" as int value",
			want: "vet: ./main.go:3:27: cannot use \"five\" as int value",
		},
		{
			name: "gcc error with source context and a note; a warning starts nothing",
			in:   "main.c: In function 'main':\nmain.c:2:7: warning: unused variable 'y'\nmain.c:4:10: error: 'counter' undeclared\n    4 |   return counter + 1;\n      |          ^~~~~~~\nmain.c:4:10: note: each undeclared identifier is reported only once\n",
			want: "main.c:4:10: error: 'counter' undeclared\n    4 |   return counter + 1;\n      |          ^~~~~~~\nmain.c:4:10: note: each undeclared identifier is reported only once",
		},
		{
			name: "a warning alone is no error",
			in:   "main.c:2:7: warning: unused variable 'y'\n    2 |   int y;\n",
			want: "",
		},
		{
			name: "rustc error with its context; the summary lines are weak",
			in:   "   Compiling app v0.1.0\nerror[E0425]: cannot find value `foo` in this scope\n --> src/main.rs:2:20\n  |\n2 |     println!(\"{}\", foo);\n  |                    ^^^ not found in this scope\n\nerror: could not compile `app` (bin \"app\") due to 1 previous error\n",
			want: "error[E0425]: cannot find value `foo` in this scope\n --> src/main.rs:2:20\n  |\n2 |     println!(\"{}\", foo);\n  |                    ^^^ not found in this scope",
		},
		{
			name: "tsc, plain and pretty",
			in:   "src/a.ts(3,5): error TS2304: Cannot find name 'x'.\nsrc/b.ts:7:1 - error TS2322: Type 'string' is not assignable to type 'number'.\n\n7 let n: number = 's';\n  ~\n\nFound 2 errors in 2 files.\n",
			want: "src/a.ts(3,5): error TS2304: Cannot find name 'x'.\nsrc/b.ts:7:1 - error TS2322: Type 'string' is not assignable to type 'number'.",
		},
		{
			name: "javac error with its context",
			in:   "Main.java:5: error: cannot find symbol\n  System.out.println(helper());\n                     ^\n  symbol:   method helper()\n  location: class Main\n1 error\n",
			want: "Main.java:5: error: cannot find symbol\n  System.out.println(helper());\n                     ^\n  symbol:   method helper()\n  location: class Main",
		},
		{
			name: "go test FAIL block with subtests; the summary lines are weak",
			in:   "=== RUN   TestSum\n--- FAIL: TestSum (0.00s)\n    --- FAIL: TestSum/neg (0.00s)\n        sum_test.go:12: got -1, want 1\nFAIL\nFAIL\texample.com/app\t0.003s\nFAIL\n",
			want: "=== RUN   TestSum\n--- FAIL: TestSum (0.00s)\n    --- FAIL: TestSum/neg (0.00s)\n        sum_test.go:12: got -1, want 1",
		},
		{
			name: "go test -v: a test's output before its FAIL line; a passing test's log is no error",
			in:   "=== RUN   TestA\n    a_test.go:3: error: expected in this test\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n    b_test.go:9: got 2, want 3\n--- FAIL: TestB (0.00s)\nFAIL\n",
			want: "=== RUN   TestB\n    b_test.go:9: got 2, want 3\n--- FAIL: TestB (0.00s)",
		},
		{
			name: "go test -v: a passing run is no error",
			in:   "=== RUN   TestA\n    a_test.go:3: error: logged on purpose\n--- PASS: TestA (0.00s)\nPASS\n",
			want: "",
		},
		{
			name: "Node error with frames, require stack and error object",
			in:   "node:internal/modules/cjs/loader:1210\n  throw err;\n  ^\n\nError: Cannot find module 'express'\nRequire stack:\n- /app/index.js\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)\n    at Object.<anonymous> (/app/index.js:1:1) {\n  code: 'MODULE_NOT_FOUND'\n}\n\nNode.js v20.20.2\n",
			want: "Error: Cannot find module 'express'\nRequire stack:\n- /app/index.js\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)\n    at Object.<anonymous> (/app/index.js:1:1) {\n  code: 'MODULE_NOT_FOUND'\n}",
		},
		{
			name: "Java exception with Caused by",
			in:   "Exception in thread \"main\" java.lang.IllegalStateException: boot failed\n\tat app.Main.start(Main.java:12)\nCaused by: java.io.FileNotFoundException: app.conf\n\tat app.Main.load(Main.java:30)\n\t... 1 more\nBUILD FAILED\n",
			want: "Exception in thread \"main\" java.lang.IllegalStateException: boot failed\n\tat app.Main.start(Main.java:12)\nCaused by: java.io.FileNotFoundException: app.conf\n\tat app.Main.load(Main.java:30)\n\t... 1 more",
		},
		{
			name: "Rust panic with its message line",
			in:   "\nthread 'main' (23476) panicked at src/main.rs:3:93:\ncalled `Option::unwrap()` on a `None` value\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
			want: "thread 'main' (23476) panicked at src/main.rs:3:93:\ncalled `Option::unwrap()` on a `None` value",
		},
		{
			name: "Rust error chain with Caused by after a blank line",
			in:   "Error: failed to load config\n\nCaused by:\n    0: missing field `port`\n",
			want: "Error: failed to load config\n\nCaused by:\n    0: missing field `port`",
		},
		{
			name: "git fatal",
			in:   "$ git status\nfatal: not a git repository (or any of the parent directories): .git\n",
			want: "fatal: not a git repository (or any of the parent directories): .git",
		},
		{
			name: "git merge conflicts",
			in:   "Auto-merging a.txt\nCONFLICT (content): Merge conflict in a.txt\nCONFLICT (content): Merge conflict in b.txt\nAutomatic merge failed; fix conflicts and then commit the result.\n",
			want: "CONFLICT (content): Merge conflict in a.txt\nCONFLICT (content): Merge conflict in b.txt\nAutomatic merge failed; fix conflicts and then commit the result.",
		},
		{
			name: "shell and curl",
			in:   "run.sh: line 3: deploy-widget: command not found\ncurl: (7) Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server\n",
			want: "curl: (7) Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server",
		},
		{
			name: "a missing file",
			in:   "cat: config/settings.json: No such file or directory",
			want: "cat: config/settings.json: No such file or directory",
		},
		{
			name: "log levels after a timestamp, and logfmt",
			in:   "2026-01-19T09:00:00Z INFO starting\n2026-01-19T09:00:01Z ERROR db: connection refused\n",
			want: "2026-01-19T09:00:01Z ERROR db: connection refused",
		},
		{
			name: "logfmt level",
			in:   "time=09:00 level=info msg=start\ntime=09:01 level=error msg=\"disk full\"\n",
			want: "time=09:01 level=error msg=\"disk full\"",
		},
		{
			name: "jest failure with blank lines inside",
			in:   "PASS src/b.test.js\nFAIL src/a.test.js\n  ● sum › adds\n\n    expect(received).toBe(expected)\n\n    Expected: 3\n    Received: 2\n\nTests: 1 failed, 3 passed\n",
			want: "FAIL src/a.test.js\n  ● sum › adds\n\n    expect(received).toBe(expected)\n\n    Expected: 3\n    Received: 2",
		},
		{
			name: "pytest summary line",
			in:   "=== short test summary info ===\nFAILED test_app.py::test_sum - AssertionError: assert 2 == 3\n=== 1 failed in 0.01s ===\n",
			want: "FAILED test_app.py::test_sum - AssertionError: assert 2 == 3",
		},
		{
			name: "ANSI colour around the start",
			in:   "\x1b[1m\x1b[91merror\x1b[0m\x1b[1m: linking failed\x1b[0m\n",
			want: "\x1b[1m\x1b[91merror\x1b[0m\x1b[1m: linking failed\x1b[0m",
		},
		{
			name: "CRLF line ends",
			in:   "ok\r\nError: boom\r\n    at f (/a.js:1:2)\r\ndone\r\n",
			want: "Error: boom\r\n    at f (/a.js:1:2)",
		},
	})
}

// Words are not errors: a line starts an error block only when its first
// token is one; "error" inside prose, a count of zero, a success summary
// start nothing.
func TestExtractErrorIgnoresMentionsOfErrors(t *testing.T) {
	for _, in := range []string{
		"0 errors",
		"no errors found",
		"error handling refactored",
		"Error handling refactored in parser.go",
		"Errors: 0",
		"Fixed the error: it was a typo in main.go",
		"I see the error: KeyError: 'a' came from the fixture.",
		"Found 0 errors. Watching for file changes.",
		"0 errors generated.",
		"exit status 0",
		"Exit code 0",
		"ok  \texample.com/app\t0.004s",
		"PASS",
		"  \"is_error\": false,",
		"    raise ValueError(\"bad\")  # documented error path",
		"main.go:12:3: warning: this looks odd",
		"README.md mentions error: in passing",
		"The TypeError earlier is gone.",
		"",
		"\n\n\t\n",
	} {
		assert.Equal(t, "", ExtractError(in), "%q", in)
	}
}

// Summary lines count only when there is nothing else, and strong blocks
// win over later weak ones.
func TestExtractErrorWeakLines(t *testing.T) {
	runExtractCases(t, []extractCase{
		{"exit status alone", "building...\nexit status 1\n", "exit status 1"},
		{"FAIL alone", "ok   a 0.1s\nFAIL\n", "FAIL"},
		{"make", "make: *** [Makefile:3: all] Error 1", "make: *** [Makefile:3: all] Error 1"},
		{"javac count", "3 errors", "3 errors"},
		{"the last weak line", "exit status 1\nFAIL\texample.com/app\t0.01s\n", "FAIL\texample.com/app\t0.01s"},
		{"a strong block beats a later weak one", "Error: boom\nexit status 1\n", "Error: boom"},
	})
}

// Of several blocks, the last one: the error the agent was left with.
func TestExtractErrorPicksTheLastBlock(t *testing.T) {
	in := "./main.go:3:5: undefined: x\nFixed it, running again.\n--- FAIL: TestA (0.00s)\n    a_test.go:9: got 1, want 2\nFAIL\n"
	assert.Equal(t, "--- FAIL: TestA (0.00s)\n    a_test.go:9: got 1, want 2", ExtractError(in))
}

// The result is at most MaxExtractedBytes, cut at a line end or a rune
// start; a traceback keeps its first and last lines.
func TestExtractErrorBound(t *testing.T) {
	var panicText strings.Builder
	panicText.WriteString("panic: boom\n\ngoroutine 1 [running]:\n")
	for i := 0; panicText.Len() < 3*MaxExtractedBytes; i++ {
		panicText.WriteString("main.f()\n\t/app/main.go:12 +0x1d\n")
	}
	got := ExtractError(panicText.String())
	assert.LessOrEqual(t, len(got), MaxExtractedBytes)
	assert.True(t, strings.HasPrefix(got, "panic: boom\n"))
	require.Less(t, len(got), panicText.Len())
	assert.Equal(t, byte('\n'), panicText.String()[len(got)], "cut at a line end")

	var tb strings.Builder
	tb.WriteString("Traceback (most recent call last):\n")
	for tb.Len() < 3*MaxExtractedBytes {
		tb.WriteString("  File \"/app/r.py\", line 2, in f\n    return f()\n")
	}
	tb.WriteString("RecursionError: maximum recursion depth exceeded\n")
	got = ExtractError(tb.String())
	assert.LessOrEqual(t, len(got), MaxExtractedBytes)
	assert.True(t, strings.HasPrefix(got, "Traceback (most recent call last):\n"))
	assert.True(t, strings.HasSuffix(got, "\nRecursionError: maximum recursion depth exceeded"))
	for _, line := range strings.Split(got, "\n")[1:] {
		assert.Contains(t, []string{"  File \"/app/r.py\", line 2, in f", "    return f()", "RecursionError: maximum recursion depth exceeded"}, line, "whole lines, indentation kept")
	}

	long := "Error: " + strings.Repeat("ü", MaxExtractedBytes)
	got = ExtractError(long)
	assert.LessOrEqual(t, len(got), MaxExtractedBytes)
	assert.True(t, utf8.ValidString(got))
	assert.True(t, strings.HasPrefix(long, got))

	msg := strings.Repeat("€", MaxExtractedBytes)
	got = ExtractError(`{"is_error":true,"content":"` + msg + `"}`)
	assert.LessOrEqual(t, len(got), MaxExtractedBytes)
	assert.True(t, utf8.ValidString(got))
}

// Every non-empty capture of the error corpus (real tools' output) gives an
// error, and the extracted errors keep the corpus's causes apart and
// together at least as well as the whole outputs do.
func TestExtractErrorOnCorpus(t *testing.T) {
	samples := loadCorpus(t)
	for _, s := range samples {
		if strings.TrimSpace(s.text) != "" {
			assert.NotEmpty(t, ExtractError(s.text), s.path)
		}
	}
	whole := scoreFingerprints(samples, Fingerprint)
	extracted := scoreFingerprints(samples, func(s string) uint32 { return Fingerprint(ExtractError(s)) })
	t.Logf("Fingerprint(output):               precision %.4f recall %.4f", whole.precision, whole.recall)
	t.Logf("Fingerprint(ExtractError(output)): precision %.4f recall %.4f", extracted.precision, extracted.recall)
	require.GreaterOrEqual(t, extracted.precision, whole.precision)
	require.GreaterOrEqual(t, extracted.recall, whole.recall)
}
