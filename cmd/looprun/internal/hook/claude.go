package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/loopbreaker/loopbreaker"
)

// ClaudeCode is Claude Code (verified against 2.1.328). A hook gets one
// JSON object on stdin with session_id, transcript_path, cwd and
// hook_event_name, and per event tool_name, tool_input and tool_response
// (PostToolUse) or error and is_interrupt (PostToolUseFailure), or
// last_assistant_message and stop_hook_active (Stop). It answers with
// exit code 0 and a JSON object on stdout:
//
//   - PreToolUse refuses a call with hookSpecificOutput.permissionDecision
//     "deny" and its permissionDecisionReason, which the model reads as the
//     tool's error ("PreToolUse:Bash hook error: ...");
//   - after a call, decision "block" with a reason reaches the model as the
//     hook's blocking error, and hookSpecificOutput.additionalContext as
//     context ("PostToolUse:Bash hook additional context: ..."), both beside
//     the tool's result;
//   - at Stop, decision "block" sends the model back to work, its reason the
//     next message ("Stop hook feedback: ...");
//   - "continue": false ends the run after the hook (Claude Code -p exits
//     with 0, its result's terminal_reason "hook_stopped"), and stopReason
//     is what the person is shown; systemMessage is shown to the person only.
//
// A hook that exits 1 is a non-blocking error: its stderr is shown and
// kept in the transcript, and the call goes on.
var ClaudeCode = Agent{
	Name:     "Claude Code",
	Flag:     "claude",
	Events:   []string{PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, SessionStart, SessionEnd, Stop},
	Decode:   decodeClaude,
	Encode:   encodeClaude,
	Settings: claudeSettings,
	ReadOnly: []string{".claude/settings.json", ".claude/settings.local.json"},
	Message:  claudeMessage,
}

// claudeInput is the part of Claude Code's hook input looprun reads.
type claudeInput struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	Event          string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResponse   json.RawMessage `json:"tool_response"`
	ToolUseID      string          `json:"tool_use_id"`
	Error          string          `json:"error"`
	IsInterrupt    bool            `json:"is_interrupt"`
	LastMessage    string          `json:"last_assistant_message"`
	StopHookActive bool            `json:"stop_hook_active"`
}

// errNoEvent is input without the event's name.
var errNoEvent = errors.New("no hook_event_name in the input")

// decodeClaude reads Claude Code's hook input.
func decodeClaude(data []byte) (Event, error) {
	var in claudeInput
	if err := json.Unmarshal(data, &in); err != nil {
		return Event{}, fmt.Errorf("the input is not Claude Code's hook JSON: %w", err)
	}
	return in.event()
}

// event returns the input as an Event; an error when it names none.
func (in *claudeInput) event() (Event, error) {
	if in.Event == "" {
		return Event{}, errNoEvent
	}
	return Event{
		Name: in.Event, SessionID: in.SessionID, TranscriptPath: in.TranscriptPath, Cwd: in.Cwd,
		Tool: in.ToolName, Input: in.ToolInput, Response: in.ToolResponse, ToolUseID: in.ToolUseID,
		Error: in.Error, Interrupted: in.IsInterrupt,
		LastMessage: in.LastMessage, StopHookActive: in.StopHookActive,
	}, nil
}

// claudeOutput is Claude Code's hook output.
type claudeOutput struct {
	Continue      *bool           `json:"continue,omitempty"`
	StopReason    string          `json:"stopReason,omitempty"`
	SystemMessage string          `json:"systemMessage,omitempty"`
	Decision      string          `json:"decision,omitempty"`
	Reason        string          `json:"reason,omitempty"`
	Specific      *claudeSpecific `json:"hookSpecificOutput,omitempty"`
}

// claudeSpecific is an event's own part of the output.
type claudeSpecific struct {
	Event              string `json:"hookEventName"`
	PermissionDecision string `json:"permissionDecision,omitempty"`
	PermissionReason   string `json:"permissionDecisionReason,omitempty"`
	AdditionalContext  string `json:"additionalContext,omitempty"`
}

// encodeClaude writes a as Claude Code reads a hook's answer to ev.
func encodeClaude(ev *Event, a Answer) ([]byte, int) {
	if a == (Answer{}) {
		return nil, 0
	}
	var out claudeOutput
	if a.End != "" {
		stop := false
		out.Continue, out.StopReason = &stop, a.End
	}
	out.SystemMessage = a.Notice
	switch ev.Name {
	case PreToolUse:
		if a.Deny != "" {
			out.Specific = &claudeSpecific{Event: ev.Name, PermissionDecision: "deny", PermissionReason: a.Deny}
		}
	case PostToolUse, PostToolUseFailure, Stop:
		if a.Block != "" {
			out.Decision, out.Reason = "block", a.Block
		}
	}
	if a.Context != "" && ev.Name != Stop && ev.Name != SessionEnd {
		if out.Specific == nil {
			out.Specific = &claudeSpecific{Event: ev.Name}
		}
		out.Specific.AdditionalContext = a.Context
	}
	data, err := json.Marshal(out)
	if err != nil {
		panic("hook: " + err.Error()) // strings and booleans always marshal
	}
	return append(data, '\n'), 0
}

// claudeSettings returns Claude Code's settings file of the scope: the
// project's .claude/settings.json or .claude/settings.local.json, or the
// person's settings.json in $CLAUDE_CONFIG_DIR, else ~/.claude.
func claudeSettings(s SettingsScope, dir, home string, env func(string) string) string {
	switch s {
	case LocalSettings:
		return filepath.Join(dir, ".claude", "settings.local.json")
	case UserSettings:
		if d := env("CLAUDE_CONFIG_DIR"); d != "" {
			return filepath.Join(d, "settings.json")
		}
		return filepath.Join(home, ".claude", "settings.json")
	}
	return filepath.Join(dir, ".claude", "settings.json")
}

// claudeLine is the part of a line of Claude Code's transcript that tells
// what a model's message spent.
type claudeLine struct {
	Type    string `json:"type"`
	Message struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Content []struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		} `json:"content"`
		Usage *struct {
			Input      int `json:"input_tokens"`
			CacheWrite int `json:"cache_creation_input_tokens"`
			CacheRead  int `json:"cache_read_input_tokens"`
			Output     int `json:"output_tokens"`
		} `json:"usage"`
	} `json:"message"`
}

// claudeMessage reads a model's message from a line of Claude Code's
// transcript (JSON lines). Claude Code writes a message with several
// content blocks as several lines, one per block, each with the message's
// id and usage. Lines of other kinds (the person's, tool results, hook
// attachments) are passed over without being decoded, unless they hold
// both "assistant" and "usage".
func claudeMessage(line []byte) (Message, bool) {
	if !bytes.Contains(line, []byte(`"assistant"`)) || !bytes.Contains(line, []byte(`"usage"`)) {
		return Message{}, false
	}
	var l claudeLine
	if json.Unmarshal(line, &l) != nil || l.Type != "assistant" || l.Message.Usage == nil {
		return Message{}, false
	}
	u := l.Message.Usage
	m := Message{ID: l.Message.ID, Usage: loopbreaker.Usage{
		Model:            l.Message.Model,
		InputTokens:      u.Input + u.CacheWrite + u.CacheRead,
		OutputTokens:     u.Output,
		CacheReadTokens:  u.CacheRead,
		CacheWriteTokens: u.CacheWrite,
	}}
	for _, b := range l.Message.Content {
		if b.Type == "tool_use" && b.ID != "" {
			m.Calls = append(m.Calls, b.ID)
		}
	}
	return m, true
}
