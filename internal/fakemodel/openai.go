package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"
)

// OpenAI is a fake OpenAI Responses API on a local httptest server. Each
// POST /v1/responses is answered by the Answerer it was made with,
// streamed as server-sent events when the request asks for a stream (as
// Codex always does) and as one response object otherwise; every other
// path is a 404 in the API's own words. Every request is recorded,
// whatever its path, so that a test can assert what the model was sent
// and that nothing else was asked.
//
// The same Answerers and Replies serve both fakes. A turn's input items
// are read into the Request's Messages: a message item is a Message of its
// role (user, developer, system, assistant) holding its text parts as
// text blocks; a function_call item is an assistant Message with a
// tool_use block (ID its call_id, Name, Input its arguments); a
// custom_tool_call item (Codex's apply_patch) one with a custom_tool_call
// block (Text its input); a function_call_output or
// custom_tool_call_output item is a Message of role tool with a
// tool_result block (ToolUseID its call_id, Text its output). Reasoning
// items are left out. So Script, Always and AfterToolResult answer a
// Responses API client as they answer a Messages API one.
//
// A Reply's blocks become the response's output items: a text block a
// message of one output_text part, a tool_use block a function_call (its
// Input the arguments, as a string of JSON; see Exec), a custom_tool_call
// block a custom_tool_call (see ApplyPatch). StopReason is not read: a
// response that ends has status completed. The Usage is reported as the
// Responses API counts it: input_tokens is InputTokens,
// CacheCreationInputTokens and CacheReadInputTokens together;
// input_tokens_details.cached_tokens the cache reads, and
// cache_write_tokens the cache writes (when there are any, as Codex reads
// them). Errors are the API's: RateLimitExceeded, InsufficientQuota,
// UsageLimitReached, ResponseFailed, or any Error with a Code.
//
// An OpenAI is safe for concurrent use; Close stops it.
type OpenAI struct {
	// URL is the API's base URL, http://127.0.0.1:port/v1: what an SDK's
	// base URL, OPENAI_BASE_URL or a Codex model provider's base_url is
	// set to.
	URL string

	srv  *httptest.Server
	book book
}

// NewOpenAI starts a fake Responses API that answers with answer. A nil
// answer is Script(), which refuses every request as out of script.
func NewOpenAI(answer Answerer) *OpenAI {
	if answer == nil {
		answer = Script()
	}
	o := &OpenAI{book: book{answer: answer}}
	o.srv = httptest.NewServer(http.HandlerFunc(o.serve))
	o.URL = o.srv.URL + "/v1"
	return o
}

// Close stops the server, waiting for the requests in flight.
func (o *OpenAI) Close() { o.srv.Close() }

// Requests returns every request the server got so far, in order,
// whatever its path.
func (o *OpenAI) Requests() []*Request { return o.book.all() }

// Turns returns the requests to POST /v1/responses so far, in order: the
// model's turns.
func (o *OpenAI) Turns() []*Request { return o.book.turnsSoFar() }

