package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/windows"
)

// Codex is the Codex CLI (verified against 0.169.0).
//
// Under looprun (codex exec --json) it exits 0 whatever its commands did,
// so the outcome is read from its JSON events: a run fails when its turn
// failed (turn.failed, its message the error and where a provider limit
// is), or when the last command the agent ran failed (a command that
// failed and was followed by one that passed, such as a test run again
// after a fix, or a grep that found nothing before the edit, is the
// agent's work, not its outcome). The thread (thread.started's thread_id)
// is the session, which `codex exec resume` takes; turn.completed's usage
// is the spend, in tokens alone, priced at the model Codex runs (see
// codexModel); its last agent_message is its last words. Its events say
// nothing of the usage windows: the session's rollout
// ($CODEX_HOME/sessions/.../rollout-<time>-<thread>.jsonl) has them, in
// the rate_limits of the token_count event after each response. looprun's hook
// ends a run as Ctrl-C does: Codex exits 1, its turn started and never
// ended.
//
// Its hooks take Claude Code's format: the same hooks.json, the same
// events, the same input (with the session's model beside it) and the
// same JSON answers, which Codex honours with these differences:
//
//   - a hook after a tool call comes only when the call ran: PostToolUse,
//     with the tool's output alone as tool_response (a command's exit code
//     is in the session's rollout, which the hook reads, not in its input);
//     there is no PostToolUseFailure, and a patch apply_patch could not
//     apply, or a command Codex's policy refused, has no hook after it at
//     all (the session's next hook finds its result in the rollout);
//   - a shell command comes as the tool Bash, its input {"command": ...};
//     a patch as apply_patch, its input {"command": the patch};
//   - PreToolUse's deny reaches the model as "Command blocked by PreToolUse
//     hook: <reason>. Command: ..."; an answer with continue: false is
//     refused whole as unsupported, the deny with it, so none is sent;
//   - after a call, decision "block" replaces the tool's output with the
//     reason, which the model reads instead, and additionalContext reaches
//     it as a developer message; continue: false does the same as a block
//     and does not end the run;
//   - at Stop, decision "block" sends the model back to work, its reason
//     the next message;
//   - a hook's answer cannot end the run: looprun ends a `codex exec` run
//     as Ctrl-C does (see endCodexExec), and in Codex's interactive
//     interface leaves the person to, every tool call refused meanwhile;
//   - PreCompact and PostCompact come around a compaction (trigger manual
//     or auto, the turn_id; SessionStart comes again after it), and
//     SubagentStop with the subagent's agent_transcript_path (its own
//     rollout); Codex has no StopFailure and no PermissionDenied.
//
// Codex runs a hook only once the person trusted it (or with
// --dangerously-bypass-hook-trust), and a project's .codex/ only in a
// trusted project.
var Codex = &Agent{
	Name:               "Codex",
	Flag:               "codex",
	Commands:           []string{"codex", "codex.js", "codex.exe"},
	OutputName:         "Codex's JSON events (codex exec --json)",
	ExitsZeroOnFailure: true,
	Model:              codexModel,
	NewOutput:          func() Output { return &codexOutput{} },
	Hooks: &Hooks{
		Events: []EventName{
			{Own: PreToolUse, Event: PreToolUse, Installed: true},
			{Own: PostToolUse, Event: PostToolUse, Installed: true},
			{Own: UserPromptSubmit, Event: UserPromptSubmit, Installed: true},
			{Own: SessionStart, Event: SessionStart, Installed: true},
			{Own: SessionEnd, Event: SessionEnd, Installed: true},
			{Own: PostCompact, Event: PostCompact, Installed: true},
			{Own: SubagentStop, Event: SubagentStop, Installed: true},
			{Own: Stop, Event: Stop, Installed: true, Ralph: true},
		},
		ToolMatcher: "*",
		Decode:      decodeCodex,
		Encode:      encodeCodex,
		End:         endCodexExec,
		Settings:    codexSettings,
		ReadOnly:    []string{".codex/hooks.json", ".codex/config.toml", ".codex/rules/"},
		Tools: map[string]Tool{
			"Bash":        {Kind: Shell, Field: "command", Ignore: []string{"description"}},
			"apply_patch": {Kind: Patch, Field: "command"},
		},
		SilentFailures: true,
		Message:        codexMessage,
		InstallNote:    codexTrustNote,
	},
}

