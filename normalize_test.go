package loopbreaker

import (
	"crypto/md5"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The seed's worked example, exactly.
func TestNormalizeSeedWorkedExample(t *testing.T) {
	first := "TypeError: Cannot read property 'id' of undefined at UserController (/src/controllers/user.ts:42:15)"
	moved := "TypeError: Cannot read property 'id' of undefined at UserController (/src/controllers/user.ts:87:22)"

	assert.Equal(t, "typeerror: cannot read property 'id' of undefined STACK", Normalize(first))
	assert.Equal(t, Normalize(first), Normalize(moved))
	assert.Equal(t, Fingerprint(first), Fingerprint(moved))
	assert.Regexp(t, `^[0-9a-f]{8}$`, Fingerprint(first))
}

func TestFingerprintIsMD5PrefixOfNormalize(t *testing.T) {
	for _, msg := range []string{"", "x", "TypeError: boom at f (/a.js:1:2)", strings.Repeat("é", 900)} {
		sum := md5.Sum([]byte(Normalize(msg)))
		assert.Equal(t, hex.EncodeToString(sum[:])[:8], Fingerprint(msg), "%q", msg)
	}
}

func TestNormalizeRules(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		// Hex values.
		{"hex value", "segfault at 0x7f3a", "segfault at HEX"},
		{"hex upper case", "addr 0X7F3A", "addr HEX"},
		{"hex takes precedence over digits", "10x1f", "NHEX"},
		{"hex digits include decimal digits", "0x12", "HEX"},
		{"0x without hex digit is not hex", "0x", "Nx"},
		{"hex stops at non-hex letter", "0x1fg2", "HEXgN"},
		// Stack frames.
		{"stack frame", "boom at UserController (/src/controllers/user.ts:42:15)", "boom STACK"},
		{"stack frame upper case at", "boom AT Foo (/a.js:1:2)", "boom STACK"},
		{"several stack frames", "E\n    at a (/x.js:1:2)\n    at b (/y.js:3:4)", "e\n    STACK\n    STACK"},
		{"stack frame with anonymous name", "at Object.<anonymous> (/x.js:10:5)", "STACK"},
		{"stack frame at start of text", "at f (/a.js:1:2) rest", "STACK rest"},
		{"frame needs line and column", "at f (/a.js:12)", "at f (/a.js:N)"},
		{"frame needs a name", "at (/a.js:1:2)", "at (/a.js:N:N)"},
		{"frame needs parentheses", "at f /a.js:1:2", "at f /a.js:N:N"},
		{"frame location is one line", "at f (/a.js\n:1:2)", "at f (/a.js\n:N:N)"},
		{"at inside a word is not a frame", "format f (/a.js:1:2)", "format f (/a.js:N:N)"},
		{"at after a digit is not a frame", "5at f (/a.js:1:2)", "Nat f (/a.js:N:N)"},
		{"at after punctuation is a frame", "x:at f (/a.js:1:2)", "x:STACK"},
		{"hex inside frame location", "at f (/a/0x1f.js:1:2)", "STACK"},
		// Digits.
		{"digit run", "line 42", "line N"},
		{"several runs", "1.2.30 took 45ms", "N.N.N took Nms"},
		{"literal n stays lower case", "n 7", "n N"},
		{"non-ASCII digits are kept", "line ٤٢", "line ٤٢"},
		// Case.
		{"lower-cased", "KeyError: 'A'", "keyerror: 'a'"},
		{"non-ASCII lower-cased", "ÉCHEC", "échec"},
		// White space and cap.
		{"surrounding white space trimmed", " \t\n boom \n\t ", "boom"},
		{"unicode white space trimmed", "\u00a0\u2003boom\u3000", "boom"},
		{"inner white space kept", "a  b\n\tc", "a  b\n\tc"},
		{"empty", "", ""},
		{"only white space", " \n\t ", ""},
		// Bad input.
		{"invalid UTF-8 becomes U+FFFD", "bad \xff\xfe byte", "bad \ufffd\ufffd byte"},
		{"NUL bytes kept", "a\x00b", "a\x00b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Normalize(tt.in))
		})
	}
}

func TestNormalizeCapsAt500Runes(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"ASCII", strings.Repeat("a", 600), strings.Repeat("a", 500)},
		{"multi-byte runes are never split", strings.Repeat("é", 600), strings.Repeat("é", 500)},
		{"four-byte runes", strings.Repeat("😀", 501), strings.Repeat("😀", 500)},
		{"leading white space does not count", strings.Repeat(" ", 100) + strings.Repeat("b", 600), strings.Repeat("b", 500)},
		{"placeholders count as their letters", strings.Repeat("a", 498) + " 0x1f", strings.Repeat("a", 498) + " H"},
		{"cut leaves no trailing white space", strings.Repeat("a", 499) + " tail", strings.Repeat("a", 499)},
		{"digits count once", strings.Repeat("1", 10000) + "x", "Nx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Normalize(tt.in)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, utf8.RuneCountInString(got), MaxNormalizedRunes)
		})
	}
}

