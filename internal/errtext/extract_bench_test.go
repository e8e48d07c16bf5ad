package errtext

import (
	"strings"
	"testing"
)

// bigTranscript repeats the session files matching suffix until the text
// is at least size bytes, then ends it with the go-panic session, so the
// error that wins is at the very end.
func bigTranscript(b *testing.B, suffix string, size int) string {
	var sessions []string
	for _, tr := range loadTranscripts(b) {
		if strings.HasSuffix(tr.path, suffix) && !strings.HasPrefix(tr.name, "go-panic") {
			sessions = append(sessions, tr.text)
		}
	}
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		sb.WriteString(sessions[i%len(sessions)])
	}
	sb.WriteString(readTranscript(b, "go-panic.plain.txt"))
	return sb.String()
}

func benchmarkExtract(b *testing.B, text string) {
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if ExtractError(text) == "" {
			b.Fatal("no error found")
		}
	}
}

// BenchmarkExtractError: a small session, and about 1 MB and 4 MB of
// sessions in plain text and in stream-JSON (where a third of the lines
// are failed tool results: each is read without decoding, and only the
// last is decoded). Equal MB/s at 1 MB and 4 MB is the linear cost; the
// allocations do not grow with the output.
func BenchmarkExtractError(b *testing.B) {
	b.Run("small-plain", func(b *testing.B) { benchmarkExtract(b, readTranscript(b, "python-keyerror.plain.txt")) })
	b.Run("small-stream-json", func(b *testing.B) { benchmarkExtract(b, readTranscript(b, "python-keyerror.stream.jsonl")) })
	b.Run("1MB-plain", func(b *testing.B) { benchmarkExtract(b, bigTranscript(b, ".txt", 1<<20)) })
	b.Run("4MB-plain", func(b *testing.B) { benchmarkExtract(b, bigTranscript(b, ".txt", 4<<20)) })
	b.Run("1MB-stream-json", func(b *testing.B) { benchmarkExtract(b, bigTranscript(b, ".jsonl", 1<<20)) })
	b.Run("4MB-stream-json", func(b *testing.B) { benchmarkExtract(b, bigTranscript(b, ".jsonl", 4<<20)) })
}
