package fakemodel

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// post sends body to the server's path as Claude Code does, and returns
// the response.
func post(t *testing.T, m *Anthropic, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, m.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", "sk-test")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sseEvent is one server-sent event: its name and its data, decoded.
type sseEvent struct {
	name string
	data map[string]any
}

// readEvents reads a response body of server-sent events.
func readEvents(t *testing.T, body io.Reader) []sseEvent {
	t.Helper()
	var events []sseEvent
	var name string
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var data map[string]any
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &data), line)
			require.Equal(t, name, data["type"], "an event's name is its data's type")
			events = append(events, sseEvent{name, data})
		case line == "":
		default:
			t.Fatalf("not a line of an event: %q", line)
		}
	}
	require.NoError(t, sc.Err())
	return events
}

const firstTurn = `{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":true,
	"system":[{"type":"text","text":"You are a coding agent."}],
	"tools":[{"name":"Bash","input_schema":{"type":"object"}},{"name":"Edit","input_schema":{"type":"object"}}],
	"messages":[{"role":"user","content":"fix the tests"}]}`

// A text block and a tool use stream as the API streams them: the
// message's start with a null stop reason, each block opened, filled by
// deltas (the tool's input as pieces of JSON) and closed, then the stop
// reason and the usage, and the stop.
func TestAReplyStreamsAsTheAPIStreamsIt(t *testing.T) {
	m := NewAnthropic(Script(Reply{
		Content: []Block{Text("I'll run the tests — all of them."), ToolUse("Bash", map[string]string{"command": "go test ./..."})},
		Usage:   Usage{InputTokens: 12, CacheCreationInputTokens: 3000, CacheReadInputTokens: 9000, OutputTokens: 57},
	}))
	defer m.Close()
	resp := post(t, m, "/v1/messages?beta=true", firstTurn)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Equal(t, "req_fake000001", resp.Header.Get("Request-Id"))
	events := readEvents(t, resp.Body)

	var names []string
	text, input := "", ""
	for _, e := range events {
		if len(names) == 0 || names[len(names)-1] != e.name || e.name != "content_block_delta" {
			names = append(names, e.name)
		}
		if d, ok := e.data["delta"].(map[string]any); ok && e.name == "content_block_delta" {
			switch d["type"] {
			case "text_delta":
				text += d["text"].(string)
			case "input_json_delta":
				input += d["partial_json"].(string)
			}
		}
	}
	assert.Equal(t, []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}, names)
	assert.Equal(t, "I'll run the tests — all of them.", text, "the text, in pieces that never cut a rune")
	assert.JSONEq(t, `{"command":"go test ./..."}`, input)

	start := events[0].data["message"].(map[string]any)
	assert.Nil(t, start["stop_reason"], "not known at the start")
	assert.Equal(t, "claude-sonnet-4-5", start["model"], "the model asked for")
	assert.Equal(t, map[string]any{"input_tokens": 12.0, "cache_creation_input_tokens": 3000.0, "cache_read_input_tokens": 9000.0, "output_tokens": 1.0},
		start["usage"])
	var tool map[string]any
	for _, e := range events {
		if e.name == "content_block_start" && e.data["index"] == 1.0 {
			tool = e.data["content_block"].(map[string]any)
		}
	}
	require.NotNil(t, tool)
	assert.Equal(t, "Bash", tool["name"])
	assert.Equal(t, "toolu_fake000001_0", tool["id"])
	assert.Equal(t, map[string]any{}, tool["input"], "the input comes in the deltas")
	delta := events[len(events)-2].data
	assert.Equal(t, "tool_use", delta["delta"].(map[string]any)["stop_reason"])
	assert.Equal(t, map[string]any{"output_tokens": 57.0}, delta["usage"])
}

