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
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/loopbreaker/loopbreaker"
)

// threshold is one flag: its name, the Config field it sets, and the
// names other Ralph loops give it. What it counts, its default and what 0
// and a negative value mean come from the library's description of the
// field (loopbreaker.Thresholds); the cooldown, a duration, is the one
// flag described here.
type threshold struct {
	name string
	// field is the Config field the flag sets, as a *loopbreaker.ConfigError
	// names it.
	field string
	// unit is shown after the value in force: "%".
	unit string
	// more is said after what the library says the field counts, in the
	// flag's help: how these programs feed it.
	more string
	// aliases are the flags of ralph-claude-code and ralph-starter that
	// mean this one, each with the tool it comes from.
	aliases []alias
	// named: Register defines it only when named, as a threshold of tool
	// steps that a loop of whole runs (looprun's) does not judge.
	named bool

	// Filled from the library's description (describe), or by hand for
	// the cooldown.
	what, unset string
	negativeOff bool // a negative value switches the signal off
	value       func(fs *flag.FlagSet, name, help string) func(cfg *loopbreaker.Config)
	show        func(cfg *loopbreaker.Config) string
}

// alias is another tool's name of a flag.
type alias struct{ name, tool string }

// help is the flag's help, as flag.PrintDefaults shows it: what it
// counts, and what not giving it, 0 and a negative value mean.
func (t threshold) help() string {
	switch {
	case t.unset == "off":
		return t.what + " (not given: the preset's; 0 or negative: off)"
	case t.unset == "none":
		return t.what + " (not given: the preset's; 0 or negative: no budget)"
	case !t.negativeOff:
		return fmt.Sprintf("%s (not given: the preset's; 0: the library's default, %s)", t.what, t.unset)
	}
	return fmt.Sprintf("%s (not given: the preset's; 0: the library's default, %s; negative: off)", t.what, t.unset)
}

// defaults is the library's configuration, whose values the flags' 0
// stands for.
var defaults = loopbreaker.DefaultConfig()

// describe fills t from the library's description of its field.
func describe(t threshold) threshold {
	if t.value != nil {
		return t
	}
	i := slices.IndexFunc(loopbreaker.Thresholds(), func(lt loopbreaker.Threshold) bool { return lt.Field == t.field })
	if i < 0 {
		panic("thresholdflags: no threshold " + t.field)
	}
	lt := loopbreaker.Thresholds()[i]
	t.what = lt.About + t.more
	switch {
	case lt.Default > 0:
		t.unset, t.negativeOff = strconv.Itoa(lt.Default), true
	case lt.Kind == loopbreaker.ReasonCallBudget:
		t.unset = "none"
	default:
		t.unset = "off"
	}
	t.value = func(fs *flag.FlagSet, name, help string) func(*loopbreaker.Config) {
		v := fs.Int(name, 0, help)
		return func(cfg *loopbreaker.Config) { lt.Set(cfg, *v) }
	}
	t.show = func(c *loopbreaker.Config) string { return showInt(lt.Get(c), lt.Default, t.unit) }
	return t
}

