package thresholdflags

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Setting is one value for a flag from below the command line: a variable
// of the environment, a line of a configuration file.
type Setting struct {
	// Name is the flag's name (an alias names its flag).
	Name string
	// Value is the text the flag's Set reads: "4", "30m", "true".
	Value string
	// From says where the value was read, for messages: "LOOPRUN_FAILURES",
	// ".looprunrc line 3", ".ralphrc CB_COOLDOWN_MINUTES".
	From string
}

// Foreign is another tool's setting read as one of ours:
// ralph-claude-code's CB_NO_PROGRESS_THRESHOLD as -no-progress.
type Foreign struct {
	Var  string // the other tool's name, e.g. CB_COOLDOWN_MINUTES
	Name string // the flag it sets
	// Convert turns the other tool's value into the flag's ("30" minutes
	// into "30m"); nil takes it as it is.
	Convert func(string) (string, error)
}

// RalphClaudeCode are ralph-claude-code's settings of the thresholds, as
// its .ralphrc and its environment give them:
//
//	MAX_CALLS_PER_HOUR              -calls-per-hour
//	CB_NO_PROGRESS_THRESHOLD        -no-progress
//	CB_SAME_ERROR_THRESHOLD         -same-errors-in-a-row (it counts loops in a row)
//	CB_OUTPUT_DECLINE_THRESHOLD     -output-decline
//	CB_PERMISSION_DENIAL_THRESHOLD  -permission-denials
//	CB_COOLDOWN_MINUTES             -cooldown, in minutes (0, at once there: 1s)
var RalphClaudeCode = []Foreign{
	{"MAX_CALLS_PER_HOUR", "calls-per-hour", nil},
	{"CB_NO_PROGRESS_THRESHOLD", "no-progress", nil},
	{"CB_SAME_ERROR_THRESHOLD", "same-errors-in-a-row", nil},
	{"CB_OUTPUT_DECLINE_THRESHOLD", "output-decline", nil},
	{"CB_PERMISSION_DENIAL_THRESHOLD", "permission-denials", nil},
	{"CB_COOLDOWN_MINUTES", "cooldown", CooldownMinutes},
}

// Minutes reads a whole number of minutes ("15") as a duration ("15m").
func Minutes(v string) (string, error) {
	d, err := ParseMinutes(v)
	if err != nil {
		return "", err
	}
	return d.String(), nil
}

// maxMinutes is the most minutes a time.Duration holds (about 292 years).
const maxMinutes = math.MaxInt64 / int64(time.Minute)

// ParseMinutes reads a whole number of minutes, 0 or more and at most
// what a time.Duration holds (about 292 years), as a duration.
func ParseMinutes(v string) (time.Duration, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	tooLong := n > maxMinutes || errors.Is(err, strconv.ErrRange) && n > 0
	if !tooLong && (err != nil || n < 0) {
		return 0, fmt.Errorf("want a whole number of minutes, not %q", v)
	}
	if tooLong {
		return 0, fmt.Errorf("%q minutes is longer than a duration holds (%d minutes, about 292 years)", v, maxMinutes)
	}
	return time.Duration(n) * time.Minute, nil
}

// CooldownMinutes reads ralph-claude-code's CB_COOLDOWN_MINUTES: minutes,
// where 0 means a probe at once, which is a cooldown of a second here (0
// is the library's default cooldown).
func CooldownMinutes(v string) (string, error) {
	d, err := Minutes(v)
	if err == nil && d == "0s" {
		d = time.Second.String()
	}
	return d, err
}

// Settable lets the layers set the named flags too, beyond -preset and the
// threshold flags. An unknown name panics, as it is the program's mistake.
func (s *Set) Settable(names ...string) {
	for _, name := range names {
		if s.fs.Lookup(name) == nil {
			panic("thresholdflags: settable unknown flag " + name)
		}
		s.settable[name] = true
	}
}

