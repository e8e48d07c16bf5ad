// Command perftable measures what the performance guide reports and writes
// its table: one command, one table, on the machine it runs on.
//
//	go run ./internal/perftable            # from the repository root
//	go run ./internal/perftable -count 10  # more runs per benchmark
//	go run ./internal/perftable -only 'ExtractError/1MB|RecordError1KB'
//
// -only re-measures the rows of the library's table whose benchmark
// matches, for a change that moved only those: the other rows, the
// ratios unless all their rows are re-measured, and the fleet's table
// keep their figures, and the table's first line says which rows were
// re-measured, when and where (an earlier -only note gives way to it). A
// busy machine moves every figure; re-measuring only a change's own rows
// keeps the others from moving with it. The table should come from a
// full run all the same, on a quiet machine.
//
// It runs each benchmark of the lists below with go test -bench -benchmem,
// takes the median of the runs, and replaces the tables between the
// perftable markers in docs/performance.md (the library's, and the fleet's
// on Redis), with the processor, the number of cores and the Go version it
// ran on. A benchmark that did not run (the fleet's, where redis-server is
// not installed) is reported as not measured.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
)

// bench is one row of a table: a benchmark, where it lives, and what it
// measures, in the guide's words.
type bench struct {
	dir       string // the module's directory, relative to the repository root
	pkg       string // the package, as go test takes it in dir
	name      string // the benchmark, with its sub-benchmark if any
	what      string
	benchtime string // go test's -benchtime; "" for its default
}

// benches are the table's rows, in its order.
var benches = []bench{
	{".", ".", "BenchmarkCheckRecordSuccess", "`Check` + `RecordSuccess` on a closed circuit", ""},
	{".", ".", "BenchmarkCheckRecordSuccessParallel", "the same, from 2 goroutines at once", ""},
	{".", ".", "BenchmarkCheckRecordMeasured", "`Check` + `Record` of a fully reported iteration, every signal on", ""},
	{".", ".", "BenchmarkCheckRecordWithCallBudget", "`Check` + `RecordSuccess` with a call budget", ""},
	{".", ".", "BenchmarkCheckRecordSuccessOnTasks", "`Check` + `Record` of an iteration that names its task", ""},
	{".", ".", "BenchmarkCheckWithAWarning", "`Check` while a warning is in force", ""},
	{".", ".", "BenchmarkCheckActionRecordStep", "`CheckAction` + `Record` of a tool call with a 1 KB result, `tool-steps`, the step window full", ""},
	{".", ".", "BenchmarkRecordFailure1KB", "`RecordFailure` of a 1 KB Node stack trace", ""},
	{".", ".", "BenchmarkRecordFailureChangingText", "`RecordFailure` whose text changes, keeping its sample", ""},
	{".", ".", "BenchmarkFingerprintString2KB", "`Fingerprint` of a 2 KB Go panic, with its 8-character string", ""},
	{".", "./internal/errtext", "BenchmarkFingerprint10MB", "the fingerprint of a 10 MB Go panic (only its first 16 KiB are read)", ""},
	{".", "./internal/errtext", "BenchmarkCorpusFingerprint", "fingerprints of the whole error corpus (164 texts, 57 KB)", ""},
	{".", "./internal/errtext", "BenchmarkCorpusRegexpChain", "the same with the basic rules as a chain of `regexp.ReplaceAllString` calls", ""},
	{".", "./internal/errtext", "BenchmarkCorpusMD5OfNormalized", "MD5 alone over the corpus's normalized texts", ""},
	{".", "./internal/errtext", "BenchmarkExtractError/small-plain", "`ExtractError` of a small plain-text session (340 B)", ""},
	{".", "./internal/errtext", "BenchmarkExtractError/1MB-plain", "`ExtractError` of 1 MB of plain text", ""},
	{".", "./internal/errtext", "BenchmarkExtractError/1MB-stream-json", "`ExtractError` of 1 MB of stream-JSON", ""},
	{".", "./internal/limits", "BenchmarkFromTextLongOutput", "provider-limit recognition in a 1 MB build log", ""},
	{".", "./internal/limits", "BenchmarkFromTextNodeStack1KB", "provider-limit recognition in a 1 KB Node stack trace, no limit in it", ""},
	{".", ".", "BenchmarkRecordError1KB", "`Record` of a 1 KB error, classified (a provider limit or not) and fingerprinted", ""},
	{".", ".", "BenchmarkFingerprint1KB", "the fingerprint of that 1 KB error alone", ""},
	{".", ".", "BenchmarkCheckRecordWithSpendCaps", "`Check` + `Record` with spend caps, reporting usage", ""},
	{".", ".", "BenchmarkCheckRecordWithBurnRate", "`Check` + `Record` with a burn-rate cap beside an hourly cap, both windows full", ""},
	{".", ".", "BenchmarkObserveWindowCheck", "`ObserveWindow` of a response's 5-hour and weekly windows, and `Check` with a window share cap", ""},
	{"protect", ".", "BenchmarkVerify100Files", "verifying 100 protected files after an iteration", ""},
	{"protect", ".", "BenchmarkRefresh100Files", "taking stock of 100 unchanged protected files (their copies looked at, none written)", ""},
	{"protect", ".", "BenchmarkRecordWithGuard100Files", "`Record` with a `Guard` of 100 files: the verification, the stock taking and the breaker's own work", ""},
	{"protect", ".", "BenchmarkCheckCommand/rm-build", "checking `rm -rf node_modules dist && npm ci` against the protected files", ""},
	{".", "./transport", "BenchmarkTransport/transport", "a 1 MiB Anthropic stream from a local server, read through the breaker's `http.RoundTripper`", ""},
	{".", "./transport", "BenchmarkTransport/direct", "the same stream read without it", ""},
	{"cmd/looprun", "./internal/looprun", "BenchmarkCapture", "looprun's output capture, per 32 KiB written", ""},
	{"cmd/looprun", "./internal/report", "BenchmarkReport10000Iterations", "`looprun report` of a loop of 10,000 iterations: its journal read, its state restored, its page (1.9 MiB) written", "5x"},
}

