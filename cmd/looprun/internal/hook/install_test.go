package hook

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// theirs is a project's settings with a hook of its own on an event
// looprun's hooks use too, another hook, and other settings, in an order
// that is not the alphabet's.
const theirs = `{
  "permissions": {"allow": ["Bash(npm test)"]},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh", "timeout": 5}]}
    ],
    "Notification": [
      {"hooks": [{"type": "command", "command": "notify-send claude"}]}
    ]
  },
  "env": {"FOO": "1"}
}
`

// hooks runs `looprun hooks ARGS` in the project, and returns its stdout
// and exit code.
func (p *project) hooks(args ...string) (string, int) {
	p.t.Helper()
	var out, errOut bytes.Buffer
	sys := System{Getenv: func(k string) string { return p.env[k] }, Home: filepath.Join(p.dir, "home"), Now: p.clock.Now, Binary: "looprun"}
	code, ok := Run(sys, append([]string{"hooks"}, append(args, "-dir", p.dir)...), nil, &out, &errOut)
	require.True(p.t, ok)
	return out.String() + errOut.String(), code
}

// settingsOf returns the settings file, decoded.
func settingsOf(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(data, &s), string(data))
	return s
}

// commands returns the commands of an event's hooks, in order.
func commands(settings map[string]any, event string) []string {
	var out []string
	hooks, _ := settings["hooks"].(map[string]any)
	groups, _ := hooks[event].([]any)
	for _, g := range groups {
		hs, _ := g.(map[string]any)["hooks"].([]any)
		for _, h := range hs {
			out = append(out, h.(map[string]any)["command"].(string))
		}
	}
	return out
}

// Install adds looprun's entries and keeps every other hook and setting,
// in its order; run again, it changes nothing; uninstall removes looprun's
// entries and nothing else, leaving the file as it was.
func TestInstallMergesWithOtherHooksAndUninstallLeavesThem(t *testing.T) {
	p := newProject(t, map[string]string{".claude/settings.json": theirs})
	path := filepath.Join(p.dir, ".claude", "settings.json")

	out, code := p.hooks("install", "-max-cost", "20")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, path+":\n  added PreToolUse: ")
	s := settingsOf(t, path)
	pre := commands(s, PreToolUse)
	require.Len(t, pre, 2)
	assert.Equal(t, "./audit.sh", pre[0], "theirs first, as it was")
	assert.True(t, isLooprunHook(pre[1]))
	assert.True(t, strings.HasSuffix(pre[1], " hook -max-cost 20 PreToolUse"), pre[1])
	for _, ev := range []string{PostToolUse, PostToolUseFailure, UserPromptSubmit, SessionStart, SessionEnd, StopFailure, PermissionDenied, PostCompact, SubagentStop} {
		require.Len(t, commands(s, ev), 1, ev)
		assert.True(t, strings.HasSuffix(commands(s, ev)[0], " "+ev))
	}
	assert.Nil(t, commands(s, Stop), "no Ralph loop asked for")
	assert.Equal(t, []string{"notify-send claude"}, commands(s, "Notification"))
	assert.Equal(t, map[string]any{"allow": []any{"Bash(npm test)"}}, s["permissions"])
	data, _ := os.ReadFile(path)
	assert.Less(t, strings.Index(string(data), `"permissions"`), strings.Index(string(data), `"hooks"`))
	assert.Less(t, strings.Index(string(data), `"hooks"`), strings.Index(string(data), `"env"`), "the keys keep their order")
	assert.Contains(t, string(data), `"matcher": "*"`)
	assert.Contains(t, string(data), `"timeout": 5`, "their hook's fields kept")

	installed, _ := os.ReadFile(path)
	out, code = p.hooks("install", "-max-cost", "20")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "nothing to change")
	again, _ := os.ReadFile(path)
	assert.Equal(t, string(installed), string(again), "idempotent")

	out, code = p.hooks("uninstall")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "removed PreToolUse: ")
	s = settingsOf(t, path)
	assert.Equal(t, []string{"./audit.sh"}, commands(s, PreToolUse))
	assert.Equal(t, []string{"notify-send claude"}, commands(s, "Notification"))
	for _, ev := range []string{PostToolUse, PostToolUseFailure, UserPromptSubmit, SessionStart, SessionEnd, StopFailure, PermissionDenied, PostCompact, SubagentStop} {
		assert.NotContains(t, s["hooks"], ev, "an event looprun alone used is gone")
	}
	var was, now any
	require.NoError(t, json.Unmarshal([]byte(theirs), &was))
	data, _ = os.ReadFile(path)
	require.NoError(t, json.Unmarshal(data, &now))
	assert.Equal(t, was, now, "as it was")

	out, _ = p.hooks("uninstall")
	assert.Contains(t, out, "no hooks of looprun's; nothing to change")
}

