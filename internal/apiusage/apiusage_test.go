package apiusage

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bodies in the providers' wire formats.
const (
	openAIChat = `{
  "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
  "object": "chat.completion",
  "created": 1741569952,
  "model": "gpt-4.1-2025-04-14",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": "The \"usage\": {\"prompt_tokens\": 999} is quoted here.", "refusal": null},
    "logprobs": null, "finish_reason": "stop"}],
  "usage": {
    "prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
  },
  "service_tier": "default"
}`
	openAIChatStream = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":31,"total_tokens":43}}

data: [DONE]

`
	openAIResponsesStream = `event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-5-mini","output":[],"usage":null}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi"}

event: response.completed
data: {"type":"response.completed","sequence_number":9,"response":{"id":"resp_1","object":"response","status":"completed","usage":{"input_tokens":36,"input_tokens_details":{"cached_tokens":0},"output_tokens":87,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":123}}}

`
	anthropicMessage = `{"id":"msg_013Zva2CMHLNnXjNJJKqJ2EF","type":"message","role":"assistant","model":"claude-sonnet-4-5",
"content":[{"type":"tool_use","id":"toolu_01","name":"read_file","input":{"path":"usage.go"}}],
"stop_reason":"tool_use","stop_sequence":null,
"usage":{"input_tokens":2095,"cache_creation_input_tokens":100,"cache_read_input_tokens":5,"output_tokens":503,"service_tier":"standard"}}`
	anthropicStream = `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"list_files","input":{}}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"usage\": {\"input_tokens\": 1}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}

event: message_stop
data: {"type":"message_stop"}

`
	geminiResponse = `{
  "candidates": [{"content": {"parts": [{"text": "The usageMetadata is below."}], "role": "model"}, "finishReason": "STOP", "index": 0}],
  "usageMetadata": {"promptTokenCount": 1300, "candidatesTokenCount": 120, "totalTokenCount": 1680, "cachedContentTokenCount": 1024,
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 1300}], "thoughtsTokenCount": 260},
  "modelVersion": "gemini-2.5-pro",
  "responseId": "Zt8naM6qJ9-vnvgP2tfqkQ0"
}`
	geminiStream = `data: {"candidates": [{"content": {"parts": [{"text": "Hello"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 8,"candidatesTokenCount": 1,"totalTokenCount": 9},"modelVersion": "gemini-2.5-flash","responseId": "r1"}

data: {"candidates": [{"content": {"parts": [{"text": " there"}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 8,"candidatesTokenCount": 25,"totalTokenCount": 33},"modelVersion": "gemini-2.5-flash","responseId": "r1"}

`
)

func scan(body string, chunk int) (Usage, bool) {
	var s Scanner
	for len(body) > 0 {
		n := min(chunk, len(body))
		_, _ = s.Write([]byte(body[:n]))
		body = body[n:]
	}
	return s.Usage()
}

func TestUsageOfEachWireFormat(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Usage
		ok   bool
	}{
		{"an OpenAI chat completion, with usage quoted in the model's text", openAIChat, Usage{InputTokens: 19, OutputTokens: 10, Model: "gpt-4.1-2025-04-14"}, true},
		{"an OpenAI chat completion stream with include_usage", openAIChatStream, Usage{InputTokens: 12, OutputTokens: 31, Model: "gpt-4o-mini"}, true},
		{"an OpenAI chat completion stream without it", strings.ReplaceAll(openAIChatStream, `"usage":{"prompt_tokens":12,"completion_tokens":31,"total_tokens":43}`, `"usage":null`), Usage{Model: "gpt-4o-mini"}, false},
		{"an OpenAI chat completion with cached tokens", `{"model":"gpt-5","usage":{"prompt_tokens":2006,"completion_tokens":300,"prompt_tokens_details":{"cached_tokens":1920}}}`,
			Usage{InputTokens: 2006, OutputTokens: 300, CacheReadTokens: 1920, Model: "gpt-5"}, true},
		{"an OpenAI responses stream", openAIResponsesStream, Usage{InputTokens: 36, OutputTokens: 87, Model: "gpt-5-mini"}, true},
		{"an OpenAI response with cached input", `{"object":"response","model":"gpt-5.1-codex","usage":{"input_tokens":5000,"input_tokens_details":{"cached_tokens":4096},"output_tokens":20}}`,
			Usage{InputTokens: 5000, OutputTokens: 20, CacheReadTokens: 4096, Model: "gpt-5.1-codex"}, true},
		{"an Anthropic message, cache reads and writes in the input", anthropicMessage, Usage{InputTokens: 2200, OutputTokens: 503, CacheWriteTokens: 100, CacheReadTokens: 5, Model: "claude-sonnet-4-5"}, true},
		{"an Anthropic stream: input from message_start, output from message_delta", anthropicStream, Usage{InputTokens: 472, OutputTokens: 89, Model: "claude-sonnet-4-5"}, true},
		{"an Anthropic stream cut before message_delta", anthropicStream[:strings.Index(anthropicStream, "event: content_block_start")], Usage{InputTokens: 472, OutputTokens: 2, Model: "claude-sonnet-4-5"}, true},
		{"an Anthropic stream whose message_delta gives the cache counts again", strings.Replace(anthropicStream, `"usage":{"output_tokens":89}`, `"usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":9000,"output_tokens":89}`, 1),
			Usage{InputTokens: 9472, OutputTokens: 89, CacheReadTokens: 9000, Model: "claude-sonnet-4-5"}, true},
		{"a Gemini response, thinking billed as output", geminiResponse, Usage{InputTokens: 1300, OutputTokens: 380, CacheReadTokens: 1024, Model: "gemini-2.5-pro"}, true},
		{"a Gemini stream, the last chunk's counts", geminiStream, Usage{InputTokens: 8, OutputTokens: 25, Model: "gemini-2.5-flash"}, true},
		{"an error body", `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`, Usage{}, false},
		{"a value that says usage", `{"type":"usage","usage" : {"input_tokens": 3, "output_tokens": 4}}`, Usage{InputTokens: 3, OutputTokens: 4}, true},
		{"negative and fractional counts", `{"usage":{"prompt_tokens":-5,"completion_tokens":2.9}}`, Usage{OutputTokens: 2}, true},
		{"a usage object that is too large", `{"usage":{"prompt_tokens":1,"pad":"` + strings.Repeat("x", MaxObject) + `"},"x":{"usage":{"output_tokens":7}}}`, Usage{OutputTokens: 7}, true},
		{"a model named only in the text", `{"content":"the \"model\": \"gpt-9\" is not real","model":null}`, Usage{}, false},
		{"a model's name too long or escaped is none", `{"model":"a\u0062c","model":"` + strings.Repeat("m", 300) + `"}`, Usage{}, false},
		{"the first model named wins", `{"model":"claude-opus-4-5","message":{"model":"other"}}`, Usage{Model: "claude-opus-4-5"}, false},
		{"empty", "", Usage{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, chunk := range []int{1, 7, 512, 1 << 20} {
				got, ok := scan(tt.body, chunk)
				require.Equal(t, tt.ok, ok, "chunk %d", chunk)
				assert.Equal(t, tt.want, got, "chunk %d", chunk)
			}
		})
	}
}

// The scanner keeps at most one usage object, whatever the body's size.
func TestScannerKeepsNoBody(t *testing.T) {
	var s Scanner
	big := `{"choices":[{"message":{"content":"` + strings.Repeat("lorem ipsum ", 100000) + `"}}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`
	_, _ = s.Write([]byte(big))
	u, ok := s.Usage()
	require.True(t, ok)
	assert.Equal(t, Usage{InputTokens: 1, OutputTokens: 2}, u)
	assert.LessOrEqual(t, cap(s.obj), 2*MaxObject)
}

func FuzzScanner(f *testing.F) {
	for _, s := range []string{openAIChat, openAIChatStream, openAIResponsesStream, anthropicMessage, anthropicStream, geminiResponse, geminiStream, `{"usage":`, `"usage"`, `\"usage\":{`, `{"model":"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		whole, okWhole := scan(body, len(body)+1)
		bytewise, okBytes := scan(body, 1)
		require.Equal(t, okWhole, okBytes)
		require.Equal(t, whole, bytewise, "the chunking never changes what is read")
		require.GreaterOrEqual(t, whole.InputTokens, 0)
		require.GreaterOrEqual(t, whole.OutputTokens, 0)
		require.LessOrEqual(t, whole.CacheReadTokens+whole.CacheWriteTokens, whole.InputTokens, "the cache's part of the input is in it")
		require.LessOrEqual(t, len(whole.Model), maxModel)
	})
}

func BenchmarkScanner(b *testing.B) {
	body := []byte(strings.Repeat(openAIChatStream, 50) + anthropicStream)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for range b.N {
		var s Scanner
		_, _ = s.Write(body)
	}
}
