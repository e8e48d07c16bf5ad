package errtext

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// referenceDigest is Digest the slow way: the whole uncapped result in one
// buffer large enough for it, then hashed.
func referenceDigest(s string) uint32 {
	buf := make([]byte, 8*len(s)+64)
	n := normalizer{buf: buf, limit: math.MaxInt32}
	d := digester{sum: fnvOffset}
	result := n.run(s)
	d.write(result, true)
	return fold(d.sum)
}

// A log polled as it is written: its first 500 runes stay the same, so its
// fingerprint does, but every poll shows more of it, and its digest
// changes. Two runs of the same command that differ only in what varies
// between runs (times, durations, temporary directories, addresses) have
// one digest.
func TestDigestTellsAGrowingOutputFromARepeatedOne(t *testing.T) {
	var log strings.Builder
	var polls []string
	for i := 0; i < 80; i++ {
		fmt.Fprintf(&log, "[%d/200] compiling src/module_%03d.c\n", i+1, i)
		if i%20 == 19 {
			polls = append(polls, log.String())
		}
	}
	for i := 1; i < len(polls); i++ {
		assert.Equal(t, Fingerprint(polls[0]), Fingerprint(polls[i]), "the first 500 runes are the same")
		assert.NotEqual(t, Digest(polls[i-1]), Digest(polls[i]), "poll %d shows more than poll %d", i+1, i)
	}

	run := func(ms, dir, addr string) string {
		return "=== RUN   TestParse\n--- FAIL: TestParse (" + ms + ")\n    parse_test.go:42: open " + dir + "/input.json: no such file\n    pointer " + addr + "\nFAIL\nFAIL\texample.com/parse\t" + ms + "\n"
	}
	assert.Equal(t, Digest(run("0.01s", "/tmp/TestParse123", "0xc000012345")), Digest(run("0.37s", "/tmp/TestParse987", "0xc0000abcde")))
	assert.NotEqual(t, Digest(run("0.01s", "/tmp/a", "0x1")), Digest(run("0.01s", "/tmp/a", "0x1")+"ok  \texample.com/other\n"))
}

// The fingerprint of two outputs that share their first 500 runes is one;
// their digests differ when anything after differs.
func TestDigestReadsPastTheFingerprintsCap(t *testing.T) {
	head := strings.Repeat("building the project, step after step; ", 20)
	a, b := head+"then it failed: disk full", head+"then it passed"
	require.Equal(t, Fingerprint(a), Fingerprint(b))
	assert.NotEqual(t, Digest(a), Digest(b))
}

// Digest hashes its result as it writes it, in a buffer of its own size,
// whatever the text's size: the hash is the one of the whole result
// written at once. Texts of every kind in the corpus, repeated until the
// result spills the buffer many times, with Go panics (whose call lines
// are taken back when their file line comes), paths and colours.
func TestDigestOfALongTextIsTheDigestOfItsWholeResult(t *testing.T) {
	samples := loadCorpus(t)
	var all strings.Builder
	for _, s := range samples {
		all.WriteString(s.text)
		all.WriteString("\n")
	}
	text := all.String()
	for len(text) < 300<<10 {
		text += text
	}
	text = text[:300<<10]
	require.Less(t, len(text), MaxDigestInput)
	assert.Equal(t, referenceDigest(text), Digest(text))

	for _, s := range samples {
		assert.Equal(t, referenceDigest(s.text), Digest(s.text), s.path)
		// A small buffer spills at every line: the same hash.
		small := make([]byte, 2*digestTail+textChunk+64)
		assert.Equal(t, referenceDigest(s.text), fold(digestIn(small, s.text, fnvOffset, false)), s.path)
	}
}

