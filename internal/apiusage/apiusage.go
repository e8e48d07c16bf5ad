// Package apiusage reads the token usage of a model API's response, and
// the model that answered, as its body streams past, without keeping the
// body: OpenAI's chat completions and responses, Anthropic's messages and
// Gemini's generateContent, each as one JSON body or as a stream of
// server-sent events.
//
// What it reads:
//
//   - OpenAI chat completions: "usage": {"prompt_tokens",
//     "completion_tokens", "prompt_tokens_details": {"cached_tokens"}} in
//     the JSON body, and in the last chunk of a stream that asked for it
//     (stream_options.include_usage); the chunks before carry "usage": null.
//   - OpenAI responses: "usage": {"input_tokens", "output_tokens",
//     "input_tokens_details": {"cached_tokens"}} in the body, and in the
//     response of the response.completed event.
//   - Anthropic messages: "usage": {"input_tokens", "output_tokens",
//     "cache_creation_input_tokens", "cache_read_input_tokens"} in the body;
//     streamed, in the message of message_start and, with the final output
//     count, in message_delta.
//   - Gemini: "usageMetadata": {"promptTokenCount", "candidatesTokenCount",
//     "thoughtsTokenCount", "cachedContentTokenCount",
//     "toolUsePromptTokenCount"}, in the body and in the chunks of a stream.
//   - The model: the first "model" (OpenAI, Anthropic) or "modelVersion"
//     (Gemini) whose value is a string.
//
// Every usage object in a body counts, in order, and a count it gives
// replaces the one before: the counts of a stream are running totals, so
// the last one is the call's. The input is the prompt's tokens, cached ones
// included: OpenAI's and Gemini's counts include them already, and
// Anthropic's cache reads and writes are added to its input_tokens, which
// leaves them out. The output includes Gemini's thinking tokens, which are
// billed as output.
//
// A Scanner is a small lexer over the body's bytes: it tells JSON strings
// from the rest (a "usage" inside a string, as a model's text may hold, is
// escaped and never matches), and it keeps only the bytes of a usage
// object, at most MaxObject of them, and of the model's name.
package apiusage

import (
	"bytes"
	"encoding/json"
	"math"
)

// Usage is the tokens one API call used, and the model that answered.
type Usage struct {
	InputTokens      int    // the prompt's, cached ones included
	OutputTokens     int    // the completion's, thinking included
	CacheReadTokens  int    // of InputTokens, those read from the prompt cache
	CacheWriteTokens int    // of InputTokens, those written to it (Anthropic)
	Model            string // as the response names it; "" when it does not
}

// MaxObject bounds the bytes of one usage object a Scanner keeps; a larger
// "usage" object is no usage object.
const MaxObject = 4 << 10

// maxModel bounds the bytes of a model's name; a longer string is no
// model's name.
const maxModel = 200

// The lexer's states between two bytes.
const (
	outside   = iota // between tokens, looking for a string
	inKey            // in a string that may be a key the scanner reads
	inString         // in any other string
	wantColon        // after such a string: a colon makes it a key
	wantValue        // after the key and its colon
	capturing        // in the usage object
	inModel          // in the string value of "model"
)

// The keys the scanner reads, and what their values are.
var keys = [...]struct {
	name  string
	model bool // a string: the model's name, else a usage object
}{{"usage", false}, {"usageMetadata", false}, {"model", true}, {"modelVersion", true}}

// maxKey is the length of the longest key.
const maxKey = len("usageMetadata")

// Scanner finds the usage objects and the model in the bytes written to
// it. The zero Scanner is ready. It is not safe for concurrent use.
type Scanner struct {
	state   uint8
	escaped bool // the byte before was a backslash, in a string

	key   [maxKey]byte // the string being read in inKey
	keyN  int
	model bool // the key read is a model's

	obj         []byte // the usage object captured so far
	depth       int    // its nesting of objects and arrays
	objInString bool   // the capture is inside a string
	objEscaped  bool

	name      []byte // the model's name being read
	haveModel bool

	c     counts
	found bool
}

