package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
)

// Gemini is a fake Gemini API (the Gemini Developer API's
// generateContent, as Gemini CLI and google.golang.org/genai use it) on a
// local httptest server. Each POST /v1beta/models/<model>:generateContent
// is answered by the Answerer it was made with as one
// GenerateContentResponse, and each :streamGenerateContent as the API
// streams one: server-sent events with ?alt=sse (as Gemini CLI and the
// SDKs ask), a JSON array of the chunks without. /v1/models/... is served
// the same. POST .../models/<model>:countTokens answers a token count;
// every other path is a 404 NOT_FOUND in the API's words. A request
// without an API key (the x-goog-api-key header, or ?key=) is refused with
// the 403 PERMISSION_DENIED the API gives; any key is taken. Every request
// is recorded, whatever its path, so that a test can assert what the
// model was sent and that nothing else was asked.
//
// The same Answerers and Replies serve every fake. A turn's contents are
// read into the Request's Messages: a content of role model is an
// assistant Message, one of role user a user Message; a text part is a
// text block (a thought, "thought": true, a thinking block); a
// functionCall part a tool_use block (ID its id, Name, Input its args); a
// functionResponse part a tool_result block (ToolUseID its id, Name, Text
// its response's output, or its error with IsError, or else the response
// object as JSON). The model is the one the path names; systemInstruction
// is the system prompt; generationConfig.maxOutputTokens is MaxTokens;
// Tools names each function declared (a built-in tool, such as
// googleSearch, by its key). So Script, Always and AfterToolResult answer
// Gemini CLI as they answer Claude Code.
//
// A Reply's blocks become the candidate's parts: a text block a text part,
// a thinking block a thought, a tool_use block a functionCall (its id
// only when the block has one: the API gives none, and Gemini CLI makes
// its own). StopReason is the finishReason: "" is STOP, "max_tokens"
// MAX_TOKENS, "refusal" SAFETY; any other is sent as it is
// (MALFORMED_FUNCTION_CALL, say). Streamed, the text comes in pieces, a
// function call whole in a chunk of its own, and the last chunk carries
// the finishReason and the whole usage; each chunk before it the prompt's
// tokens alone, as the API sends them. The Usage is reported as the
// Gemini API counts it: promptTokenCount is InputTokens,
// CacheCreationInputTokens and CacheReadInputTokens together,
// cachedContentTokenCount the cache reads, candidatesTokenCount
// OutputTokens, thoughtsTokenCount ThoughtsTokens, and totalTokenCount all
// of them. Errors are the API's ({"error":{"code","message","status",
// "details"}}): QuotaPerMinute, QuotaPerDay, APIKeyInvalid, or any Error
// (its Type the status, RESOURCE_EXHAUSTED say, or else the status the
// HTTP code stands for; Fields["details"] the details).
//
// A Gemini is safe for concurrent use; Close stops it.
type Gemini struct {
	// URL is the server's base URL, http://127.0.0.1:port: what
	// GOOGLE_GEMINI_BASE_URL (Gemini CLI) or genai's
	// HTTPOptions.BaseURL is set to.
	URL string

	srv  *httptest.Server
	book book
}

// NewGemini starts a fake Gemini API that answers with answer. A nil
// answer is Script(), which refuses every request as out of script.
func NewGemini(answer Answerer) *Gemini {
	if answer == nil {
		answer = Script()
	}
	g := &Gemini{book: book{answer: answer}}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	g.URL = g.srv.URL
	return g
}

// Close stops the server, waiting for the requests in flight.
func (g *Gemini) Close() { g.srv.Close() }

// Requests returns every request the server got so far, in order,
// whatever its path.
func (g *Gemini) Requests() []*Request { return g.book.all() }

// Turns returns the requests to :generateContent and
// :streamGenerateContent so far, in order: the model's turns.
func (g *Gemini) Turns() []*Request { return g.book.turnsSoFar() }

// geminiMethod splits a path of the API's models,
// /v1beta/models/<model>:<method> (or /v1/...), into the model and the
// method; false for any other path.
func geminiMethod(path string) (model, method string, ok bool) {
	rest, found := strings.CutPrefix(path, "/v1beta/models/")
	if !found {
		if rest, found = strings.CutPrefix(path, "/v1/models/"); !found {
			return "", "", false
		}
	}
	model, method, found = strings.Cut(rest, ":")
	if !found || model == "" || strings.Contains(model, "/") {
		return "", "", false
	}
	return model, method, true
}