// A request that does not ask for a stream gets the message as one JSON
// body; a reply may name another model, and stop for another reason.
func TestAnUnstreamedReplyIsOneMessage(t *testing.T) {
	m := NewAnthropic(Script(Reply{Content: []Block{Text("Done.")}, Model: "claude-haiku-4-5", StopReason: "max_tokens"}))
	defer m.Close()
	resp := post(t, m, "/v1/messages", strings.Replace(firstTurn, `"stream":true`, `"stream":false`, 1))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var msg map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&msg))
	assert.Equal(t, "message", msg["type"])
	assert.Equal(t, "claude-haiku-4-5", msg["model"])
	assert.Equal(t, "max_tokens", msg["stop_reason"])
	assert.Equal(t, []any{map[string]any{"type": "text", "text": "Done."}}, msg["content"])
	assert.Equal(t, 1000.0, msg["usage"].(map[string]any)["input_tokens"], "DefaultUsage")
}

// Every request is recorded: the conversation as the model got it (a
// string's content, blocks, a tool result whose content is a list), the
// system prompt and the tools; the requests to other paths too.
func TestRequestsAreRecordedWithTheirConversation(t *testing.T) {
	m := NewAnthropic(AfterToolResult(Bash("go test ./..."), Say("The tests pass.")))
	defer m.Close()
	post(t, m, "/v1/messages?beta=true", firstTurn)
	second := `{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":true,"system":"You are a coding agent.","messages":[
		{"role":"user","content":"fix the tests"},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"go test ./..."}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":[{"type":"text","text":"--- FAIL: TestLogin"},{"type":"text","text":"FAIL"}]}]}]}`
	events := readEvents(t, post(t, m, "/v1/messages", second).Body)
	assert.Equal(t, "end_turn", events[len(events)-2].data["delta"].(map[string]any)["stop_reason"], "after a tool result, the report")
	assert.Equal(t, http.StatusNotFound, post(t, m, "/v1/complete", `{}`).StatusCode)
	resp := post(t, m, "/v1/messages/count_tokens", firstTurn)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	all := m.Requests()
	require.Len(t, all, 4)
	assert.Equal(t, "/v1/complete", all[2].Path)
	turns := m.Turns()
	require.Len(t, turns, 2)
	first := turns[0]
	assert.Equal(t, "beta=true", first.Query, "Claude Code's query is kept")
	assert.Equal(t, "claude-sonnet-4-5", first.Model)
	assert.True(t, first.Stream)
	assert.Equal(t, 1024, first.MaxTokens)
	assert.Equal(t, "You are a coding agent.", first.System)
	assert.Equal(t, []string{"Bash", "Edit"}, first.Tools)
	assert.Equal(t, "sk-test", first.Header.Get("X-Api-Key"))
	assert.Equal(t, "fix the tests", first.Text())

	last := turns[1]
	assert.Equal(t, "You are a coding agent.", last.System, "a system prompt given as a string")
	require.Len(t, last.ToolResults(), 1)
	assert.Equal(t, Block{Type: "tool_result", ToolUseID: "toolu_1", IsError: true, Text: "--- FAIL: TestLogin\nFAIL"}, last.ToolResults()[0])
	require.Len(t, last.ToolUses(), 1)
	assert.JSONEq(t, `{"command":"go test ./..."}`, string(last.ToolUses()[0].Input))
	assert.Equal(t, "user", last.Last().Role)
	assert.Equal(t, "fix the tests\n--- FAIL: TestLogin\nFAIL", last.Text())
}

