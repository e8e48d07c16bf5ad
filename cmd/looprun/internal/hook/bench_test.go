package hook

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sessionSteps is how many tool calls the measured session makes.
const sessionSteps = 1000

// BenchmarkHookSession measures what Claude Code waits for on each tool
// call: the whole `looprun hook` process (its start, the state's load and
// save, the transcript read, the protected paths' check), run as Claude
// Code runs it, through a session of 1,000 tool calls, each a PreToolUse
// and a PostToolUse (or PostToolUseFailure, one call in five). The project
// is a git repository with CLAUDE.md, a plan and specs; the transcript
// grows by an answer per call. It reports the median (p50) and the 99th
// percentile (p99) of one hook's time, for each event and for both; and,
// measured between them so that the machine's load is the same, of a
// looprun whose hooks are off (LOOPRUN_HOOKS=off): the process's start
// alone.
//
//	go test -run '^$' -bench HookSession -benchtime 1x ./internal/hook
func BenchmarkHookSession(b *testing.B) {
	bin := looprunBinary(b)
	var pre, post, start []time.Duration
	for range b.N {
		b.StopTimer()
		s := newBenchSession(b, bin)
		b.StartTimer()
		for i := range sessionSteps {
			s.answer(i)
			start = append(start, s.start())
			pre = append(pre, s.hook(PreToolUse, s.call(i, PreToolUse)))
			ev := PostToolUse
			if i%5 == 4 {
				ev = PostToolUseFailure
			}
			post = append(post, s.hook(ev, s.call(i, ev)))
		}
	}
	for _, m := range []struct {
		name string
		ds   []time.Duration
	}{{"", slices.Concat(pre, post)}, {"pre-", pre}, {"post-", post}, {"start-", start}} {
		b.ReportMetric(ms(percentile(m.ds, 50)), m.name+"p50-ms")
		b.ReportMetric(ms(percentile(m.ds, 99)), m.name+"p99-ms")
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile returns the p-th percentile of ds (nearest rank).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)]
}

// benchSession is a session whose hooks the benchmark runs.
type benchSession struct {
	b          *testing.B
	bin, dir   string
	transcript string
	env        []string
}

func newBenchSession(b *testing.B, bin string) *benchSession {
	b.Helper()
	dir := b.TempDir()
	files := map[string]string{
		"CLAUDE.md":                "# Rules\n\n- Run the tests before you stop.\n",
		"IMPLEMENTATION_PLAN.md":   "- [x] login\n- [ ] logout\n",
		"specs/login.md":           strings.Repeat("The login form takes a name and a password.\n", 40),
		"specs/logout.md":          strings.Repeat("Logging out clears the session.\n", 40),
		".claude/settings.json":    "{}\n",
		"go.mod":                   "module example.com/app\n\ngo 1.23\n",
		"internal/auth/login.go":   "package auth\n",
		"internal/auth/logout.go":  "package auth\n",
		"internal/auth/session.go": "package auth\n",
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		require.NoError(b, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(b, os.WriteFile(p, []byte(data), 0o644))
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "start"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(b, err, "%s", out)
	}
	s := &benchSession{b: b, bin: bin, dir: dir, transcript: filepath.Join(b.TempDir(), "session.jsonl")}
	s.env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+dir)
	return s
}

// sessionCommands are what the session's model runs, in turn: a healthy agent's
// mix of looking, editing and testing.
var sessionCommands = []string{
	"ls internal/auth", "cat internal/auth/login.go", "go test ./internal/auth/", "git diff --stat",
	"grep -rn Session internal/", "go vet ./...", "sed -n 1,40p specs/login.md", "go build ./...",
}