// thresholds are the flags, in the order -help lists them.
var thresholds = func() []threshold {
	ts := []threshold{
		{name: "failures", field: "Failures.MaxConsecutive", aliases: []alias{{"circuit-breaker-failures", "ralph-starter"}}},
		{name: "same-errors", field: "Failures.MaxSameError", aliases: []alias{{"circuit-breaker-errors", "ralph-starter"}}},
		{name: "same-errors-in-a-row", field: "Failures.MaxSameErrorInARow"},
		{name: "no-progress", field: "Progress.MaxNoProgress"},
		{name: "output-decline", field: "Progress.OutputDeclinePercent", unit: "%"},
		{name: "permission-denials", field: "Progress.MaxPermissionDenials"},
		{name: "done-signals", field: "Progress.DoneSignals"},
		{name: "false-claims", field: "Progress.MaxClaims"},
		{name: "cooldown", field: "Cooldown", what: "how long the circuit stays open before one probe",
			unset: defaults.Cooldown.String(),
			value: func(fs *flag.FlagSet, name, help string) func(*loopbreaker.Config) {
				v := fs.Duration(name, 0, help)
				return func(cfg *loopbreaker.Config) { cfg.Cooldown = *v }
			},
			show: func(c *loopbreaker.Config) string {
				if c.Cooldown == 0 {
					return defaults.Cooldown.String()
				}
				return c.Cooldown.String()
			}},
		{name: "calls-per-hour", field: "Spend.MaxCallsPerHour", more: ", one per iteration",
			aliases: []alias{{"calls", "ralph-claude-code"}, {"rate-limit", "ralph-starter"}}},
		{name: "stall-calls", field: "Steps.MaxStalled", named: true},
	}
	for i := range ts {
		ts[i] = describe(ts[i])
	}
	return ts
}()

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
// output-decline, permission-denials, done-signals, false-claims,
// cooldown, calls-per-hour, and stall-calls (tool steps'). No names means
// all of them but stall-calls; an unknown name panics, as it is the
// program's mistake.
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
		if len(names) == 0 && !t.named || slices.Contains(names, t.name) {
			s.apply[t.name] = t.value(fs, t.name, t.help())
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
		return loopbreaker.Config{}, &FlagError{Flag: "preset", Value: *s.preset, From: s.Origin("preset"),
			Reason: "unknown preset (known: " + strings.Join(loopbreaker.PresetNames(), ", ") + ")", Err: err}
	}
	s.fs.Visit(func(f *flag.Flag) {
		if apply := s.apply[f.Name]; apply != nil {
			apply(&cfg)
		}
	})
	if err := cfg.Validate(); err != nil {
		return loopbreaker.Config{}, s.flagErrors(err)
	}
	return cfg, nil
}

// FlagError is a flag's value that the breaker cannot take, said as the
// person gave it: "-cooldown -5s: must not be negative ...", not as the
// library's Config field. It wraps the library's error
// (loopbreaker.ErrInvalidConfig, loopbreaker.ErrUnknownPreset).
type FlagError struct {
	Flag   string // the flag's name, without its dash
	Value  string // the value, as the flag holds it
	From   string // where a setting gave it (".looprunrc line 3"); "" or "flag" for the command line
	Reason string // why it cannot be
	Err    error  // the library's error
}

// Error returns "-flag value: reason", with where the value came from
// when a setting gave it: "-cooldown -5m0s (LOOPRUN_COOLDOWN): ...".
func (e *FlagError) Error() string {
	from := ""
	if e.From != "" && e.From != "flag" {
		from = " (" + e.From + ")"
	}
	return fmt.Sprintf("-%s %s%s: %s", e.Flag, e.Value, from, e.Reason)
}

// Unwrap returns the library's error.
func (e *FlagError) Unwrap() error { return e.Err }

// flagErrors turns the *loopbreaker.ConfigError of each field a threshold
// flag sets into a *FlagError naming the flag; errors of other fields stay
// as they are. Several are joined, as Validate joins them.
func (s *Set) flagErrors(err error) error {
	var errs []error
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	} else {
		errs = []error{err}
	}
	for i, e := range errs {
		var ce *loopbreaker.ConfigError
		if !errors.As(e, &ce) {
			continue
		}
		for _, t := range thresholds {
			if t.field == ce.Field && s.apply[t.name] != nil {
				errs[i] = &FlagError{Flag: t.name, Value: fmt.Sprint(ce.Value), From: s.Origin(t.name), Reason: ce.Reason, Err: ce}
				break
			}
		}
	}
	return errors.Join(errs...)
}

// Describe returns what the threshold flag name counts and what a value of
// 0 gives ("3", "30s", "off", "none"), for a program's own help; ok is
// false for a name that is no threshold flag Register defined.
func (s *Set) Describe(name string) (what, unset string, ok bool) {
	for _, t := range thresholds {
		if t.name == name && s.apply[name] != nil {
			return t.what, t.unset, true
		}
	}
	return "", "", false
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
