package looprun

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/windows"
)

// maxJSONLine bounds the line claudeOutput holds while it streams: a line
// longer than this (a huge tool result, or a result text longer than a
// mebibyte) is passed over, unread.
const maxJSONLine = 1 << 20

// claudeOutput reads Claude Code's JSON output (claude -p --output-format
// json, or stream-json) as it streams through the capture, one line at a
// time, in bounded memory: the result event, which ends the run, says
// whether it failed (is_error), what it cost (total_cost_usd, usage), how
// many turns it took, which tool calls were denied (permission_denials) and
// the session (session_id), and the status block in its result text
// (total_cost_usd is the session's running total on --resume: the runner
// counts each run's own, see sessions.runCost); the
// init event says the session early, for a run cut short. Output that is not Claude Code's JSON passes through
// unread. A claudeOutput is not safe for concurrent use.
type claudeOutput struct {
	marker []byte // the done marker, looked for in the result text and in lines that are no JSON
	// plainMarker says the marker was in a line that is no JSON: output
	// of the command's own, around Claude Code's.
	plainMarker bool
	line        []byte // the line being written, up to maxJSONLine bytes
	long        bool   // ...which is longer than that: it is passed over
	result      claudeResult
	// session is the session the output named: the result's, else the
	// init event's (or Codex's thread).
	session string
	// codex reads Codex's events, when the output is codex exec --json:
	// finish takes its result as the run's.
	codex codexOutput
	// stopReason is the reason of the last hook that ended the run, as
	// its hook_response event says it (see readHookResponse).
	stopReason string
	// windows are the usage windows of the last rate_limit_event, which
	// Claude Code prints (stream-json) for a subscriber after each
	// response (see windows.go).
	windows []loopbreaker.Window
}

// claudeResult is what the result event said.
type claudeResult struct {
	seen     bool
	isError  bool
	subtype  string
	text     string // the first line of the result text, when it is an error
	costUSD  float64
	turns    int
	usage    loopbreaker.Usage // the run's: its CostUSD is costUSD until the runner counts the run's own
	denials  int
	hasUsage bool
	hasCost  bool // costUSD was reported
	// block is the status block in the result text (hasBlock: there is
	// one): the agent's final message holds it, as lines of a string.
	block    statusBlock
	hasBlock bool
	// marker says the done marker is in the result text; example, that
	// the text quoted a status block as an example of the format.
	marker, example bool
	// errText is the run's error as the events tell it, which wins over
	// the error found in the output (Codex: the message of the turn that
	// failed, or the error of the last command, which failed); limitText
	// is where a provider limit would be (Codex: the failed turn's
	// message). "" when the events tell none.
	errText, limitText string
	// noticed is an error the agent got past in a run that passed (Codex:
	// a command that failed before the last one passed).
	noticed string
	// hookEnded says a hook ended the run (see hookend.go): a failure,
	// whose errText is the hook's reason (hookReason, "" when the output
	// does not say it), or says that a hook ended it.
	hookEnded  bool
	hookReason string
}

// doneMarkerSeen reports whether the output holds the done marker where it
// is the agent's word. When the output is Claude Code's JSON (it had a
// result, or named a session), that is the result text, and any line that
// is no JSON (what a script around Claude Code printed); not the session's
// other events, its steps: a tool result that prints PROMPT.md, or a file
// holding a status block, is no signal. Otherwise it is anywhere.
func (c *capture) doneMarkerSeen() bool {
	if c.claude.result.seen || c.claude.session != "" {
		return c.claude.result.marker || c.claude.plainMarker
	}
	return c.markerSeen()
}

// Write takes the next piece of the output.
func (c *claudeOutput) Write(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.keep(p)
			return
		}
		c.keep(p[:i])
		if !c.long {
			c.read(c.line)
		}
		c.line, c.long = c.line[:0], false
		p = p[i+1:]
	}
}

// keep adds p to the line being written, unless the line is too long.
func (c *claudeOutput) keep(p []byte) {
	if c.long || len(c.line)+len(p) > maxJSONLine {
		c.line, c.long = c.line[:0], true
		return
	}
	c.line = append(c.line, p...)
}