func (o *OpenAI) serve(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		writeOpenAIError(w, &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: "fakemodel: reading the body: " + err.Error()})
		return
	}
	req := &Request{Method: hr.Method, Path: hr.URL.Path, Query: hr.URL.RawQuery, Header: hr.Header.Clone(), Body: body,
		turn: hr.Method == http.MethodPost && hr.URL.Path == openAITurnPath}
	var decodeErr error
	if req.IsTurn() {
		decodeErr = req.decodeResponses() // before the request is shared: it is not changed after
	}
	n := o.book.add(req)
	w.Header().Set("x-request-id", fmt.Sprintf("req_fake%06d", n))
	switch {
	case !req.IsTurn():
		// The API's answer to a path it does not have.
		writeOpenAIError(w, &APIError{Status: http.StatusNotFound, Type: "invalid_request_error",
			Message: "Invalid URL (" + hr.Method + " " + hr.URL.Path + ")"})
		return
	case decodeErr != nil:
		writeOpenAIError(w, &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: "fakemodel: " + decodeErr.Error()})
		return
	}

	reply, turn := o.book.reply(req)
	addHeaders(w, reply.Header)
	if reply.Err != nil {
		writeOpenAIError(w, reply.Err)
		return
	}
	resp := reply.response(req, turn)
	if !req.Stream {
		if reply.Failed != nil {
			resp.fail(reply.Failed)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	streamResponse(w, resp, reply.Failed)
}

// Exec is a reply that runs command with Codex's exec_command tool.
func Exec(command string) Reply {
	return Use("exec_command", map[string]string{"cmd": command})
}

// ApplyPatch is a reply that edits files with Codex's apply_patch tool, a
// custom (freeform) tool whose input is the patch itself:
//
//	*** Begin Patch
//	*** Add File: notes.txt
//	+one line
//	*** End Patch
func ApplyPatch(patch string) Reply {
	return Reply{Content: []Block{{Type: "custom_tool_call", Name: "apply_patch", Text: patch}}}
}

// response is the Responses API's response object.
type response struct {
	ID        string           `json:"id"`
	Object    string           `json:"object"` // response
	CreatedAt int64            `json:"created_at"`
	Status    string           `json:"status"` // in_progress, completed, failed
	Model     string           `json:"model"`
	Output    []map[string]any `json:"output"`
	Usage     *openAIUsage     `json:"usage"`
	Error     map[string]any   `json:"error"`

	items []openAIItem // the output, to stream
}

// openAIUsage is a response's usage, as the Responses API reports it.
type openAIUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

// openAIItem is one output item of a response.
type openAIItem struct {
	kind   string // message, function_call, custom_tool_call
	id     string
	callID string // of a tool call
	name   string // of a tool call
	// text is a message's text, a function_call's arguments or a
	// custom_tool_call's input.
	text string
}

// object returns the item as the API shows it: done, whole and
// completed; else as output_item.added opens it, in progress and empty.
func (it openAIItem) object(done bool) map[string]any {
	status, text := "in_progress", ""
	if done {
		status, text = "completed", it.text
	}
	obj := map[string]any{"id": it.id, "type": it.kind, "status": status}
	switch it.kind {
	case "message":
		obj["role"] = "assistant"
		content := []any{}
		if done {
			content = append(content, outputText(text))
		}
		obj["content"] = content
	case "function_call":
		obj["call_id"], obj["name"], obj["arguments"] = it.callID, it.name, text
	case "custom_tool_call":
		obj["call_id"], obj["name"], obj["input"] = it.callID, it.name, text
	}
	return obj
}

// outputText is a message's output_text part.
func outputText(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
}

// response returns the reply as the API's response object, completed, for
// the request's turn-th answer.
func (r Reply) response(req *Request, turn int) response {
	resp := response{
		ID: fmt.Sprintf("resp_fake%06d", turn), Object: "response", CreatedAt: time.Now().Unix(),
		Status: "completed", Model: r.Model, Output: []map[string]any{},
	}
	if resp.Model == "" {
		resp.Model = req.Model
	}
	for i, b := range r.Content {
		it := openAIItem{kind: "message", text: b.Text, id: fmt.Sprintf("msg_fake%06d_%d", turn, i)}
		switch b.Type {
		case "tool_use":
			it = openAIItem{kind: "function_call", id: fmt.Sprintf("fc_fake%06d_%d", turn, i), name: b.Name, text: string(b.Input)}
			if it.text == "" {
				it.text = "{}"
			}
		case "custom_tool_call":
			it = openAIItem{kind: "custom_tool_call", id: fmt.Sprintf("ctc_fake%06d_%d", turn, i), name: b.Name, text: b.Text}
		}
		if it.kind != "message" {
			it.callID = b.ID
			if it.callID == "" {
				it.callID = fmt.Sprintf("call_fake%06d_%d", turn, i)
			}
		}
		resp.items = append(resp.items, it)
		resp.Output = append(resp.Output, it.object(true))
	}
	u := r.Usage
	if u == (Usage{}) {
		u = DefaultUsage
	}
	usage := &openAIUsage{
		InputTokens:  u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		OutputTokens: u.OutputTokens,
	}
	usage.InputTokensDetails.CachedTokens = u.CacheReadInputTokens
	usage.InputTokensDetails.CacheWriteTokens = u.CacheCreationInputTokens
	usage.TotalTokens = usage.InputTokens + usage.OutputTokens
	resp.Usage = usage
	return resp
}

// fail turns the response into one that failed with e: no output, no
// usage, the error's code and message.
func (resp *response) fail(e *APIError) {
	resp.Status, resp.Output, resp.Usage, resp.items = "failed", []map[string]any{}, nil, nil
	resp.Error = map[string]any{"code": e.Code, "message": e.Message}
}

// streamResponse writes resp as the API streams a response, each event
// with its sequence_number: response.created and response.in_progress
// (no output yet), then each item opened (response.output_item.added),
// filled (a message's content part with its text in output_text deltas;
// a function call's arguments, a custom tool call's input, in deltas) and
// closed (response.output_item.done), then response.completed with the
// whole output and the usage. With failed, response.failed follows
// response.in_progress instead, and the stream ends.
func streamResponse(w http.ResponseWriter, resp response, failed *APIError) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	seq := 0
	send := func(event string, data map[string]any) {
		data["type"], data["sequence_number"] = event, seq
		seq++
		payload, err := json.Marshal(data)
		if err != nil {
			panic("fakemodel: " + err.Error()) // every event is made here
		}
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, payload)
		if flusher != nil {
			flusher.Flush()
		}
	}

	start := resp
	start.Status, start.Output, start.Usage = "in_progress", []map[string]any{}, nil
	send("response.created", map[string]any{"response": start})
	send("response.in_progress", map[string]any{"response": start})
	if failed != nil {
		resp.fail(failed)
		send("response.failed", map[string]any{"response": resp})
		return
	}
	for i, it := range resp.items {
		send("response.output_item.added", map[string]any{"output_index": i, "item": it.object(false)})
		at := func(more map[string]any) map[string]any {
			more["item_id"], more["output_index"] = it.id, i
			return more
		}
		switch it.kind {
		case "message":
			send("response.content_part.added", at(map[string]any{"content_index": 0, "part": outputText("")}))
			for _, piece := range pieces(it.text, 24) {
				send("response.output_text.delta", at(map[string]any{"content_index": 0, "delta": piece, "logprobs": []any{}}))
			}
			send("response.output_text.done", at(map[string]any{"content_index": 0, "text": it.text, "logprobs": []any{}}))
			send("response.content_part.done", at(map[string]any{"content_index": 0, "part": outputText(it.text)}))
		case "function_call":
			for _, piece := range pieces(it.text, 16) {
				send("response.function_call_arguments.delta", at(map[string]any{"delta": piece}))
			}
			send("response.function_call_arguments.done", at(map[string]any{"arguments": it.text}))
		case "custom_tool_call":
			for _, piece := range pieces(it.text, 16) {
				send("response.custom_tool_call_input.delta", at(map[string]any{"delta": piece}))
			}
			send("response.custom_tool_call_input.done", at(map[string]any{"input": it.text}))
		}
		send("response.output_item.done", map[string]any{"output_index": i, "item": it.object(true)})
	}
	send("response.completed", map[string]any{"response": resp})
}
