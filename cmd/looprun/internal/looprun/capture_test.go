package looprun

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeInPieces writes data to c in pieces cut at the given offsets.
func writeInPieces(c *capture, data []byte, cuts ...int) {
	start := 0
	for _, cut := range append(cuts, len(data)) {
		cut = min(max(cut, start), len(data))
		_, _ = c.Write(data[start:cut])
		start = cut
	}
}

// The done marker is found wherever the writes cut it: at its start, in
// its middle, a byte at a time, or not at all.
func TestCaptureFindsTheMarkerWhereverTheWritesCutIt(t *testing.T) {
	const marker = "EXIT_SIGNAL: true"
	out := []byte("all tasks finished\nEXIT_SIGNAL: true\n")
	at := bytes.Index(out, []byte(marker))
	for _, tc := range []struct {
		name string
		cuts []int
	}{
		{"one write", nil},
		{"cut before it", []int{at}},
		{"cut after its first byte", []int{at + 1}},
		{"cut before its last byte", []int{at + len(marker) - 1}},
		{"cut in three", []int{at + 3, at + 9}},
		{"a byte at a time", func() []int {
			var cuts []int
			for i := 1; i < len(out); i++ {
				cuts = append(cuts, i)
			}
			return cuts
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture(marker, nil)
			writeInPieces(c, out, tc.cuts...)
			assert.True(t, c.markerSeen())
		})
	}

	c := newCapture(marker, nil)
	writeInPieces(c, []byte("EXIT_SIGNAL: tru\ne EXIT_SIGNAL:true\n"), 8, 16, 17)
	assert.False(t, c.markerSeen(), "only the whole marker counts")

	c = newCapture("", nil)
	writeInPieces(c, out)
	assert.False(t, c.markerSeen(), "no marker: never done")
}

// The length and the hash are those of the whole output, however long.
func TestCaptureMeasuresTheWholeOutput(t *testing.T) {
	out := bytes.Repeat([]byte("compiling module 42\n"), 200_000) // 4 MB
	c := newCapture("", nil)
	writeInPieces(c, out, 1, 32<<10, 1<<20, 3<<20)
	assert.Equal(t, int64(len(out)), c.length())
	assert.Equal(t, sha256.Sum256(out), c.hash())
	assert.Equal(t, sha256.Sum256(nil), newCapture("", nil).hash(), "no output: the hash of nothing")
}

// A long output keeps only its end in memory for the error: the error
// printed last, and the lines before it, from a line start.
func TestCaptureKeepsTheEndOfALongOutputForTheError(t *testing.T) {
	var out bytes.Buffer
	for i := 0; out.Len() < 3*sampleBytes; i++ {
		fmt.Fprintf(&out, "step %d: compiled 42 files\n", i)
	}
	out.WriteString("./main.go:12:7: undefined: loadUser\n")
	c := newCapture("", nil)
	writeInPieces(c, out.Bytes(), 100, sampleBytes+7, 2*sampleBytes+3)

	sample := c.sample()
	assert.LessOrEqual(t, len(sample), sampleBytes)
	assert.Greater(t, len(sample), sampleBytes-100, "all but the cut line")
	assert.True(t, strings.HasPrefix(sample, "step "), "from a line start: %q", sample[:40])
	assert.True(t, strings.HasSuffix(out.String(), sample))
	assert.Equal(t, "./main.go:12:7: undefined: loadUser", loopbreaker.ExtractError(sample))
	assert.Equal(t, loopbreaker.ExtractError(out.String()), loopbreaker.ExtractError(sample))

	short := newCapture("", nil)
	writeInPieces(short, []byte("no line end"))
	assert.Equal(t, "no line end", short.sample(), "a short output is kept whole")

	oneLine := newCapture("", nil)
	writeInPieces(oneLine, bytes.Repeat([]byte("y"), 2*sampleBytes))
	assert.Equal(t, "", oneLine.sample(), "no line starts in the end kept")
}

