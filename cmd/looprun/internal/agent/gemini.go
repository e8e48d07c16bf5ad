package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/loopbreaker/loopbreaker"
)

// Gemini is Gemini CLI (verified against 0.61.0).
//
// Under looprun (gemini -p ... --output-format stream-json, or json) it
// exits 0 whatever its commands did, so the outcome is read from its
// output. stream-json is a line a event: init (session_id, model), the
// assistant's message in delta pieces, tool_use and tool_result (status
// "success" even for a command that exited 1: a command's exit code is
// only in the session's transcript, which looprun reads), and the result
// (status, error, and stats: input_tokens with the cached ones, cached,
// output_tokens, total_tokens, of which the thinking is the rest; per
// model too). json is one object, pretty-printed: session_id, response
// and stats on stdout, or session_id and error on stderr. A run fails when
// its result says error (its message the error, and where a provider
// limit is: Gemini gives up on a 429 after its own retries, exit 173), or
// when the last command the agent ran failed; the session (--resume
// <session_id>) goes on with its history, its stats that run's alone. No
// cost is reported: the tokens are priced at the model the output names.
// A hook's {"continue": false} ends the session, exit 0, the call's
// tool_result an error of type stop_execution whose message is the hook's
// stopReason.
//
// Its hooks live in settings.json (.gemini/settings.json of the project,
// ~/.gemini/settings.json of the person), by events of its own names:
// BeforeTool, AfterTool, BeforeAgent, AfterAgent, SessionStart,
// SessionEnd (and BeforeModel, AfterModel, BeforeToolSelection,
// Notification and PreCompress, which looprun does not answer: 0.61.0
// sends PreCompress with trigger "auto" before every model request,
// before it knows whether anything is compressed, and nothing after a
// compression; it has no event for an API error that ended a turn, a
// permission denied, or a subagent's end). A hook gets session_id,
// transcript_path, cwd and hook_event_name, and tool_name and tool_input
// (no call id), tool_response ({llmContent, returnDisplay, error}) after
// the call, or prompt_response and stop_hook_active as the turn ends. It
// answers with exit code 0 and a JSON object:
//
//   - BeforeTool's {"decision": "deny", "reason": R} keeps the call from
//     running, and the model reads "Tool execution blocked: R"; no
//     AfterTool follows;
//   - AfterTool's deny replaces the tool's output with the reason, which
//     the model reads as the tool's error, and
//     hookSpecificOutput.additionalContext is appended to the output;
//   - AfterAgent's deny sends the model back to work, the reason its new
//     prompt;
//   - {"continue": false, "stopReason": R} ends the session at any of
//     them; systemMessage is shown to the person.
//
// A project's hooks run only in a folder Gemini CLI trusts (headless:
// GEMINI_CLI_TRUST_WORKSPACE=true or --skip-trust, else it exits 55), and
// it warns once of project hooks it has not seen.
var Gemini = &Agent{
	Name:               "Gemini CLI",
	Flag:               "gemini",
	Commands:           []string{"gemini", "gemini.js", "gemini.exe"},
	OutputName:         "Gemini CLI's JSON output",
	ExitsZeroOnFailure: true,
	NewOutput:          func() Output { return &geminiOutput{home: geminiHome(os.Getenv)} },
	// The json format is one object at the end; text and stream-json
	// print as they go.
	Silent: func(argv []string, at int) bool { return outputFormat(argv, at, "-o") == "json" },
	Hooks: &Hooks{
		Events: []EventName{
			{Own: "BeforeTool", Event: PreToolUse, Installed: true},
			{Own: "AfterTool", Event: PostToolUse, Installed: true},
			{Own: "AfterTool", Event: PostToolUseFailure},
			{Own: "BeforeAgent", Event: UserPromptSubmit, Installed: true},
			{Own: "SessionStart", Event: SessionStart, Installed: true},
			{Own: "SessionEnd", Event: SessionEnd, Installed: true},
			{Own: "AfterAgent", Event: Stop, Installed: true, Ralph: true},
		},
		ToolMatcher: "*",
		Decode:      decodeGemini,
		Encode:      encodeGemini,
		Settings:    geminiSettings,
		ReadOnly:    []string{".gemini/settings.json"},
		Tools: map[string]Tool{
			"run_shell_command": {Kind: Shell, Field: "command", Ignore: []string{"description"}},
			"write_file":        {Kind: Write, Field: "file_path", Content: "content"},
			"replace":           {Kind: Edit, Field: "file_path"},
		},
		Message:     geminiMessage,
		InstallNote: geminiTrustNote,
	},
}

