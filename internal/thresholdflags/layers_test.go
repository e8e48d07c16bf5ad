package thresholdflags

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopbreaker/loopbreaker"
)

// newSet registers every threshold flag and its aliases, and a -timeout
// and a -commit flag the layers may set, on a fresh flag set.
func newSet(t *testing.T) (*flag.FlagSet, *Set) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s := Register(fs)
	s.RegisterAliases()
	fs.Duration("timeout", 15*time.Minute, "")
	fs.Bool("commit", false, "")
	s.Settable("timeout", "commit")
	return fs, s
}

func noEnv(string) string { return "" }

// The flags users of ralph-claude-code and ralph-starter type set the same
// thresholds as looprun's own.
func TestAliasesSetTheirFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want func(c loopbreaker.Config) int
		is   int
	}{
		{[]string{"--calls", "50"}, func(c loopbreaker.Config) int { return c.Spend.MaxCallsPerHour }, 50},
		{[]string{"--rate-limit", "40"}, func(c loopbreaker.Config) int { return c.Spend.MaxCallsPerHour }, 40},
		{[]string{"--circuit-breaker-failures", "2"}, func(c loopbreaker.Config) int { return c.Failures.MaxConsecutive }, 2},
		{[]string{"--circuit-breaker-errors", "7"}, func(c loopbreaker.Config) int { return c.Failures.MaxSameError }, 7},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			fs, s := newSet(t)
			require.NoError(t, fs.Parse(tc.args))
			require.NoError(t, s.Apply())
			cfg, err := s.Config()
			require.NoError(t, err)
			assert.Equal(t, tc.is, tc.want(cfg))
			assert.True(t, s.IsAlias(strings.TrimLeft(tc.args[0], "-")))
			assert.Equal(t, "flag", s.Origin(strings.TrimLeft(tc.args[0], "-")))
		})
	}
}

// The command line wins over the environment, which wins over the
// configuration file, which wins over .ralphrc, which wins over the
// preset; each flag takes the highest layer that sets it.
func TestLayersStackUnderTheCommandLine(t *testing.T) {
	fs, s := newSet(t)
	require.NoError(t, fs.Parse([]string{"-failures", "9", "-preset", "autonomous"}))

	env, unknown, err := s.Environ([]string{
		"LOOPRUN_FAILURES=8", "LOOPRUN_NO_PROGRESS=7", "CB_NO_PROGRESS_THRESHOLD=99",
		"CB_OUTPUT_DECLINE_THRESHOLD=40", "LOOPRUN_SESSION_ID=abc", "HOME=/root",
	}, "LOOPRUN_", RalphClaudeCode)
	require.NoError(t, err)
	assert.Equal(t, []string{"LOOPRUN_SESSION_ID"}, unknown, "a prefixed variable that is no setting is reported, nothing else")

	file, err := ParseConfig(".looprunrc", []byte("# thresholds\nno-progress = 6\nsame-errors = 6\n--calls = 60\ncommit = true\n"))
	require.NoError(t, err)
	ralphrc, err := s.ParseShell(".ralphrc", []byte("CB_SAME_ERROR_THRESHOLD=4\nCB_COOLDOWN_MINUTES=30\nMAX_CALLS_PER_HOUR=100\nCB_OUTPUT_DECLINE_THRESHOLD=80\n"), RalphClaudeCode, noEnv)
	require.NoError(t, err)

	require.NoError(t, s.Apply(env, file, ralphrc))
	cfg, err := s.Config()
	require.NoError(t, err)
	assert.Equal(t, 9, cfg.Failures.MaxConsecutive, "the flag")
	assert.Equal(t, 7, cfg.Progress.MaxNoProgress, "LOOPRUN_ wins over CB_ in the environment, and over the file")
	assert.Equal(t, 40, cfg.Progress.OutputDeclinePercent, "the environment's CB_ wins over .ralphrc")
	assert.Equal(t, 6, cfg.Failures.MaxSameError, "the file")
	assert.Equal(t, 60, cfg.Spend.MaxCallsPerHour, "the file's alias wins over .ralphrc")
	assert.Equal(t, 4, cfg.Failures.MaxSameErrorInARow, ".ralphrc")
	assert.Equal(t, 30*time.Minute, cfg.Cooldown, ".ralphrc, in minutes")
	assert.Equal(t, "true", fs.Lookup("commit").Value.String(), "a settable flag that is no threshold")
	autonomous, err := loopbreaker.Preset("autonomous")
	require.NoError(t, err)
	assert.Equal(t, autonomous.Progress.DoneSignals, cfg.Progress.DoneSignals, "the preset's, set by nobody")

	assert.Equal(t, "flag", s.Origin("failures"))
	assert.Equal(t, "LOOPRUN_NO_PROGRESS", s.Origin("no-progress"))
	assert.Equal(t, "CB_OUTPUT_DECLINE_THRESHOLD", s.Origin("output-decline"))
	assert.Equal(t, ".looprunrc line 3", s.Origin("same-errors"))
	assert.Equal(t, ".looprunrc line 4", s.Origin("calls-per-hour"))
	assert.Equal(t, ".ralphrc CB_COOLDOWN_MINUTES", s.Origin("cooldown"))
	assert.Equal(t, "", s.Origin("done-signals"))
	assert.Contains(t, s.Thresholds(cfg), "cooldown 30m0s (.ralphrc CB_COOLDOWN_MINUTES)")
	assert.Contains(t, s.Thresholds(cfg), "failures 9 (flag)")
}