// Past MaxDigestInput, the first and the last half are read, with the
// length: a text that grows in its middle alone changes its digest by its
// length.
func TestDigestOfAHugeTextReadsItsEndsAndLength(t *testing.T) {
	line := "2026-11-26T10:00:00Z INFO request served in 12ms\n"
	huge := strings.Repeat(line, 3*MaxDigestInput/len(line))
	middle := huge[:len(huge)/2] + "2026-11-26T10:00:00Z INFO one more\n" + huge[len(huge)/2:]
	assert.NotEqual(t, Digest(huge), Digest(middle))
	assert.Equal(t, Digest(huge), Digest(strings.ReplaceAll(huge, "12ms", "17ms")), "durations vary between runs")
}

func TestDigestTrimsAsNormalizeDoes(t *testing.T) {
	assert.Equal(t, Digest("error: boom"), Digest("  \n error: boom \n\n"))
	assert.NotEqual(t, Digest("error: boom"), Digest("error:  boom!"))
	assert.Equal(t, Digest(""), Digest(" \t\n"))
}

func FuzzDigest(f *testing.F) {
	for _, s := range []string{"", "panic: boom\n\ngoroutine 1 [running]:\nmain.run()\n\t/app/main.go:12 +0x1d\n", "a\n/b/c/d (x.go:1:2)\n", "\x1b[31mred\x1b[0m 0x7f 12ms /tmp/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := Digest(s)
		require.Equal(t, d, Digest(s), "deterministic")
		for _, line := range strings.Split(s, "\n") {
			if len(line) > 256 {
				return // a long line may be no Go call where the whole would take it for one
			}
		}
		small := make([]byte, 2*digestTail+textChunk+64)
		require.Equal(t, referenceDigest(s), fold(digestIn(small, s, fnvOffset, false)))
		require.Equal(t, referenceDigest(s), d)
	})
}

func BenchmarkDigest(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20, 8 << 20} {
		line := "2026-11-26T10:00:00Z INFO GET /api/v1/items/1234 served in 12ms from 10.0.0.7:443\n"
		text := strings.Repeat(line, size/len(line)+1)[:size]
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for range b.N {
				Digest(text)
			}
		})
	}
}

// A tool's result keeps its numbers: a counter that moves, another line,
// another count are another result; the times, durations and addresses
// that change while nothing else does are still replaced.
func TestResultDigestKeepsTheNumbersThatAreContent(t *testing.T) {
	same := [][2]string{
		{"2026-11-26T10:00:00Z build running", "2026-11-26T10:00:31Z build running"},
		{"2026-11-26 10:00:00.123+01:00 ok", "2026-11-27 11:02:09.999+01:00 ok"},
		{"[10:00:00] waiting", "[10:04:59] waiting"},
		{"ok  \tpkg\t0.012s", "ok  \tpkg\t0.345s"},
		{"panic at 0xc000123456", "panic at 0xc000999999"},
		{"cannot write /tmp/tmp.Xy12: full", "cannot write /tmp/tmp.Ab34: full"},
	}
	for _, p := range same {
		assert.Equal(t, ResultDigest(p[0]), ResultDigest(p[1]), "%q and %q", p[0], p[1])
	}
	differ := [][2]string{
		{"12 of 40 done", "13 of 40 done"},
		{"main.go:41: undefined: x", "main.go:42: undefined: x"},
		{"3 files changed", "4 files changed"},
		{"Found 0 results", "Found 2 results"},
		{"version 1.2.3", "version 1.2.4"},
	}
	for _, p := range differ {
		assert.NotEqual(t, ResultDigest(p[0]), ResultDigest(p[1]), "%q and %q", p[0], p[1])
		assert.Equal(t, Digest(p[0]), Digest(p[1]), "Digest erases every number: %q", p[0])
	}
}

func FuzzResultDigest(f *testing.F) {
	for _, s := range []string{"", "12:00:00Z", "2026-01-02T03:04:05+0100", "1:2:3", "0x1f 12ms line 4", "9999-99-99 99:99:99,9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		small := make([]byte, 2*digestTail+textChunk+64)
		assert.Equal(t, ResultDigest(s), fold(digestIn(small, s, fnvOffset, true)), "a small buffer spills: the same hash")
	})
}
