package fakemodel

import (
	"encoding/json"
	"errors"
	"sort"
)

// wireGeminiRequest is the part of a generateContent request body the
// fake reads.
type wireGeminiRequest struct {
	Contents          []wireGeminiContent          `json:"contents"`
	SystemInstruction *wireGeminiContent           `json:"systemInstruction"`
	Tools             []map[string]json.RawMessage `json:"tools"`
	GenerationConfig  struct {
		MaxOutputTokens int `json:"maxOutputTokens"`
	} `json:"generationConfig"`
}

// wireGeminiContent is a content as a request sends it.
type wireGeminiContent struct {
	Role  string           `json:"role"`
	Parts []wireGeminiPart `json:"parts"`
}

// wireGeminiPart is a part as a request sends it: one of text (a thought
// when Thought), functionCall, functionResponse, or another kind the fake
// names alone (inlineData, fileData, executableCode, ...).
type wireGeminiPart struct {
	Text         *string `json:"text"`
	Thought      bool    `json:"thought"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
	InlineData     json.RawMessage `json:"inlineData"`
	FileData       json.RawMessage `json:"fileData"`
	ExecutableCode json.RawMessage `json:"executableCode"`
}

// errNoContents is a request without contents, which the real API refuses
// too.
var errNoContents = errors.New("* GenerateContentRequest.contents: contents is not specified")

// decodeGemini fills the request's fields (but the model and the stream,
// which the path tells) from a generateContent body (see Gemini for how
// the contents are read).
func (r *Request) decodeGemini() error {
	var w wireGeminiRequest
	if err := json.Unmarshal(r.Body, &w); err != nil {
		return err
	}
	if len(w.Contents) == 0 {
		return errNoContents
	}
	r.MaxTokens = w.GenerationConfig.MaxOutputTokens
	if w.SystemInstruction != nil {
		r.System = joinText(w.SystemInstruction.blocks())
	}
	for _, c := range w.Contents {
		role := c.Role
		if role == "model" {
			role = "assistant"
		}
		r.Messages = append(r.Messages, Message{Role: role, Content: c.blocks()})
	}
	for _, t := range w.Tools {
		if decls, ok := t["functionDeclarations"]; ok {
			var fns []struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(decls, &fns); err != nil {
				return errors.New("tools: functionDeclarations: " + err.Error())
			}
			for _, f := range fns {
				r.Tools = append(r.Tools, f.Name)
			}
			continue
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		r.Tools = append(r.Tools, keys...)
	}
	return nil
}

// blocks returns the content's parts as blocks.
func (c wireGeminiContent) blocks() []Block {
	blocks := make([]Block, 0, len(c.Parts))
	for _, p := range c.Parts {
		switch {
		case p.FunctionCall != nil:
			input := p.FunctionCall.Args
			if len(input) == 0 || string(input) == "null" {
				input = json.RawMessage(`{}`)
			}
			blocks = append(blocks, Block{Type: "tool_use", ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Input: input})
		case p.FunctionResponse != nil:
			b := Block{Type: "tool_result", ToolUseID: p.FunctionResponse.ID, Name: p.FunctionResponse.Name}
			b.Text, b.IsError = functionResponseText(p.FunctionResponse.Response)
			blocks = append(blocks, b)
		case p.Text != nil && p.Thought:
			blocks = append(blocks, Block{Type: "thinking", Text: *p.Text})
		case p.Text != nil:
			blocks = append(blocks, Text(*p.Text))
		case p.InlineData != nil:
			blocks = append(blocks, Block{Type: "inlineData"})
		case p.FileData != nil:
			blocks = append(blocks, Block{Type: "fileData"})
		case p.ExecutableCode != nil:
			blocks = append(blocks, Block{Type: "executableCode"})
		}
		// A part of only a thoughtSignature, or of a kind the fake does
		// not know, is left out.
	}
	return blocks
}

// functionResponseText returns the text of a function response: its
// output when it is a string, its error (true) when that is, or else the
// response object as it came.
func functionResponseText(raw json.RawMessage) (string, bool) {
	var fields struct {
		Output *string `json:"output"`
		Error  *string `json:"error"`
	}
	if json.Unmarshal(raw, &fields) == nil {
		switch {
		case fields.Output != nil:
			return *fields.Output, false
		case fields.Error != nil:
			return *fields.Error, true
		}
	}
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	return string(raw), false
}