// A layer's setting of something that is no setting, or of a value the
// flag does not take, is an error naming where it was read.
func TestBadSettingsNameWhereTheyWereRead(t *testing.T) {
	fs, s := newSet(t)
	require.NoError(t, fs.Parse(nil))
	err := s.Apply([]Setting{{Name: "failures", Value: "many", From: ".looprunrc line 2"}})
	assert.ErrorContains(t, err, `.looprunrc line 2: failures "many"`)

	fs, s = newSet(t)
	require.NoError(t, fs.Parse(nil))
	err = s.Apply([]Setting{{Name: "dir", Value: "/tmp", From: ".looprunrc line 5"}})
	assert.ErrorContains(t, err, ".looprunrc line 5: dir is not a setting")

	_, err = ParseConfig(".looprunrc", []byte("failures 3\n"))
	assert.ErrorContains(t, err, `.looprunrc line 1: want name = value, not "failures 3"`)

	_, err = s.ParseShell(".ralphrc", []byte("CB_COOLDOWN_MINUTES=half\n"), RalphClaudeCode, noEnv)
	assert.ErrorContains(t, err, "CB_COOLDOWN_MINUTES: want a whole number of minutes")

	_, err = s.ParseShell(".ralphrc", []byte("CB_NO_PROGRESS_THRESHOLD=$(cat n)\n"), RalphClaudeCode, noEnv)
	assert.ErrorContains(t, err, ".ralphrc line 1: CB_NO_PROGRESS_THRESHOLD: a value that only a shell can work out")
}

// Within a layer the last setting of a flag wins, as in a shell file read
// top to bottom.
func TestWithinALayerTheLastSettingWins(t *testing.T) {
	fs, s := newSet(t)
	require.NoError(t, fs.Parse(nil))
	file, err := ParseConfig("f", []byte("failures = 4\ncircuit-breaker-failures = 5\n"))
	require.NoError(t, err)
	require.NoError(t, s.Apply(file))
	cfg, err := s.Config()
	require.NoError(t, err)
	assert.Equal(t, 5, cfg.Failures.MaxConsecutive)
}

