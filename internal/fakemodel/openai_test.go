package fakemodel

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// postOpenAI sends body to the server's path (below its /v1 base URL) as
// Codex does, and returns the response.
func postOpenAI(t *testing.T, o *OpenAI, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, o.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer sk-test")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// firstResponsesTurn is a session's first request as Codex sends it: the
// developer's instructions and the person's prompt as input items, and
// its tools (functions, a freeform tool, a built-in one).
const firstResponsesTurn = `{"model":"gpt-5.5","stream":true,"store":false,"tool_choice":"auto",
	"instructions":"You are Codex.",
	"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}},
		{"type":"custom","name":"apply_patch","format":{"type":"grammar"}},{"type":"web_search"}],
	"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"Run commands with exec_command."}]},
		{"type":"message","role":"user","content":[{"type":"input_text","text":"fix the tests"}]}]}`

// A response of a message, a function call and a custom tool call
// streams as the Responses API streams it: created and in progress with
// no output, each item added, filled by deltas (the text, the arguments,
// the patch) and done, then completed with the whole output and the
// usage, every event numbered in order.
func TestAResponseStreamsAsTheResponsesAPIStreamsIt(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: notes.txt\n+ąžuolas — one line\n*** End Patch"
	o := NewOpenAI(Script(Reply{
		Content: []Block{Text("I'll run the tests — all of them."), ToolUse("exec_command", map[string]string{"cmd": "go test ./..."}),
			ApplyPatch(patch).Content[0]},
		Usage: Usage{InputTokens: 12, CacheCreationInputTokens: 3000, CacheReadInputTokens: 9000, OutputTokens: 57},
	}))
	defer o.Close()
	resp := postOpenAI(t, o, "/responses", firstResponsesTurn)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Equal(t, "req_fake000001", resp.Header.Get("X-Request-Id"))
	events := readEvents(t, resp.Body)

	var names []string
	text, args, input := "", "", ""
	for i, e := range events {
		assert.Equal(t, float64(i), e.data["sequence_number"], "events are numbered in order")
		if len(names) == 0 || names[len(names)-1] != e.name || !strings.HasSuffix(e.name, ".delta") {
			names = append(names, e.name)
		}
		switch e.name {
		case "response.output_text.delta":
			text += e.data["delta"].(string)
		case "response.function_call_arguments.delta":
			args += e.data["delta"].(string)
		case "response.custom_tool_call_input.delta":
			input += e.data["delta"].(string)
		}
	}
	assert.Equal(t, []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done",
		"response.output_item.added", "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done", "response.output_item.done",
		"response.completed"}, names)
	assert.Equal(t, "I'll run the tests — all of them.", text, "the text, in pieces that never cut a rune")
	assert.JSONEq(t, `{"cmd":"go test ./..."}`, args)
	assert.Equal(t, patch, input)

	created := events[0].data["response"].(map[string]any)
	assert.Equal(t, "in_progress", created["status"])
	assert.Equal(t, "gpt-5.5", created["model"], "the model asked for")
	assert.Equal(t, []any{}, created["output"])
	assert.Nil(t, created["usage"])

	var added map[string]any
	for _, e := range events {
		if item, ok := e.data["item"].(map[string]any); ok && e.name == "response.output_item.added" && item["type"] == "function_call" {
			added = item
		}
	}
	assert.Equal(t, map[string]any{"id": "fc_fake000001_1", "type": "function_call", "status": "in_progress",
		"call_id": "call_fake000001_1", "name": "exec_command", "arguments": ""}, added, "the arguments come in the deltas")

	completed := events[len(events)-1].data["response"].(map[string]any)
	assert.Equal(t, "resp_fake000001", completed["id"])
	assert.Equal(t, "completed", completed["status"])
	output := completed["output"].([]any)
	require.Len(t, output, 3)
	assert.Equal(t, map[string]any{"id": "msg_fake000001_0", "type": "message", "status": "completed", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": "I'll run the tests — all of them.", "annotations": []any{}}}}, output[0])
	assert.Equal(t, map[string]any{"id": "ctc_fake000001_2", "type": "custom_tool_call", "status": "completed",
		"call_id": "call_fake000001_2", "name": "apply_patch", "input": patch}, output[2])
	assert.Equal(t, map[string]any{
		"input_tokens":          12.0 + 3000 + 9000,
		"input_tokens_details":  map[string]any{"cached_tokens": 9000.0, "cache_write_tokens": 3000.0},
		"output_tokens":         57.0,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0.0},
		"total_tokens":          12.0 + 3000 + 9000 + 57,
	}, completed["usage"], "input_tokens counts the cached tokens too, as the Responses API counts them")
}

// A request that does not ask for a stream gets the response object as
// one JSON body; a reply may name another model.
func TestAnUnstreamedResponseIsOneObject(t *testing.T) {
	o := NewOpenAI(Script(Reply{Content: []Block{Text("Done.")}, Model: "gpt-5.4-mini"}))
	defer o.Close()
	resp := postOpenAI(t, o, "/responses", strings.Replace(firstResponsesTurn, `"stream":true`, `"stream":false`, 1))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	assert.Equal(t, "response", body["object"])
	assert.Equal(t, "completed", body["status"])
	assert.Equal(t, "gpt-5.4-mini", body["model"])
	usage := body["usage"].(map[string]any)
	assert.Equal(t, 1000.0, usage["input_tokens"], "DefaultUsage")
	assert.Equal(t, map[string]any{"cached_tokens": 0.0}, usage["input_tokens_details"], "no cache writes: none reported")
}

// A turn's input items are read as a conversation: messages of each role,
// a function call and its output, a custom tool call and its output; the
// instructions are the system prompt, and the tools are named (a built-in
// one by its type). AfterToolResult answers it as it answers a Messages
// API turn.
func TestAResponsesTurnIsReadAsAConversation(t *testing.T) {
	o := NewOpenAI(AfterToolResult(Exec("go test ./..."), Say("The tests pass.")))
	defer o.Close()
	first := readEvents(t, postOpenAI(t, o, "/responses", firstResponsesTurn).Body)
	assert.Equal(t, "function_call", first[len(first)-1].data["response"].(map[string]any)["output"].([]any)[0].(map[string]any)["type"])

	second := `{"model":"gpt-5.5","stream":true,"input":[
		{"type":"message","role":"user","content":[{"type":"input_text","text":"fix the tests"}]},
		{"type":"reasoning","summary":[],"encrypted_content":"gAAA"},
		{"type":"custom_tool_call","call_id":"call_0","name":"apply_patch","input":"*** Begin Patch\n*** End Patch"},
		{"type":"custom_tool_call_output","call_id":"call_0","output":"Success."},
		{"type":"function_call","call_id":"call_1","name":"exec_command","arguments":"{\"cmd\":\"go test ./...\"}"},
		{"type":"function_call_output","call_id":"call_1","output":"Process exited with code 1\nOutput:\n--- FAIL: TestLogin"}]}`
	events := readEvents(t, postOpenAI(t, o, "/responses", second).Body)
	output := events[len(events)-1].data["response"].(map[string]any)["output"].([]any)
	assert.Equal(t, "message", output[0].(map[string]any)["type"], "after a tool's output, the report")
	assert.Equal(t, http.StatusNotFound, postOpenAI(t, o, "/chat/completions", `{}`).StatusCode)

	all := o.Requests()
	require.Len(t, all, 3)
	assert.Equal(t, "/v1/chat/completions", all[2].Path)
	turns := o.Turns()
	require.Len(t, turns, 2)
	one := turns[0]
	assert.Equal(t, "gpt-5.5", one.Model)
	assert.True(t, one.Stream)
	assert.Equal(t, "You are Codex.", one.System)
	assert.Equal(t, []string{"exec_command", "apply_patch", "web_search"}, one.Tools)
	assert.Equal(t, "Bearer sk-test", one.Header.Get("Authorization"))
	assert.Equal(t, "developer", one.Messages[0].Role)
	assert.Equal(t, "Run commands with exec_command.\nfix the tests", one.Text())
	assert.Equal(t, "user", one.Last().Role)

	two := turns[1]
	require.Len(t, two.Messages, 5, "the reasoning item is left out")
	assert.Equal(t, []Block{
		{Type: "custom_tool_call", ID: "call_0", Name: "apply_patch", Text: "*** Begin Patch\n*** End Patch"},
		{Type: "tool_use", ID: "call_1", Name: "exec_command", Input: json.RawMessage(`{"cmd":"go test ./..."}`)},
	}, two.ToolUses())
	assert.Equal(t, Block{Type: "tool_result", ToolUseID: "call_1", Text: "Process exited with code 1\nOutput:\n--- FAIL: TestLogin"}, two.ToolResults()[1])
	assert.Equal(t, "tool", two.Last().Role)
	assert.Equal(t, "fix the tests\nSuccess.\nProcess exited with code 1\nOutput:\n--- FAIL: TestLogin", two.Text(), "a patch is no text")
}

// An input that is a string is one message of the user's.
func TestAStringInputIsTheUsersMessage(t *testing.T) {
	o := NewOpenAI(Script(Say("Hello.")))
	defer o.Close()
	postOpenAI(t, o, "/responses", `{"model":"gpt-5.5","input":"say hello"}`)
	require.Len(t, o.Turns(), 1)
	assert.Equal(t, []Message{{Role: "user", Content: []Block{Text("say hello")}}}, o.Turns()[0].Messages)
}

// apiError is the Responses API's error body.
type apiError struct {
	Error struct {
		Message  string  `json:"message"`
		Type     string  `json:"type"`
		Param    *string `json:"param"`
		Code     *string `json:"code"`
		PlanType string  `json:"plan_type"`
		ResetsAt int64   `json:"resets_at"`
	} `json:"error"`
}

func decodeAPIError(t *testing.T, resp *http.Response) apiError {
	t.Helper()
	var e apiError
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
	return e
}

// Errors come as the API gives them: the status, the error object with
// its type and code, the request id in x-request-id, and their headers:
// a rate limit's retry-after (whole seconds, rounded up) and
// x-ratelimit-* headers; a spent quota; Codex's usage limit with its
// plan and reset; a key refused; a script run out, and a path the API
// does not have.
func TestResponsesErrorsComeAsTheAPIGivesThem(t *testing.T) {
	resets := time.Date(2026, 11, 26, 19, 6, 0, 0, time.UTC)
	o := NewOpenAI(Script(
		RateLimitExceeded("gpt-5.5", 1500*time.Millisecond),
		InsufficientQuota(),
		UsageLimitReached("plus", resets),
		InvalidAPIKey(),
	))
	defer o.Close()

	resp := postOpenAI(t, o, "/responses", firstResponsesTurn)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.Equal(t, "req_fake000001", resp.Header.Get("X-Request-Id"))
	assert.Equal(t, "2", resp.Header.Get("Retry-After"))
	assert.Equal(t, "0", resp.Header.Get("X-Ratelimit-Remaining-Tokens"))
	assert.Equal(t, "1.5s", resp.Header.Get("X-Ratelimit-Reset-Tokens"))
	e := decodeAPIError(t, resp)
	assert.Equal(t, "tokens", e.Error.Type)
	require.NotNil(t, e.Error.Code)
	assert.Equal(t, "rate_limit_exceeded", *e.Error.Code)
	assert.Nil(t, e.Error.Param)
	assert.Contains(t, e.Error.Message, "Rate limit reached for gpt-5.5 in organization org-fake on tokens per min (TPM)")
	assert.Contains(t, e.Error.Message, "Please try again in 1.5s.")

	resp = postOpenAI(t, o, "/responses", firstResponsesTurn)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("Retry-After"), "no waiting ends it")
	e = decodeAPIError(t, resp)
	assert.Equal(t, "insufficient_quota", e.Error.Type)
	assert.Equal(t, "insufficient_quota", *e.Error.Code)
	assert.True(t, strings.HasPrefix(e.Error.Message, "You exceeded your current quota, please check your plan and billing details."))

	resp = postOpenAI(t, o, "/responses", firstResponsesTurn)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	e = decodeAPIError(t, resp)
	assert.Equal(t, "usage_limit_reached", e.Error.Type)
	assert.Nil(t, e.Error.Code)
	assert.Equal(t, "plus", e.Error.PlanType)
	assert.Equal(t, resets.Unix(), e.Error.ResetsAt)

	resp = postOpenAI(t, o, "/responses", firstResponsesTurn)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	e = decodeAPIError(t, resp)
	assert.Equal(t, "invalid_request_error", e.Error.Type)
	assert.Equal(t, "invalid_api_key", *e.Error.Code)
	assert.True(t, strings.HasPrefix(e.Error.Message, "Incorrect API key provided: "))

	resp = postOpenAI(t, o, "/responses", firstResponsesTurn)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, decodeAPIError(t, resp).Error.Message, "the script has 4 replies, and this is request 5")

	get, err := http.Get(o.URL + "/models")
	require.NoError(t, err)
	defer get.Body.Close()
	assert.Equal(t, http.StatusNotFound, get.StatusCode)
	e = decodeAPIError(t, get)
	assert.Equal(t, "Invalid URL (GET /v1/models)", e.Error.Message)
	assert.Equal(t, "invalid_request_error", e.Error.Type)
	assert.Len(t, o.Requests(), 6, "every request is recorded")
	assert.Len(t, o.Turns(), 5)
}