// CodexInterrupted is the error of a Codex run interrupted during its
// turn: looprun's hook ends a run so.
const CodexInterrupted = "codex: the session was interrupted during its turn, as a hook ends it (or Ctrl-C)"

// The output.

// codexOutput reads Codex's JSON events, one line at a time: the thread,
// what the turns used, a turn that failed, the commands the agent ran
// (command_execution items) and its own messages (agent_message items).
type codexOutput struct {
	seen    bool   // a thread or turn event was read: the output is Codex's
	thread  string // thread.started's thread_id
	failed  string // turn.failed's message; "" when no turn failed
	usage   loopbreaker.Usage
	used    bool         // a turn.completed reported usage
	command codexCommand // the last command_execution that completed
	ran     bool         // ...there was one
	// noticed is the error of the last command that failed with one in
	// its output (a test's failure; not a grep that found nothing).
	noticed string
	// message is the agent's last message: its final answer, where its
	// status block is.
	message string
	// turnOpen says a turn started and has neither completed nor failed:
	// at the end of the output, the run was interrupted during it.
	turnOpen bool
}

// codexCommand is a command the agent ran, as its completed item says.
type codexCommand struct {
	Command  string `json:"command"`
	Output   string `json:"aggregated_output"`
	ExitCode *int   `json:"exit_code"`
	Status   string `json:"status"` // completed, failed, declined
}

// failedCommand reports whether the command failed: its status says so,
// or it exited non-zero.
func (c codexCommand) failedCommand() bool {
	return c.Status == "failed" || c.ExitCode != nil && *c.ExitCode != 0
}

// failure is the error of a failed command: the error its output ends
// with, else how it ended.
func (c codexCommand) failure() string {
	if msg := loopbreaker.ExtractError(c.Output); msg != "" {
		return msg
	}
	how := "failed"
	if c.ExitCode != nil {
		how = "exited " + strconv.Itoa(*c.ExitCode)
	}
	return fmt.Sprintf("command %s: %s", how, c.Command)
}