// answer appends the i-th answer, asking for the i-th call, to the
// transcript, as Claude Code writes it before the call runs; one in four
// says a word to the person first, as a healthy model does (the others
// are silent: a run of 50 silent calls is a stall).
func (s *benchSession) answer(i int) {
	words := ""
	if i%4 == 0 {
		words = fmt.Sprintf(`{"parentUuid":"p%d","isSidechain":false,"message":{"id":"msg_%06d","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Step %d: checking the login flow."}],"usage":{"input_tokens":%d,"cache_creation_input_tokens":2000,"cache_read_input_tokens":%d,"output_tokens":150}},"type":"assistant","uuid":"w%d"}`+"\n",
			i, i, i, 3000, 20000+40*i, i)
	}
	line := words + fmt.Sprintf(`{"parentUuid":"p%d","isSidechain":false,"message":{"id":"msg_%06d","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"id":"toolu_%06d","input":{"command":%q},"name":"Bash","type":"tool_use"}],"stop_reason":"tool_use","usage":{"input_tokens":%d,"cache_creation_input_tokens":2000,"cache_read_input_tokens":%d,"output_tokens":150}},"type":"assistant","uuid":"u%d"}`+"\n",
		i, i, i, sessionCommands[i%len(sessionCommands)], 3000, 20000+40*i, i)
	result := fmt.Sprintf(`{"parentUuid":"u%d","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_%06d","type":"tool_result","content":%q}]}}`+"\n",
		i, i, strings.Repeat("output line\n", 20))
	f, err := os.OpenFile(s.transcript, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(s.b, err)
	_, err = f.WriteString(line + result)
	require.NoError(s.b, err)
	require.NoError(s.b, f.Close())
}

// call is the i-th call's event.
func (s *benchSession) call(i int, event string) []byte {
	cmd := sessionCommands[i%len(sessionCommands)]
	ev := map[string]any{
		"session_id": "9f021d7c-d90f-47eb-af0b-21e7c9cd83a8", "transcript_path": s.transcript, "cwd": s.dir,
		"permission_mode": "default", "hook_event_name": event, "tool_name": "Bash", "tool_use_id": fmt.Sprintf("toolu_%06d", i),
		"tool_input": map[string]any{"command": cmd, "description": "Run " + cmd},
	}
	switch event {
	case PostToolUse:
		// Each result its own: the work moves on (the same result of the
		// same command again and again is a repeated step).
		ev["tool_response"] = map[string]any{"stdout": fmt.Sprintf("ok  \texample.com/app/internal/auth\t0.%03ds\n%d files checked\n", i%1000, i), "stderr": "", "interrupted": false}
	case PostToolUseFailure:
		ev["error"] = fmt.Sprintf("Exit code 1\n--- FAIL: TestLogout%d (0.00s)\n    logout_test.go:%d: session still valid\nFAIL", i%7, i%50)
		ev["is_interrupt"] = false
	}
	data, err := json.Marshal(ev)
	require.NoError(s.b, err)
	return data
}

// start runs a looprun whose hooks are off, and returns how long it took.
func (s *benchSession) start() time.Duration {
	cmd := exec.Command(s.bin, "hook", PreToolUse)
	cmd.Dir, cmd.Env = s.dir, append(s.env, OffEnv+"=off")
	cmd.Stdin = strings.NewReader("{}")
	begin := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(begin)
	require.NoError(s.b, err, "%s", out)
	return took
}

// hook runs looprun hook as Claude Code does, and returns how long it took.
func (s *benchSession) hook(event string, input []byte) time.Duration {
	cmd := exec.Command(s.bin, "hook", event)
	cmd.Dir, cmd.Env = s.dir, s.env
	cmd.Stdin = strings.NewReader(string(input))
	begin := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(begin)
	require.NoError(s.b, err, "%s", out)
	if strings.Contains(string(out), `"decision":"block"`) || strings.Contains(string(out), `"deny"`) {
		s.b.Fatalf("a healthy session was stopped: %s", out)
	}
	return took
}

// BenchmarkHookCall measures a hook's own work, in this process: its
// start left out, one PreToolUse and one PostToolUse of a session whose
// state and transcript grow with each call, in the project
// BenchmarkHookSession uses.
func BenchmarkHookCall(b *testing.B) {
	s := newBenchSession(b, "")
	sys := System{Getenv: func(k string) string {
		if k == "CLAUDE_PROJECT_DIR" {
			return s.dir
		}
		return ""
	}, Now: time.Now}
	run := func(event string, input []byte) {
		var out strings.Builder
		code, _ := Run(sys, []string{"hook", event}, strings.NewReader(string(input)), &out, &out)
		if code != 0 || strings.Contains(out.String(), `"decision":"block"`) || strings.Contains(out.String(), `"deny"`) {
			b.Fatalf("exit code %d: %s", code, out.String())
		}
	}
	for _, event := range []string{PreToolUse, PostToolUse} {
		b.Run(event, func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				b.StopTimer()
				s.answer(i)
				pre, post := s.call(i, PreToolUse), s.call(i, PostToolUse)
				if event == PostToolUse {
					run(PreToolUse, pre)
				}
				b.StartTimer()
				if event == PreToolUse {
					run(PreToolUse, pre)
					b.StopTimer()
					run(PostToolUse, post)
					b.StartTimer()
					continue
				}
				run(PostToolUse, post)
			}
		})
	}
}