// SettableNames returns the flags the layers may set, sorted.
func (s *Set) SettableNames() []string {
	names := make([]string, 0, len(s.settable))
	for name := range s.settable {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Apply sets, after fs.Parse, the flags the command line did not give from
// the layers, highest first: a flag takes its value from the first layer
// that has one, and within a layer from its last setting of the flag. A
// setting of a flag that is not settable, or whose value the flag does not
// take, is an error naming where it was read. Call it once.
func (s *Set) Apply(layers ...[]Setting) error {
	s.fs.Visit(func(f *flag.Flag) { s.origins[s.canonical(f.Name)] = "flag" })
	for _, layer := range layers {
		last := map[string]int{}
		for i, st := range layer {
			last[s.canonical(st.Name)] = i
		}
		for i, st := range layer {
			name := s.canonical(st.Name)
			if !s.settable[name] {
				return fmt.Errorf("%s: %s is not a setting (settings: %s)", st.From, st.Name, strings.Join(s.SettableNames(), ", "))
			}
			if _, set := s.origins[name]; set || last[name] != i {
				continue
			}
			if err := s.fs.Set(name, st.Value); err != nil {
				return fmt.Errorf("%s: %s %q: %w", st.From, st.Name, st.Value, err)
			}
			s.origins[name] = st.From
		}
	}
	return nil
}

// Origin says where the flag's value came from: "flag" for the command
// line, a Setting's From for a layer, "" for the preset's value or the
// flag's default.
func (s *Set) Origin(name string) string { return s.origins[s.canonical(name)] }

// EnvName is the environment variable of a flag: prefix and the flag's
// name in upper case, '-' as '_' (LOOPRUN_CALLS_PER_HOUR).
func EnvName(prefix, name string) string {
	return prefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// Environ reads the settings of the environment (os.Environ's form): the
// variable EnvName(prefix, name) of each settable flag, and the foreign
// variables of flags that are registered, a prefixed one winning over a
// foreign one. Variables with the prefix that name no setting are in
// unknown, for a warning: the environment is shared with other programs.
func (s *Set) Environ(environ []string, prefix string, foreign []Foreign) (settings []Setting, unknown []string, err error) {
	vars := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	for _, f := range foreign {
		v, ok := vars[f.Var]
		if !ok || v == "" || s.fs.Lookup(f.Name) == nil {
			continue
		}
		st, err := f.setting(v, f.Var)
		if err != nil {
			return nil, nil, err
		}
		settings = append(settings, st)
	}
	byEnv := map[string]string{}
	for name := range s.settable {
		byEnv[EnvName(prefix, name)] = name
	}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		if name, ok := byEnv[k]; ok {
			settings = append(settings, Setting{Name: name, Value: v, From: k})
		} else {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	return settings, unknown, nil
}

// setting converts the foreign variable's value into a Setting.
func (f Foreign) setting(v, from string) (Setting, error) {
	if f.Convert != nil {
		converted, err := f.Convert(v)
		if err != nil {
			return Setting{}, fmt.Errorf("%s: %w", from, err)
		}
		v = converted
	}
	return Setting{Name: f.Name, Value: v, From: from}, nil
}

// ParseConfig reads a configuration file of "name = value" lines, where
// name is a flag's name (a leading '-' or "--" is allowed) and the value
// may be quoted with " or '. Blank lines and lines starting with '#'
// are left out; so is a " #" comment after an unquoted value. file names
// the file in the settings' From and in errors. A line of another form is
// an error naming it.
func ParseConfig(file string, data []byte) ([]Setting, error) {
	var out []Setting
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		where := fmt.Sprintf("%s line %d", file, n)
		key, value, ok := strings.Cut(line, "=")
		key = strings.TrimLeft(strings.TrimSpace(key), "-")
		if !ok || key == "" || strings.ContainsAny(key, " \t\"'") {
			return nil, fmt.Errorf("%s: want name = value, not %q", where, line)
		}
		value, err := configValue(strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", where, key, err)
		}
		out = append(out, Setting{Name: key, Value: value, From: where})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return out, nil
}

// configValue reads a configuration file's value: quoted, the text
// between the quotes (nothing may follow but a comment); else up to a
// " #" comment.
func configValue(v string) (string, error) {
	if v == "" || (v[0] != '"' && v[0] != '\'') {
		if i := strings.Index(v, " #"); i >= 0 {
			v = v[:i]
		}
		if i := strings.Index(v, "\t#"); i >= 0 {
			v = v[:i]
		}
		return strings.TrimSpace(v), nil
	}
	end := strings.IndexByte(v[1:], v[0])
	if end < 0 {
		return "", fmt.Errorf("unterminated quote in %s", v)
	}
	rest := strings.TrimSpace(v[end+2:])
	if rest != "" && rest[0] != '#' {
		return "", fmt.Errorf("text after the quoted value: %s", rest)
	}
	return v[1 : end+1], nil
}

// ParseShell reads the foreign variables of flags that are registered
// from a shell file of assignments, such as ralph-claude-code's .ralphrc
// (NAME=value, NAME="value", NAME='value', export NAME=value), without
// running it: other lines and variables are left out. A value that only a
// shell could work out (a command substitution, a variable) is an error,
// except "${VAR:-word}", which is getenv(VAR), or word when that is empty.
// The last assignment of a variable wins. file names the file in the
// settings' From and in errors.
func (s *Set) ParseShell(file string, data []byte, foreign []Foreign, getenv func(string) string) ([]Setting, error) {
	byVar := map[string]Foreign{}
	for _, f := range foreign {
		if s.fs.Lookup(f.Name) != nil {
			byVar[f.Var] = f
		}
	}
	var out []Setting
	for _, a := range parseAssignments(data) {
		f, ok := byVar[a.name]
		if !ok {
			continue
		}
		from := file + " " + a.name
		value, err := a.value(getenv)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %s: %w (looprun reads the file, and never runs it)", file, a.line, a.name, err)
		}
		st, err := f.setting(value, from)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// assignment is one NAME=value line of a shell file, its value still as
// the shell would read it.
type assignment struct {
	name string
	raw  string // the word after '=', quotes and all
	line int
	// odd says more than one word follows '=' (a command run with the
	// variable set, a command substitution with spaces): only a shell
	// could tell the value.
	odd bool
}

// parseAssignments finds the lines of data that assign a variable: an
// optional "export ", a name, '=' and a value. Every other line (commands,
// functions, conditionals) is left out.
func parseAssignments(data []byte) []assignment {
	var out []assignment
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		line = strings.TrimSpace(strings.TrimPrefix(line, "export "))
		eq := strings.IndexByte(line, '=')
		if eq <= 0 || !isShellName(line[:eq]) {
			continue
		}
		raw, ok := shellWord(line[eq+1:])
		out = append(out, assignment{name: line[:eq], raw: raw, line: n + 1, odd: !ok})
	}
	return out
}

func isShellName(s string) bool {
	for i, c := range s {
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}

// shellWord returns the first word of s, quotes and all, when nothing but
// a comment follows it.
func shellWord(s string) (string, bool) {
	i := 0
	for i < len(s) {
		switch c := s[i]; c {
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return "", false
			}
			i += end + 2
		case '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return "", false
			}
			i = j + 1
		case '\\':
			i += 2
		case ' ', '\t', ';':
			rest := strings.TrimLeft(s[i:], " \t;")
			return s[:i], rest == "" || rest[0] == '#'
		default:
			i++
		}
	}
	return s[:min(i, len(s))], true
}

// value unquotes the assignment's value as the shell would, without
// running anything.
func (a assignment) value(getenv func(string) string) (string, error) {
	if a.odd {
		return "", fmt.Errorf("a value that only a shell can work out")
	}
	var b strings.Builder
	s := a.raw
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			b.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				switch {
				case s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\", s[i+1]) >= 0:
					i++
					b.WriteByte(s[i])
				case s[i] == '$' || s[i] == '`':
					v, n, err := expansion(s[i:], getenv)
					if err != nil {
						return "", err
					}
					b.WriteString(v)
					i += n - 1
				default:
					b.WriteByte(s[i])
				}
			}
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '$', '`':
			v, n, err := expansion(s[i:], getenv)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			i += n - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// expansion reads the expansion at the start of s: "${VAR:-word}" (or
// "${VAR-word}") is getenv(VAR), or word when that is empty; any other is
// an error. It returns the value and the bytes read.
func expansion(s string, getenv func(string) string) (string, int, error) {
	end := strings.IndexByte(s, '}')
	if !strings.HasPrefix(s, "${") || end < 0 {
		return "", 0, fmt.Errorf("a value that only a shell can work out")
	}
	inner := s[2:end]
	name, word, ok := strings.Cut(inner, "-")
	name = strings.TrimSuffix(name, ":")
	if !ok || !isShellName(name) || strings.ContainsAny(word, "$`") {
		return "", 0, fmt.Errorf("a value that only a shell can work out: %s", s[:end+1])
	}
	if v := getenv(name); v != "" {
		return v, end + 1, nil
	}
	return word, end + 1, nil
}
