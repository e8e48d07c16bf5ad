// Package fakemodel is a model provider's API, faked for tests: a local
// httptest server that answers as the provider's API does, from a script
// the test writes, and records every request it got.
//
// Anthropic is the Messages API (POST /v1/messages) as Claude Code and
// the SDKs use it: text and tool_use answers with their stop reasons and
// usage (cache tokens included), streamed as server-sent events as the
// API streams them (message_start, content_block_start, content_block_delta,
// content_block_stop, message_delta, message_stop), and errors with the
// status, body and headers the API gives (a 429 with retry-after and the
// anthropic-ratelimit-unified-* headers, a 529 overloaded_error, the 4xx
// that stop a client). Point a client at it with its base URL
// (ANTHROPIC_BASE_URL for Claude Code):
//
//	model := fakemodel.NewAnthropic(fakemodel.Script(
//		fakemodel.Bash("go test ./..."),
//		fakemodel.Say("The tests pass."),
//	))
//	defer model.Close()
//	// ... run the agent with ANTHROPIC_BASE_URL=model.URL ...
//	turns := model.Turns() // what the model was sent, turn by turn
//
// OpenAI is the Responses API (POST /v1/responses) as Codex and the SDKs
// use it, answered by the same scripts: messages, function calls (Exec runs
// a command with Codex's exec_command tool) and custom tool calls
// (ApplyPatch), with usage (cached tokens included), streamed as the API
// streams them (response.created, response.output_item.added, the deltas,
// response.output_item.done, response.completed), and errors with the
// status, body and headers the API gives (RateLimitExceeded with
// retry-after and the x-ratelimit-* headers, InsufficientQuota, Codex's
// UsageLimitReached, a response that fails midway). Point a client at its
// URL, which ends in /v1 (a Codex model provider's base_url):
//
//	model := fakemodel.NewOpenAI(fakemodel.Script(
//		fakemodel.Exec("go test ./..."),
//		fakemodel.Say("The tests pass."),
//	))
//
// Gemini is the Gemini API (POST /v1beta/models/<model>:streamGenerateContent
// ?alt=sse and :generateContent) as Gemini CLI and google.golang.org/genai
// use it, answered by the same scripts: text, thoughts and functionCall
// parts (the tool_use blocks; Use("run_shell_command", ...) runs a
// command in Gemini CLI) with usageMetadata (cached and thinking tokens
// apart), streamed as the API streams them (a chunk per piece of text,
// the finishReason and the whole usage in the last), and errors as the
// API gives them ({"error":{"code","message","status","details"}}: a 429
// RESOURCE_EXHAUSTED of a quota per minute with its RetryInfo, or per
// day; a key it does not know). The key goes in x-goog-api-key; point a
// client at its URL (GOOGLE_GEMINI_BASE_URL for Gemini CLI):
//
//	model := fakemodel.NewGemini(fakemodel.Script(
//		fakemodel.Use("run_shell_command", map[string]string{"command": "go test ./..."}),
//		fakemodel.Say("The tests pass."),
//	))
//
// Nothing leaves the machine: the server listens on the loopback
// interface only.
package fakemodel