// Installed again with other flags, each of looprun's entries changes in
// its place; a Ralph loop adds the Stop hook, and dropping it removes it.
func TestInstallAgainChangesLooprunsEntriesInPlace(t *testing.T) {
	p := newProject(t, nil)
	path := filepath.Join(p.dir, ".claude", "settings.json")
	_, code := p.hooks("install")
	require.Equal(t, 0, code)
	first := commands(settingsOf(t, path), PostToolUse)[0]
	assert.True(t, strings.HasSuffix(first, " hook PostToolUse"), first)

	out, code := p.hooks("install", "-ralph", "PROMPT.md", "-promise", "ALL DONE", "-protect", "specs/", "-protect", "plan.md")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "changed PostToolUse: ")
	assert.Contains(t, out, "added Stop: ")
	s := settingsOf(t, path)
	require.Len(t, commands(s, PostToolUse), 1)
	assert.True(t, strings.HasSuffix(commands(s, PostToolUse)[0], ` hook -promise 'ALL DONE' -protect specs/ -protect plan.md -ralph PROMPT.md PostToolUse`), commands(s, PostToolUse)[0])
	require.Len(t, commands(s, Stop), 1)

	out, code = p.hooks("install")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "removed Stop: ")
	assert.Nil(t, commands(settingsOf(t, path), Stop))
}

// The command installed is read back by the hook as it was given.
func TestTheInstalledCommandReadsBackItsFlags(t *testing.T) {
	fs := newFlagSet("t", nil)
	f := defineFlags(fs)
	given := []string{"-fail-closed", "-max-cost", "2.5", "-protect", "it's here/", "-read-only", "a b.md", "-failures", "4", "-preset", "refactor"}
	require.NoError(t, fs.Parse(given))
	cmd := hookCommand("/opt/my tools/looprun", f.args(), PreToolUse)
	assert.True(t, isLooprunHook(cmd), cmd)
	words := shellWords(cmd, 100)
	assert.Equal(t, "/opt/my tools/looprun", words[0])
	assert.Equal(t, PreToolUse, words[len(words)-1])

	fs2 := newFlagSet("t", nil)
	f2 := defineFlags(fs2)
	require.NoError(t, fs2.Parse(words[2:]))
	s, err := f2.settings()
	require.NoError(t, err)
	assert.True(t, s.failClosed)
	assert.Equal(t, 2.5, s.steps.Spend.MaxCostUSD)
	assert.Equal(t, 4, s.steps.Failures.MaxConsecutive)
	assert.Equal(t, []string{".loopbreaker/", "it's here/"}, s.protect)
	assert.Equal(t, []string{"a b.md"}, s.readOnly)
	assert.Equal(t, []string{PreToolUse}, fs2.Args())
}

// -user changes the person's settings, -local the project's own.
func TestInstallForThePersonOrThisCheckoutOnly(t *testing.T) {
	p := newProject(t, nil)
	_, code := p.hooks("install", "-user")
	require.Equal(t, 0, code)
	assert.Len(t, commands(settingsOf(t, filepath.Join(p.dir, "home", ".claude", "settings.json")), PreToolUse), 1)
	assert.NoFileExists(t, filepath.Join(p.dir, ".claude", "settings.json"))

	_, code = p.hooks("install", "-local")
	require.Equal(t, 0, code)
	assert.Len(t, commands(settingsOf(t, filepath.Join(p.dir, ".claude", "settings.local.json")), PreToolUse), 1)

	out, code := p.hooks("install", "-user", "-local")
	assert.Equal(t, 2, code)
	assert.Contains(t, out, "not both")
}

