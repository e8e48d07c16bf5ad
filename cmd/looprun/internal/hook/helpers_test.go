package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// start is the tests' clock's first reading.
var start = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

// testClock is a clock the test moves by hand.
type testClock struct{ now time.Time }

func (c *testClock) Now() time.Time { return c.now }

// project is a project directory whose hooks a test calls as Claude Code
// would, in this process, on the test's clock.
type project struct {
	t          *testing.T
	dir        string
	clock      *testClock
	flags      []string // the hook's flags
	session    string
	transcript string // the session's transcript
	env        map[string]string
}

// newProject makes an empty project directory, holding files.
func newProject(t *testing.T, files map[string]string, flags ...string) *project {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	return &project{
		t: t, dir: dir, clock: &testClock{now: start}, flags: flags, session: "0b5e7f1c-session",
		transcript: filepath.Join(t.TempDir(), "transcript.jsonl"),
		env:        map[string]string{"CLAUDE_PROJECT_DIR": dir},
	}
}

// answer is what a hook did: its exit code, its answer decoded, and what
// it said on stderr.
type answer struct {
	code   int
	out    string
	stderr string
	// The answer's fields, as Claude Code reads them.
	Continue *bool  `json:"continue"`
	Stop     string `json:"stopReason"`
	Notice   string `json:"systemMessage"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Specific struct {
		Event      string `json:"hookEventName"`
		Permission string `json:"permissionDecision"`
		Why        string `json:"permissionDecisionReason"`
		Context    string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// denied says the call was refused, and returns why.
func (a answer) denied() (string, bool) { return a.Specific.Why, a.Specific.Permission == "deny" }

// ended says the run was ended.
func (a answer) ended() bool { return a.Continue != nil && !*a.Continue }

// call runs the hook with the event, whose session, transcript and cwd
// are the project's unless it says otherwise.
func (p *project) call(ev map[string]any) answer {
	p.t.Helper()
	ev = withDefaults(ev, map[string]any{"session_id": p.session, "transcript_path": p.transcript, "cwd": p.dir})
	data, err := json.Marshal(ev)
	require.NoError(p.t, err)
	return p.raw(data, ev["hook_event_name"].(string))
}

// raw runs the hook on stdin as given, with the event on its command line
// (none when "").
func (p *project) raw(stdin []byte, event string) answer {
	p.t.Helper()
	args := append([]string{"hook"}, p.flags...)
	if event != "" {
		args = append(args, event)
	}
	var out, errOut bytes.Buffer
	sys := System{Getenv: func(k string) string { return p.env[k] }, Home: p.dir, Now: p.clock.Now}
	code, ok := Run(sys, args, bytes.NewReader(stdin), &out, &errOut)
	require.True(p.t, ok)
	a := answer{code: code, out: out.String(), stderr: errOut.String()}
	if out.Len() > 0 {
		require.NoError(p.t, json.Unmarshal(out.Bytes(), &a), out.String())
	}
	return a
}

func withDefaults(ev, defaults map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range defaults {
		out[k] = v
	}
	for k, v := range ev {
		out[k] = v
	}
	return out
}

// Events as Claude Code sends them.

func preBash(command string) map[string]any {
	return map[string]any{"hook_event_name": PreToolUse, "tool_name": "Bash",
		"tool_input": map[string]any{"command": command, "description": "Run " + command}}
}

func bashDone(command, stdout string) map[string]any {
	return map[string]any{"hook_event_name": PostToolUse, "tool_name": "Bash",
		"tool_input":    map[string]any{"command": command, "description": "Run " + command},
		"tool_response": map[string]any{"stdout": stdout, "stderr": "", "interrupted": false}}
}

func bashFailed(command, errText string) map[string]any {
	return map[string]any{"hook_event_name": PostToolUseFailure, "tool_name": "Bash",
		"tool_input": map[string]any{"command": command, "description": "Run " + command},
		"error":      errText, "is_interrupt": false}
}

func tool(event, name string, input map[string]any) map[string]any {
	return map[string]any{"hook_event_name": event, "tool_name": name, "tool_input": input, "tool_response": map[string]any{}}
}

func event(name string, fields ...any) map[string]any {
	ev := map[string]any{"hook_event_name": name}
	for i := 0; i+1 < len(fields); i += 2 {
		ev[fields[i].(string)] = fields[i+1]
	}
	return ev
}

// said appends a model's message to the transcript, as Claude Code
// writes one: a line per content block, each with the message's usage.
func (p *project) said(id, model string, in, out, blocks int) {
	p.t.Helper()
	f, err := os.OpenFile(p.transcript, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(p.t, err)
	defer f.Close()
	for range blocks {
		fmt.Fprintf(f, `{"isSidechain":false,"type":"assistant","message":{"id":%q,"model":%q,"role":"assistant","content":[{"type":"text","text":"..."}],"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":%d}}}`+"\n", id, model, in, out)
	}
}

// state returns the session's saved state.
func (p *project) state() *state {
	p.t.Helper()
	st, err := (&store{dir: p.hooksDir(), now: p.clock.Now}).load(p.session)
	require.NoError(p.t, err)
	return st
}

func (p *project) hooksDir() string { return filepath.Join(p.dir, stateDirName, "hooks") }

// log returns the hooks' log.
func (p *project) log() string {
	data, _ := os.ReadFile(filepath.Join(p.hooksDir(), eventLogName))
	return string(data)
}

// lines counts the lines of s that hold sub.
func lines(s, sub string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}