// finish reads the last line, which may end without a newline; whole is
// the end of the output held in memory, read as one JSON object when no
// line was a result event (the json format, should it be spread over
// lines).
func (c *claudeOutput) finish(whole []byte) {
	if !c.long && len(c.line) > 0 {
		c.read(c.line)
	}
	c.line, c.long = nil, false
	if !c.result.seen && c.codex.seen {
		c.result, c.session = c.codex.result(c.marker), c.codex.thread
	}
	if !c.result.seen {
		if t := bytes.TrimSpace(whole); bytes.HasPrefix(t, []byte("{")) && bytes.HasSuffix(t, []byte("}")) {
			c.read(t)
		}
	}
}

// event is what claudeOutput reads of a line. Each field is decoded on its
// own, so that one of an unexpected type spoils only itself.
type event struct {
	Type              string          `json:"type"`
	Subtype           json.RawMessage `json:"subtype"`
	IsError           json.RawMessage `json:"is_error"`
	Result            json.RawMessage `json:"result"`
	TotalCostUSD      json.RawMessage `json:"total_cost_usd"`
	NumTurns          json.RawMessage `json:"num_turns"`
	Usage             json.RawMessage `json:"usage"`
	PermissionDenials json.RawMessage `json:"permission_denials"`
	SessionID         json.RawMessage `json:"session_id"`
	TerminalReason    json.RawMessage `json:"terminal_reason"`
	Stdout            json.RawMessage `json:"stdout"` // a hook's, in a hook_response event
}

// read reads one line, when it is a result or a system event.
func (c *claudeOutput) read(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) > 0 && line[0] != '{' && len(c.marker) > 0 && bytes.Contains(line, c.marker) {
		c.plainMarker = true
	}
	if c.codex.read(line) {
		return
	}
	if ws, ok := windows.FromClaudeCode(line); ok {
		c.windows = ws
		return
	}
	if len(line) == 0 || line[0] != '{' ||
		!bytes.Contains(line, []byte(`"result"`)) && !bytes.Contains(line, []byte(`"system"`)) {
		return // not an event looprun reads: cheap to tell
	}
	var ev event
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	var session string
	_ = json.Unmarshal(ev.SessionID, &session)
	switch ev.Type {
	case "system":
		if c.session == "" {
			c.session = session
		}
		c.readHookResponse(ev)
		return
	case "result":
	default:
		return
	}
	if session != "" {
		c.session = session
	}
	r := claudeResult{seen: true}
	_ = json.Unmarshal(ev.IsError, &r.isError)
	_ = json.Unmarshal(ev.Subtype, &r.subtype)
	_ = json.Unmarshal(ev.NumTurns, &r.turns)
	var text string
	_ = json.Unmarshal(ev.Result, &text)
	if r.isError {
		r.text = firstLine(text)
	}
	c.hookEnd(&r, ev)
	status := readStatus(text)
	r.block, r.hasBlock = status.block()
	r.example = status.example
	r.marker = len(c.marker) > 0 && strings.Contains(text, string(c.marker))
	var cost float64
	if json.Unmarshal(ev.TotalCostUSD, &cost) == nil {
		r.costUSD, r.hasUsage, r.hasCost = max(cost, 0), true, true
	}
	var usage struct {
		InputTokens              int `json:"input_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
		OutputTokens             int `json:"output_tokens"`
	}
	if json.Unmarshal(ev.Usage, &usage) == nil && len(ev.Usage) > 0 && string(ev.Usage) != "null" {
		r.hasUsage = true
		// Every token the model read counts: cache writes and reads too,
		// as the provider processed (and billed) them.
		r.usage.InputTokens = sumTokens(usage.InputTokens, usage.CacheCreationInputTokens, usage.CacheReadInputTokens)
		r.usage.OutputTokens = max(usage.OutputTokens, 0)
	}
	r.usage.CostUSD = r.costUSD
	var denials []json.RawMessage
	if json.Unmarshal(ev.PermissionDenials, &denials) == nil {
		r.denials = len(denials)
	}
	c.result = r
}

// sumTokens adds token counts, counting a negative one as zero, and
// saturates at the largest int.
func sumTokens(counts ...int) int {
	sum := 0
	for _, n := range counts {
		if n > 0 {
			if sum > math.MaxInt-n {
				return math.MaxInt
			}
			sum += n
		}
	}
	return sum
}
