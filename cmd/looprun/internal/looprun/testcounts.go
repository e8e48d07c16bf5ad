package looprun

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
)

// testCounts are what a test run reported: the tests that passed and
// failed, and the errors outside any test (a compile error, a test file
// that could not be collected, a suite that failed to run).
type testCounts struct {
	passed, failed, errors int
}

// add adds o's counts to c's.
func (c testCounts) add(o testCounts) testCounts {
	return testCounts{passed: capCount(c.passed + o.passed), failed: capCount(c.failed + o.failed), errors: capCount(c.errors + o.errors)}
}

// maxCount caps a count read from text: a number longer than any test
// suite is no count to add up.
const maxCount = 1_000_000_000

func capCount(n int) int { return min(max(n, 0), maxCount) }

// testCounter reads the test counts of the common test runners from an
// output (the -check command's) as it streams, a line at a time, in
// bounded memory:
//
//   - go test: "--- PASS:" and "--- FAIL:" lines of the tests (without -v,
//     go prints no line for a passing test, and the packages that passed,
//     "ok  \tpkg", count instead), a compiler's "file.go:12:3: ..." lines
//     and "FAIL\tpkg [build failed]" as errors, and a package that failed
//     with no failing test (a panic, a timeout) as one;
//   - cargo test: each "test result: ... N passed; N failed" line, summed
//     over the test binaries, and "could not compile ... due to N previous
//     errors" as errors;
//   - jest ("Tests: 1 failed, 3 passed, 5 total", and a suite of "Test
//     Suites:" that failed with no failing test as an error) and vitest
//     ("Tests  1 failed | 3 passed (5)", "Test Files", "Errors");
//   - pytest's last line ("=== 1 failed, 3 passed, 1 error in 0.02s ==="),
//     and the plain "N passed, N failed" line alone on a line, one word
//     with a colon before it allowed ("Result: 12 passed, 3 failed, 2
//     skipped").
//
// Colours (ANSI escape sequences) are left out, and a line rewritten with
// carriage returns counts as what it ends as. A check that runs several
// runners gets their counts added up. Not safe for concurrent use.
type testCounter struct {
	line []byte // the line being written, up to maxCountedLine bytes
	long bool   // ...which is longer than that: it is passed over

	goTest struct {
		seen                         bool
		pass, fail, okPackages       int
		buildFailed, compileErrors   int
		failedWithoutTest, failsSeen int // failsSeen: "--- FAIL" lines since the last package line
	}
	cargo struct {
		seen                      bool
		pass, fail, compileErrors int
	}
	// The summaries of jest, vitest, pytest and the plain line.
	summary struct {
		seen                  bool
		counts                testCounts
		suitesFailed, suiteOf int // jest's and vitest's failed suites, and the failed tests of those runs
	}
}

// maxCountedLine bounds the line the counter holds: a summary line is
// short, and a longer line is no summary.
const maxCountedLine = 4 << 10

// Write takes the next piece of the output. It never fails.
func (c *testCounter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.keep(p)
			break
		}
		c.keep(p[:i])
		if !c.long {
			c.read(string(c.line))
		}
		c.line, c.long = c.line[:0], false
		p = p[i+1:]
	}
	return n, nil
}

// keep adds p to the line being written, unless it grows too long to be
// a summary.
func (c *testCounter) keep(p []byte) {
	if c.long || len(c.line)+len(p) > maxCountedLine {
		c.line, c.long = c.line[:0], true
		return
	}
	c.line = append(c.line, p...)
}

