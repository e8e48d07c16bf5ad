package hook

import "github.com/loopbreaker/loopbreaker"

// Agent is a coding agent whose hooks looprun answers: how its events
// come, how its answers go, where its settings live and how its
// transcript tells what a turn spent. Everything else (the breaker, the
// state, the words) is the same for every agent: [ClaudeCode] and
// [Codex].
type Agent struct {
	// Name names the agent in messages ("Claude Code"), and Flag on the
	// command line (-agent claude).
	Name, Flag string
	// Events are the events of those looprun answers that the agent
	// sends, in the order `looprun hooks install` writes them (Stop is
	// installed only with a Ralph loop).
	Events []string
	// Decode reads one event from what the agent wrote on the hook's
	// stdin. An error says what is wrong with it.
	Decode func(data []byte) (Event, error)
	// Encode returns what the hook prints on stdout to answer ev with a
	// (nothing, for the zero Answer) and its exit code.
	Encode func(ev *Event, a Answer) (stdout []byte, code int)
	// End ends the agent's run after an answer whose End its wire format
	// cannot carry; nil when the answer itself ends the run.
	End func() error
	// Settings returns the settings file that holds the hooks: the
	// project's in dir (local: the one kept out of version control), or,
	// for user, the person's own; home is the person's home directory and
	// env reads the environment. "" when the agent has no such file.
	Settings func(s SettingsScope, dir, home string, env func(string) string) string
	// ReadOnly are the agent's files in the project that hold its hooks,
	// relative to it: the agent may not change them (the default of
	// -read-only). An agent does not switch its own brakes off.
	ReadOnly []string
	// SilentFailures says that some of the agent's tool calls that fail
	// come with no hook after them (Codex: a patch it could not apply, a
	// command its own policy refused). The hook before such a call notes
	// it, and a later hook of the session finds its result in the
	// transcript, and records it as a failed step.
	SilentFailures bool
	// Message reads one line of the session's transcript: what it tells
	// of a model's message or of tool calls, and ok; ok is false for
	// every other line.
	Message func(line []byte) (m Message, ok bool)
}

// Message is what a line of a transcript tells: a model's message, or a
// part of one (Claude Code writes a message of several content blocks as
// several lines, each with the message's id and usage), and the tool
// calls it names. A line that tells of tool calls alone has no ID and a
// zero Usage.
type Message struct {
	// ID names the message.
	ID string
	// Usage is what the message spent.
	Usage loopbreaker.Usage
	// Calls are the ids of the tool calls the line holds: those the
	// model asks for (Claude Code), or those that ended (Codex), once
	// the line is in the hook after the call waits for it.
	Calls []string
	// Failed are the ids of Calls that the line says failed, for an
	// agent whose hook input does not say so (Codex).
	Failed []string
	// Result is the result of a tool call as the model reads it, when
	// the line is one, for an agent with SilentFailures: it is written
	// after the call's hook, if any came.
	Result *CallResult
}

// CallResult is a tool call's result: its id, and its text.
type CallResult struct {
	ID, Text string
}

// SettingsScope says which settings file `looprun hooks install` changes.
type SettingsScope int

const (
	// ProjectSettings is the project's settings, shared with everyone who
	// works on it.
	ProjectSettings SettingsScope = iota
	// LocalSettings is the project's settings of this person alone, kept
	// out of version control.
	LocalSettings
	// UserSettings is the person's settings, for every project.
	UserSettings
)
