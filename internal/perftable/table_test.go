package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sampleOutput = `goos: linux
goarch: amd64
pkg: github.com/loopbreaker/loopbreaker
cpu: AMD EPYC 9B45
BenchmarkCheckRecordSuccess-2   	 1000000	        90.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkCheckRecordSuccess-2   	 1000000	        80.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkCheckRecordSuccess-2   	 1000000	       200.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkExtractError/1MB-plain-2 	     300	   3514000 ns/op	 299.00 MB/s	       0 B/op	       0 allocs/op
BenchmarkCorpusFingerprint-2    	    9000	    130000 ns/op	       8 B/op	       1 allocs/op
BenchmarkFleetCheckRecord/unix/workers=64-2 	   20000	     68000 ns/op	      3900 p50-µs	      9600 p99-µs	         2.000 roundtrips/op	    2000 B/op	      30 allocs/op
PASS
`

// Every run of every benchmark is read, its GOMAXPROCS suffix dropped, and
// the median of the runs kept; a custom metric between the standard ones
// is skipped.
func TestParseTakesTheMedianOfTheRuns(t *testing.T) {
	results, cpu := parse(sampleOutput)
	assert.Equal(t, "AMD EPYC 9B45", cpu)
	assert.Equal(t, result{ns: 90}, results["BenchmarkCheckRecordSuccess"])
	assert.Equal(t, result{ns: 3514000, metrics: map[string]float64{"MB/s": 299}}, results["BenchmarkExtractError/1MB-plain"])
	assert.Equal(t, result{ns: 130000, bytes: 8, allocs: 1}, results["BenchmarkCorpusFingerprint"])
	assert.Equal(t, result{ns: 68000, bytes: 2000, allocs: 30, metrics: map[string]float64{"p50-µs": 3900, "p99-µs": 9600, "roundtrips/op": 2}},
		results["BenchmarkFleetCheckRecord/unix/workers=64"])
}

// The fleet's table has a row per connection and number of workers, from
// the metrics the benchmark reports, and says which were not measured.
func TestFleetTableRendersTheCustomMetrics(t *testing.T) {
	results := map[string]result{
		"BenchmarkFleetCheckRecord/unix/workers=64": {ns: 68000, metrics: map[string]float64{"p50-µs": 3900, "p99-µs": 9600, "roundtrips/op": 2, "script-µs/call": 30}},
	}
	got := fleetTable(results, "a machine", 3)
	assert.Contains(t, got, "| unix socket | 64 | 2.000 | 3.90 ms | 9.60 ms | 68.0 µs | 30.0 µs |")
	assert.Contains(t, got, "| loopback TCP | 64 | not measured (no redis-server) | | | | |")
}

// The table has a row per benchmark of the list, a row for one that did
// not run, units that keep a few digits, and the ratios it can compute.
func TestTableRendersEveryRowAndTheRatios(t *testing.T) {
	results := map[string]result{
		"BenchmarkCheckRecordSuccess": {ns: 31.4},
		"BenchmarkCorpusFingerprint":  {ns: 130000},
		"BenchmarkCorpusRegexpChain":  {ns: 2860000, bytes: 658003, allocs: 2359},
	}
	got := table(results, "a machine", 6, nil)
	assert.Contains(t, got, "median of 6 runs) on a machine.")
	assert.Contains(t, got, "| `BenchmarkCheckRecordSuccess` | `Check` + `RecordSuccess` on a closed circuit | 31 ns | 0 | 0 |")
	assert.Contains(t, got, "| 2.86 ms | 658,003 | 2,359 |")
	assert.Contains(t, got, "| 130.0 µs |")
	assert.Contains(t, got, "| `BenchmarkRecordFailure1KB` | `RecordFailure` of a 1 KB Node stack trace | not measured | | |")
	assert.Contains(t, got, "`Fingerprint` is 22.0× as fast as the regexp chain on the corpus.")
}

// Only the text between the markers is replaced; a guide without them is
// an error.
func TestReplaceTableKeepsTheRestOfTheGuide(t *testing.T) {
	guide := "# Performance\n\nintro\n" + begin + "\nold table\n" + end + "\n\nafter\n"
	got, err := replaceBetween(guide, begin, end, "new table\n")
	require.NoError(t, err)
	assert.Equal(t, "# Performance\n\nintro\n"+begin+"\nnew table\n"+end+"\n\nafter\n", got)

	_, err = replaceBetween("no markers", begin, end, "x")
	assert.Error(t, err)
}

// With -only, the rows not re-measured keep their figures and the ratios
// theirs, and the first line says which rows were re-measured, in place
// of an earlier such note.
func TestTableWithOnlyKeepsTheOtherRows(t *testing.T) {
	old := "\nMeasured by `go run ./internal/perftable` (median of 6 runs) on a machine, 2026-01-01. Re-measured with `-only 'X'` (median of 6 runs) on a machine: `BenchmarkX`.\n\n" +
		"| benchmark | what it measures | time/op | B/op | allocs/op |\n|---|---|---|---|---|\n" +
		"| `BenchmarkCheckRecordSuccess` | `Check` + `RecordSuccess` on a closed circuit | 112 ns | 0 | 0 |\n" +
		"| `BenchmarkRecordError1KB` | old words | 15.9 µs | 3,016 | 23 |\n" +
		"\n`Fingerprint` is 21.6× as fast as the regexp chain on the corpus, and takes 2.8× as long as MD5 alone.\n"
	results := map[string]result{"BenchmarkRecordError1KB": {ns: 2100}}

	got := table(results, "another machine, 2026-02-02", 4, readPrevious(old, "RecordError1KB"))
	assert.Contains(t, got, "Measured by `go run ./internal/perftable` (median of 6 runs) on a machine, 2026-01-01. Re-measured with `-only 'RecordError1KB'` (median of 4 runs) on another machine, 2026-02-02: `BenchmarkRecordError1KB`.\n")
	assert.NotContains(t, got, "BenchmarkX")
	assert.Contains(t, got, "| `BenchmarkCheckRecordSuccess` | `Check` + `RecordSuccess` on a closed circuit | 112 ns | 0 | 0 |\n")
	assert.Contains(t, got, "| `BenchmarkRecordError1KB` | `Record` of a 1 KB error, classified (a provider limit or not) and fingerprinted | 2.1 µs | 0 | 0 |\n")
	assert.Contains(t, got, "| `BenchmarkRecordFailure1KB` | `RecordFailure` of a 1 KB Node stack trace | not measured | | |\n")
	assert.Contains(t, got, "\n`Fingerprint` is 21.6× as fast as the regexp chain on the corpus, and takes 2.8× as long as MD5 alone.\n")
}