// geminiShell is Gemini CLI's shell tool.
const geminiShell = "run_shell_command"

// geminiHome is the home Gemini CLI keeps .gemini/ in:
// $GEMINI_CLI_HOME, else $HOME.
func geminiHome(getenv func(string) string) string {
	if d := getenv("GEMINI_CLI_HOME"); d != "" {
		return d
	}
	return getenv("HOME")
}

// The output.

// geminiEventTypes are the events of stream-json, as the start of a line
// has them: cheap to tell from the rest (Claude Code's result event is
// {"type":"result","subtype"...).
var geminiEventTypes = [][]byte{
	[]byte(`{"type":"init","timestamp"`), []byte(`{"type":"message","timestamp"`),
	[]byte(`{"type":"tool_use","timestamp"`), []byte(`{"type":"tool_result","timestamp"`),
	[]byte(`{"type":"error","timestamp"`), []byte(`{"type":"result","timestamp"`),
}

// geminiOutput reads Gemini CLI's output: stream-json's events, or the
// json format's object, which it gathers from its lines (a line "{" to a
// line "}").
type geminiOutput struct {
	home string // Gemini CLI's home, where the transcript is

	seen     bool   // an event (or the object) was read
	session  string // init's session_id
	model    string // init's model
	ended    bool   // a result event (or the object) was read
	failed   string // the result's error message; "" when none
	usage    loopbreaker.Usage
	used     bool
	words    strings.Builder // the assistant's text since the last tool call
	hasWords bool
	denials  int
	// calls are the shell commands the agent ran, by tool id, in order.
	calls []geminiCall
	// stopped is the message of a tool call a hook's continue: false
	// ended; "" when none did.
	stopped string
	// object gathers the json format's object, once a line "{" opened it.
	object []byte
	inside bool
}

// geminiCall is a shell command the agent ran, as tool_use and
// tool_result tell it.
type geminiCall struct {
	id, command, output string
	ran                 bool   // a tool_result came, and the command was not refused
	errType, errMessage string // the tool_result's error
}