// fleetBenches are the rows of the fleet's table: a fleet of workers
// sharing one breaker through a redis-server on this machine (they are not
// measured where redis-server is not installed). what is the connection
// and the number of workers.
var fleetBenches = []bench{
	{"redisstore", ".", "BenchmarkFleetCheckRecord/unix/workers=64", "unix socket | 64", "20000x"},
	{"redisstore", ".", "BenchmarkFleetCheckRecord/tcp/workers=64", "loopback TCP | 64", "20000x"},
	{"redisstore", ".", "BenchmarkFleetCheckRecord/unix/workers=1", "unix socket | 1", "20000x"},
	{"redisstore", ".", "BenchmarkFleetCheckRecord/tcp/workers=1", "loopback TCP | 1", "20000x"},
	{"redisstore", ".", "BenchmarkFleetCheckRecord/unix/workers=64/spend", "unix socket, spend | 64", "20000x"},
	{"redisstore", ".", "BenchmarkFleetCheckRecord/unix/workers=1/spend", "unix socket, spend | 1", "20000x"},
	{"redisstore", ".", "BenchmarkFleetCheckRecord/unix/workers=64/spend/share", "unix socket, spend, burn rate, window share | 64", "20000x"},
	{"redisstore", ".", "BenchmarkFleetCheckRecord/unix/workers=1/spend/share", "unix socket, spend, burn rate, window share | 1", "20000x"},
}

// ratios are lines under the table: how many times one row is as slow as
// another.
var ratios = []struct{ slow, fast, text string }{
	{"BenchmarkCorpusRegexpChain", "BenchmarkCorpusFingerprint", "`Fingerprint` is %.1f× as fast as the regexp chain on the corpus"},
	{"BenchmarkCorpusFingerprint", "BenchmarkCorpusMD5OfNormalized", "and takes %.1f× as long as MD5 alone"},
}

