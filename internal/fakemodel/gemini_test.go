package fakemodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// postGemini sends body to the server's path as Gemini CLI does (its key
// in x-goog-api-key), and returns the response.
func postGemini(t *testing.T, g *Gemini, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, g.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Goog-Api-Key", "test-key")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// geminiStream is the path of a streamed turn, as Gemini CLI asks it.
const geminiStream = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"

// readGeminiChunks reads a body of server-sent events as the Gemini API
// streams them: data lines alone, each event ended by a blank line, each
// line by CRLF.
func readGeminiChunks(t *testing.T, body io.Reader) []map[string]any {
	t.Helper()
	raw, err := io.ReadAll(body)
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(raw, []byte("\r\n\r\n")), "each event ends with a blank line, CRLF")
	var chunks []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		require.True(t, ok, "a line of the stream is data alone: %q", line)
		var chunk map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &chunk), line)
		chunks = append(chunks, chunk)
	}
	require.NoError(t, sc.Err())
	return chunks
}

// candidate returns a response's first candidate.
func candidate(t *testing.T, resp map[string]any) map[string]any {
	t.Helper()
	cands, ok := resp["candidates"].([]any)
	require.True(t, ok && len(cands) == 1, "one candidate: %v", resp)
	return cands[0].(map[string]any)
}

// firstGeminiTurn is a session's first request as Gemini CLI 0.61.0 sends
// it: the session's context and the person's prompt in one user content,
// its system instruction, thinking asked for, and its tools (functions,
// and a built-in one).
const firstGeminiTurn = `{"contents":[{"role":"user","parts":[
		{"text":"<session_context>\nThis is the Gemini CLI.\n</session_context>"},{"text":"fix the tests"}]}],
	"systemInstruction":{"role":"user","parts":[{"text":"You are Gemini CLI."}]},
	"generationConfig":{"temperature":1,"maxOutputTokens":8192,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}},
	"tools":[{"functionDeclarations":[{"name":"run_shell_command","parameters":{"type":"object"}},{"name":"write_file"}]},{"googleSearch":{}}]}`

// A reply of a thought, a text and a function call streams as the Gemini
// API streams it: a chunk for each piece of the text, one for the call
// whole, every chunk of the model's role with the prompt's tokens, and
// the last with the finishReason and the whole usage (the cached and the
// thinking tokens apart).
func TestAGeminiReplyStreamsAsTheAPIStreamsIt(t *testing.T) {
	g := NewGemini(Script(Reply{
		Content: []Block{{Type: "thinking", Text: "The tests first."}, Text("I'll run the tests — all of them."),
			ToolUse("run_shell_command", map[string]string{"command": "go test ./..."})},
		Usage: Usage{InputTokens: 12, CacheReadInputTokens: 9000, OutputTokens: 57, ThoughtsTokens: 30},
	}))
	defer g.Close()
	resp := postGemini(t, g, geminiStream, firstGeminiTurn)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	chunks := readGeminiChunks(t, resp.Body)
	require.Len(t, chunks, 4, "the thought, the text in two pieces, the call")

	thought, text := "", ""
	var call map[string]any
	for i, c := range chunks {
		cand := candidate(t, c)
		content := cand["content"].(map[string]any)
		assert.Equal(t, "model", content["role"])
		parts := content["parts"].([]any)
		require.Len(t, parts, 1, "a part a chunk")
		part := parts[0].(map[string]any)
		switch {
		case part["thought"] == true:
			thought += part["text"].(string)
		case part["functionCall"] != nil:
			call = part["functionCall"].(map[string]any)
		default:
			text += part["text"].(string)
		}
		assert.Equal(t, "gemini-2.5-flash", c["modelVersion"], "the model the path names")
		assert.Equal(t, "fakeresp000001", c["responseId"])
		if i < len(chunks)-1 {
			assert.NotContains(t, cand, "finishReason", "only the last chunk finishes")
			assert.Equal(t, map[string]any{"promptTokenCount": 9012.0, "totalTokenCount": 9012.0,
				"promptTokensDetails": []any{map[string]any{"modality": "TEXT", "tokenCount": 9012.0}}}, c["usageMetadata"])
		}
	}
	assert.Equal(t, "The tests first.", thought)
	assert.Equal(t, "I'll run the tests — all of them.", text, "the text, in pieces that never cut a rune")
	assert.Equal(t, map[string]any{"name": "run_shell_command", "args": map[string]any{"command": "go test ./..."}}, call,
		"no id: the API gives none")

	last := chunks[len(chunks)-1]
	assert.Equal(t, "STOP", candidate(t, last)["finishReason"])
	assert.Equal(t, map[string]any{
		"promptTokenCount": 9012.0, "cachedContentTokenCount": 9000.0, "candidatesTokenCount": 57.0, "thoughtsTokenCount": 30.0,
		"totalTokenCount":     9012.0 + 57 + 30,
		"promptTokensDetails": []any{map[string]any{"modality": "TEXT", "tokenCount": 9012.0}},
	}, last["usageMetadata"], "the prompt counts the cached tokens too, and the total the thoughts")
}