// geminiEvent is what geminiOutput reads of a line.
type geminiEvent struct {
	Type       string          `json:"type"`
	SessionID  string          `json:"session_id"`
	Model      string          `json:"model"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Output     string          `json:"output"`
	Error      *geminiError    `json:"error"`
	Stats      json.RawMessage `json:"stats"`
}

// geminiError is an error as Gemini CLI's output gives it.
type geminiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// maxGeminiObject bounds the json format's object gathered from lines.
const maxGeminiObject = 4 << 20

func (g *geminiOutput) Line(line []byte) bool {
	trimmed := bytes.TrimRight(line, "\r")
	switch {
	case g.inside:
		if len(g.object)+len(trimmed) < maxGeminiObject {
			g.object = append(append(g.object, trimmed...), '\n')
		}
		if string(trimmed) == "}" {
			g.inside = false
			g.readObject(g.object)
			g.object = g.object[:0]
		}
		return true
	case string(trimmed) == "{":
		g.inside, g.object = true, append(g.object[:0], "{\n"...)
		return false // not yet known to be Gemini CLI's
	case !hasPrefix(trimmed, geminiEventTypes):
		return false
	}
	var ev geminiEvent
	if json.Unmarshal(trimmed, &ev) != nil {
		return false
	}
	g.seen = true
	switch ev.Type {
	case "init":
		g.session, g.model = ev.SessionID, ev.Model
	case "message":
		if ev.Role == "assistant" {
			g.words.WriteString(ev.Content)
			g.hasWords = true
		}
	case "tool_use":
		g.words.Reset()
		if ev.ToolName == geminiShell {
			var in struct{ Command string }
			_ = json.Unmarshal(ev.Parameters, &in)
			g.calls = append(g.calls, geminiCall{id: ev.ToolID, command: in.Command})
		}
	case "tool_result":
		g.toolResult(ev)
	case "result":
		g.ended = true
		if ev.Status == "error" {
			g.failed = "gemini: the run failed"
			if ev.Error != nil && strings.TrimSpace(ev.Error.Message) != "" {
				g.failed = ev.Error.Message
			}
		}
		g.readStats(ev.Stats)
	}
	return true
}

// toolResult reads a tool call's result.
func (g *geminiOutput) toolResult(ev geminiEvent) {
	if ev.Error != nil {
		switch ev.Error.Type {
		case "stop_execution":
			// A hook's stopReason, after BeforeTool in Gemini CLI's words.
			g.stopped = strings.TrimPrefix(ev.Error.Message, "Agent execution stopped by hook: ")
		case "policy_violation", "tool_not_registered":
			g.denials++ // refused, by a hook, a policy or the approval mode
		}
	}
	for i := range g.calls {
		c := &g.calls[i]
		if c.id != ev.ToolID {
			continue
		}
		c.output = ev.Output
		if ev.Error != nil {
			c.errType, c.errMessage = ev.Error.Type, ev.Error.Message
		}
		c.ran = ev.Error == nil || ev.Error.Type != "policy_violation" && ev.Error.Type != "tool_not_registered" && ev.Error.Type != "stop_execution"
	}
}

// readStats reads a result's stats: the tokens of every model, priced as
// the model the run started on (init's), whose share it is.
func (g *geminiOutput) readStats(raw json.RawMessage) {
	var stats struct {
		Models map[string]struct {
			Total  int `json:"total_tokens"`
			Input  int `json:"input_tokens"`
			Cached int `json:"cached"`
		} `json:"models"`
	}
	if json.Unmarshal(raw, &stats) != nil {
		return
	}
	var names []string
	for name, m := range stats.Models {
		names = append(names, name)
		g.add(m.Input, m.Cached, m.Total-m.Input)
	}
	g.name(names)
}

// add adds a model's tokens to the usage: input with the cached ones,
// the cached, and the output with the thinking.
func (g *geminiOutput) add(input, cached, output int) {
	g.used = true
	g.usage.InputTokens = sumTokens(g.usage.InputTokens, input)
	g.usage.CacheReadTokens = sumTokens(g.usage.CacheReadTokens, cached)
	g.usage.OutputTokens = sumTokens(g.usage.OutputTokens, output)
}

// name names the usage by the model the run started on, else the only
// one, else the first of names in order.
func (g *geminiOutput) name(names []string) {
	sort.Strings(names)
	switch {
	case g.model != "":
		g.usage.Model = g.model
	case len(names) > 0:
		g.usage.Model = names[0]
	}
}

// readObject reads the json format's object: the run's session, its
// response and stats, or its error.
func (g *geminiOutput) readObject(data []byte) {
	var obj struct {
		SessionID *string      `json:"session_id"`
		Response  *string      `json:"response"`
		Error     *geminiError `json:"error"`
		Stats     *struct {
			Models map[string]struct {
				Tokens struct {
					Prompt int `json:"prompt"`
					Total  int `json:"total"`
					Cached int `json:"cached"`
				} `json:"tokens"`
			} `json:"models"`
		} `json:"stats"`
	}
	if json.Unmarshal(data, &obj) != nil || obj.SessionID == nil || obj.Response == nil && obj.Error == nil {
		return // not Gemini CLI's
	}
	g.seen, g.ended, g.session = true, true, *obj.SessionID
	if obj.Response != nil {
		g.words.Reset()
		g.words.WriteString(*obj.Response)
		g.hasWords = true
	}
	if e := obj.Error; e != nil {
		g.failed = "gemini: the run failed"
		if strings.TrimSpace(e.Message) != "" {
			g.failed = e.Message
		}
	}
	if obj.Stats != nil {
		var names []string
		for name, m := range obj.Stats.Models {
			names = append(names, name)
			g.add(m.Tokens.Prompt, m.Tokens.Cached, m.Tokens.Total-m.Tokens.Prompt)
		}
		g.name(names)
	}
}

func (g *geminiOutput) Finish(_ []byte, exitCode int) Run {
	if !g.seen {
		return Run{}
	}
	r := Run{Seen: true, Told: true, Session: g.session, Words: g.words.String(), HasWords: g.hasWords,
		Usage: g.usage, HasUsage: g.used, Denials: g.denials}
	exits := g.exitCodes()
	last, ran := g.lastCommand()
	switch {
	case g.stopped != "":
		r.Failed, r.HookEnded, r.HookReason, r.Err = true, true, g.stopped, g.stopped
	case g.failed != "":
		r.Failed, r.Err, r.LimitText = true, g.failed, g.failed
	case !g.ended:
		r.Failed, r.Err = true, "gemini: the output ended before its result event: the run was cut short"
		if exitCode != 0 {
			r.Failed, r.Err = true, fmt.Sprintf("gemini: the output ended before its result event (exit status %d)", exitCode)
		}
	case ran && last.failed(exits):
		r.Failed, r.Err = true, last.failure(exits)
	}
	if !r.Failed {
		for _, c := range g.calls {
			if c.ran && c.failed(exits) {
				if msg := loopbreaker.ExtractError(c.output); msg != "" {
					r.Noticed = msg // the run passed: an error the agent got past
				}
			}
		}
	}
	return r
}

// lastCommand returns the last shell command that ran; false for none.
func (g *geminiOutput) lastCommand() (geminiCall, bool) {
	for i := len(g.calls) - 1; i >= 0; i-- {
		if g.calls[i].ran {
			return g.calls[i], true
		}
	}
	return geminiCall{}, false
}

// failed reports whether the command failed: its result was an error, or
// it exited non-zero (exits, from the transcript).
func (c geminiCall) failed(exits map[string]int) bool {
	return c.errType != "" || exits[c.id] != 0
}

// failure is the error of a failed command: the error its output ends
// with, else its error's message, else how it ended.
func (c geminiCall) failure(exits map[string]int) string {
	if msg := loopbreaker.ExtractError(c.output); msg != "" {
		return msg
	}
	if c.errMessage != "" {
		return c.errMessage
	}
	return fmt.Sprintf("command exited %d: %s", exits[c.id], c.command)
}

// exitCodes returns the exit codes of the session's shell commands, by
// tool id, as its transcript says them ("Exit Code: N" in the output the
// model read); nil when there were none, or no transcript is found.
func (g *geminiOutput) exitCodes() map[string]int {
	if len(g.calls) == 0 || len(g.session) < 8 || g.home == "" {
		return nil
	}
	paths, _ := filepath.Glob(filepath.Join(g.home, ".gemini", "tmp", "*", "chats", "session-*-"+g.session[:8]+".jsonl"))
	exits := map[string]int{}
	for _, p := range paths {
		readGeminiExits(p, g.session, exits)
	}
	return exits
}

// geminiExitCode finds a shell command's exit code in the output its
// model read.
var geminiExitCode = regexp.MustCompile(`(?m)^Exit Code: (-?\d+)\s*$`)

// readGeminiExits adds the exit codes of the shell commands of the
// transcript at path, when it is session's, to exits.
func readGeminiExits(path, session string, exits map[string]int) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	first := true
	for sc.Scan() {
		line := sc.Bytes()
		if first {
			first = false
			var head struct {
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal(line, &head) != nil || head.SessionID != session {
				return
			}
			continue
		}
		if !bytes.Contains(line, []byte(`"functionResponse"`)) {
			continue
		}
		var m struct {
			Content []struct {
				FunctionResponse *struct {
					ID       string `json:"id"`
					Name     string `json:"name"`
					Response struct {
						Output string `json:"output"`
					} `json:"response"`
				} `json:"functionResponse"`
			} `json:"content"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		for _, c := range m.Content {
			if fr := c.FunctionResponse; fr != nil && fr.Name == geminiShell {
				if code, ok := shellExitCode(fr.Response.Output); ok {
					exits[fr.ID] = code
				}
			}
		}
	}
}

