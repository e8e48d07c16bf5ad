package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// result is a benchmark's median over its runs: its time, bytes and
// allocations per op, and the metrics it reports of its own, by unit.
type result struct {
	ns, bytes, allocs float64
	metrics           map[string]float64
}

// parse reads go test -bench output: every run of every benchmark, and the
// processor it names. The result of a benchmark is the median of its runs.
// A benchmark's name loses the -N suffix that says GOMAXPROCS.
func parse(out string) (map[string]result, string) {
	runs := map[string][]result{}
	cpu := ""
	for _, line := range strings.Split(out, "\n") {
		if c, ok := strings.CutPrefix(line, "cpu: "); ok {
			cpu = strings.TrimSpace(c)
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		var r result
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch unit := f[i+1]; unit {
			case "ns/op":
				r.ns = v
			case "B/op":
				r.bytes = v
			case "allocs/op":
				r.allocs = v
			default:
				if r.metrics == nil {
					r.metrics = map[string]float64{}
				}
				r.metrics[unit] = v
			}
		}
		runs[name] = append(runs[name], r)
	}
	results := make(map[string]result, len(runs))
	for name, rs := range runs {
		results[name] = median(rs)
	}
	return results, cpu
}

// median returns the median of each measure over the runs.
func median(rs []result) result {
	pick := func(f func(result) float64) float64 {
		vs := make([]float64, len(rs))
		for i, r := range rs {
			vs[i] = f(r)
		}
		slices.Sort(vs)
		if len(vs)%2 == 1 {
			return vs[len(vs)/2]
		}
		return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
	}
	m := result{
		ns:     pick(func(r result) float64 { return r.ns }),
		bytes:  pick(func(r result) float64 { return r.bytes }),
		allocs: pick(func(r result) float64 { return r.allocs }),
	}
	for unit := range rs[0].metrics {
		if m.metrics == nil {
			m.metrics = map[string]float64{}
		}
		m.metrics[unit] = pick(func(r result) float64 { return r.metrics[unit] })
	}
	return m
}

// table renders the results as the guide's table, with the machine they
// were measured on and the ratios under it. prev, for a run with -only, is
// the table as it was: the rows not re-measured keep their figures, and
// the ratios theirs unless all are re-measured.
func table(results map[string]result, machine string, count int, prev *previous) string {
	var b strings.Builder
	if prev == nil {
		fmt.Fprintf(&b, "Measured by `go run ./internal/perftable` (median of %d runs) on %s.\n\n", count, machine)
	} else {
		var names []string
		for _, bn := range benches {
			if _, ok := results[bn.name]; ok {
				names = append(names, "`"+bn.name+"`")
			}
		}
		fmt.Fprintf(&b, "%s%s`-only '%s'` (median of %d runs) on %s: %s.\n\n", prev.measured, remeasured, prev.only, count, machine, strings.Join(names, ", "))
	}
	b.WriteString("| benchmark | what it measures | time/op | B/op | allocs/op |\n|---|---|---|---|---|\n")
	for _, bn := range benches {
		r, ok := results[bn.name]
		switch {
		case ok:
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", bn.name, bn.what, duration(r.ns), count0(r.bytes), count0(r.allocs))
		case prev != nil && prev.rows[bn.name] != "":
			b.WriteString(prev.rows[bn.name] + "\n")
		default:
			fmt.Fprintf(&b, "| `%s` | %s | not measured | | |\n", bn.name, bn.what)
		}
	}
	var notes []string
	for _, q := range ratios {
		slow, ok1 := results[q.slow]
		fast, ok2 := results[q.fast]
		if ok1 && ok2 && fast.ns > 0 {
			notes = append(notes, fmt.Sprintf(q.text, slow.ns/fast.ns))
		}
	}
	switch {
	case prev != nil && len(notes) < len(ratios) && prev.ratios != "":
		b.WriteString("\n" + prev.ratios + "\n")
	case len(notes) > 0:
		b.WriteString("\n" + strings.Join(notes, ", ") + ".\n")
	}
	return b.String()
}

// remeasured begins the note a run with -only adds to the table's first
// line.
const remeasured = " Re-measured with "

// previous is the guide's table as an earlier run left it, read by a run
// with -only.
type previous struct {
	measured string            // the first line, without an earlier -only note
	rows     map[string]string // each row, by its benchmark
	ratios   string            // the line of ratios under the table
	only     string            // this run's -only expression
}

// readPrevious reads the table t, the text between the guide's markers.
func readPrevious(t, only string) *previous {
	p := &previous{rows: map[string]string{}, only: only}
	for _, line := range strings.Split(t, "\n") {
		switch {
		case strings.HasPrefix(line, "Measured by "):
			p.measured, _, _ = strings.Cut(line, remeasured)
		case strings.HasPrefix(line, "| `Benchmark"):
			name, _, _ := strings.Cut(line[len("| `"):], "`")
			p.rows[name] = line
		case line != "" && !strings.HasPrefix(line, "|"):
			p.ratios = line
		}
	}
	return p
}

// fleetTable renders the fleet's results: per connection and number of
// workers, the round trips to Redis of one iteration's Check and Record,
// the p50 and p99 latency of one iteration, and the fleet's time per
// iteration, all workers together, and Redis's time running the script
// per call.
func fleetTable(results map[string]result, machine string, count int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured by `go run ./internal/perftable` (median of %d runs of 20,000 iterations) on %s.\n\n", count, machine)
	b.WriteString("| connection | workers | round trips / iteration | p50 | p99 | time per iteration | script time per call |\n|---|---|---|---|---|---|---|\n")
	for _, bn := range fleetBenches {
		r, ok := results[bn.name]
		if !ok {
			fmt.Fprintf(&b, "| %s | not measured (no redis-server) | | | | |\n", bn.what)
			continue
		}
		fmt.Fprintf(&b, "| %s | %.3f | %s | %s | %s | %s |\n", bn.what, r.metrics["roundtrips/op"],
			duration(r.metrics["p50-µs"]*1e3), duration(r.metrics["p99-µs"]*1e3), duration(r.ns), duration(r.metrics["script-µs/call"]*1e3))
	}
	return b.String()
}

// duration renders nanoseconds with a unit that keeps three digits or so.
func duration(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

// count0 renders a count with thousands separators.
func count0(v float64) string {
	s := strconv.FormatFloat(v, 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// between returns the text of the guide between the markers begin and
// end.
func between(guide, begin, end string) (string, error) {
	i := strings.Index(guide, begin)
	j := strings.Index(guide, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("the guide has no %s ... %s markers", begin, end)
	}
	return guide[i+len(begin) : j], nil
}

// replaceBetween returns the guide with the text between the markers
// begin and end replaced by t.
func replaceBetween(guide, begin, end, t string) (string, error) {
	i := strings.Index(guide, begin)
	j := strings.Index(guide, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("the guide has no %s ... %s markers", begin, end)
	}
	return guide[:i+len(begin)] + "\n" + t + guide[j:], nil
}