// The end kept for the error gives the error of the whole output, for
// every output of the error corpus and every agent transcript, after
// 8 KiB of other output, even with only 2 KiB kept, a 512th of what
// looprun keeps.
func TestTheEndKeptGivesTheErrorOfEveryCorpusOutput(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../../../../internal/errtext/testdata/errors/*/*.txt", "../../../../internal/errtext/testdata/transcripts/*.txt", "../../../../internal/errtext/testdata/transcripts/*.jsonl"} {
		found, err := filepath.Glob(pattern)
		require.NoError(t, err)
		files = append(files, found...)
	}
	require.Greater(t, len(files), 150, "the corpus is there")
	var before bytes.Buffer
	for i := 0; before.Len() < 8<<10; i++ {
		fmt.Fprintf(&before, "step %d: compiled 42 files\n", i)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		want := loopbreaker.ExtractError(string(data))
		out := append(append([]byte{}, before.Bytes()...), data...)
		require.Equal(t, want, loopbreaker.ExtractError(string(out)), "%s: the output before is no error", file)

		c := newCapture("", nil)
		c.keepMax = 2 << 10
		writeInPieces(c, out, 4096)
		assert.Equal(t, want, loopbreaker.ExtractError(c.sample()), file)
	}
}

// The log keeps the first logMax bytes and the end kept in memory, with a
// line between them saying how much was cut; an output whose end joins
// its start is logged whole.
func TestCaptureLogKeepsTheStartAndTheEnd(t *testing.T) {
	for _, tc := range []struct {
		name, out, log string
	}{
		{"short", "0123456789", "0123456789"},
		{"the end joins the start", "0123456789abcdefgh", "0123456789abcdefgh"},
		{"cut", "0123456789abcdefghijklmnopqrstuvwxyz",
			"0123456789\n[looprun: 18 bytes of output cut here; the last 8 bytes follow]\nstuvwxyz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			c := newCapture("", &log)
			c.keepMax, c.logMax = 8, 10
			writeInPieces(c, []byte(tc.out), 3, 11, 12)
			require.NoError(t, c.finishLog())
			assert.Equal(t, tc.log, log.String())
		})
	}
}

// failingWriter fails every write after the first n bytes.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		written := w.n
		w.n = 0
		return written, os.ErrPermission
	}
	w.n -= len(p)
	return len(p), nil
}

// A log that cannot be written (a full disk) does not stop the output:
// the capture goes on measuring it, and says what went wrong at the end.
func TestCaptureGoesOnWhenTheLogFails(t *testing.T) {
	c := newCapture("DONE", &failingWriter{n: 5})
	n, err := c.Write([]byte("0123456789"))
	assert.Equal(t, 10, n)
	assert.NoError(t, err)
	_, err = c.Write([]byte("DONE\n"))
	assert.NoError(t, err)
	assert.True(t, c.markerSeen())
	assert.Equal(t, int64(15), c.length())
	assert.ErrorIs(t, c.finishLog(), os.ErrPermission)
}

// The capture gives, for any output written in any pieces, what the whole
// output gives: its length, hash, marker, end and log.
func FuzzCapture(f *testing.F) {
	f.Add([]byte("all tasks finished\nEXIT_SIGNAL: true\n"), "EXIT_SIGNAL: true", []byte{3, 17, 1})
	f.Add([]byte("line one\nline two\nline three\nline four\nline five\n"), "", []byte{40})
	f.Add([]byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"), "aab", []byte{1, 1, 1, 29})
	f.Fuzz(func(t *testing.T, out []byte, marker string, pieces []byte) {
		var log bytes.Buffer
		c := newCapture(marker, &log)
		c.keepMax, c.logMax = 16, 24
		var cuts []int
		at := 0
		for _, p := range pieces {
			at += int(p)
			cuts = append(cuts, at)
		}
		writeInPieces(c, out, cuts...)
		require.NoError(t, c.finishLog())

		assert.Equal(t, int64(len(out)), c.length())
		assert.Equal(t, sha256.Sum256(out), c.hash())
		assert.Equal(t, marker != "" && bytes.Contains(out, []byte(marker)), c.markerSeen())

		wantSample := out
		if len(out) > c.keepMax {
			end := out[len(out)-c.keepMax:]
			wantSample = nil
			if i := bytes.IndexByte(end, '\n'); i >= 0 {
				wantSample = end[i+1:]
			}
		}
		assert.Equal(t, string(wantSample), c.sample())

		wantLog, head := string(out), int(c.logMax)
		if len(out) > head+c.keepMax {
			wantLog = fmt.Sprintf("%s\n[looprun: %d bytes of output cut here; the last %d bytes follow]\n%s",
				out[:head], len(out)-head-c.keepMax, c.keepMax, out[len(out)-c.keepMax:])
		}
		assert.Equal(t, wantLog, log.String())
	})
}

// BenchmarkCapture measures a capture taking output as looprun's copy of
// the command's pipe gives it, in 32 KiB pieces, with a done marker to
// watch for and a log (discarded) to write.
func BenchmarkCapture(b *testing.B) {
	piece := bytes.Repeat([]byte("compiling module 42 of the service\n"), 32<<10/35)
	c := newCapture("EXIT_SIGNAL: true", io.Discard)
	b.SetBytes(int64(len(piece)))
	b.ReportAllocs()
	for range b.N {
		_, _ = c.Write(piece)
	}
}