// A generateContent turn gets the whole response as one object; a
// streamGenerateContent without alt=sse gets the chunks as one JSON
// array, as the API streams without SSE. A reply may name another model
// and give its call an id; the v1 path is served as v1beta.
func TestAnUnstreamedGeminiResponseIsOneObject(t *testing.T) {
	g := NewGemini(Script(
		Reply{Content: []Block{Text("Done."), {Type: "tool_use", ID: "call-7", Name: "write_file"}}, Model: "gemini-2.5-pro"},
		Say("Again."),
	))
	defer g.Close()
	resp := postGemini(t, g, "/v1/models/gemini-2.5-flash:generateContent", firstGeminiTurn)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	assert.Equal(t, "gemini-2.5-pro", body["modelVersion"])
	cand := candidate(t, body)
	assert.Equal(t, "STOP", cand["finishReason"])
	assert.Equal(t, []any{map[string]any{"text": "Done."},
		map[string]any{"functionCall": map[string]any{"id": "call-7", "name": "write_file", "args": map[string]any{}}}},
		cand["content"].(map[string]any)["parts"])
	assert.Equal(t, 1100.0, body["usageMetadata"].(map[string]any)["totalTokenCount"], "DefaultUsage")

	resp = postGemini(t, g, "/v1beta/models/gemini-2.5-flash:streamGenerateContent", firstGeminiTurn)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var array []map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&array))
	require.Len(t, array, 1)
	assert.Equal(t, "Again.", candidate(t, array[0])["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"])

	turns := g.Turns()
	require.Len(t, turns, 2)
	assert.False(t, turns[0].Stream)
	assert.True(t, turns[1].Stream)
}

// The StopReason is the candidate's finishReason, named as the Gemini
// API names it.
func TestAStopReasonIsGeminisFinishReason(t *testing.T) {
	for stop, finish := range map[string]string{
		"": "STOP", "end_turn": "STOP", "tool_use": "STOP", "max_tokens": "MAX_TOKENS", "refusal": "SAFETY",
		"MALFORMED_FUNCTION_CALL": "MALFORMED_FUNCTION_CALL",
	} {
		assert.Equal(t, finish, Reply{StopReason: stop}.geminiFinishReason(), stop)
	}
	g := NewGemini(Always(Reply{StopReason: "max_tokens"}))
	defer g.Close()
	chunks := readGeminiChunks(t, postGemini(t, g, geminiStream, firstGeminiTurn).Body)
	require.Len(t, chunks, 1, "a reply without content is one chunk")
	assert.Equal(t, "MAX_TOKENS", candidate(t, chunks[0])["finishReason"])
	assert.Equal(t, []any{map[string]any{"text": ""}}, candidate(t, chunks[0])["content"].(map[string]any)["parts"])
}

