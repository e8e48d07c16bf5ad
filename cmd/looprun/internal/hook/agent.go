package hook

import "github.com/loopbreaker/loopbreaker"

// Agent is a coding agent whose hooks looprun answers: how its events
// come, how its answers go, where its settings live and how its
// transcript tells what a turn spent. Everything else (the breaker, the
// state, the words) is the same for every agent. [ClaudeCode] is the one
// there is.
type Agent struct {
	// Name names the agent in messages ("Claude Code").
	Name string
	// Decode reads one event from what the agent wrote on the hook's
	// stdin. An error says what is wrong with it.
	Decode func(data []byte) (Event, error)
	// Encode returns what the hook prints on stdout to answer ev with a
	// (nothing, for the zero Answer) and its exit code.
	Encode func(ev *Event, a Answer) (stdout []byte, code int)
	// Settings returns the settings file that holds the hooks: the
	// project's in dir (local: the one kept out of version control), or,
	// for user, the person's own; home is the person's home directory and
	// env reads the environment.
	Settings func(s SettingsScope, dir, home string, env func(string) string) string
	// Message reads one line of the session's transcript: a model's
	// message, and ok; ok is false for every other line.
	Message func(line []byte) (m Message, ok bool)
}

// Message is a model's message as a transcript records it, or a part of
// one: Claude Code writes a message of several content blocks as several
// lines, each with the message's id and usage.
type Message struct {
	// ID names the message.
	ID string
	// Usage is what the message spent.
	Usage loopbreaker.Usage
	// Calls are the ids of the tool calls the line holds.
	Calls []string
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