// A settings file that is not JSON is never clobbered.
func TestInstallLeavesSettingsItCannotReadAlone(t *testing.T) {
	for _, bad := range []string{"{\n  // a comment\n}\n", `["a list"]`, `{"hooks": ["not", "an object"]}`, `{"hooks": {"PreToolUse": {"matcher": "*"}}}`} {
		p := newProject(t, map[string]string{".claude/settings.json": bad})
		out, code := p.hooks("install")
		assert.Equal(t, 1, code, bad)
		assert.Contains(t, out, "left as", bad)
		data, _ := os.ReadFile(filepath.Join(p.dir, ".claude", "settings.json"))
		assert.Equal(t, bad, string(data))
	}
}

// Bad flags are a usage error, and change nothing.
func TestInstallWithBadFlagsChangesNothing(t *testing.T) {
	p := newProject(t, nil)
	for _, args := range [][]string{{"install", "-max-cost", "-1"}, {"install", "-promise", "DONE"}, {"install", "-nonsense"}, {"reinstall"}, {}} {
		_, code := p.hooks(args...)
		assert.Equal(t, 2, code, args)
	}
	assert.NoFileExists(t, filepath.Join(p.dir, ".claude", "settings.json"))
}

func TestLooprunsHooksAreToldFromOthers(t *testing.T) {
	for cmd, ours := range map[string]bool{
		"looprun hook PreToolUse":                        true,
		"/usr/local/bin/looprun hook -max-cost 2 Stop":   true,
		"'/opt/my tools/looprun' hook PostToolUse":       true,
		`"C:\\tools\\looprun.exe" hook PreToolUse`:       true,
		"looprun hooks install":                          false,
		"looprun -- claude -p":                           false,
		"./audit.sh looprun hook":                        false,
		"not-looprun hook PreToolUse":                    false,
		"":                                               false,
		"python3 ~/.claude/hooks/looprun.py hook":        false,
		"$CLAUDE_PROJECT_DIR/bin/looprun hook Stop":      true,
		"looprun\thook\tPreToolUse":                      true,
		"echo 'looprun hook PreToolUse' >> /tmp/log.txt": false,
	} {
		assert.Equal(t, ours, isLooprunHook(cmd), cmd)
	}
}

func FuzzShellWordsReadsShellQuoteBack(f *testing.F) {
	for _, s := range []string{"", "plain", "it's", "a b", `back\slash`, "$HOME", "tab\there", "'''"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words := shellWords(shellQuote(s)+" "+shellQuote(s+"x"), 5)
		require.Equal(t, []string{s, s + "x"}, words)
	})
}

func FuzzParseObject(f *testing.F) {
	for _, s := range []string{theirs, `{}`, `{"a":1,"a":2}`, `[]`, `{"a":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := parseObject(data)
		if err != nil {
			return
		}
		var want, got any
		require.NoError(t, json.Unmarshal(data, &want), "what parseObject reads, encoding/json reads")
		out := raw(o)
		require.NoError(t, json.Unmarshal(out, &got), "%s", out)
		require.Equal(t, want, got, "the same object, written back")
	})
}

// -h goes to stdout, and a mistake is one line on stderr.
func TestHelpOnStdoutAndMistakesInOneLine(t *testing.T) {
	for _, args := range [][]string{{"hook", "-h"}, {"hooks", "install", "-h"}, {"hooks", "-h"}} {
		var out, errOut bytes.Buffer
		code, ok := Run(System{Getenv: func(string) string { return "" }}, args, strings.NewReader(""), &out, &errOut)
		require.True(t, ok)
		assert.Equal(t, 0, code, args)
		assert.Contains(t, out.String(), "usage: looprun hook", args)
		assert.Empty(t, errOut.String(), args)
	}
	var out, errOut bytes.Buffer
	code, _ := Run(System{Getenv: func(string) string { return "" }}, []string{"hooks", "install", "-nope"}, nil, &out, &errOut)
	assert.Equal(t, 2, code)
	assert.Empty(t, out.String())
	assert.Equal(t, "looprun hooks install: flag provided but not defined: -nope (looprun hooks install -h lists the flags)\n", errOut.String())
}