// shellExitCode returns the exit code a shell command's output says
// ("Exit Code: N"), and whether it says one; none is 0.
func shellExitCode(output string) (int, bool) {
	m := geminiExitCode.FindStringSubmatch(output)
	if m == nil {
		return 0, false
	}
	code, err := strconv.Atoi(m[1])
	return code, err == nil
}

// The hooks.

// geminiEvents are Gemini CLI's events, by its names, in looprun's words
// (AfterTool is PostToolUse until decodeGemini finds the call failed).
var geminiEvents = map[string]string{
	"BeforeTool": PreToolUse, "AfterTool": PostToolUse, "BeforeAgent": UserPromptSubmit,
	"AfterAgent": Stop, "SessionStart": SessionStart, "SessionEnd": SessionEnd,
}

// geminiInput is the part of Gemini CLI's hook input looprun reads.
type geminiInput struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	Event          string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResponse   *struct {
		LLMContent json.RawMessage `json:"llmContent"`
		Error      *geminiError    `json:"error"`
	} `json:"tool_response"`
	PromptResponse string `json:"prompt_response"`
	StopHookActive bool   `json:"stop_hook_active"`
}

// decodeGemini reads Gemini CLI's hook input. An AfterTool whose call
// failed (its response has an error, or a shell command's output says it
// exited non-zero) is PostToolUseFailure, its Error what the model read.
// A tool's Response is the text the model read, without what differs
// from call to call of the same command (the process group's id).
func decodeGemini(data []byte) (Event, error) {
	var in geminiInput
	if err := json.Unmarshal(data, &in); err != nil {
		return Event{}, fmt.Errorf("the input is not Gemini CLI's hook JSON: %w", err)
	}
	if in.Event == "" {
		return Event{}, errNoEvent
	}
	name, ok := geminiEvents[in.Event]
	if !ok {
		name = in.Event // an event looprun does not answer: the handler says so
	}
	ev := Event{
		Name: name, SessionID: in.SessionID, TranscriptPath: in.TranscriptPath, Cwd: in.Cwd,
		Tool: in.ToolName, Input: in.ToolInput, LastMessage: in.PromptResponse, StopHookActive: in.StopHookActive,
	}
	if r := in.ToolResponse; r != nil && name == PostToolUse {
		var text string
		if json.Unmarshal(r.LLMContent, &text) != nil {
			text = string(r.LLMContent)
		}
		text = geminiToolText(text)
		ev.Response, _ = json.Marshal(text)
		code, _ := shellExitCode(text)
		switch {
		case r.Error != nil:
			ev.Name, ev.Error = PostToolUseFailure, r.Error.Message
		case in.ToolName == geminiShell && code != 0:
			ev.Name, ev.Error = PostToolUseFailure, text
		}
	}
	return ev, nil
}