// A turn's contents are read as a conversation, as Gemini CLI sends them
// after a tool ran: the model's function call (with its thought
// signature, left out) is an assistant message with a tool_use, and the
// function's response a user message with a tool_result (an output; an
// error is the tool's error). AfterToolResult answers it as it answers
// Claude Code.
func TestAGeminiTurnIsReadAsAConversation(t *testing.T) {
	g := NewGemini(AfterToolResult(Use("run_shell_command", map[string]string{"command": "go test ./..."}), Say("The tests pass.")))
	defer g.Close()
	first := readGeminiChunks(t, postGemini(t, g, geminiStream, firstGeminiTurn).Body)
	assert.Contains(t, candidate(t, first[0])["content"].(map[string]any)["parts"].([]any)[0], "functionCall")

	second := `{"contents":[{"role":"user","parts":[{"text":"fix the tests"}]},
		{"role":"model","parts":[{"text":"Reading.","thought":true},{"functionCall":{"id":"c1","name":"read_file","args":{"path":"a.go"}},"thoughtSignature":"skip_thought_signature_validator"}]},
		{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"read_file","response":{"error":"File not found: a.go"}}}]},
		{"role":"model","parts":[{"functionCall":{"id":"c2","name":"run_shell_command","args":{"command":"go test ./..."}}}]},
		{"role":"user","parts":[{"functionResponse":{"id":"c2","name":"run_shell_command","response":{"output":"Output: --- FAIL: TestLogin\nExit Code: 1"}}}]}]}`
	chunks := readGeminiChunks(t, postGemini(t, g, geminiStream, second).Body)
	assert.Equal(t, "The tests pass.", candidate(t, chunks[0])["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"],
		"after a tool's response, the report")

	turns := g.Turns()
	require.Len(t, turns, 2)
	one := turns[0]
	assert.Equal(t, "gemini-2.5-flash", one.Model)
	assert.True(t, one.Stream)
	assert.Equal(t, "alt=sse", one.Query)
	assert.Equal(t, 8192, one.MaxTokens)
	assert.Equal(t, "You are Gemini CLI.", one.System)
	assert.Equal(t, []string{"run_shell_command", "write_file", "googleSearch"}, one.Tools)
	assert.Equal(t, "test-key", one.Header.Get("X-Goog-Api-Key"))
	assert.Equal(t, "<session_context>\nThis is the Gemini CLI.\n</session_context>\nfix the tests", one.Text())
	assert.Equal(t, "user", one.Last().Role)

	two := turns[1]
	require.Len(t, two.Messages, 5)
	assert.Equal(t, "assistant", two.Messages[1].Role, "the model's role")
	assert.Equal(t, Block{Type: "thinking", Text: "Reading."}, two.Messages[1].Content[0])
	assert.Equal(t, []Block{
		{Type: "tool_use", ID: "c1", Name: "read_file", Input: json.RawMessage(`{"path":"a.go"}`)},
		{Type: "tool_use", ID: "c2", Name: "run_shell_command", Input: json.RawMessage(`{"command":"go test ./..."}`)},
	}, two.ToolUses())
	assert.Equal(t, []Block{
		{Type: "tool_result", ToolUseID: "c1", Name: "read_file", Text: "File not found: a.go", IsError: true},
		{Type: "tool_result", ToolUseID: "c2", Name: "run_shell_command", Text: "Output: --- FAIL: TestLogin\nExit Code: 1"},
	}, two.ToolResults())
	assert.Equal(t, "user", two.Last().Role, "a function's response comes in the user's role")
}

