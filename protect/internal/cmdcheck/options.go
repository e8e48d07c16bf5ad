package cmdcheck

import "strings"

// option is one option of a command line, without its dashes.
type option struct {
	name     string // "r" for -r, "recursive" for --recursive
	long     bool
	value    field
	hasValue bool
}

// is reports whether the option is one of names: single letters are short
// options, longer names long ones, which may be abbreviated as GNU getopt
// allows (--recur for --recursive).
func (o option) is(names ...string) bool {
	for _, n := range names {
		if len(n) == 1 {
			if !o.long && o.name == n {
				return true
			}
			continue
		}
		if o.long && (o.name == n || len(o.name) >= 2 && strings.HasPrefix(n, o.name)) {
			return true
		}
	}
	return false
}

// optSpec describes a command's options.
type optSpec struct {
	shortArgs string   // short options that take an argument
	longArgs  []string // long options that take an argument, also when written "--name value"
	posix     bool     // the first operand ends the options; else they may follow operands, as GNU tools allow
}

// parseOpts splits args into options and operands. An argument whose value
// cannot be known is taken as an operand (the handlers refuse it there).
func parseOpts(args []field, spec optSpec) (opts []option, operands []field) {
	rest := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		t, ok := a.text()
		if rest || !ok || len(t) < 2 || t[0] != '-' {
			operands = append(operands, a)
			rest = rest || spec.posix
			continue
		}
		if t == "--" {
			rest = true
			continue
		}
		if strings.HasPrefix(t, "--") {
			name, val, eq := strings.Cut(t[2:], "=")
			o := option{name: name, long: true}
			switch {
			case eq:
				o.value, o.hasValue = textField(val), true
			case i+1 < len(args) && o.is(spec.longArgs...):
				i++
				o.value, o.hasValue = args[i], true
			}
			opts = append(opts, o)
			continue
		}
		for j := 1; j < len(t); j++ {
			o := option{name: t[j : j+1]}
			if strings.IndexByte(spec.shortArgs, t[j]) >= 0 {
				switch {
				case j+1 < len(t):
					o.value, o.hasValue = textField(t[j+1:]), true
				case i+1 < len(args):
					i++
					o.value, o.hasValue = args[i], true
				}
				opts = append(opts, o)
				break
			}
			opts = append(opts, o)
		}
	}
	return opts, operands
}

// has reports whether any option is one of names.
func has(opts []option, names ...string) bool {
	for _, o := range opts {
		if o.is(names...) {
			return true
		}
	}
	return false
}

// value returns the value of the last option among names.
func value(opts []option, names ...string) (field, bool) {
	var v field
	found := false
	for _, o := range opts {
		if o.is(names...) && o.hasValue {
			v, found = o.value, true
		}
	}
	return v, found
}
