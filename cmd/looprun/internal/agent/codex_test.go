package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modelOf returns the model a command line runs, as looprun reads it:
// Codex's, by its Model, when the command line runs Codex.
func modelOf(argv []string, getenv func(string) string) string {
	if ag, at := Find(argv); ag == Codex {
		return ag.Model(argv, at, getenv)
	}
	return ""
}

// A command that failed with nothing that reads as an error in its
// output fails as its exit code and its command line.
func TestCodexCommandFailureWithoutAnErrorInItsOutput(t *testing.T) {
	code := 2
	assert.Equal(t, "command exited 2: /bin/bash -lc 'make lint'",
		codexCommand{Command: "/bin/bash -lc 'make lint'", ExitCode: &code, Status: "failed"}.failure())
	assert.Equal(t, "command failed: /bin/bash -lc 'x'", codexCommand{Command: "/bin/bash -lc 'x'", Status: "failed"}.failure())
}

// The model Codex runs is read from its command line, else from its
// configuration: -m and --model, -c model=..., the profile's config and
// CODEX_HOME's config.toml (whose top level alone names the model).
func TestCodexModelIsFoundWhereCodexTakesIt(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, "config.toml"),
		[]byte("# mine\nmodel = \"gpt-5.4\" # the default\napproval_policy = \"never\"\n\n[profiles.x]\nmodel = \"o3\"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(home, "fast.config.toml"), []byte("model = 'gpt-5.4-mini'\n"), 0o600))
	noModel := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(noModel, "config.toml"), []byte("[model_providers.x]\nmodel = \"not this\"\n"), 0o600))
	env := func(codexHome string) func(string) string {
		return func(k string) string {
			switch k {
			case "CODEX_HOME":
				return codexHome
			case "HOME":
				return "/nonexistent"
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name string
		argv []string
		home string
		want string
	}{
		{"-m", []string{"codex", "exec", "--json", "-m", "gpt-5.5", "fix it"}, home, "gpt-5.5"},
		{"--model=", []string{"/opt/bin/codex", "exec", "--model=gpt-5.5"}, home, "gpt-5.5"},
		{"-m joined", []string{"codex", "exec", "-mgpt-5.5"}, home, "gpt-5.5"},
		{"-c model=", []string{"codex", "exec", "-c", `model="gpt-5.2"`}, home, "gpt-5.2"},
		{"-m wins over -c", []string{"codex", "exec", "-c", "model=o3", "-m", "gpt-5.5"}, home, "gpt-5.5"},
		{"a profile", []string{"codex", "exec", "-p", "fast"}, home, "gpt-5.4-mini"},
		{"config.toml", []string{"codex", "exec", "--json", "resume", "{session}", "-"}, home, "gpt-5.4"},
		{"through npx", []string{"npx", "@openai/codex", "exec"}, home, "gpt-5.4"},
		{"a table's model is not the top level's", []string{"codex", "exec"}, noModel, ""},
		{"no config", []string{"codex", "exec"}, t.TempDir(), ""},
		{"not Codex", []string{"claude", "-p", "-m", "x"}, home, ""},
		{"a prompt that names codex is no codex", []string{"./agent.sh", "ask codex -m gpt-5.5"}, home, ""},
	} {
		assert.Equal(t, tc.want, modelOf(tc.argv, env(tc.home)), tc.name)
	}

	user := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(user, ".codex"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(user, ".codex", "config.toml"), []byte("model=\"gpt-5.1-codex\"\n"), 0o600))
	assert.Equal(t, "gpt-5.1-codex", modelOf([]string{"codex", "exec"}, func(k string) string {
		if k == "HOME" {
			return user
		}
		return ""
	}), "without CODEX_HOME, ~/.codex")
}

// FuzzCodexModel: any command line (its arguments split at NUL bytes) is
// read without a panic.
func FuzzCodexModel(f *testing.F) {
	f.Add("codex\x00exec\x00-m\x00gpt-5.5")
	f.Add("codex\x00-c\x00model='o3\x00-p")
	f.Add("codex\x00-m")
	f.Fuzz(func(t *testing.T, line string) {
		_ = modelOf(strings.Split(line, "\x00"), func(string) string { return "" })
		_ = tomlString(line)
	})
}

// Token counts near the largest int saturate instead of wrapping.
func TestClaudeTokenCountsSaturate(t *testing.T) {
	assert.Equal(t, 6, sumTokens(1, 2, 3))
	assert.Equal(t, 3, sumTokens(-5, 3), "a negative count counts as zero")
	assert.Equal(t, int(^uint(0)>>1), sumTokens(int(^uint(0)>>1), 5))
}

// The rollout's last report counts; lines too long to be a report, and
// lines of other kinds, are passed over.
func TestTheRolloutsLastWindowsCount(t *testing.T) {
	line := func(used string) string {
		return `{"timestamp":"2026-12-02T00:13:47.876Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":` + used + `,"window_minutes":300,"resets_at":1796181210}}}}`
	}
	rollout := strings.Join([]string{
		line("10"),
		`{"type":"response_item","payload":{"type":"function_call_output","output":"` + strings.Repeat("x", 2*maxRolloutLine) + `"}}`,
		line("55"),
		`{"type":"event_msg","payload":{"type":"agent_message","message":"done"}}`,
	}, "\n")
	ws := lastWindows(strings.NewReader(rollout))
	require.Len(t, ws, 1)
	assert.Equal(t, 55.0, ws[0].Used)
	assert.Empty(t, lastWindows(strings.NewReader(strings.Repeat("y", 3*maxRolloutLine))))
	assert.Empty(t, rolloutWindows("", "thread"))
	assert.Empty(t, rolloutWindows(t.TempDir(), "thread"))
}

// A Codex run's windows are its thread's rollout's, in $CODEX_HOME: the
// events name the thread, the rollout says the windows.
func TestACodexRunsWindowsAreItsRollouts(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	thread := "019aa000-0000-7000-8000-000000000001"
	dir := filepath.Join(home, "sessions", "2026", "12", "02")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rollout-2026-12-02T00-13-40-"+thread+".jsonl"), []byte(
		`{"type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":12,"window_minutes":300,"resets_at":1796181210},"secondary":{"used_percent":91,"window_minutes":10080,"resets_at":1796440410}}}}`+"\n"), 0o600))

	out := Codex.NewOutput()
	assert.True(t, out.Line([]byte(`{"type":"thread.started","thread_id":"`+thread+`"}`)))
	assert.True(t, out.Line([]byte(`{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":2}}`)))
	run := out.Finish(nil, 0)
	require.Len(t, run.Windows, 2)
	assert.Equal(t, loopbreaker.Window{Length: 300 * time.Minute, Used: 12, Reset: time.Unix(1796181210, 0), Source: "Codex"}, run.Windows[0])
	assert.Equal(t, 91.0, run.Windows[1].Used)

	other := Codex.NewOutput()
	other.Line([]byte(`{"type":"thread.started","thread_id":"another-thread"}`))
	assert.Empty(t, other.Finish(nil, 0).Windows, "another thread's rollout is not there")
}
