package errtext

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestFirstLineIsShortAndWhole(t *testing.T) {
	assert.Equal(t, "one", FirstLine("  one \ntwo"))
	long := FirstLine(strings.Repeat("é", 150))
	assert.Equal(t, strings.Repeat("é", 100)+"...", long, "cut between characters, at 200 bytes")
	assert.Equal(t, strings.Repeat("a", 200), FirstLine(strings.Repeat("a", 200)), "200 bytes are kept whole")
}

func TestClipCutsRunesAndMendsBrokenText(t *testing.T) {
	assert.Equal(t, "héllo", Clip("  héllo wörld", 5))
	assert.Equal(t, "ab", Clip("ab  \t cd", 4), "no trailing white space after the cut")
	assert.Equal(t, "a\uFFFDb", Clip("a\xff\xfeb", 10), "a run of invalid bytes is one U+FFFD")
	assert.Len(t, []rune(Sample(strings.Repeat("x", 500))), SampleRunes)
}

// FuzzClip: whatever the text, a sample is valid UTF-8 of at most
// SampleRunes runes with no white space around it, and a first line is one
// line of at most 203 bytes.
func FuzzClip(f *testing.F) {
	f.Add("  boom\n")
	f.Add("a\xff\xfeb")
	f.Add(strings.Repeat("é", 300))
	f.Fuzz(func(t *testing.T, text string) {
		s := Sample(text)
		if !utf8.ValidString(s) || utf8.RuneCountInString(s) > SampleRunes || strings.TrimSpace(s) != s {
			t.Fatalf("sample of %q: %q", text, s)
		}
		if l := FirstLine(text); len(l) > 203 || strings.Contains(l, "\n") {
			t.Fatalf("first line of %q: %q", text, l)
		}
	})
}
