package protect

import (
	"fmt"
	"testing"

	"github.com/loopbreaker/loopbreaker"
)

// benchProject is a project with 100 protected files: the plan, the
// manuals, the loop's state, and 95 specs and memories of 1-4 KiB.
func benchProject(b *testing.B) string {
	files := map[string]string{
		"IMPLEMENTATION_PLAN.md": "# Plan\n",
		"CLAUDE.md":              "# Manual\n",
		"AGENTS.md":              "# Agents\n",
		".ralphrc":               "MAX_CALLS_PER_HOUR=100\n",
		".loopbreaker/loop.json": "{}",
	}
	for i := 0; len(files) < 100; i++ {
		dir := "specs"
		if i%3 == 0 {
			dir = "memory"
		}
		files[fmt.Sprintf("%s/part%02d/note%03d.md", dir, i%7, i)] = fmt.Sprintf("%0*d\n", 1024*(1+i%4), i)
	}
	return newProject(b, files)
}

// BenchmarkVerify100Files verifies 100 intact protected files: one lstat
// each, no file read.
func BenchmarkVerify100Files(b *testing.B) {
	g := newTestGuard(b, benchProject(b), Config{})
	if n := len(g.entries); n < 100 {
		b.Fatalf("%d entries", n)
	}
	files := 0
	for _, e := range g.entries {
		if e.kind == kindFile {
			files++
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := g.Verify(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(files), "ns/file")
}

// BenchmarkRefresh100Files takes stock of 100 unchanged protected files:
// the scan, and a look at each copy in the backup directory; nothing is
// read or written.
func BenchmarkRefresh100Files(b *testing.B) {
	g := newTestGuard(b, benchProject(b), Config{})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := g.Refresh(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordWithGuard100Files is what a Guard adds to each recorded
// iteration: Verify and Refresh of 100 files, and the breaker's own work.
func BenchmarkRecordWithGuard100Files(b *testing.B) {
	cb, _ := newBreaker(b, loopbreaker.Config{Guard: newTestGuard(b, benchProject(b), Config{})})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		cb.Record(loopbreaker.Iteration{})
	}
}

// BenchmarkCheckCommand checks agent command lines that git need not be
// asked about.
func BenchmarkCheckCommand(b *testing.B) {
	g := newTestGuard(b, benchProject(b), Config{})
	for _, bc := range []struct{ name, cmd string }{
		{"go-test", "go test ./... 2>&1 | tail -30"},
		{"rm-build", "rm -rf node_modules dist && npm ci"},
		{"find-pyc", "find . -name '*.pyc' -delete"},
		{"refused", "find . -name '*.md' -delete"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				_ = g.CheckCommand(bc.cmd, "")
			}
		})
	}
}
