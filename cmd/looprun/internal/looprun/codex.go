package looprun

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loopbreaker/loopbreaker"
)

// codexOutput reads Codex's JSON events (codex exec --json), one line at
// a time as claudeOutput hands them on: the thread (thread.started's
// thread_id, the session that codex exec resume takes), what the turns
// used (turn.completed's usage, for the spend caps), a turn that failed
// (turn.failed), the commands the agent ran (command_execution items) and
// its own messages (agent_message items). Codex exits 0 whatever its
// commands did, so the outcome is read from the events: a run fails when
// its turn failed, or when the last command the agent ran failed (a
// command that failed and was followed by one that passed, such as a
// test run again after a fix, or a grep that found nothing before the
// edit, is the agent's work, not its outcome). A codexOutput is not safe
// for concurrent use.
type codexOutput struct {
	// model is the model Codex runs (see codexModel), which prices the
	// usage; "" leaves it unpriced.
	model string

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

// read reads one line, and reports whether it was one of Codex's events
// that codexOutput reads.
func (c *codexOutput) read(line []byte) bool {
	known := false
	for _, prefix := range codexEventTypes {
		known = known || bytes.HasPrefix(line, prefix)
	}
	if !known {
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

// result returns what the events said of the run, as claudeResult says
// it of Claude Code's: whether it failed and why, its usage (named by
// the model, for the breaker to price; Codex reports no cost), the
// status block and the done marker in the agent's last message (never in
// a command's output).
func (c *codexOutput) result(marker []byte) claudeResult {
	r := claudeResult{seen: true, hasUsage: c.used}
	if c.used {
		r.usage = c.usage
		r.usage.Model = c.model
	}
	switch {
	case c.failed != "":
		r.isError, r.errText, r.limitText = true, c.failed, c.failed
	case c.turnOpen:
		r.isError, r.hookEnded, r.errText = true, true, codexInterrupted
	case c.ran && c.command.failedCommand():
		r.isError, r.errText = true, c.command.failure()
	}
	if !r.isError {
		r.noticed = c.noticed // the run passed: an error the agent got past
	}
	r.text = firstLine(r.errText)
	status := readStatus(c.message)
	r.block, r.hasBlock = status.block()
	r.example = status.example
	r.marker = len(marker) > 0 && strings.Contains(c.message, string(marker))
	return r
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

// limitText is the text to look for a provider limit in, once the run
// failed: the message of the turn that failed, when the output is
// Codex's (a failed command is the agent's doing, whatever its output
// says, and Codex prints the limits it got past while retrying too);
// otherwise the end of the output.
func (c *capture) limitText() string {
	if c.claude.codex.seen {
		return c.claude.result.limitText
	}
	return c.sample()
}

// outputError returns the error the output shows, for a run that passed:
// of Codex's, the error of the last command that failed with one (the
// run passed on a later command); of another command, the error
// ExtractError finds in the end of the output.
func (c *capture) outputError() string {
	if c.claude.codex.seen {
		return c.claude.result.noticed
	}
	return loopbreaker.ExtractError(c.sample())
}

// claimText returns the agent's last words, where a claim of done is
// looked for: of Codex's output, its last message (a command's output
// is not its word); else the end of the output (see claimsDone).
func (c *capture) claimText() string {
	if c.claude.codex.seen {
		return c.claude.codex.message
	}
	return c.sample()
}

// codexModel returns the model a Codex command line runs: the value of
// -m or --model after the codex word of argv (its path's base name
// codex, as npx @openai/codex has it too), else of -c model=..., else
// the top-level model of the profile's config (-p NAME:
// $CODEX_HOME/NAME.config.toml), else of $CODEX_HOME/config.toml
// (CODEX_HOME from getenv, by default ~/.codex). "" when argv runs no
// Codex, or names no model.
func codexModel(argv []string, getenv func(string) string) string {
	agent, at := knownAgent(argv)
	if agent != "Codex" {
		return ""
	}
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
	home := getenv("CODEX_HOME")
	if home == "" {
		if userHome := getenv("HOME"); userHome != "" {
			home = filepath.Join(userHome, ".codex")
		}
	}
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

// priced returns what u cost: its CostUSD (Claude Code reports its own),
// else its tokens at its model's price in the breaker's table (Codex
// reports tokens alone, and the breaker prices them so); 0 for a model
// the table does not price.
func (r *runner) priced(u loopbreaker.Usage) float64 {
	if u.CostUSD > 0 {
		return u.CostUSD
	}
	prices := r.o.cfg.Spend.Prices
	if prices == nil {
		prices = loopbreaker.DefaultPrices()
	}
	cost, _ := prices.Cost(u)
	return cost
}
