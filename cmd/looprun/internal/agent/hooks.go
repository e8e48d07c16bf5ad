package agent

import (
	"encoding/json"

	"github.com/loopbreaker/loopbreaker"
)

// The hook events looprun answers, in looprun's words (Claude Code's
// names; Codex uses the same). An agent that names them otherwise maps
// its own names to these (see Hooks.Events). A new event is a constant
// here, a line in the table of each agent that sends it, and its case in
// the hook's handler.
const (
	PreToolUse         = "PreToolUse"
	PostToolUse        = "PostToolUse"
	PostToolUseFailure = "PostToolUseFailure"
	Stop               = "Stop"
	UserPromptSubmit   = "UserPromptSubmit"
	SessionStart       = "SessionStart"
	SessionEnd         = "SessionEnd"
	// StopFailure ends a turn that an API error ended (Claude Code's),
	// in place of Stop: Event.APIError says which.
	StopFailure = "StopFailure"
	// PermissionDenied follows a tool call the agent's own permissions
	// refused (Claude Code's auto mode): Event.Error says why.
	PermissionDenied = "PermissionDenied"
	// PostCompact follows a compaction of the session's context.
	PostCompact = "PostCompact"
	// SubagentStop ends a subagent's work: Event.AgentTranscript holds
	// what it spent.
	SubagentStop = "SubagentStop"
)

// EventName is one of an agent's hook events: its own name (what its
// settings and its input call it), and the event it is in looprun's
// words. Installed says `looprun hooks install` installs it; Ralph that
// it is installed only with a Ralph loop (-ralph). An agent that sends
// one event under two of looprun's names (Gemini CLI's AfterTool is
// PostToolUse or PostToolUseFailure, as the call went) lists the second
// with Installed false.
type EventName struct {
	Own, Event       string
	Installed, Ralph bool
}

// Hooks is how an agent's hooks work: how its events come and its answers
// go, where its settings live, which of its tools touch files, and how
// its transcript tells what a turn spent. Everything else (the breaker,
// the state, the words) is the same for every agent.
type Hooks struct {
	// Events are the agent's events that looprun answers, in the order
	// `looprun hooks install` writes them.
	Events []EventName
	// ToolMatcher is the matcher of a tool event's entry in the settings:
	// every tool ("*").
	ToolMatcher string
	// Decode reads one event from what the agent wrote on the hook's
	// stdin, its Name in looprun's words. An error says what is wrong
	// with it.
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
	// Tools are the agent's tools that run a shell command or touch a
	// file, by the name its events give them: a call of one is checked
	// against the protected paths before it runs.
	Tools map[string]Tool
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
	// InstallNote is what `looprun hooks install` tells the person after
	// it wrote the hooks (user: the person's own settings): what the
	// agent needs before it runs them. "" for nothing.
	InstallNote func(user bool) string
}

// Own returns the agent's own name of event (looprun's word) as
// installed; "" when the agent has none.
func (h *Hooks) Own(event string) string {
	for _, e := range h.Events {
		if e.Event == event {
			return e.Own
		}
	}
	return ""
}

// Word returns the event own, one of the agent's own names, in looprun's
// words; own itself when the agent has no such event.
func (h *Hooks) Word(own string) string {
	for _, e := range h.Events {
		if e.Own == own {
			return e.Event
		}
	}
	return own
}

// Installed returns the agent's own names of the events `looprun hooks
// install` writes, in order; ralph says a Ralph loop is installed.
func (h *Hooks) Installed(ralph bool) []string {
	var names []string
	for _, e := range h.Events {
		if e.Installed && (!e.Ralph || ralph) {
			names = append(names, e.Own)
		}
	}
	return names
}

// IsToolEvent reports whether own, one of the agent's own event names,
// is of a tool call: its entry in the settings has a matcher.
func (h *Hooks) IsToolEvent(own string) bool {
	for _, e := range h.Events {
		if e.Own == own {
			switch e.Event {
			case PreToolUse, PostToolUse, PostToolUseFailure, PermissionDenied:
				return true
			}
		}
	}
	return false
}

// ToolKind is what a tool does to the files.
type ToolKind int

const (
	// Shell runs a shell command line: its Field.
	Shell ToolKind = iota + 1
	// Write writes a whole file, named by its Field, with its Content.
	Write
	// Edit changes a file named by its Field.
	Edit
	// Patch applies a patch (Codex's apply_patch), its Field, that names
	// its files.
	Patch
)

// Tool is a tool that runs a shell command or touches files.
type Tool struct {
	Kind ToolKind
	// Field is the input's member that holds the command line, the file
	// or the patch.
	Field string
	// Content is a Write's member that holds the file's new content: an
	// empty one empties the file.
	Content string
	// Ignore are members of the input that say nothing of what the call
	// does (the description a model gives each shell call): the same
	// call is the same action without them.
	Ignore []string
}

// Event is one hook event as looprun reads it, whatever agent sent it: an
// agent's Hooks.Decode reads its own wire format into it. Fields an event
// does not carry are zero.
type Event struct {
	// Name is the event, in looprun's words (PreToolUse, PostToolUse,
	// ...).
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
	// events); ToolUseID names the call, when the agent does.
	Tool      string
	Input     json.RawMessage
	ToolUseID string
	// Response is what the tool returned (PostToolUse), as the agent
	// gives it: a JSON object or string.
	Response json.RawMessage
	// Error is why the tool call failed (PostToolUseFailure), or why the
	// agent's permissions refused it (PermissionDenied), and Interrupted
	// says the person interrupted it. An agent that tells of a failure in
	// its transcript alone (Codex) says so in Message.Failed.
	Error       string
	Interrupted bool
	// APIError is the class of the API error that ended the turn
	// (StopFailure): Claude Code's rate_limit, billing_error,
	// authentication_failed, ... (see APIErrorLimit).
	APIError string

	// AgentID names the subagent whose event it is (its tool calls, its
	// SubagentStop); "" for the session's own. AgentTranscript is that
	// subagent's transcript, where its spend is.
	AgentID, AgentTranscript string

	// LastMessage is the model's last message, as the turn ends (Stop),
	// and StopHookActive says the turn went on because a stop hook sent
	// the model back.
	LastMessage    string
	StopHookActive bool
}

// Answer is looprun's answer to an event, whatever agent asked: an
// agent's Hooks.Encode writes it in its own wire format. The zero Answer
// lets everything go on and says nothing.
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
	// Words are what the model wrote to the person in the message (its
	// text, not its thinking); "" for none.
	Words string
	// Windows are the provider's usage windows the line reports (Codex's
	// token_count events, after each response), for the window share.
	Windows []loopbreaker.Window
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