// Errors come as the API gives them: the status, the error object with
// the request id in the body, and their headers: a spent usage limit's
// retry-after and unified rate-limit headers.
func TestErrorsComeWithTheirHeaders(t *testing.T) {
	reset := time.Date(2026, 1, 29, 15, 0, 0, 0, time.UTC)
	m := NewAnthropic(Script(
		RateLimited(90*time.Second, reset).WithHeader("X-Should-Retry", "false"),
		Overloaded(),
		CreditTooLow(),
		Error(http.StatusForbidden, "permission_error", "Your API key does not have permission to use the specified resource."),
	))
	defer m.Close()

	resp := post(t, m, "/v1/messages", firstTurn)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "90", resp.Header.Get("Retry-After"))
	assert.Equal(t, "false", resp.Header.Get("X-Should-Retry"))
	assert.Equal(t, "rejected", resp.Header.Get("Anthropic-Ratelimit-Unified-Status"))
	assert.Equal(t, "1769698800", resp.Header.Get("Anthropic-Ratelimit-Unified-Reset"))
	assert.Equal(t, "five_hour", resp.Header.Get("Anthropic-Ratelimit-Unified-Representative-Claim"))
	var body struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
		RequestID string `json:"request_id"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	assert.Equal(t, "error", body.Type)
	assert.Equal(t, "rate_limit_error", body.Error.Type)
	assert.Equal(t, "req_fake000001", body.RequestID)
	assert.Equal(t, body.RequestID, resp.Header.Get("Request-Id"))

	for _, want := range []struct {
		status  int
		errType string
	}{{529, "overloaded_error"}, {400, "invalid_request_error"}, {403, "permission_error"}} {
		resp := post(t, m, "/v1/messages", firstTurn)
		assert.Equal(t, want.status, resp.StatusCode)
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Contains(t, string(data), `"type":"`+want.errType+`"`)
	}
}

// A script answers in order, and a request past its end is refused with a
// 400 that says so; Always answers the same for ever.
func TestAScriptRunsOut(t *testing.T) {
	m := NewAnthropic(Script(Say("one")))
	defer m.Close()
	assert.Equal(t, http.StatusOK, post(t, m, "/v1/messages", firstTurn).StatusCode)
	resp := post(t, m, "/v1/messages", firstTurn)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, string(data), "the script has 1 replies, and this is request 2")

	stuck := NewAnthropic(Always(Bash("npm test")))
	defer stuck.Close()
	for range 3 {
		events := readEvents(t, post(t, stuck, "/v1/messages", firstTurn).Body)
		assert.Equal(t, "tool_use", events[len(events)-2].data["delta"].(map[string]any)["stop_reason"])
	}
}

// A body that is no Messages API request is refused as the API refuses
// it, and still recorded.
func TestABadRequestIsRefused(t *testing.T) {
	m := NewAnthropic(Always(Say("never")))
	defer m.Close()
	for _, body := range []string{`{`, `{"model":"m","messages":[]}`, `{"messages":[{"role":"user","content":7}]}`} {
		assert.Equal(t, http.StatusBadRequest, post(t, m, "/v1/messages", body).StatusCode, body)
	}
	assert.Len(t, m.Requests(), 3)
}

// Text is cut into pieces that never split a rune.
func TestPiecesKeepRunesWhole(t *testing.T) {
	s := strings.Repeat("ąžuolas 🌳 ", 9)
	ps := pieces(s, 5)
	assert.Equal(t, s, strings.Join(ps, ""))
	for _, p := range ps {
		assert.True(t, utf8.ValidString(p), "%q", p)
	}
	assert.Equal(t, []string{""}, pieces("", 5))
}

// FuzzRequestDecode: any body decodes or is refused, without a panic.
func FuzzRequestDecode(f *testing.F) {
	f.Add(firstTurn)
	f.Add(`{"messages":[{"role":"user","content":[{"type":"tool_result","content":[{"type":"text","text":"x"}]}]}]}`)
	f.Add(`{"messages":[{"role":"user","content":null}],"system":7}`)
	f.Fuzz(func(t *testing.T, body string) {
		r := &Request{Body: []byte(body)}
		if r.decode() == nil {
			_ = r.Text()
			_ = r.ToolResults()
		}
	})
}

// An answerer may read what the model was sent so far, and a test may
// read the requests while others are in flight.
func TestTheRequestsAreReadableWhileAnswering(t *testing.T) {
	var m *Anthropic
	m = NewAnthropic(func(r *Request) Reply {
		return Say(fmt.Sprintf("turn %d", len(m.Turns())))
	})
	defer m.Close()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(m.URL+"/v1/messages", "application/json", strings.NewReader(strings.Replace(firstTurn, `"stream":true`, `"stream":false`, 1)))
			if assert.NoError(t, err) {
				resp.Body.Close()
			}
		}()
	}
	for range 4 {
		for _, r := range m.Turns() {
			assert.Equal(t, "claude-sonnet-4-5", r.Model)
		}
	}
	wg.Wait()
	require.Len(t, m.Turns(), 4)
}
