// Package thresholdflags gives the command-line programs of this
// repository one way to set the breaker's thresholds: a -preset flag and a
// flag per threshold, where a flag given on the command line wins over the
// preset and a flag not given leaves the preset's value, as ralph-starter
// has it.
//
// Below the command line a program may stack layers of settings (see
// layers.go): environment variables, a configuration file, another tool's
// file such as ralph-claude-code's .ralphrc. A flag takes its value from
// the command line, else from the first layer that sets it, else from the
// preset.
package thresholdflags

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/loopbreaker/loopbreaker"
)

// threshold is one flag: its name, its help, what it sets, the value in
// force in a Config, and the names other Ralph loops give it.
type threshold struct {
	name  string
	help  string
	value func(fs *flag.FlagSet, name, help string) func(cfg *loopbreaker.Config)
	show  func(cfg *loopbreaker.Config) string
	// aliases are the flags of ralph-claude-code and ralph-starter that
	// mean this one, each with the tool it comes from.
	aliases []alias
}

// alias is another tool's name of a flag.
type alias struct{ name, tool string }

// intFlag returns a threshold flag that sets an int field of Config.
func intFlag(field func(cfg *loopbreaker.Config) *int) func(*flag.FlagSet, string, string) func(*loopbreaker.Config) {
	return func(fs *flag.FlagSet, name, help string) func(*loopbreaker.Config) {
		v := fs.Int(name, 0, help)
		return func(cfg *loopbreaker.Config) { *field(cfg) = *v }
	}
}

// defaultHelp is the help of a threshold flag whose 0 means the library's
// default.
func defaultHelp(what string, def any) string {
	return fmt.Sprintf("%s (not given: the preset's; 0: the library's default, %v; negative: off)", what, def)
}

// thresholds are the flags, in the order -help lists them.
var thresholds = []threshold{
	{"failures", defaultHelp("consecutive failures that open the circuit", loopbreaker.DefaultConfig().Failures.MaxConsecutive),
		intFlag(func(c *loopbreaker.Config) *int { return &c.Failures.MaxConsecutive }),
		func(c *loopbreaker.Config) string {
			return showInt(c.Failures.MaxConsecutive, loopbreaker.DefaultConfig().Failures.MaxConsecutive, "")
		},
		[]alias{{"circuit-breaker-failures", "ralph-starter"}}},
	{"same-errors", defaultHelp("times one error may be seen before the circuit opens", loopbreaker.DefaultConfig().Failures.MaxSameError),
		intFlag(func(c *loopbreaker.Config) *int { return &c.Failures.MaxSameError }),
		func(c *loopbreaker.Config) string {
			return showInt(c.Failures.MaxSameError, loopbreaker.DefaultConfig().Failures.MaxSameError, "")
		},
		[]alias{{"circuit-breaker-errors", "ralph-starter"}}},
	{"same-errors-in-a-row", "the same error this many times in a row opens the circuit (not given: the preset's; 0 or negative: off)",
		intFlag(func(c *loopbreaker.Config) *int { return &c.Failures.MaxSameErrorInARow }),
		func(c *loopbreaker.Config) string { return showInt(c.Failures.MaxSameErrorInARow, 0, "") }, nil},
	{"no-progress", defaultHelp("iterations without progress that open the circuit", loopbreaker.DefaultConfig().Progress.MaxNoProgress),
		intFlag(func(c *loopbreaker.Config) *int { return &c.Progress.MaxNoProgress }),
		func(c *loopbreaker.Config) string {
			return showInt(c.Progress.MaxNoProgress, loopbreaker.DefaultConfig().Progress.MaxNoProgress, "")
		}, nil},
	{"output-decline", defaultHelp("output decline in percent that opens the circuit", loopbreaker.DefaultConfig().Progress.OutputDeclinePercent),
		intFlag(func(c *loopbreaker.Config) *int { return &c.Progress.OutputDeclinePercent }),
		func(c *loopbreaker.Config) string {
			return showInt(c.Progress.OutputDeclinePercent, loopbreaker.DefaultConfig().Progress.OutputDeclinePercent, "%")
		}, nil},
	{"permission-denials", defaultHelp("iterations in a row with permission denials that open the circuit", loopbreaker.DefaultConfig().Progress.MaxPermissionDenials),
		intFlag(func(c *loopbreaker.Config) *int { return &c.Progress.MaxPermissionDenials }),
		func(c *loopbreaker.Config) string {
			return showInt(c.Progress.MaxPermissionDenials, loopbreaker.DefaultConfig().Progress.MaxPermissionDenials, "")
		}, nil},
	{"done-signals", defaultHelp("done signals in a row that complete the loop", loopbreaker.DefaultConfig().Progress.DoneSignals),
		intFlag(func(c *loopbreaker.Config) *int { return &c.Progress.DoneSignals }),
		func(c *loopbreaker.Config) string {
			return showInt(c.Progress.DoneSignals, loopbreaker.DefaultConfig().Progress.DoneSignals, "")
		}, nil},
	{"cooldown", fmt.Sprintf("how long the circuit stays open before one probe (not given: the preset's; 0: the library's default, %s)", loopbreaker.DefaultConfig().Cooldown),
		func(fs *flag.FlagSet, name, help string) func(*loopbreaker.Config) {
			v := fs.Duration(name, 0, help)
			return func(cfg *loopbreaker.Config) { cfg.Cooldown = *v }
		},
		func(c *loopbreaker.Config) string {
			if c.Cooldown == 0 {
				return loopbreaker.DefaultConfig().Cooldown.String()
			}
			return c.Cooldown.String()
		}, nil},
	{"calls-per-hour", "call budget per rolling hour, one call per iteration (not given: the preset's; 0 or negative: no budget)",
		intFlag(func(c *loopbreaker.Config) *int { return &c.Spend.MaxCallsPerHour }),
		func(c *loopbreaker.Config) string { return showInt(c.Spend.MaxCallsPerHour, 0, "") },
		[]alias{{"calls", "ralph-claude-code"}, {"rate-limit", "ralph-starter"}}},
}

