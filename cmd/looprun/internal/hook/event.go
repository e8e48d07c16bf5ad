package hook

import "encoding/json"

// The hook events looprun answers, by the names Claude Code gives them
// (Codex CLI's hooks use the same names).
const (
	PreToolUse         = "PreToolUse"
	PostToolUse        = "PostToolUse"
	PostToolUseFailure = "PostToolUseFailure"
	Stop               = "Stop"
	UserPromptSubmit   = "UserPromptSubmit"
	SessionStart       = "SessionStart"
	SessionEnd         = "SessionEnd"
)

// Event is one hook event as looprun reads it, whatever agent sent it: an
// [Agent] decodes its own wire format into it. Fields an event does not
// carry are zero.
type Event struct {
	// Name is the event (PreToolUse, PostToolUse, ...).
	Name string
	// SessionID names the agent's session; each has a breaker of its own.
	SessionID string
	// TranscriptPath is the session's transcript, from which the spend is
	// read; empty when the agent keeps none.
	TranscriptPath string
	// Cwd is the directory the agent works in.
	Cwd string
	// Model is the model the session runs on, when the agent says it
	// (Codex): the spend read from a transcript that does not name it is
	// priced as this model's.
	Model string

	// Tool is the tool called, and Input its input, a JSON object (tool
	// events); ToolUseID names the call.
	Tool      string
	Input     json.RawMessage
	ToolUseID string
	// Response is what the tool returned (PostToolUse), as the agent
	// gives it: a JSON object or string.
	Response json.RawMessage
	// Error is why the tool call failed (PostToolUseFailure), and
	// Interrupted says the person interrupted it. An agent without that
	// event (Codex) tells of a failure in its transcript: see
	// Message.Failed.
	Error       string
	Interrupted bool

	// LastMessage is the model's last message, as the turn ends (Stop),
	// and StopHookActive says the turn went on because a stop hook sent
	// the model back.
	LastMessage    string
	StopHookActive bool
}

// Answer is looprun's answer to an event, whatever agent asked: an
// [Agent] encodes it in its own wire format. The zero Answer lets
// everything go on and says nothing.
type Answer struct {
	// Deny refuses the tool call before it runs (PreToolUse); the model
	// reads why.
	Deny string
	// Block is, after a tool call, what the model reads as the hook's
	// blocking error (a trip); as the turn ends (Stop), the instruction the
	// model is sent back to work with.
	Block string
	// Context is what the model reads beside the tool's result (a warning).
	Context string
	// End ends the agent's run; the person is shown why. The model gets
	// no further turn.
	End string
	// Notice is shown to the person, and not to the model.
	Notice string
}
