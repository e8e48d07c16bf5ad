package limits

import (
	"strings"
	"testing"
)

// BenchmarkFromTextLimitMessage: a short output that is a limit message.
func BenchmarkFromTextLimitMessage(b *testing.B) {
	in := "✻ Baked for 2m 4s\nYou've hit your session limit · resets 5:40pm (Europe/Berlin)\n/login to switch to an API usage-billed account."
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		FromText(in, now)
	}
}

// BenchmarkFromTextStreamJSON: a stream-json run that hit the limit.
func BenchmarkFromTextStreamJSON(b *testing.B) {
	in := readBenchdata(b, "stream-limit.jsonl")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		FromText(in, now)
	}
}

// BenchmarkFromTextLongOutput: a megabyte of build output with no limit
// in it; FromText reads the last MaxScan bytes.
func BenchmarkFromTextLongOutput(b *testing.B) {
	in := strings.Repeat("ok  \texample.com/app/internal/store\t0.012s\n", 1<<20/43)
	b.SetBytes(MaxScan)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		FromText(in, now)
	}
}

// BenchmarkFromTextManyMessages: 64 KiB of limit messages, each naming a
// zone that is not there to load; only the last maxHits are resolved.
func BenchmarkFromTextManyMessages(b *testing.B) {
	in := strings.Repeat("You've hit your limit · resets 5pm (Nowhere/Zone)\n", MaxScan/52)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		FromText(in, now)
	}
}

// BenchmarkFromTextNodeStack1KB: a 1 KB Node.js stack trace, no limit: the
// text of most failed iterations.
func BenchmarkFromTextNodeStack1KB(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("TypeError: Cannot read properties of undefined (reading 'id')\n")
	for sb.Len() < 1<<10 {
		sb.WriteString("    at UserController.show (/home/dev/app/src/controllers/user.ts:42:15)\n")
	}
	in := sb.String()[:1<<10]
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		FromText(in, now)
	}
}
