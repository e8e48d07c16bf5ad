package looprun

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// helpRequest is -help (or -h): the command prints text on stdout, where
// `looprun -h | less` reads it, and exits 0.
type helpRequest struct{ text string }

func (h *helpRequest) Error() string { return flag.ErrHelp.Error() }

// Is makes a helpRequest match flag.ErrHelp.
func (h *helpRequest) Is(target error) bool { return target == flag.ErrHelp }

// helpHint ends a mistake on the command line: where the flags are listed.
const helpHint = " (looprun -h lists the flags)"

// flagError is a mistake the flag package found on the command line,
// said on one line with where help is, in place of the whole usage the
// package would print: "unknown flag -bogus (looprun -h lists the
// flags)", "-failures x: want a whole number (...)".
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		msg = "unknown flag " + name
	}
	if m := invalidValue.FindStringSubmatch(msg); m != nil {
		value, name, why := m[1], m[2], m[3]
		if g, ok := fs.Lookup(name).Value.(flag.Getter); ok {
			switch g.Get().(type) {
			case int:
				why = "want a whole number"
			case float64:
				why = "want a number"
			case bool:
				why = "want true or false"
			case time.Duration:
				why = "want a duration (30s, 15m, 1h30m)"
			}
		}
		msg = fmt.Sprintf("-%s %s: %s", name, value, why)
	}
	return errors.New(msg + helpHint)
}

// invalidValue matches the flag package's error for a value a flag does
// not take: the value, the flag and why.
var invalidValue = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-(\S+): (.*)$`)
