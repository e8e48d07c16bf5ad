package looprun

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker/internal/thresholdflags"
)

// Settings below the command line, each layer winning over the next:
// environment variables, looprun's configuration file in -dir, and
// ralph-claude-code's .ralphrc in -dir; then the preset.
const (
	// configFileName is looprun's configuration file, in -dir: lines of
	// "name = value", where name is a flag's name.
	configFileName = ".looprunrc"
	// ralphrcFileName is ralph-claude-code's configuration, a shell file
	// looprun reads (and never runs) for the settings it shares.
	ralphrcFileName = ".ralphrc"
	// envPrefix starts the environment variable of each setting:
	// LOOPRUN_FAILURES, LOOPRUN_CHECK.
	envPrefix = "LOOPRUN_"
)

// settable are looprun's flags beyond the thresholds that the
// environment and the files may set. The others (-dir, -name, -reset,
// -json, -protect) say where and how this one run goes, and only the
// command line gives them.
var settable = []string{
	"timeout", "stall", "max-iterations", "prompt", "plan", "done-marker", "wait", "interactive",
	"max-cost", "max-tokens", "max-cost-per-minute", "max-window-share", "window-share-stop", "limit-wait", "check", "commit", "quiet", "max-opens", "auto-reset",
	"serve", "notify", "on-event",
}

// ralphSettings are ralph-claude-code's settings looprun honours, in its
// .ralphrc and environment: the thresholds (thresholdflags.RalphClaudeCode),
// the timeout of an iteration, and the reset of an open circuit at start.
var ralphSettings = append([]thresholdflags.Foreign{
	{Var: "CLAUDE_TIMEOUT_MINUTES", Name: "timeout", Convert: thresholdflags.Minutes},
	{Var: "CB_AUTO_RESET", Name: "auto-reset"},
}, thresholdflags.RalphClaudeCode...)

// readSettings sets the flags the command line did not give from the
// environment, .looprunrc and .ralphrc in dir. An unreadable file or a bad
// value is an error; a LOOPRUN_ variable that is no setting is a note.
func readSettings(ts *thresholdflags.Set, dir string, environ []string) (notes []string, err error) {
	env, unknown, err := ts.Environ(environ, envPrefix, ralphSettings)
	if err != nil {
		return nil, err
	}
	for _, name := range unknown {
		if name != sessionEnv && name != notesEnv { // looprun's own, for the command
			notes = append(notes, fmt.Sprintf("%s is no setting of looprun, and is left out", name))
		}
	}
	var file, ralphrc []thresholdflags.Setting
	if data, err := readIfThere(filepath.Join(dir, configFileName)); err != nil {
		return nil, err
	} else if data != nil {
		if file, err = thresholdflags.ParseConfig(configFileName, data); err != nil {
			return nil, err
		}
	}
	if data, err := readIfThere(filepath.Join(dir, ralphrcFileName)); err != nil {
		return nil, err
	} else if data != nil {
		if ralphrc, err = ts.ParseShell(ralphrcFileName, data, ralphSettings, os.Getenv); err != nil {
			return nil, err
		}
	}
	return notes, ts.Apply(env, file, ralphrc)
}

// readIfThere reads a file; nil, and no error, when there is none.
func readIfThere(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// minutesFlag is a duration flag that also takes a whole number of
// minutes, as ralph-claude-code's --timeout does: "15" is 15m.
type minutesFlag struct{ d *time.Duration }

func (f minutesFlag) String() string {
	if f.d == nil {
		return "0s"
	}
	return f.d.String()
}

func (f minutesFlag) Set(s string) error {
	if _, err := strconv.ParseInt(s, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		// Whole minutes; a negative number is kept, for the flag's own
		// check to name.
		d, err := thresholdflags.ParseMinutes(strings.TrimPrefix(s, "-"))
		if err != nil {
			return err
		}
		if strings.HasPrefix(s, "-") {
			d = -d
		}
		*f.d = d
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration (15m, 1h30m) or whole minutes (15)")
	}
	*f.d = d
	return nil
}