// counts returns the counts the output reported, once it has ended; false
// when no runner's summary was in it.
func (c *testCounter) counts() (testCounts, bool) {
	if len(c.line) > 0 && !c.long {
		c.read(string(c.line)) // the last line, without a newline
		c.line = c.line[:0]
	}
	var total testCounts
	if g := c.goTest; g.seen {
		passed := g.pass
		if passed == 0 {
			passed = g.okPackages // go test without -v names no passing test
		}
		total = total.add(testCounts{passed: passed, failed: g.fail, errors: max(g.compileErrors, g.buildFailed) + g.failedWithoutTest})
	}
	if k := c.cargo; k.seen {
		total = total.add(testCounts{passed: k.pass, failed: k.fail, errors: k.compileErrors})
	}
	if s := c.summary; s.seen {
		total = total.add(s.counts)
		total.errors = capCount(total.errors + max(s.suitesFailed-s.suiteOf, 0))
	}
	return total, c.goTest.seen || c.cargo.seen || c.summary.seen
}

// ansiEscape matches the escape sequences of colours and cursor moves.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// goCompileError matches a go compiler's or go vet's error line:
// "util/util.go:3:37: undefined: b".
var goCompileError = regexp.MustCompile(`^[^\s]+\.go:\d+:\d+: `)

// cargoResult matches the line each test binary of cargo test ends with:
// "test result: FAILED. 1 passed; 1 failed; 1 ignored; ...".
var cargoResult = regexp.MustCompile(`^test result: \w+\. (\d{1,9}) passed; (\d{1,9}) failed;`)

// read reads one line of the output.
func (c *testCounter) read(line string) {
	if strings.IndexByte(line, '\x1b') >= 0 {
		line = ansiEscape.ReplaceAllString(line, "")
	}
	if i := strings.LastIndexByte(strings.TrimRight(line, "\r"), '\r'); i >= 0 {
		line = line[i+1:] // a progress line, rewritten: what it ends as
	}
	line = strings.TrimRight(line, "\r")
	if c.goLine(line) || c.cargoLine(line) {
		return
	}
	c.summaryLine(strings.TrimSpace(line))
}

// goLine reads a line of go test's output; false when it is none.
func (c *testCounter) goLine(line string) bool {
	g := &c.goTest
	switch {
	case strings.HasPrefix(line, "--- PASS: "):
		g.pass++
	case strings.HasPrefix(line, "--- FAIL: "):
		g.fail++
		g.failsSeen++
	case strings.HasPrefix(line, "ok  \t"):
		g.okPackages++
		g.failsSeen = 0
	case strings.HasPrefix(line, "FAIL\t"):
		switch {
		case strings.HasSuffix(line, " [build failed]"), strings.HasSuffix(line, " [setup failed]"):
			g.buildFailed++
		case g.failsSeen == 0:
			g.failedWithoutTest++ // a panic, a timeout, TestMain's exit
		}
		g.failsSeen = 0
	case goCompileError.MatchString(line):
		g.compileErrors++
	default:
		return false
	}
	g.seen = true
	return true
}

// cargoLine reads a line of cargo test's output; false when it is none.
func (c *testCounter) cargoLine(line string) bool {
	k := &c.cargo
	if m := cargoResult.FindStringSubmatch(line); m != nil {
		pass, _ := strconv.Atoi(m[1])
		fail, _ := strconv.Atoi(m[2])
		k.pass, k.fail = capCount(k.pass+capCount(pass)), capCount(k.fail+capCount(fail))
		k.seen = true
		return true
	}
	if strings.HasPrefix(line, "error: could not compile ") {
		n := 1
		if _, due, ok := strings.Cut(line, " due to "); ok {
			if f := strings.Fields(due); len(f) > 0 {
				if v, err := strconv.Atoi(f[0]); err == nil {
					n = capCount(v)
				}
			}
		}
		k.compileErrors = capCount(k.compileErrors + n)
		k.seen = true
		return true
	}
	return false
}