// geminiToolText returns the text a tool's result gave the model, as the
// step signals compare it: without the untrusted_context wrapper of a
// shell command's, nor its process group's id, which differs each call.
func geminiToolText(text string) string {
	text = strings.TrimSpace(text)
	if inner, ok := strings.CutPrefix(text, "<untrusted_context>"); ok {
		text = strings.TrimSpace(strings.TrimSuffix(inner, "</untrusted_context>"))
	}
	var kept []string
	for line := range strings.Lines(text) {
		if !strings.HasPrefix(line, "Process Group PGID:") {
			kept = append(kept, strings.TrimRight(line, "\n"))
		}
	}
	return strings.Join(kept, "\n")
}

// geminiAnswer is Gemini CLI's hook output.
type geminiAnswer struct {
	Continue      *bool           `json:"continue,omitempty"`
	StopReason    string          `json:"stopReason,omitempty"`
	SystemMessage string          `json:"systemMessage,omitempty"`
	Decision      string          `json:"decision,omitempty"`
	Reason        string          `json:"reason,omitempty"`
	Specific      *geminiSpecific `json:"hookSpecificOutput,omitempty"`
}

// geminiSpecific is an event's own part of the output.
type geminiSpecific struct {
	Event             string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext,omitempty"`
}

// encodeGemini writes a as Gemini CLI reads a hook's answer to ev. After
// a tool call a block replaces the tool's output, and the context is then
// told with it (Gemini CLI drops additionalContext from a deny).
func encodeGemini(ev *Event, a Answer) ([]byte, int) {
	if a == (Answer{}) {
		return nil, 0
	}
	var out geminiAnswer
	if a.End != "" {
		stop := false
		out.Continue, out.StopReason = &stop, a.End
	}
	out.SystemMessage = a.Notice
	switch ev.Name {
	case PreToolUse:
		if a.Deny != "" {
			out.Decision, out.Reason = "deny", a.Deny
		}
	case PostToolUse, PostToolUseFailure:
		switch {
		case a.Block != "" && a.Context != "":
			out.Decision, out.Reason = "deny", a.Block+"\n\n"+a.Context
		case a.Block != "":
			out.Decision, out.Reason = "deny", a.Block
		case a.Context != "":
			out.Specific = &geminiSpecific{Event: "AfterTool", AdditionalContext: a.Context}
		}
	case Stop:
		if a.Block != "" {
			out.Decision, out.Reason = "deny", a.Block
		}
	}
	return marshalAnswer(out)
}

