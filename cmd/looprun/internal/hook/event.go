package hook

import "github.com/loopbreaker/loopbreaker/cmd/looprun/internal/agent"

// The hook reads events and writes answers in the agent package's words:
// each agent's Hooks decode its input into an Event and encode an Answer
// in its own format. These are those words, by their short names.
type (
	Event         = agent.Event
	Answer        = agent.Answer
	Message       = agent.Message
	CallResult    = agent.CallResult
	SettingsScope = agent.SettingsScope
)

// The events looprun answers, and the settings files, by their short
// names (see package agent).
const (
	PreToolUse         = agent.PreToolUse
	PostToolUse        = agent.PostToolUse
	PostToolUseFailure = agent.PostToolUseFailure
	Stop               = agent.Stop
	UserPromptSubmit   = agent.UserPromptSubmit
	SessionStart       = agent.SessionStart
	SessionEnd         = agent.SessionEnd
	StopFailure        = agent.StopFailure
	PermissionDenied   = agent.PermissionDenied
	PostCompact        = agent.PostCompact
	SubagentStop       = agent.SubagentStop

	ProjectSettings = agent.ProjectSettings
	LocalSettings   = agent.LocalSettings
	UserSettings    = agent.UserSettings
)