// showInt shows an int threshold in force: def when it is 0 (0 for none:
// off), off when it is negative, with unit after it.
func showInt(v, def int, unit string) string {
	if v == 0 {
		v = def
	}
	if v <= 0 {
		return "off"
	}
	return strconv.Itoa(v) + unit
}

// Set is the -preset flag and the threshold flags of one flag.FlagSet,
// with their aliases and the layers of settings below the command line.
type Set struct {
	fs     *flag.FlagSet
	preset *string
	apply  map[string]func(cfg *loopbreaker.Config)
	// aliases maps each alias to the flag it names.
	aliases map[string]string
	// settable are the flags the layers may set (see Apply): -preset and
	// the threshold flags, and those Settable adds.
	settable map[string]bool
	// origins says where each flag's value came from, once Apply has run:
	// "flag" for the command line, else the Setting's From.
	origins map[string]string
}

// Register defines -preset (default "feature") and the named threshold
// flags on fs: failures, same-errors, same-errors-in-a-row, no-progress,
// output-decline, permission-denials, done-signals, cooldown,
// calls-per-hour. No names means all of them; an unknown name panics, as
// it is the program's mistake.
func Register(fs *flag.FlagSet, names ...string) *Set {
	s := &Set{
		fs:       fs,
		preset:   fs.String("preset", "feature", "preset: "+strings.Join(loopbreaker.PresetNames(), ", ")),
		apply:    map[string]func(*loopbreaker.Config){},
		aliases:  map[string]string{},
		settable: map[string]bool{"preset": true},
		origins:  map[string]string{},
	}
	for _, t := range thresholds {
		if len(names) == 0 || slices.Contains(names, t.name) {
			s.apply[t.name] = t.value(fs, t.name, t.help)
			s.settable[t.name] = true
		}
	}
	for _, name := range names {
		if s.apply[name] == nil {
			panic("thresholdflags: unknown threshold flag " + name)
		}
	}
	return s
}

// RegisterAliases defines, for each threshold flag registered, the names
// users of other Ralph loops type for it: --calls (ralph-claude-code) and
// --rate-limit (ralph-starter) for -calls-per-hour,
// --circuit-breaker-failures for -failures, --circuit-breaker-errors for
// -same-errors (both ralph-starter's).
func (s *Set) RegisterAliases() {
	for _, t := range thresholds {
		if s.apply[t.name] == nil {
			continue
		}
		for _, a := range t.aliases {
			s.Alias(a.name, t.name, a.tool)
		}
	}
}

// Alias defines alias as another name of the flag name, already defined
// on the flag set: both set the same value, and whichever the command line
// gives last wins. tool names the program the alias comes from, for the
// help. An unknown name panics, as it is the program's mistake.
func (s *Set) Alias(alias, name, tool string) {
	f := s.fs.Lookup(name)
	if f == nil {
		panic("thresholdflags: alias of an unknown flag " + name)
	}
	s.fs.Var(f.Value, alias, fmt.Sprintf("alias of -%s (%s's --%s)", name, tool, alias))
	s.aliases[alias] = name
	if apply := s.apply[name]; apply != nil {
		s.apply[alias] = apply
	}
}

// IsAlias reports whether name is an alias that Alias defined.
func (s *Set) IsAlias(name string) bool { _, ok := s.aliases[name]; return ok }

// Aliases returns each alias with the flag it names, sorted by alias.
func (s *Set) Aliases() [][2]string {
	out := make([][2]string, 0, len(s.aliases))
	for a, name := range s.aliases {
		out = append(out, [2]string{a, name})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// canonical returns the flag an alias names, or name itself.
func (s *Set) canonical(name string) string {
	if to, ok := s.aliases[name]; ok {
		return to
	}
	return name
}

// Preset returns the name the -preset flag gave.
func (s *Set) Preset() string { return *s.preset }

// Config returns the preset's Config with every threshold flag given on
// the command line (or set by a layer, see Apply) set over it, validated.
// Call it after fs.Parse. An unknown preset or an invalid value is an
// error.
func (s *Set) Config() (loopbreaker.Config, error) {
	cfg, err := loopbreaker.Preset(*s.preset)
	if err != nil {
		return loopbreaker.Config{}, err
	}
	s.fs.Visit(func(f *flag.Flag) {
		if apply := s.apply[f.Name]; apply != nil {
			apply(&cfg)
		}
	})
	if err := cfg.Validate(); err != nil {
		return loopbreaker.Config{}, err
	}
	return cfg, nil
}

// Thresholds describes the thresholds in force in cfg, one "name value"
// text each in the order -help lists them ("failures 3", "cooldown 30s",
// "calls-per-hour off"), followed by where the value came from when it was
// not the preset: "(flag)", or a layer's "(.ralphrc CB_COOLDOWN_MINUTES)".
func (s *Set) Thresholds(cfg loopbreaker.Config) []string {
	var out []string
	for _, t := range thresholds {
		if s.apply[t.name] == nil {
			continue
		}
		text := t.name + " " + t.show(&cfg)
		if from := s.Origin(t.name); from != "" {
			text += " (" + from + ")"
		}
		out = append(out, text)
	}
	return out
}