// A function response that is neither an output nor an error is its
// object as it came; none is no text.
func TestAFunctionResponseOfAnotherShapeIsItsJSON(t *testing.T) {
	for raw, want := range map[string]string{
		`{"output":""}`:         "",
		`{"result":{"n":1}}`:    `{"result":{"n":1}}`,
		`null`:                  "",
		``:                      "",
		`{"output":7}`:          `{"output":7}`,
		`{"error":"no","x":1}`:  "no",
		`{"output":"a\u00e9b"}`: "aéb",
	} {
		text, _ := functionResponseText(json.RawMessage(raw))
		assert.Equal(t, want, text, raw)
	}
}

// googleError is the Gemini API's error body.
type googleError struct {
	Error struct {
		Code    int              `json:"code"`
		Message string           `json:"message"`
		Status  string           `json:"status"`
		Details []map[string]any `json:"details"`
	} `json:"error"`
}

func decodeGoogleError(t *testing.T, resp *http.Response) googleError {
	t.Helper()
	var e googleError
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
	return e
}

// detail returns the error's detail of type typ.
func (e googleError) detail(typ string) map[string]any {
	for _, d := range e.Error.Details {
		if d["@type"] == "type.googleapis.com/google.rpc."+typ {
			return d
		}
	}
	return nil
}

// Errors come as the Gemini API gives them: the HTTP status, and the
// error object with its code, message, status and details: a quota per
// minute with its violation and the delay to retry after, a quota per
// day, a key it does not know, a script run out (INVALID_ARGUMENT, the
// status a 400 stands for), and another fake's error (its status from
// its code).
func TestGeminiErrorsComeAsTheAPIGivesThem(t *testing.T) {
	g := NewGemini(Script(
		QuotaPerMinute("gemini-2.5-flash", 29500*time.Millisecond),
		QuotaPerDay("gemini-2.5-flash", 0),
		APIKeyInvalid(),
		Error(http.StatusServiceUnavailable, "overloaded", "The model is overloaded. Please try again later."),
	))
	defer g.Close()

	resp := postGemini(t, g, geminiStream, firstGeminiTurn)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "application/json; charset=UTF-8", resp.Header.Get("Content-Type"))
	e := decodeGoogleError(t, resp)
	assert.Equal(t, 429, e.Error.Code)
	assert.Equal(t, "RESOURCE_EXHAUSTED", e.Error.Status)
	assert.True(t, strings.HasPrefix(e.Error.Message, "You exceeded your current quota, please check your plan and billing details."))
	assert.Contains(t, e.Error.Message, "* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10, model: gemini-2.5-flash\nPlease retry in 29.5s.")
	violation := e.detail("QuotaFailure")["violations"].([]any)[0].(map[string]any)
	assert.Equal(t, "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", violation["quotaId"])
	assert.Equal(t, map[string]any{"location": "global", "model": "gemini-2.5-flash"}, violation["quotaDimensions"])
	assert.Equal(t, "29s", e.detail("RetryInfo")["retryDelay"], "whole seconds")
	assert.NotNil(t, e.detail("Help"))

	e = decodeGoogleError(t, postGemini(t, g, geminiStream, firstGeminiTurn))
	assert.Equal(t, "RESOURCE_EXHAUSTED", e.Error.Status)
	assert.Contains(t, e.Error.Message, "limit: 250, model: gemini-2.5-flash")
	assert.NotContains(t, e.Error.Message, "Please retry in", "no delay given")
	assert.Equal(t, "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
		e.detail("QuotaFailure")["violations"].([]any)[0].(map[string]any)["quotaId"])
	assert.Nil(t, e.detail("RetryInfo"))

	resp = postGemini(t, g, geminiStream, firstGeminiTurn)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	e = decodeGoogleError(t, resp)
	assert.Equal(t, "INVALID_ARGUMENT", e.Error.Status)
	assert.Equal(t, "API key not valid. Please pass a valid API key.", e.Error.Message)
	assert.Equal(t, "API_KEY_INVALID", e.detail("ErrorInfo")["reason"])

	resp = postGemini(t, g, geminiStream, firstGeminiTurn)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "UNAVAILABLE", decodeGoogleError(t, resp).Error.Status, "a type that is no Google status: the code's")

	resp = postGemini(t, g, geminiStream, firstGeminiTurn)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	e = decodeGoogleError(t, resp)
	assert.Equal(t, "INVALID_ARGUMENT", e.Error.Status)
	assert.Contains(t, e.Error.Message, "the script has 4 replies, and this is request 5")
	assert.Len(t, g.Turns(), 5)
}