const (
	guide      = "docs/performance.md"
	begin      = "<!-- perftable:begin -->"
	end        = "<!-- perftable:end -->"
	fleetBegin = "<!-- perftable:fleet:begin -->"
	fleetEnd   = "<!-- perftable:fleet:end -->"
)

func main() {
	count := flag.Int("count", 6, "runs of each benchmark; the table shows their median")
	only := flag.String("only", "", "re-measure only the rows of the library's table whose benchmark matches this regular expression")
	flag.Parse()
	if err := run(*count, *only); err != nil {
		fmt.Fprintln(os.Stderr, "perftable:", err)
		os.Exit(1)
	}
}

func run(count int, only string) error {
	rows := slices.Concat(benches, fleetBenches)
	if only != "" {
		re, err := regexp.Compile(only)
		if err != nil {
			return fmt.Errorf("-only: %w", err)
		}
		rows = nil
		for _, b := range benches {
			if re.MatchString(b.name) {
				rows = append(rows, b)
			}
		}
		if len(rows) == 0 {
			return fmt.Errorf("-only %q matches no row of the table", only)
		}
	}
	results := map[string]result{}
	cpu := ""
	for _, group := range groups(rows) {
		out, err := goTest(group, count)
		if err != nil {
			return err
		}
		rs, c := parse(out)
		for name, r := range rs {
			results[name] = r
		}
		if c != "" {
			cpu = c
		}
	}
	old, err := os.ReadFile(guide)
	if err != nil {
		return err
	}
	machine := fmt.Sprintf("%s, %d cores, %s %s/%s, %s", cpu, runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, time.Now().Format("2006-01-02"))
	var prev *previous
	if only != "" {
		t, err := between(string(old), begin, end)
		if err != nil {
			return err
		}
		prev = readPrevious(t, only)
	}
	updated, err := replaceBetween(string(old), begin, end, table(results, machine, count, prev))
	if err != nil {
		return err
	}
	if only == "" {
		updated, err = replaceBetween(updated, fleetBegin, fleetEnd, fleetTable(results, machine, count))
		if err != nil {
			return err
		}
	}
	return os.WriteFile(guide, []byte(updated), 0o644)
}

// group is the benchmarks of one package, run by one go test.
type group struct {
	dir, pkg, benchtime string
	names               []string
}

// groups gathers the benchmarks by package and -benchtime, in the order
// they first come.
func groups(bs []bench) []group {
	var gs []group
	at := map[string]int{}
	for _, b := range bs {
		key := b.dir + " " + b.pkg + " " + b.benchtime
		i, ok := at[key]
		if !ok {
			i = len(gs)
			at[key] = i
			gs = append(gs, group{dir: b.dir, pkg: b.pkg, benchtime: b.benchtime})
		}
		gs[i].names = append(gs[i].names, b.name)
	}
	return gs
}

// goTest runs the benchmarks of g and returns go test's output.
func goTest(g group, count int) (string, error) {
	var patterns []string
	for _, name := range g.names {
		parts := strings.Split(name, "/")
		for i, p := range parts {
			parts[i] = "^" + p + "$"
		}
		patterns = append(patterns, strings.Join(parts, "/"))
	}
	args := []string{"test", "-run", "^$", "-bench", strings.Join(patterns, "|"), "-benchmem", "-count", fmt.Sprint(count)}
	if g.benchtime != "" {
		args = append(args, "-benchtime", g.benchtime)
	}
	args = append(args, g.pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.FromSlash(g.dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	fmt.Fprintf(os.Stderr, "perftable: go %s (in %s)\n", strings.Join(args, " "), g.dir)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go test %s: %w", g.pkg, err)
	}
	return out.String(), nil
}