// A response may fail midway: the stream starts and ends in
// response.failed with the error's code and message, no output and no
// usage; unstreamed, the response object says the same.
func TestAResponseMayFailMidway(t *testing.T) {
	o := NewOpenAI(Always(ResponseFailed("context_length_exceeded", "Your input exceeds the context window of this model.")))
	defer o.Close()
	events := readEvents(t, postOpenAI(t, o, "/responses", firstResponsesTurn).Body)
	var names []string
	for _, e := range events {
		names = append(names, e.name)
	}
	assert.Equal(t, []string{"response.created", "response.in_progress", "response.failed"}, names)
	failed := events[2].data["response"].(map[string]any)
	assert.Equal(t, "failed", failed["status"])
	assert.Equal(t, map[string]any{"code": "context_length_exceeded", "message": "Your input exceeds the context window of this model."}, failed["error"])
	assert.Equal(t, []any{}, failed["output"])
	assert.Nil(t, failed["usage"])

	resp := postOpenAI(t, o, "/responses", strings.Replace(firstResponsesTurn, `"stream":true`, `"stream":false`, 1))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"status":"failed"`)
}

// A body that is no Responses API request is refused as the API refuses
// it, and still recorded.
func TestABadResponsesRequestIsRefused(t *testing.T) {
	o := NewOpenAI(Always(Say("never")))
	defer o.Close()
	for _, body := range []string{`{`, `{"model":"m"}`, `{"input":7}`, `{"input":[{"type":"message","role":"user","content":7}]}`} {
		assert.Equal(t, http.StatusBadRequest, postOpenAI(t, o, "/responses", body).StatusCode, body)
	}
	assert.Len(t, o.Requests(), 4)
	assert.Len(t, o.Turns(), 4, "each asked for a turn")
}

// FuzzResponsesRequestDecode: any body decodes or is refused, without a
// panic.
func FuzzResponsesRequestDecode(f *testing.F) {
	f.Add(firstResponsesTurn)
	f.Add(`{"input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"x"}]}]}`)
	f.Add(`{"input":[{"role":"user","content":null},{"type":"function_call","arguments":"{"}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		r := &Request{Body: []byte(body)}
		if r.decodeResponses() == nil {
			_ = r.Text()
			_ = r.ToolResults()
			_ = r.ToolUses()
		}
	})
}