// The API's other paths: countTokens answers a count and is no turn; a
// path or method it does not have is a 404 NOT_FOUND; a request without
// a key, in the header or ?key=, is refused as the API refuses it. Every
// one is recorded.
func TestGeminiAnswersItsOtherPathsAsTheAPIDoes(t *testing.T) {
	g := NewGemini(Always(Say("hello")))
	defer g.Close()
	resp := postGemini(t, g, "/v1beta/models/gemini-2.5-flash:countTokens", firstGeminiTurn)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var count map[string]int
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&count))
	assert.Positive(t, count["totalTokens"])

	for _, path := range []string{"/v1beta/models/gemini-2.5-flash:embedContent", "/v1beta/models", "/v1beta/models/:generateContent", "/v1/responses"} {
		resp := postGemini(t, g, path, firstGeminiTurn)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
		assert.Equal(t, "NOT_FOUND", decodeGoogleError(t, resp).Error.Status, path)
	}
	get, err := http.Get(g.URL + "/v1beta/models/gemini-2.5-flash:generateContent?key=k")
	require.NoError(t, err)
	defer get.Body.Close()
	assert.Equal(t, http.StatusNotFound, get.StatusCode, "a turn is a POST")

	keyless, err := http.Post(g.URL+geminiStream, "application/json", strings.NewReader(firstGeminiTurn))
	require.NoError(t, err)
	defer keyless.Body.Close()
	assert.Equal(t, http.StatusForbidden, keyless.StatusCode)
	assert.Equal(t, "PERMISSION_DENIED", decodeGoogleError(t, keyless).Error.Status)
	inQuery, err := http.Post(g.URL+geminiStream+"&key=k", "application/json", strings.NewReader(firstGeminiTurn))
	require.NoError(t, err)
	defer inQuery.Body.Close()
	assert.Equal(t, http.StatusOK, inQuery.StatusCode, "a key in the query")

	assert.Len(t, g.Requests(), 8, "every request is recorded")
	assert.Len(t, g.Turns(), 2, "the keyless turn and the one with ?key=")
}

// A body that is no generateContent request is refused as the API refuses
// it, and still recorded.
func TestABadGeminiRequestIsRefused(t *testing.T) {
	g := NewGemini(Always(Say("never")))
	defer g.Close()
	for _, body := range []string{`{`, `{}`, `{"contents":[]}`, `{"contents":7}`,
		`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":7}]}`} {
		resp := postGemini(t, g, geminiStream, body)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
		assert.Equal(t, "INVALID_ARGUMENT", decodeGoogleError(t, resp).Error.Status, body)
	}
	assert.Len(t, g.Requests(), 5)
	assert.Len(t, g.Turns(), 5, "each asked for a turn")
}

// FuzzGeminiRequestDecode: any body decodes or is refused, without a
// panic.
func FuzzGeminiRequestDecode(f *testing.F) {
	f.Add(firstGeminiTurn)
	f.Add(`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"x","args":null}},{"thoughtSignature":"s"}]}]}`)
	f.Add(`{"contents":[{"parts":[{"functionResponse":{"response":[1]}},{"inlineData":{}},{"text":"t","thought":true}]}],"tools":[{"codeExecution":{}}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		r := &Request{Body: []byte(body)}
		if r.decodeGemini() == nil {
			_ = r.Text()
			_ = r.ToolResults()
			_ = r.ToolUses()
		}
	})
}
