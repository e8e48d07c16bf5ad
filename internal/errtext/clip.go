package errtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// SampleRunes is how much of an error's text a sample keeps, in runes.
const SampleRunes = 200

// Sample returns the sample of an error text that a reason carries: its
// first SampleRunes runes, white space around them trimmed, as valid UTF-8
// (each run of invalid bytes becomes U+FFFD). Its cost does not grow with
// the text beyond the cut and leading white space. It returns a part of
// text, without copying, when that part is valid UTF-8.
func Sample(text string) string { return Clip(text, SampleRunes) }

// Clip returns s with leading white space trimmed, cut to at most n runes
// (an invalid byte counting as one), trailing white space trimmed, and
// made valid UTF-8.
func Clip(s string, n int) string {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	end, valid := 0, true
	for runes := 0; end < len(s) && runes < n; runes++ {
		r, size := utf8.DecodeRuneInString(s[end:])
		if r == utf8.RuneError && size == 1 {
			valid = false
		}
		end += size
	}
	s = strings.TrimRightFunc(s[:end], unicode.IsSpace)
	if !valid {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}

// FirstLine returns the first line of s, white space around it trimmed,
// cut to at most 200 bytes (never inside a character) and then marked
// with "...".
func FirstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		i := 200
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i] + "..."
	}
	return s
}