// .ralphrc is a shell file: looprun reads its assignments as the shell
// would, quotes, exports and comments included, and never runs it.
func TestRalphrcIsReadNotRun(t *testing.T) {
	_, s := newSet(t)
	getenv := func(name string) string {
		if name == "SET" {
			return "11"
		}
		return ""
	}
	got, err := s.ParseShell(".ralphrc", []byte(`# .ralphrc - Ralph project configuration
PROJECT_NAME="${PROJECT_NAME:-my-project}"
MAX_CALLS_PER_HOUR=100
export CB_NO_PROGRESS_THRESHOLD="5"   # five
CB_SAME_ERROR_THRESHOLD='6'
CB_OUTPUT_DECLINE_THRESHOLD=${UNSET:-55}
CB_PERMISSION_DENIAL_THRESHOLD="${SET:-2}"
if [ -n "$X" ]; then CB_COOLDOWN_MINUTES=1; fi
rm -rf / ; CB_COOLDOWN_MINUTES=2
CB_AUTO_RESET=true
`), RalphClaudeCode, getenv)
	require.NoError(t, err)
	values := map[string]string{}
	for _, st := range got {
		values[st.Name] = st.Value
	}
	assert.Equal(t, map[string]string{
		"calls-per-hour":       "100",
		"no-progress":          "5",
		"same-errors-in-a-row": "6",
		"output-decline":       "55",
		"permission-denials":   "11",
	}, values, "commands, conditionals and variables looprun does not map are left out")
}

func TestCooldownMinutesZeroIsAtOnce(t *testing.T) {
	d, err := CooldownMinutes("0")
	require.NoError(t, err)
	assert.Equal(t, "1s", d)
	d, err = CooldownMinutes("30")
	require.NoError(t, err)
	assert.Equal(t, "30m0s", d)
	_, err = CooldownMinutes("-1")
	assert.Error(t, err)
	d, err = CooldownMinutes("153722867")
	require.NoError(t, err)
	assert.Equal(t, "2562047h47m0s", d, "the most minutes a duration holds")
	_, err = CooldownMinutes("400000000")
	assert.ErrorContains(t, err, "longer than a duration holds", "more would overflow into a wrong cooldown")
}

func TestConfigValuesMayBeQuotedAndCommented(t *testing.T) {
	got, err := ParseConfig("c", []byte("check = go test ./... # the suite\ndone-marker = \"ALL DONE # really\"\nprompt='my prompt.md'\n\n   # indented comment\ncommit=\n"))
	require.NoError(t, err)
	assert.Equal(t, []Setting{
		{"check", "go test ./...", "c line 1"},
		{"done-marker", "ALL DONE # really", "c line 2"},
		{"prompt", "my prompt.md", "c line 3"},
		{"commit", "", "c line 6"},
	}, got)
	_, err = ParseConfig("c", []byte("check = \"go test\n"))
	assert.ErrorContains(t, err, "unterminated quote")
}

// Whatever a configuration file holds, ParseConfig returns settings with
// names, or an error, and never panics.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("failures = 3\ncheck = 'go test' # x\n"))
	f.Add([]byte("=\n\"\n'a\n#\n--=x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseConfig("f", data)
		if err != nil {
			return
		}
		for _, st := range got {
			if st.Name == "" || strings.HasPrefix(st.Name, "-") || !strings.HasPrefix(st.From, "f line ") {
				t.Fatalf("bad setting %+v", st)
			}
		}
	})
}

// Whatever a shell file holds, ParseShell returns only settings of mapped
// variables, or an error, and never panics.
func FuzzParseShell(f *testing.F) {
	f.Add([]byte("export CB_NO_PROGRESS_THRESHOLD=\"${X:-3}\" # c\nCB_COOLDOWN_MINUTES='1'\n"))
	f.Add([]byte("CB_SAME_ERROR_THRESHOLD=\"a\\\"b\n\"CB_X='\nMAX_CALLS_PER_HOUR=${"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := flag.NewFlagSet("fuzz", flag.ContinueOnError)
		s := Register(fs)
		got, err := s.ParseShell(".ralphrc", data, RalphClaudeCode, func(string) string { return "7" })
		if err != nil {
			return
		}
		for _, st := range got {
			if fs.Lookup(st.Name) == nil || !strings.HasPrefix(st.From, ".ralphrc ") {
				t.Fatalf("bad setting %+v", st)
			}
		}
	})
}
