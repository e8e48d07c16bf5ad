package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
)

// Anthropic is a fake Anthropic Messages API on a local httptest server.
// Each POST /v1/messages is answered by the Answerer it was made with,
// streamed as server-sent events when the request asks for a stream (as
// Claude Code always does) and as one JSON message otherwise. POST
// /v1/messages/count_tokens answers a token count; every other path is a
// 404 not_found_error, as the real API gives. Every request is recorded,
// whatever its path, so that a test can assert what the model was sent
// and that nothing else was asked.
//
// An Anthropic is safe for concurrent use; Close stops it.
type Anthropic struct {
	// URL is the server's base URL, http://127.0.0.1:port: what
	// ANTHROPIC_BASE_URL or an SDK's base URL is set to.
	URL string

	srv  *httptest.Server
	book book
}

// An Answerer decides the reply to one request to the Messages API. It is
// called with the request already decoded and recorded, one call at a
// time; it may call the server's Requests and Turns.
type Answerer func(*Request) Reply

// NewAnthropic starts a fake Messages API that answers with answer. A nil
// answer is Script(), which refuses every request as out of script.
func NewAnthropic(answer Answerer) *Anthropic {
	if answer == nil {
		answer = Script()
	}
	a := &Anthropic{book: book{answer: answer}}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	a.URL = a.srv.URL
	return a
}

// Close stops the server, waiting for the requests in flight.
func (a *Anthropic) Close() { a.srv.Close() }

// Requests returns every request the server got so far, in order,
// whatever its path.
func (a *Anthropic) Requests() []*Request { return a.book.all() }

// Turns returns the requests to POST /v1/messages so far, in order: the
// model's turns.
func (a *Anthropic) Turns() []*Request { return a.book.turnsSoFar() }

func (a *Anthropic) serve(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		writeError(w, &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: "fakemodel: reading the body: " + err.Error()}, "")
		return
	}
	req := &Request{Method: hr.Method, Path: hr.URL.Path, Query: hr.URL.RawQuery, Header: hr.Header.Clone(), Body: body,
		turn: hr.Method == http.MethodPost && hr.URL.Path == anthropicTurnPath}
	var decodeErr error
	if req.IsTurn() {
		decodeErr = req.decode() // before the request is shared: it is not changed after
	}
	n := a.book.add(req)
	requestID := fmt.Sprintf("req_fake%06d", n)

	switch {
	case req.IsTurn():
	case hr.Method == http.MethodPost && hr.URL.Path == "/v1/messages/count_tokens":
		w.Header().Set("request-id", requestID)
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"input_tokens":%d}`, max(1, len(body)/4))
		return
	default:
		writeError(w, &APIError{Status: http.StatusNotFound, Type: "not_found_error", Message: "fakemodel: no such endpoint: " + hr.Method + " " + hr.URL.Path}, requestID)
		return
	}
	if decodeErr != nil {
		writeError(w, &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: "fakemodel: " + decodeErr.Error()}, requestID)
		return
	}

	reply, turn := a.book.reply(req)

	addHeaders(w, reply.Header)
	w.Header().Set("request-id", requestID)
	if reply.Err != nil {
		writeError(w, reply.Err, requestID)
		return
	}
	msg := reply.message(req, turn)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(msg)
		return
	}
	stream(w, msg)
}

// Reply is the model's answer to one request: a message of content
// blocks with its stop reason and usage, or an error.
type Reply struct {
	// Content is the message's blocks, in order (Text, ToolUse).
	Content []Block
	// StopReason is the message's stop_reason; "" is "tool_use" when the
	// content has a tool use and "end_turn" otherwise. "max_tokens",
	// "stop_sequence", "pause_turn" and "refusal" are the API's others.
	StopReason string
	// Usage is the tokens the message reports; the zero Usage reports
	// DefaultUsage.
	Usage Usage
	// Model is the model the message names; "" names the requested one.
	Model string
	// Header is added to the response's headers, an error's or a
	// message's (the unified rate-limit headers on a success, say).
	Header http.Header
	// Err, when set, answers with this error instead of a message.
	Err *APIError
	// Failed, when set, answers a streamed turn of the Responses API with
	// a response that fails midway: response.created, then
	// response.failed carrying this error's code and message (see
	// OpenAI). The Messages API's fake does not read it.
	Failed *APIError
}

// Usage is a message's token usage, as the API reports it: InputTokens
// leaves out the cached ones (cache writes and reads are counted apart).
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	// ThoughtsTokens are the tokens the model spent thinking, which the
	// Gemini API counts apart (thoughtsTokenCount); the other fakes do not
	// report them.
	ThoughtsTokens int `json:"-"`
}

// DefaultUsage is the usage a Reply without one reports.
var DefaultUsage = Usage{InputTokens: 1000, OutputTokens: 100}

// Block is one content block: of a reply (text, tool_use) or of a
// request's message (those, and tool_result).
type Block struct {
	Type string `json:"type"` // text, tool_use, tool_result, thinking, image, ...
	// Text is a text block's text; for a tool_result, the text of its
	// content (a string, or the text blocks of a list, joined by
	// newlines).
	Text string `json:"text,omitempty"`
	// ID and Name are a tool_use's id and tool; Input its input, a JSON
	// object.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID and IsError are a tool_result's.
	ToolUseID string `json:"tool_use_id,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
}