func (g *Gemini) serve(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		writeGeminiError(w, &APIError{Status: http.StatusBadRequest, Message: "fakemodel: reading the body: " + err.Error()})
		return
	}
	model, method, known := geminiMethod(hr.URL.Path)
	known = known && hr.Method == http.MethodPost
	req := &Request{Method: hr.Method, Path: hr.URL.Path, Query: hr.URL.RawQuery, Header: hr.Header.Clone(), Body: body,
		turn: known && (method == "generateContent" || method == "streamGenerateContent")}
	var decodeErr error
	if req.IsTurn() {
		req.Model, req.Stream = model, method == "streamGenerateContent"
		decodeErr = req.decodeGemini() // before the request is shared: it is not changed after
	}
	g.book.add(req)

	switch {
	case hr.Header.Get("X-Goog-Api-Key") == "" && hr.URL.Query().Get("key") == "":
		writeGeminiError(w, &APIError{Status: http.StatusForbidden, Type: "PERMISSION_DENIED",
			Message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."})
		return
	case known && method == "countTokens":
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_, _ = fmt.Fprintf(w, `{"totalTokens":%d}`, max(1, len(body)/4))
		return
	case !req.IsTurn():
		writeGeminiError(w, &APIError{Status: http.StatusNotFound, Type: "NOT_FOUND",
			Message: "fakemodel: no such method: " + hr.Method + " " + hr.URL.Path})
		return
	case decodeErr != nil:
		writeGeminiError(w, &APIError{Status: http.StatusBadRequest, Type: "INVALID_ARGUMENT", Message: "fakemodel: " + decodeErr.Error()})
		return
	}

	reply, turn := g.book.reply(req)
	addHeaders(w, reply.Header)
	if reply.Err != nil {
		writeGeminiError(w, reply.Err)
		return
	}
	chunks := reply.geminiChunks(req, turn)
	switch {
	case !req.Stream:
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_ = json.NewEncoder(w).Encode(reply.geminiResponse(req, turn))
	case hr.URL.Query().Get("alt") == "sse":
		streamGemini(w, chunks)
	default:
		// Without alt=sse the API streams one JSON array of the chunks.
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_ = json.NewEncoder(w).Encode(chunks)
	}
}

// geminiResponse is the API's GenerateContentResponse.
type geminiResponse struct {
	Candidates    []geminiCandidate `json:"candidates"`
	UsageMetadata geminiUsage       `json:"usageMetadata"`
	ModelVersion  string            `json:"modelVersion"`
	ResponseID    string            `json:"responseId"`
}

// geminiCandidate is one candidate of a response: its content and, in
// the last chunk of a stream (or a whole response), why it finished.
type geminiCandidate struct {
	Content      geminiContent `json:"content"`
	FinishReason string        `json:"finishReason,omitempty"`
	Index        int           `json:"index"`
}

// geminiContent is a content: a role and its parts.
type geminiContent struct {
	Parts []map[string]any `json:"parts"`
	Role  string           `json:"role"`
}

// geminiUsage is a response's usageMetadata. Counts the API would leave
// out when zero are left out.
type geminiUsage struct {
	PromptTokenCount        int                `json:"promptTokenCount"`
	CandidatesTokenCount    int                `json:"candidatesTokenCount,omitempty"`
	TotalTokenCount         int                `json:"totalTokenCount"`
	CachedContentTokenCount int                `json:"cachedContentTokenCount,omitempty"`
	ThoughtsTokenCount      int                `json:"thoughtsTokenCount,omitempty"`
	PromptTokensDetails     []geminiModalityTC `json:"promptTokensDetails,omitempty"`
}

// geminiModalityTC is a count of tokens of one modality.
type geminiModalityTC struct {
	Modality   string `json:"modality"`
	TokenCount int    `json:"tokenCount"`
}

// geminiParts returns the reply's blocks as the candidate's parts.
func (r Reply) geminiParts() []map[string]any {
	parts := []map[string]any{}
	for _, b := range r.Content {
		switch b.Type {
		case "tool_use":
			call := map[string]any{"name": b.Name, "args": json.RawMessage(`{}`)}
			if len(b.Input) > 0 {
				call["args"] = b.Input
			}
			if b.ID != "" {
				call["id"] = b.ID
			}
			parts = append(parts, map[string]any{"functionCall": call})
		case "thinking":
			parts = append(parts, map[string]any{"text": b.Text, "thought": true})
		default:
			parts = append(parts, map[string]any{"text": b.Text})
		}
	}
	return parts
}

// geminiFinishReason is the finishReason of the reply's StopReason.
func (r Reply) geminiFinishReason() string {
	switch r.StopReason {
	case "", "end_turn", "tool_use":
		return "STOP"
	case "max_tokens":
		return "MAX_TOKENS"
	case "refusal":
		return "SAFETY"
	}
	return r.StopReason
}

// geminiUsage is the reply's usage as the API reports it.
func (r Reply) geminiUsage() geminiUsage {
	u := r.Usage
	if u == (Usage{}) {
		u = DefaultUsage
	}
	prompt := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
	return geminiUsage{
		PromptTokenCount:        prompt,
		CandidatesTokenCount:    u.OutputTokens,
		CachedContentTokenCount: u.CacheReadInputTokens,
		ThoughtsTokenCount:      u.ThoughtsTokens,
		TotalTokenCount:         prompt + u.OutputTokens + u.ThoughtsTokens,
		PromptTokensDetails:     []geminiModalityTC{{Modality: "TEXT", TokenCount: prompt}},
	}
}

// geminiResponse returns the reply as the API's whole response, for the
// request's turn-th answer.
func (r Reply) geminiResponse(req *Request, turn int) geminiResponse {
	resp := r.geminiChunk(req, turn, r.geminiParts())
	resp.Candidates[0].FinishReason = r.geminiFinishReason()
	resp.UsageMetadata = r.geminiUsage()
	return resp
}

// geminiChunk is one response of the turn-th answer holding parts, with
// the prompt's tokens alone as its usage.
func (r Reply) geminiChunk(req *Request, turn int, parts []map[string]any) geminiResponse {
	model := r.Model
	if model == "" {
		model = req.Model
	}
	u := r.geminiUsage()
	return geminiResponse{
		Candidates:    []geminiCandidate{{Content: geminiContent{Parts: parts, Role: "model"}}},
		UsageMetadata: geminiUsage{PromptTokenCount: u.PromptTokenCount, TotalTokenCount: u.PromptTokenCount, PromptTokensDetails: u.PromptTokensDetails},
		ModelVersion:  model,
		ResponseID:    fmt.Sprintf("fakeresp%06d", turn),
	}
}

// geminiChunks returns the reply as the API streams it: a chunk for each
// piece of a text (or thought) and one for each function call, the last
// with the finishReason and the whole usage. A reply without content is
// one chunk of an empty text.
func (r Reply) geminiChunks(req *Request, turn int) []geminiResponse {
	var chunks []geminiResponse
	for _, part := range r.geminiParts() {
		text, isText := part["text"].(string)
		if !isText {
			chunks = append(chunks, r.geminiChunk(req, turn, []map[string]any{part}))
			continue
		}
		for _, piece := range pieces(text, 24) {
			p := map[string]any{"text": piece}
			if part["thought"] == true {
				p["thought"] = true
			}
			chunks = append(chunks, r.geminiChunk(req, turn, []map[string]any{p}))
		}
	}
	if len(chunks) == 0 {
		chunks = append(chunks, r.geminiChunk(req, turn, []map[string]any{{"text": ""}}))
	}
	last := &chunks[len(chunks)-1]
	last.Candidates[0].FinishReason = r.geminiFinishReason()
	last.UsageMetadata = r.geminiUsage()
	return chunks
}

// streamGemini writes chunks as the API streams them with alt=sse: each
// a data line of the chunk's JSON, each event ended by a blank line (the
// API's CRLF line ends), no event names.
func streamGemini(w http.ResponseWriter, chunks []geminiResponse) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for _, c := range chunks {
		payload, err := json.Marshal(c)
		if err != nil {
			panic("fakemodel: " + err.Error()) // every chunk is made here
		}
		fmt.Fprintf(w, "data: %s\r\n\r\n", payload)
		if flusher != nil {
			flusher.Flush()
		}
	}
}