// geminiSettings returns Gemini CLI's settings file of the scope: the
// project's .gemini/settings.json, or the person's in
// $GEMINI_CLI_HOME/.gemini, else ~/.gemini. It keeps no local settings
// apart: "" for LocalSettings.
func geminiSettings(s SettingsScope, dir, home string, env func(string) string) string {
	switch s {
	case LocalSettings:
		return ""
	case UserSettings:
		if d := env("GEMINI_CLI_HOME"); d != "" {
			home = d
		}
		return filepath.Join(home, ".gemini", "settings.json")
	}
	return filepath.Join(dir, ".gemini", "settings.json")
}

// geminiLine is the part of a line of Gemini CLI's transcript that tells
// what a model's message spent: tokens.input counts the cached ones too,
// and the thinking is apart from the output.
type geminiLine struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"` // the model's text: a string

	Tokens *struct {
		Input    int `json:"input"`
		Output   int `json:"output"`
		Cached   int `json:"cached"`
		Thoughts int `json:"thoughts"`
	} `json:"tokens"`
}

// geminiMessage reads a model's message from a line of Gemini CLI's
// transcript (JSON lines), which writes a message twice (the second time
// with its tool calls), each time with its id and tokens. Other lines
// are passed over without being decoded.
func geminiMessage(line []byte) (Message, bool) {
	if !bytes.Contains(line, []byte(`"gemini"`)) || !bytes.Contains(line, []byte(`"tokens"`)) {
		return Message{}, false
	}
	var l geminiLine
	if json.Unmarshal(line, &l) != nil || l.Type != "gemini" || l.Tokens == nil {
		return Message{}, false
	}
	t := l.Tokens
	var words string
	_ = json.Unmarshal(l.Content, &words) // a string, the text the person reads
	if strings.TrimSpace(words) == "" {
		words = ""
	}
	return Message{ID: l.ID, Words: words, Usage: loopbreaker.Usage{
		Model:           l.Model,
		InputTokens:     max(t.Input, 0),
		CacheReadTokens: max(t.Cached, 0),
		OutputTokens:    sumTokens(t.Output, t.Thoughts),
	}}, true
}

// geminiTrustNote tells the person what Gemini CLI needs before it runs a
// project's hooks.
func geminiTrustNote(user bool) string {
	if user {
		return ""
	}
	return `Trust needed: Gemini CLI runs a project's hooks only in a folder it trusts (it asks at start;
headless, gemini -p exits 55 in an untrusted folder: GEMINI_CLI_TRUST_WORKSPACE=true or --skip-trust),
and warns once of project hooks it has not seen. See docs/agent-hooks.md (Gemini CLI).
`
}