// Text is a text block.
func Text(text string) Block { return Block{Type: "text", Text: text} }

// ToolUse is a tool_use block of tool name with input, which is
// marshalled to JSON (a json.RawMessage goes as it is). An input that
// does not marshal panics: it is the test's mistake.
func ToolUse(name string, input any) Block {
	raw, ok := input.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(input); err != nil {
			panic("fakemodel: ToolUse input: " + err.Error())
		}
	}
	return Block{Type: "tool_use", Name: name, Input: raw}
}

// Say is a reply of one text block that ends the turn.
func Say(text string) Reply { return Reply{Content: []Block{Text(text)}} }

// Use is a reply that calls tool name with input (see ToolUse).
func Use(name string, input any) Reply { return Reply{Content: []Block{ToolUse(name, input)}} }

// Bash is a reply that runs command with Claude Code's Bash tool.
func Bash(command string) Reply {
	return Use("Bash", map[string]string{"command": command, "description": "Run " + command})
}

// WithUsage returns the reply reporting u.
func (r Reply) WithUsage(u Usage) Reply {
	r.Usage = u
	return r
}

// WithHeader returns the reply with a response header added (to an
// error's or a message's response).
func (r Reply) WithHeader(key, value string) Reply {
	h := r.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Add(key, value)
	r.Header = h
	return r
}

// message is the reply as the API's message object, for the request's
// turn-th answer.
func (r Reply) message(req *Request, turn int) message {
	m := message{
		ID: fmt.Sprintf("msg_fake%06d", turn), Type: "message", Role: "assistant",
		Model: r.Model, Usage: r.Usage, Content: []Block{},
	}
	if m.Model == "" {
		m.Model = req.Model
	}
	if m.Usage == (Usage{}) {
		m.Usage = DefaultUsage
	}
	uses := 0
	for _, b := range r.Content {
		if b.Type == "tool_use" {
			if b.ID == "" {
				b.ID = fmt.Sprintf("toolu_fake%06d_%d", turn, uses)
			}
			if len(b.Input) == 0 {
				b.Input = json.RawMessage(`{}`)
			}
			uses++
		}
		m.Content = append(m.Content, b)
	}
	stop := r.StopReason
	switch {
	case stop == "" && uses > 0:
		stop = "tool_use"
	case stop == "":
		stop = "end_turn"
	}
	m.StopReason = &stop
	return m
}

// message is the API's message object.
type message struct {
	ID           string  `json:"id"`
	Type         string  `json:"type"`
	Role         string  `json:"role"`
	Model        string  `json:"model"`
	Content      []Block `json:"content"`
	StopReason   *string `json:"stop_reason"` // null in message_start
	StopSequence *string `json:"stop_sequence"`
	Usage        Usage   `json:"usage"`
}

// stream writes msg as the API streams a message: message_start (its
// usage with one output token so far), a ping, each block as
// content_block_start, deltas (text_delta; input_json_delta, the input in
// pieces) and content_block_stop, then message_delta with the stop reason
// and the output tokens, and message_stop.
func stream(w http.ResponseWriter, msg message) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(event string, data any) {
		payload, err := json.Marshal(data)
		if err != nil {
			panic("fakemodel: " + err.Error()) // every event is made here
		}
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, payload)
		if flusher != nil {
			flusher.Flush()
		}
	}

	start := msg
	start.Content, start.StopReason = []Block{}, nil // null until the end
	start.Usage.OutputTokens = min(1, msg.Usage.OutputTokens)
	send("message_start", map[string]any{"type": "message_start", "message": start})
	send("ping", map[string]string{"type": "ping"})
	for i, b := range msg.Content {
		opening := b
		switch b.Type {
		case "text":
			opening.Text = ""
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": textBlock{Type: "text"}})
			for _, piece := range pieces(b.Text, 24) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]string{"type": "text_delta", "text": piece}})
			}
		case "tool_use":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}})
			for _, piece := range pieces(string(b.Input), 16) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]string{"type": "input_json_delta", "partial_json": piece}})
			}
		default: // a block the fake does not stream in pieces: whole
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": b})
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": *msg.StopReason, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": msg.Usage.OutputTokens}})
	send("message_stop", map[string]string{"type": "message_stop"})
}

// textBlock is an empty text block, as content_block_start opens one: its
// "text" is there, and empty.
type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// pieces cuts s into pieces of at most n bytes, never inside a UTF-8
// sequence; an empty s is one empty piece.
func pieces(s string, n int) []string {
	if s == "" {
		return []string{""}
	}
	var out []string
	for len(s) > 0 {
		k := min(n, len(s))
		for k < len(s) && !utf8Start(s[k]) {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// joinText joins the text of blocks, one a line; a custom tool call's
// input is no text.
func joinText(blocks []Block) string {
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Text == "" || bl.Type == "custom_tool_call" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(bl.Text)
	}
	return b.String()
}
