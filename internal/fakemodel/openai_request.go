package fakemodel

import (
	"encoding/json"
	"errors"
)

// wireResponsesRequest is the part of the Responses API's request body
// the fake reads. The input is a string (one user message) or a list of
// items.
type wireResponsesRequest struct {
	Model           string          `json:"model"`
	Stream          bool            `json:"stream"`
	MaxOutputTokens int             `json:"max_output_tokens"`
	Instructions    string          `json:"instructions"`
	Input           json.RawMessage `json:"input"`
	Tools           []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

// wireItem is an input item as a request sends it. A message's content
// is a string or a list of parts; a tool call output's output too.
type wireItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
}

// errNoInput is a request without input, which the real API refuses too.
var errNoInput = errors.New("input: missing required parameter")

// decodeResponses fills the request's fields from a Responses API body
// (see OpenAI for how the items are read).
func (r *Request) decodeResponses() error {
	var w wireResponsesRequest
	if err := json.Unmarshal(r.Body, &w); err != nil {
		return err
	}
	if len(w.Input) == 0 || string(w.Input) == "null" {
		return errNoInput
	}
	r.Model, r.Stream, r.MaxTokens, r.System = w.Model, w.Stream, w.MaxOutputTokens, w.Instructions
	for _, t := range w.Tools {
		name := t.Name
		if name == "" {
			name = t.Type
		}
		r.Tools = append(r.Tools, name)
	}
	var text string
	if json.Unmarshal(w.Input, &text) == nil {
		r.Messages = []Message{{Role: "user", Content: []Block{Text(text)}}}
		return nil
	}
	var items []wireItem
	if err := json.Unmarshal(w.Input, &items); err != nil {
		return errors.New("input: neither a string nor a list of items")
	}
	for _, it := range items {
		m, ok, err := it.message()
		if err != nil {
			return errors.New("input: " + err.Error())
		}
		if ok {
			r.Messages = append(r.Messages, m)
		}
	}
	return nil
}

// message returns the item as a Message; false for an item the fake
// leaves out (reasoning, and kinds it does not know).
func (it wireItem) message() (Message, bool, error) {
	switch it.Type {
	case "message", "": // an item with a role alone is a message
		if it.Role == "" {
			return Message{}, false, nil
		}
		content, err := decodeParts(it.Content)
		return Message{Role: it.Role, Content: content}, err == nil, err
	case "function_call":
		input := json.RawMessage(it.Arguments)
		if !json.Valid(input) {
			input = nil
		}
		return Message{Role: "assistant", Content: []Block{{Type: "tool_use", ID: it.CallID, Name: it.Name, Input: input}}}, true, nil
	case "custom_tool_call":
		return Message{Role: "assistant", Content: []Block{{Type: "custom_tool_call", ID: it.CallID, Name: it.Name, Text: it.Input}}}, true, nil
	case "function_call_output", "custom_tool_call_output":
		output, err := decodeParts(it.Output)
		if err != nil {
			return Message{}, false, err
		}
		return Message{Role: "tool", Content: []Block{{Type: "tool_result", ToolUseID: it.CallID, Text: joinText(output)}}}, true, nil
	}
	return Message{}, false, nil
}

// decodeParts decodes content that is a string (one text block), a list
// of parts (input_text, output_text and the like, each a text block of
// its text), or absent.
func decodeParts(raw json.RawMessage) ([]Block, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []Block{Text(text)}, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, errors.New("content is neither a string nor a list of parts")
	}
	blocks := make([]Block, 0, len(parts))
	for _, p := range parts {
		blocks = append(blocks, Block{Type: p.Type, Text: p.Text})
	}
	return blocks, nil
}