// Write reads p. It never fails.
func (s *Scanner) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		// Most of a body is strings (the model's text) and the space
		// between them: skip to the next byte that can change the state.
		switch {
		case s.state == outside:
			i := bytes.IndexByte(p, '"')
			if i < 0 {
				return n, nil
			}
			p = p[i:]
		case s.state == inString && !s.escaped:
			i := bytes.IndexAny(p, `"\`)
			if i < 0 {
				return n, nil
			}
			p = p[i:]
		}
		s.step(p[0])
		p = p[1:]
	}
	return n, nil
}

// Usage returns the usage read so far, and whether any was found. Its
// Model is the model's name, when the body named one, usage or not.
func (s *Scanner) Usage() (Usage, bool) {
	c := &s.c
	u := Usage{Model: string(s.name)}
	if !s.haveModel {
		u.Model = ""
	}
	switch {
	case c.anthropic:
		u.InputTokens = addSat(addSat(c.input, c.cacheWrite), c.cacheRead)
		u.CacheWriteTokens, u.CacheReadTokens = c.cacheWrite, c.cacheRead
	default:
		u.InputTokens = c.input
		u.CacheReadTokens = min(c.cached, c.input)
	}
	u.OutputTokens = addSat(c.output, c.thoughts)
	return u, s.found
}

func (s *Scanner) step(c byte) {
	switch s.state {
	case outside:
		if c == '"' {
			s.state, s.keyN, s.escaped = inKey, 0, false
		}
	case inKey:
		switch {
		case c == '"':
			s.state = outside
			for _, k := range keys {
				if string(s.key[:s.keyN]) == k.name {
					s.state, s.model = wantColon, k.model
				}
			}
		case c == '\\' || s.keyN == len(s.key):
			// An escape, or too long: not a key as an API writes it.
			// Read the rest as any string.
			s.state, s.escaped = inString, c == '\\'
		default:
			s.key[s.keyN] = c
			s.keyN++
		}
	case inString:
		switch {
		case s.escaped:
			s.escaped = false
		case c == '\\':
			s.escaped = true
		case c == '"':
			s.state = outside
		}
	case wantColon:
		switch {
		case isSpace(c):
		case c == ':':
			s.state = wantValue
		default:
			s.state = outside
			s.step(c) // a value "usage", then whatever follows
		}
	case wantValue:
		switch {
		case isSpace(c):
		case s.model && c == '"' && !s.haveModel:
			s.state = inModel
			s.name = s.name[:0]
		case !s.model && c == '{':
			s.state = capturing
			s.obj = append(s.obj[:0], c)
			s.depth, s.objInString, s.objEscaped = 1, false, false
		default:
			s.state = outside // null, not an object, or a model already named
			s.step(c)
		}
	case capturing:
		s.capture(c)
	case inModel:
		switch {
		case c == '"':
			s.state, s.haveModel = outside, true
		case c == '\\' || len(s.name) == maxModel:
			// No model's name has an escape, or is that long.
			s.name = s.name[:0]
			s.state, s.escaped = inString, c == '\\'
		default:
			s.name = append(s.name, c)
		}
	}
}

// capture adds c to the usage object, and reads the object when it ends.
func (s *Scanner) capture(c byte) {
	if len(s.obj) >= MaxObject {
		// Too large to be a usage object: drop it, and read the rest of
		// it as the lexer reads any JSON.
		s.obj = s.obj[:0]
		if s.objInString {
			s.state, s.escaped = inString, s.objEscaped
		} else {
			s.state = outside
		}
		s.step(c)
		return
	}
	s.obj = append(s.obj, c)
	switch {
	case s.objInString:
		switch {
		case s.objEscaped:
			s.objEscaped = false
		case c == '\\':
			s.objEscaped = true
		case c == '"':
			s.objInString = false
		}
	case c == '"':
		s.objInString = true
	case c == '{' || c == '[':
		s.depth++
	case c == '}' || c == ']':
		s.depth--
		if s.depth == 0 {
			s.read(s.obj)
			s.obj = s.obj[:0]
			s.state = outside
		}
	}
}

// counts are the counts read so far, each the last one given.
type counts struct {
	input, output         int
	cached                int // OpenAI's and Gemini's cached part of input
	cacheWrite, cacheRead int // Anthropic's, which input leaves out
	thoughts              int // Gemini's thinking, billed as output
	anthropic             bool
}

// object is the fields of a usage object the scanner reads; nil: absent.
type object struct {
	PromptTokens     *float64 `json:"prompt_tokens"`
	CompletionTokens *float64 `json:"completion_tokens"`
	InputTokens      *float64 `json:"input_tokens"`
	OutputTokens     *float64 `json:"output_tokens"`
	CacheCreation    *float64 `json:"cache_creation_input_tokens"`
	CacheRead        *float64 `json:"cache_read_input_tokens"`
	PromptDetails    *details `json:"prompt_tokens_details"`
	InputDetails     *details `json:"input_tokens_details"`

	// Gemini's usageMetadata.
	PromptTokenCount        *float64 `json:"promptTokenCount"`
	ToolUsePromptTokenCount *float64 `json:"toolUsePromptTokenCount"`
	CandidatesTokenCount    *float64 `json:"candidatesTokenCount"`
	ThoughtsTokenCount      *float64 `json:"thoughtsTokenCount"`
	CachedContentTokenCount *float64 `json:"cachedContentTokenCount"`
}

type details struct {
	CachedTokens *float64 `json:"cached_tokens"`
}

// read takes the counts of one usage object: each one it gives replaces
// the one before.
func (s *Scanner) read(raw []byte) {
	var o object
	if json.Unmarshal(raw, &o) != nil {
		return
	}
	c := &s.c
	found := false
	set := func(dst *int, v *float64) {
		if v != nil {
			*dst, found = tokens(*v), true
		}
	}
	set(&c.input, o.PromptTokens)
	set(&c.input, o.InputTokens)
	set(&c.output, o.CompletionTokens)
	set(&c.output, o.OutputTokens)
	if o.CacheCreation != nil || o.CacheRead != nil {
		c.anthropic = true
	}
	set(&c.cacheWrite, o.CacheCreation)
	set(&c.cacheRead, o.CacheRead)
	for _, d := range []*details{o.PromptDetails, o.InputDetails} {
		if d != nil {
			set(&c.cached, d.CachedTokens)
		}
	}
	if o.PromptTokenCount != nil {
		c.input, found = tokens(*o.PromptTokenCount), true
		if o.ToolUsePromptTokenCount != nil {
			c.input = addSat(c.input, tokens(*o.ToolUsePromptTokenCount))
		}
	}
	set(&c.output, o.CandidatesTokenCount)
	set(&c.thoughts, o.ThoughtsTokenCount)
	set(&c.cached, o.CachedContentTokenCount)
	s.found = s.found || found
}

// tokens is a count as an int: negative, fractional or absurd counts are
// clamped, never trusted to wrap.
func tokens(f float64) int {
	switch {
	case !(f > 0):
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	}
	return int(f)
}

func addSat(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
