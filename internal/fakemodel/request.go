package fakemodel

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// Request is one request the server got, as it came, and for a turn (a
// request that asks the model to answer: IsTurn) what it asked of the
// model. Both APIs' turns are decoded into the same fields: the
// Responses API's input items become Messages (see OpenAI).
type Request struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte

	// Of a turn, decoded from Body:
	Model string
	// Stream says the request asked for server-sent events.
	Stream bool
	// MaxTokens is max_tokens (max_output_tokens); 0 when not given.
	MaxTokens int
	// System is the system prompt's text (its text blocks, one a line;
	// the Responses API's instructions).
	System string
	// Messages is the conversation sent, oldest first.
	Messages []Message
	// Tools names the tools offered, in order (a tool without a name,
	// such as the Responses API's web_search, by its type).
	Tools []string

	turn bool // the request asked for a turn (IsTurn), as its server tells
}

// Message is one message of a request's conversation.
type Message struct {
	Role    string // user, assistant; the Responses API's developer and system too, and tool (see OpenAI)
	Content []Block
}

// Text returns the text of the message's blocks (text, and the text of
// tool results), one a line.
func (m Message) Text() string { return joinText(m.Content) }

// anthropicTurnPath and openAITurnPath are the paths of the APIs' turns.
const (
	anthropicTurnPath = "/v1/messages"
	openAITurnPath    = "/v1/responses"
)

// IsTurn reports whether the request asked the model for an answer: POST
// /v1/messages of the Messages API, POST /v1/responses of the Responses
// API, POST .../models/<model>:generateContent or :streamGenerateContent
// of the Gemini API.
func (r *Request) IsTurn() bool { return r.turn }

// Last returns the conversation's last message; the zero Message when
// there is none. Claude Code 2.1.328 sends a message of role system (its
// environment) after the person's first: Last of a session's first
// request is that one, and a tool's result is last in the requests after
// a tool use.
func (r *Request) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// Text returns the text of the whole conversation: every message's text
// blocks and tool results, one a line. The system prompt is not in it.
func (r *Request) Text() string {
	var b strings.Builder
	for _, m := range r.Messages {
		if t := m.Text(); t != "" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t)
		}
	}
	return b.String()
}

// ToolResults returns the tool_result blocks of the conversation, oldest
// first.
func (r *Request) ToolResults() []Block {
	var out []Block
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				out = append(out, b)
			}
		}
	}
	return out
}

// ToolUses returns the tool_use blocks of the conversation (the model's
// earlier calls), oldest first; of the Responses API, its
// custom_tool_call blocks too.
func (r *Request) ToolUses() []Block {
	var out []Block
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_use" || b.Type == "custom_tool_call" {
				out = append(out, b)
			}
		}
	}
	return out
}

// wireRequest is the part of the Messages API's request body the fake
// reads. A message's content and the system prompt are a string or a list
// of blocks; a tool result's content too.
type wireRequest struct {
	Model     string          `json:"model"`
	Stream    bool            `json:"stream"`
	MaxTokens int             `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// wireBlock is a content block as a request sends it.
type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// errNoMessages is a request without a conversation, which the real API
// refuses too.
var errNoMessages = errors.New("messages: at least one message is required")

// decode fills the request's Messages API fields from its body.
func (r *Request) decode() error {
	var w wireRequest
	if err := json.Unmarshal(r.Body, &w); err != nil {
		return err
	}
	if len(w.Messages) == 0 {
		return errNoMessages
	}
	r.Model, r.Stream, r.MaxTokens = w.Model, w.Stream, w.MaxTokens
	system, err := decodeContent(w.System)
	if err != nil {
		return errors.New("system: " + err.Error())
	}
	r.System = joinText(system)
	for _, m := range w.Messages {
		content, err := decodeContent(m.Content)
		if err != nil {
			return errors.New("messages: " + err.Error())
		}
		r.Messages = append(r.Messages, Message{Role: m.Role, Content: content})
	}
	for _, t := range w.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	return nil
}

// decodeContent decodes content that is a string (one text block), a
// list of blocks, or absent.
func decodeContent(raw json.RawMessage) ([]Block, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []Block{Text(text)}, nil
	}
	var wire []wireBlock
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, errors.New("content is neither a string nor a list of blocks")
	}
	blocks := make([]Block, 0, len(wire))
	for _, w := range wire {
		b := Block{Type: w.Type, Text: w.Text, ID: w.ID, Name: w.Name, Input: w.Input, ToolUseID: w.ToolUseID, IsError: w.IsError}
		if w.Type == "tool_result" {
			inner, err := decodeContent(w.Content)
			if err != nil {
				return nil, err
			}
			b.Text = joinText(inner)
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}
