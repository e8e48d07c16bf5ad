package errtext

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// jsonStrings returns every string value of every JSON document that a line
// of s holds from one of its '{' to its end: what ExtractError may return
// besides the lines of s.
func jsonStrings(s string) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case map[string]any:
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	for _, line := range strings.Split(s, "\n") {
		line = trimLineEnd(line)
		for k := strings.IndexByte(line, '{'); k >= 0; {
			var v any
			if json.Unmarshal([]byte(line[k:]), &v) == nil {
				walk(v)
				break
			}
			next := strings.IndexByte(line[k+1:], '{')
			if next < 0 {
				break
			}
			k += 1 + next
		}
	}
	return out
}

// FuzzExtractError: any input gives, without panicking, a result of at most
// MaxExtractedBytes, valid UTF-8 when the input is, and made only of the
// input's own text: every line of the result occurs in the input or in a
// string value of one of its JSON lines.
func FuzzExtractError(f *testing.F) {
	for _, in := range []string{
		"",
		"0 errors\nno errors found\nerror handling refactored",
		"panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n\t/a/main.go:3 +0x1d\nexit status 2",
		"Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: 'a'",
		"./main.go:3:5: undefined: x\nmain.c:1:1: warning: w\nmain.c:1:1: note: n",
		"=== RUN   TestA\n    a_test.go:3: x\n--- FAIL: TestA (0.00s)\nFAIL",
		`{"type":"result","is_error":true,"result":"boom"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","is_error":true,"content":[{"type":"text","text":"Exit code 1\nError: x\n    at f (/a.js:1:2)"}]}]}}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` + "\n" + `{"type":"result","subtype":"error_max_turns","is_error":true}`,
		"{\"is_error\":true,\"content\":\"\xff\"}\n\x1b[31merror\x1b[0m: \xfe",
		"Error: x {\n  code: 'E'\n}\n\nCaused by:\n    y",
	} {
		f.Add(in)
	}
	for _, tr := range loadTranscripts(f) {
		f.Add(tr.text)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := ExtractError(in)
		if len(got) > MaxExtractedBytes {
			t.Fatalf("result of %d bytes, bound %d", len(got), MaxExtractedBytes)
		}
		if utf8.ValidString(in) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 result %q from valid input", got)
		}
		if got == "" {
			return
		}
		var values []string
		for _, line := range strings.Split(got, "\n") {
			if strings.Contains(in, line) {
				continue
			}
			if values == nil {
				values = jsonStrings(in)
			}
			found := false
			for _, v := range values {
				if strings.Contains(v, line) {
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("result line %q is neither in the input nor in its JSON strings; result %q", line, got)
			}
		}
	})
}

// decodeEveryJSONLine is what stage 1 found before candidates were read
// without decoding: every JSON line that holds "error" decoded, in order,
// the last strong and the last weak error kept.
func decodeEveryJSONLine(s string) (strong, weak string, hasStrong, hasWeak bool) {
	var b blockScanner
	for i := 0; i < len(s); {
		eol := lineEnd(s, i)
		first, _, _ := b.lineHead(s, i, eol)
		if line, ok := jsonLine(s, first, eol); ok && containsFoldError(line) {
			if msg, w, ok := jsonLineError(line); ok {
				if w {
					weak, hasWeak = msg, true
				} else {
					strong, hasStrong = msg, true
				}
			}
		}
		i = eol + 1
	}
	return strong, weak, hasStrong, hasWeak
}

// FuzzStructuredErrors: reading JSON lines without decoding them first
// (maySignalError), and decoding the candidates last first, finds the
// structured errors that decoding every line finds.
func FuzzStructuredErrors(f *testing.F) {
	for _, in := range []string{
		`{"type":"result","is_error":true,"result":"boom"}`,
		`{"\u0074ype":"\u0065rror","message":"an error"}` + "\n" + `{"is_error" : true}`,
		`{"type":"result","subtype":"error_max_turns","is_error":true}` + "\r\n" + `{"error":{},"x":"error"}`,
		`{"level":"FATAL","msg":"no error"}` + "\n\x1b[31m" + `{"severity":"critical","error":""}` + "\x1b[0m",
		`{"a":"\"is_error\":true","error":"x\\"}`,
		`{"content":[{"is_error":true,"content":"one"},{"is_error":false,"content":"two error"}]}`,
	} {
		f.Add(in)
	}
	for _, tr := range loadTranscripts(f) {
		f.Add(tr.text)
	}
	f.Fuzz(func(t *testing.T, in string) {
		strong, weak, hasStrong, hasWeak := decodeEveryJSONLine(in)
		b := blockScanner{decodeJSON: true}
		b.scan(in)
		if b.mayHoldJSONError {
			b.readJSONErrors(in, b.lastJSONStart)
		}
		if b.jsonFound != hasStrong || b.jsonMsg != strong {
			t.Fatalf("strong error %v %q, decoding every line %v %q", b.jsonFound, b.jsonMsg, hasStrong, strong)
		}
		if !hasStrong && (b.jsonWeakFound != hasWeak || b.jsonWeakMsg != weak) {
			t.Fatalf("weak error %v %q, decoding every line %v %q", b.jsonWeakFound, b.jsonWeakMsg, hasWeak, weak)
		}
	})
}

// FuzzMaySignalError: a line that jsonLineError finds an error in is never
// passed over.
func FuzzMaySignalError(f *testing.F) {
	for _, in := range []string{
		`{"is_error":true}`, `{"type":"error"}`, `{"subtype":"error_x"}`, `{"error":"x"}`, `{"error":{"a":1}}`,
		`{"level":"Fatal"}`, `{"severity":"ERROR"}`, `{"\u0069s_error":true}`, `{"type":"\u0065rror"}`,
		`{"a":{"b":[{"error" : " x "}]}}`, `{"error":"\\"}`, `{"x":"\\\"","type":"error"}`,
	} {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if _, _, ok := jsonLineError(line); ok && !maySignalError(line) {
			t.Fatalf("maySignalError passes over %q, in which jsonLineError finds an error", line)
		}
	})
}