// codexEvent is what codexOutput reads of a line.
type codexEvent struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Usage    *struct {
		InputTokens           int `json:"input_tokens"`
		CachedInputTokens     int `json:"cached_input_tokens"`
		CacheWriteInputTokens int `json:"cache_write_input_tokens"`
		OutputTokens          int `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Item *struct {
		Type string `json:"type"`
		Text string `json:"text"`
		codexCommand
	} `json:"item"`
}

// codexEventTypes are the events codexOutput reads, as the start of a
// line has them: cheap to tell from the rest.
var codexEventTypes = [][]byte{
	[]byte(`{"type":"thread.started"`), []byte(`{"type":"turn.started"`), []byte(`{"type":"turn.completed"`),
	[]byte(`{"type":"turn.failed"`), []byte(`{"type":"item.completed"`),
}

func (c *codexOutput) Line(line []byte) bool {
	line = bytes.TrimSpace(line)
	if !hasPrefix(line, codexEventTypes) {
		return false // the common case: cheap, and nothing decoded
	}
	var ev codexEvent
	if json.Unmarshal(line, &ev) != nil {
		return false
	}
	c.seen = true
	switch ev.Type {
	case "thread.started":
		c.thread = ev.ThreadID
	case "turn.started":
		c.turnOpen = true
	case "turn.completed":
		c.turnOpen = false
		if u := ev.Usage; u != nil {
			c.used = true
			c.usage.InputTokens = sumTokens(c.usage.InputTokens, u.InputTokens)
			c.usage.CacheReadTokens = sumTokens(c.usage.CacheReadTokens, u.CachedInputTokens)
			c.usage.CacheWriteTokens = sumTokens(c.usage.CacheWriteTokens, u.CacheWriteInputTokens)
			c.usage.OutputTokens = sumTokens(c.usage.OutputTokens, u.OutputTokens)
		}
	case "turn.failed":
		c.turnOpen = false
		c.failed = "turn failed"
		if ev.Error != nil && strings.TrimSpace(ev.Error.Message) != "" {
			c.failed = ev.Error.Message
		}
	case "item.completed":
		switch it := ev.Item; {
		case it == nil:
		case it.Type == "command_execution":
			c.command, c.ran = it.codexCommand, true
			if c.command.failedCommand() {
				if msg := loopbreaker.ExtractError(c.command.Output); msg != "" {
					c.noticed = msg
				}
			}
		case it.Type == "agent_message":
			c.message = it.Text
		}
	}
	return true
}

// hasPrefix reports whether line starts with one of prefixes.
func hasPrefix(line []byte, prefixes [][]byte) bool {
	for _, p := range prefixes {
		if bytes.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// Finish returns what the events said of the run: whether it failed and
// why, its usage (Codex reports no cost, nor the model: the command line
// names it, see codexModel), and its last message, never a command's
// output; and the usage windows its thread's rollout last reported (in
// Codex's home, as the environment names it: the command's is looprun's).
func (c *codexOutput) Finish([]byte, int) Run {
	if !c.seen {
		return Run{}
	}
	r := Run{Seen: true, Told: true, HasUsage: c.used, Session: c.thread, Words: c.message, HasWords: true}
	if c.thread != "" {
		r.Windows = rolloutWindows(codexHome(os.Getenv), c.thread)
	}
	if c.used {
		r.Usage = c.usage // its model is the command line's (codexModel)
	}
	switch {
	case c.failed != "":
		r.Failed, r.Err, r.LimitText = true, c.failed, c.failed
	case c.turnOpen:
		r.Failed, r.HookEnded, r.Err = true, true, CodexInterrupted
	case c.ran && c.command.failedCommand():
		r.Failed, r.Err = true, c.command.failure()
	}
	if !r.Failed {
		r.Noticed = c.noticed // the run passed: an error the agent got past
	}
	return r
}

// codexModel returns the model a Codex command line runs: the value of
// -m or --model after the codex word (argv[at]), else of -c model=...,
// else the top-level model of the profile's config (-p NAME:
// $CODEX_HOME/NAME.config.toml), else of $CODEX_HOME/config.toml
// (CODEX_HOME from getenv, by default ~/.codex). "" when it names none.
func codexModel(argv []string, at int, getenv func(string) string) string {
	model, overridden, profile := "", "", ""
	args := argv[at+1:]
	for i := 0; i < len(args); i++ {
		flag, value, inline := strings.Cut(args[i], "=")
		if !inline && i+1 < len(args) {
			value = args[i+1]
		}
		taken := !inline && i+1 < len(args) // the value is the next argument
		switch {
		case flag == "-m" || flag == "--model":
			model = value
		case strings.HasPrefix(args[i], "-m") && len(args[i]) > 2 && !strings.HasPrefix(args[i], "--"):
			model, taken = args[i][2:], false
		case flag == "-c" || flag == "--config":
			if key, v, ok := strings.Cut(value, "="); ok && strings.TrimSpace(key) == "model" {
				overridden = tomlString(v)
			}
		case flag == "-p" || flag == "--profile":
			profile = value
		default:
			taken = false
		}
		if taken {
			i++
		}
	}
	switch {
	case model != "":
		return model
	case overridden != "":
		return overridden
	}
	home := codexHome(getenv)
	if home == "" {
		return ""
	}
	if profile != "" {
		if m := configModel(filepath.Join(home, profile+".config.toml")); m != "" {
			return m
		}
	}
	return configModel(filepath.Join(home, "config.toml"))
}

// codexHome is Codex's home, as getenv tells it: $CODEX_HOME, else
// ~/.codex; "" when neither is known.
func codexHome(getenv func(string) string) string {
	if d := getenv("CODEX_HOME"); d != "" {
		return d
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".codex")
	}
	return ""
}

// maxRolloutLine bounds a line of the rollout that rolloutWindows reads:
// the token_count events are small, and a longer line (a tool's output)
// is passed over.
const maxRolloutLine = 1 << 20

// rolloutWindows returns the windows the last token_count event of the
// thread's rollout reports, in Codex's home ($CODEX_HOME/sessions/<year>/
// <month>/<day>/rollout-<time>-<thread>.jsonl); nil when there is none.
func rolloutWindows(home, thread string) []loopbreaker.Window {
	if home == "" {
		return nil
	}
	paths, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*-"+thread+".jsonl"))
	if len(paths) == 0 {
		return nil
	}
	f, err := os.Open(paths[len(paths)-1])
	if err != nil {
		return nil
	}
	defer f.Close()
	return lastWindows(f)
}

// lastWindows returns the windows of the last line of rd that reports
// them (windows.FromCodex), reading it a line at a time.
func lastWindows(rd io.Reader) []loopbreaker.Window {
	var last []loopbreaker.Window
	br := bufio.NewReaderSize(rd, 64<<10)
	var line []byte
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case long:
		case len(line)+len(chunk) > maxRolloutLine:
			line, long = line[:0], true
		default:
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if !long {
			if ws, ok := windows.FromCodex(bytes.TrimSpace(line)); ok {
				last = ws
			}
		}
		line, long = line[:0], false
		if err != nil {
			return last
		}
	}
}

// configModel returns the top-level model of a config.toml: the value
// of a model = "..." line before the first table; "" when there is none,
// or the file cannot be read.
func configModel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			return "" // a table: the top level has ended
		}
		if key, value, ok := strings.Cut(line, "="); ok && strings.TrimSpace(key) == "model" {
			return tomlString(value)
		}
	}
	return ""
}

// tomlString returns a TOML value that is a string, unquoted, with a
// comment after it left out; a bare word stays as it is (codex -c takes
// one as the literal string).
func tomlString(v string) string {
	v = strings.TrimSpace(v)
	if len(v) > 0 && (v[0] == '"' || v[0] == '\'') {
		if end := strings.IndexByte(v[1:], v[0]); end >= 0 {
			return v[1 : 1+end]
		}
		return ""
	}
	if i := strings.IndexByte(v, '#'); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v
}

// The hooks.

// codexInput is the part of Codex's hook input looprun reads: Claude
// Code's, and the model.
type codexInput struct {
	claudeInput
	Model string `json:"model"`
}

// codexShellTools are the names Codex gives its shell tools inside, which
// its hooks call Bash: a hook input that names one is read as Bash's.
var codexShellTools = map[string]bool{"shell": true, "exec_command": true, "shell_command": true, "local_shell": true}

// decodeCodex reads Codex's hook input.
func decodeCodex(data []byte) (Event, error) {
	var in codexInput
	if err := json.Unmarshal(data, &in); err != nil {
		return Event{}, fmt.Errorf("the input is not Codex's hook JSON: %w", err)
	}
	ev, err := in.event()
	if err != nil {
		return Event{}, err
	}
	ev.Model = in.Model
	if codexShellTools[ev.Tool] {
		ev.Tool, ev.Input = "Bash", shellInput(ev.Input)
	}
	return ev, nil
}

// shellInput returns a shell tool's input as Bash's, {"command": line}:
// from a command line in "command" or "cmd", or from an argument list in
// "command" (["bash", "-lc", line] gives line; any other list, its words
// quoted). An input it cannot read is returned as it is.
func shellInput(input json.RawMessage) json.RawMessage {
	var in struct {
		Command json.RawMessage `json:"command"`
		Cmd     string          `json:"cmd"`
	}
	if json.Unmarshal(input, &in) != nil {
		return input
	}
	line := in.Cmd
	var argv []string
	switch {
	case json.Unmarshal(in.Command, &line) == nil:
	case json.Unmarshal(in.Command, &argv) == nil && len(argv) == 3 && (argv[1] == "-lc" || argv[1] == "-c"):
		line = argv[2]
	case len(argv) > 0:
		words := make([]string, len(argv))
		for i, w := range argv {
			words[i] = ShellQuote(w)
		}
		line = strings.Join(words, " ")
	}
	if line == "" {
		return input
	}
	out, err := json.Marshal(map[string]string{"command": line})
	if err != nil {
		return input
	}
	return out
}

// encodeCodex writes a as Codex reads a hook's answer to ev: Claude Code's
// answer, without what Codex would refuse or take for something else
// (continue: false before and after a tool call). An End is then
// endCodexExec's to carry out; after a tool call, the model reads it in
// place of the tool's output.
func encodeCodex(ev *Event, a Answer) ([]byte, int) {
	switch ev.Name {
	case PreToolUse:
		a.End = ""
	case PostToolUse:
		if a.Block == "" {
			a.Block = a.End
		}
		a.End = ""
	}
	return encodeClaude(ev, a)
}

// codexSettings returns Codex's hooks file of the scope: the project's
// .codex/hooks.json, or the person's hooks.json in $CODEX_HOME, else
// ~/.codex. Codex keeps no local settings apart: "" for LocalSettings.
func codexSettings(s SettingsScope, dir, home string, env func(string) string) string {
	switch s {
	case LocalSettings:
		return ""
	case UserSettings:
		if d := env("CODEX_HOME"); d != "" {
			return filepath.Join(d, "hooks.json")
		}
		return filepath.Join(home, ".codex", "hooks.json")
	}
	return filepath.Join(dir, ".codex", "hooks.json")
}

// codexLine is the part of a line of Codex's rollout (the session's
// transcript) that looprun reads: the usage of each of the model's
// responses (token_usage_record; the running totals of token_count events
// are not read, their rate_limits are: windows.FromCodex), and the end of each tool call (an item_completed
// event whose item's id is the call's, with its status and a command's
// exit code), and the model's messages to the person (a response_item
// message of the assistant's, its output_text).
type codexLine struct {
	Type    string `json:"type"`
	Payload struct {
		Type       string          `json:"type"`
		ResponseID string          `json:"response_id"`
		CallID     string          `json:"call_id"`
		Output     json.RawMessage `json:"output"`
		Role       string          `json:"role"`
		Content    []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Usage *struct {
			Input      int `json:"input_tokens"`
			CacheRead  int `json:"cached_input_tokens"`
			CacheWrite int `json:"cache_write_input_tokens"`
			Output     int `json:"output_tokens"`
		} `json:"usage"`
		Item *struct {
			ID       string `json:"id"`
			Status   string `json:"status"`
			ExitCode *int   `json:"exit_code"`
		} `json:"item"`
	} `json:"payload"`
}

// codexMessage reads a line of Codex's rollout (JSON lines): a response's
// usage; the usage windows a token_count event reports; a tool call's end, and whether it failed (its status "failed",
// or a command's exit code other than 0), which Codex writes before the
// hook after the call; or a call's result as the model reads it, which
// Codex writes after that hook, and for a call that failed before it ran
// (a patch it could not apply) with no hook at all; or the model's words
// to the person. input_tokens counts the cached ones too, as the
// Responses API does. Lines of other kinds are passed over without being
// decoded.
func codexMessage(line []byte) (Message, bool) {
	if ws, ok := windows.FromCodex(line); ok {
		return Message{Windows: ws}, true
	}
	if !bytes.Contains(line, []byte(`"token_usage_record"`)) && !bytes.Contains(line, []byte(`"item_completed"`)) &&
		!bytes.Contains(line, []byte(`_call_output"`)) && !bytes.Contains(line, []byte(`"output_text"`)) {
		return Message{}, false
	}
	var l codexLine
	if json.Unmarshal(line, &l) != nil {
		return Message{}, false
	}
	p := l.Payload
	switch {
	case l.Type == "token_usage_record" && p.Usage != nil:
		u := p.Usage
		return Message{ID: p.ResponseID, Usage: loopbreaker.Usage{
			InputTokens:      max(u.Input, 0),
			OutputTokens:     max(u.Output, 0),
			CacheReadTokens:  max(u.CacheRead, 0),
			CacheWriteTokens: max(u.CacheWrite, 0),
		}}, true
	case l.Type == "event_msg" && p.Type == "item_completed" && p.Item != nil && p.Item.ID != "" && p.Item.Status != "":
		// An item with a status is a tool call's; the messages have none.
		m := Message{Calls: []string{p.Item.ID}}
		if p.Item.Status == "failed" || p.Item.ExitCode != nil && *p.Item.ExitCode != 0 {
			m.Failed = m.Calls
		}
		return m, true
	case l.Type == "response_item" && (p.Type == "function_call_output" || p.Type == "custom_tool_call_output") && p.CallID != "":
		text := string(p.Output)
		_ = json.Unmarshal(p.Output, &text) // a string, as a rule; else the output as it came
		return Message{Result: &CallResult{ID: p.CallID, Text: text}}, true
	case l.Type == "response_item" && p.Type == "message" && p.Role == "assistant":
		var words []string
		for _, c := range p.Content {
			if c.Type == "output_text" && strings.TrimSpace(c.Text) != "" {
				words = append(words, c.Text)
			}
		}
		return Message{Words: strings.Join(words, "\n")}, len(words) > 0
	}
	return Message{}, false
}

// codexTrustNote tells the person how Codex comes to run the hooks just
// installed: it runs none it was not told to trust.
func codexTrustNote(user bool) string {
	note := `Trust needed: Codex runs a hook only once you trust it, and a changed hook (this install
changed any) only once you trust it again.
  codex        asks at start when hooks are new or changed ("Trust all and continue"); or /hooks
  codex exec   nobody is asked: --dangerously-bypass-hook-trust runs every enabled hook,
               looprun's and any other, unreviewed, for that run
`
	if !user {
		note += "Codex reads a project's .codex/ only in a project it trusts (it asks at start; codex exec --trust).\n"
	}
	return note + "Until then, only rules (-rules) hold. See docs/agent-hooks.md (Codex).\n"
}

// isCodexExec reports whether argv is Codex's, running exec (or its alias
// e): codex [flags] exec [flags] [prompt].
func isCodexExec(argv []string) bool {
	if len(argv) < 2 || programName(argv[0]) != "codex" {
		return false
	}
	if argv[1] == "e" {
		return true
	}
	for _, a := range argv[1:] {
		if a == "exec" {
			return true
		}
	}
	return false
}

// ErrNotCodexExec is why a Codex run was not ended: the hook was not run
// by a `codex exec` (Codex's interface has a person in front of it, who
// ends the run; the model's tool calls stay refused meanwhile).
var ErrNotCodexExec = fmt.Errorf("the hook was not run by codex exec")

// endCodexExec ends the `codex exec` run that ran this hook as Ctrl-C
// does (see interruptAncestor): Codex cancels the tool call in flight,
// whose hook this is, runs its SessionEnd hooks, and exits with status 1.
// Run by Codex's interface instead, it leaves the run to the person:
// ErrNotCodexExec.
func endCodexExec() error { return interruptAncestor(isCodexExec, ErrNotCodexExec) }