// summaryLine reads a summary line of jest, vitest, pytest, or the plain
// "N passed, N failed" line, trimmed of white space.
func (c *testCounter) summaryLine(line string) {
	s := &c.summary
	head, rest, _ := strings.Cut(line, "  ")
	switch {
	case strings.HasPrefix(line, "Tests:"): // jest
		items, ok := countItems(strings.TrimPrefix(line, "Tests:"), ",")
		if !ok {
			return
		}
		s.counts = s.counts.add(testCounts{passed: items["passed"], failed: items["failed"]})
		s.suiteOf = capCount(s.suiteOf + items["failed"])
	case strings.HasPrefix(line, "Test Suites:"): // jest
		items, ok := countItems(strings.TrimPrefix(line, "Test Suites:"), ",")
		if !ok {
			return
		}
		s.suitesFailed = capCount(s.suitesFailed + items["failed"])
	case head == "Tests" || head == "Test Files" || head == "Errors": // vitest
		rest, _, _ = strings.Cut(strings.TrimSpace(rest), " (")
		items, ok := countItems(rest, "|")
		if !ok {
			return
		}
		switch head {
		case "Tests":
			s.counts = s.counts.add(testCounts{passed: items["passed"], failed: items["failed"]})
			s.suiteOf = capCount(s.suiteOf + items["failed"])
		case "Test Files":
			s.suitesFailed = capCount(s.suitesFailed + items["failed"])
		default:
			s.counts.errors = capCount(s.counts.errors + items["error"] + items["errors"])
		}
	default:
		counts, ok := plainSummary(line)
		if !ok {
			return
		}
		s.counts = s.counts.add(counts)
	}
	s.seen = true
}

// plainSummary reads pytest's last line and the plain "N passed, N
// failed" line: items "N word" apart with commas, the line perhaps framed
// by "=" (pytest), one word with a colon before them ("Result:"), and
// pytest's " in 0.02s" after them. It has passed, failed or errors, or it
// is no summary.
func plainSummary(line string) (testCounts, bool) {
	line = strings.TrimSpace(strings.Trim(line, "="))
	if first, rest, ok := strings.Cut(line, " "); ok && strings.HasSuffix(first, ":") && isWord(strings.TrimSuffix(first, ":")) {
		line = rest
	}
	if i := strings.LastIndex(line, " in "); i >= 0 {
		line = line[:i] // pytest's time
	}
	items, ok := countItems(line, ",")
	if !ok {
		return testCounts{}, false
	}
	if !items.has("passed", "failed", "error", "errors") {
		return testCounts{}, false
	}
	return testCounts{passed: items["passed"], failed: items["failed"], errors: capCount(items["error"] + items["errors"])}, true
}

// counted are the items of a summary: a count by the word after it.
type counted map[string]int

// has reports whether any of the words is an item.
func (c counted) has(words ...string) bool {
	for _, w := range words {
		if _, ok := c[w]; ok {
			return true
		}
	}
	return false
}

// countItems reads "N word" items apart with sep ("1 failed, 3 passed"),
// in lower case; false when any part is not such an item, or there is
// none.
func countItems(s, sep string) (counted, bool) {
	items := counted{}
	for _, part := range strings.Split(s, sep) {
		n, word, ok := strings.Cut(strings.TrimSpace(part), " ")
		v, err := strconv.Atoi(n)
		if !ok || err != nil || v < 0 || len(n) > 9 || !isWord(word) {
			return nil, false
		}
		word = strings.ToLower(word)
		items[word] = capCount(items[word] + v)
	}
	return items, len(items) > 0
}

// isWord reports whether s is one word of letters.
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return true
}

// countTestsIn reads test counts in a line of free text, such as the
// status block's "TESTS_STATUS: FAILING (40 passed, 2 failed)": each "N
// passed", "N failed" and "N error(s)" in it; false when it has none.
func countTestsIn(text string) (testCounts, bool) {
	var c testCounts
	seen := false
	for _, m := range freeCount.FindAllStringSubmatch(text, -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			continue
		}
		seen = true
		switch strings.ToLower(m[2]) {
		case "passed", "passing":
			c.passed = capCount(c.passed + n)
		case "failed", "failing":
			c.failed = capCount(c.failed + n)
		default:
			c.errors = capCount(c.errors + n)
		}
	}
	return c, seen
}

// freeCount matches a count of tests in free text.
var freeCount = regexp.MustCompile(`(?i)\b(\d{1,9}) (passed|passing|failed|failing|errors?)\b`)