// A huge text is cut, not read whole: only its head decides.
func TestNormalizeHugeTextMatchesItsHead(t *testing.T) {
	head := "panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:\n"
	huge := head + strings.Repeat("main.loop(0xc000012345)\n\t/tmp/x/main.go:12 +0x1d\n", 300000)
	require.Greater(t, len(huge), 10<<20)
	assert.Equal(t, Normalize(huge[:4096]), Normalize(huge))
	assert.Equal(t, Fingerprint(huge[:4096]), Fingerprint(huge))
}

// seedRules is the reference: the seed rules written as a chain of regexp
// replacements over the whole text. Normalize's single pass must agree
// with it on every input.
var seedRules = struct {
	hex, stack, digits *regexp.Regexp
}{
	hex:    regexp.MustCompile(`0x[0-9a-f]+`),
	stack:  regexp.MustCompile(`\bat[ \t]+[^\s()]+[ \t]+\([^()\n]*:\d+:\d+\)`),
	digits: regexp.MustCompile(`\d+`),
}

func normalizeWithRegexps(msg string) string {
	s := strings.ToLower(msg)
	s = seedRules.hex.ReplaceAllString(s, "HEX")
	s = seedRules.stack.ReplaceAllString(s, "STACK")
	s = seedRules.digits.ReplaceAllString(s, "N")
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > MaxNormalizedRunes {
		s = string([]rune(s)[:MaxNormalizedRunes])
	}
	return strings.TrimSpace(s)
}

var normalizeSamples = []string{
	"TypeError: Cannot read property 'id' of undefined at UserController (/src/controllers/user.ts:42:15)",
	"Error: boom\n    at Object.<anonymous> (/home/u/app/index.js:10:11)\n    at Module._compile (node:internal/modules/cjs/loader:1105:14)",
	"panic: assignment to entry in nil map\n\ngoroutine 1 [running]:\nmain.main()\n\t/tmp/go-build123/main.go:7 +0x2c\nexit status 2",
	"KeyError: 'a'", "KEYERROR: 'B'", "0x", "0X1F", "10x1f", "00x1", "at", "at ", "at f (", "at f (a:1:2",
	"at f (a:0x1:2)", "at f (a:1:0x)", "at f (a:10x1:2)", "xat f (a:1:2)", "_at f (a:1:2)", "-at f (a:1:2)",
	"at\tf\t(a:1:2)", "at f (a:1:2)(b:3:4)", "at f ((a:1:2)", "at f (a:1:2:3)", "at f (:1:2)", "at f (a::2)",
	"\u212aat f (a:1:2)", "\u0130at f (a:1:2)", "éat f (a:1:2)", "\xffat f (a:1:2)",
	"  leading", "trailing  ", strings.Repeat("x ", 300), strings.Repeat("at f (a:1:2) ", 45),
	"\x00\x01\x02 \xc3\x28 \xe2\x82", "ΣΑΣ ǅ ﬃ", "0x1fat f (a:1:2)",
}

func TestNormalizeAgreesWithRegexpChain(t *testing.T) {
	for _, msg := range normalizeSamples {
		assert.Equal(t, normalizeWithRegexps(msg), Normalize(msg), "%q", msg)
	}
}

// FuzzNormalize: any bytes are accepted; the result is valid UTF-8 of at
// most 500 runes, equal to the regexp chain of the seed rules, and the
// fingerprint is the MD5 prefix of the normalized text.
func FuzzNormalize(f *testing.F) {
	for _, msg := range normalizeSamples {
		f.Add(msg)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		got := Normalize(msg)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 %q from %q", got, msg)
		}
		if n := utf8.RuneCountInString(got); n > MaxNormalizedRunes {
			t.Fatalf("%d runes from %q", n, msg)
		}
		if want := normalizeWithRegexps(msg); got != want {
			t.Fatalf("Normalize(%q) = %q, regexp chain gives %q", msg, got, want)
		}
		sum := md5.Sum([]byte(got))
		if fp := Fingerprint(msg); fp != hex.EncodeToString(sum[:4]) {
			t.Fatalf("Fingerprint(%q) = %s, want MD5 prefix %x", msg, fp, sum[:4])
		}
	})
}
