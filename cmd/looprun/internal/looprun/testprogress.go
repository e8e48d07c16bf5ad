package looprun

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/loopbreaker/loopbreaker"
)

// testMeasure is what an iteration told of the tests: the counts, and
// which of them it told.
type testMeasure struct {
	counts      testCounts
	passedKnown bool   // counts.passed is the passing tests
	failedKnown bool   // counts.failed and counts.errors are the failures and errors
	from        string // "check" or "status block"; "" when nothing was told
}

// measureTests returns what the iteration told of the tests: the counts
// in the -check command's output, else those in the status block's
// TESTS_STATUS ("FAILING (40 passed, 2 failed)"), else its word alone:
// FAILING is one failing test, as ralph-claude-code counts an error it
// has no count of as one, and PASSING none; the passing tests are then
// not known.
func measureTests(check *testCounter, checked bool, block statusBlock, hasBlock bool) testMeasure {
	if checked {
		if c, ok := check.counts(); ok {
			return testMeasure{counts: c, passedKnown: true, failedKnown: true, from: "check"}
		}
	}
	if !hasBlock || block.testsStatus == "" {
		return testMeasure{}
	}
	if c, ok := countTestsIn(block.testsStatus); ok {
		return testMeasure{counts: c, passedKnown: true, failedKnown: true, from: "status block"}
	}
	switch strings.Fields(block.testsStatus)[0] {
	case "FAILING", "FAILED", "FAIL":
		return testMeasure{counts: testCounts{failed: 1}, failedKnown: true, from: "status block"}
	case "PASSING", "PASSED", "PASS":
		return testMeasure{failedKnown: true, from: "status block"}
	}
	return testMeasure{}
}

// testsSeen is what looprun last knew of the tests, to fill in what an
// iteration did not tell: the breaker takes TestsPassing as the count
// after each measured iteration, and a 0 for "not told" would read as
// every test failing, and then as all of them newly passing.
type testsSeen struct {
	passing, errors int // TestsPassing and Errors as last told
	buildErrors     int // the errors outside tests, of which ErrorsResolved counts the fall
	havePassing     bool
	haveErrors      bool
	haveBuild       bool
	last            testMeasure // the last iteration's
}

// restore starts from what the breaker's snapshot remembers of the last
// measured iteration (its documented JSON: progress.tests_passing and
// trends.errors), so that a restarted loop does not report 0.
func (t *testsSeen) restore(snap loopbreaker.Snapshot) {
	data, err := json.Marshal(snap)
	if err != nil {
		return
	}
	var last struct {
		Progress struct {
			TestsPassing *int `json:"tests_passing"`
		} `json:"progress"`
		Trends struct {
			Errors *int `json:"errors"`
		} `json:"trends"`
	}
	if json.Unmarshal(data, &last) != nil {
		return
	}
	if p := last.Progress.TestsPassing; p != nil {
		t.passing, t.havePassing = *p, true
	}
	if e := last.Trends.Errors; e != nil {
		t.errors, t.haveErrors = *e, true
	}
}

// feed sets the iteration's tests in p: the passing tests and the errors
// it told, or the last ones known, and the errors outside tests it
// resolved (the fall of their count: superkit's points for a build or
// lint error resolved; a fixed test scores as a newly passing one).
func (t *testsSeen) feed(p *loopbreaker.Progress, m testMeasure) {
	t.last = m
	if m.passedKnown {
		t.passing, t.havePassing = m.counts.passed, true
	}
	if m.failedKnown {
		if t.haveBuild && m.counts.errors < t.buildErrors {
			p.ErrorsResolved = t.buildErrors - m.counts.errors
		}
		t.errors, t.haveErrors = capCount(m.counts.failed+m.counts.errors), true
		t.buildErrors, t.haveBuild = m.counts.errors, true
	}
	p.TestsPassing, p.Errors = t.passing, t.errors
}

// reverted reports whether the iteration reverted changes: a file it
// found changed in the working tree is as committed again, with no commit
// between (git checkout, git restore, git stash), or it made a commit
// that git revert wrote ("Revert ..."). superkit's score takes a point
// off for it.
func reverted(dir string, before, after treeState) bool {
	if before.head == after.head {
		for path := range before.dirty {
			if _, still := after.dirty[path]; !still {
				return true
			}
		}
		return false
	}
	if before.head == "" || after.head == "" {
		return false
	}
	out, err := git(dir, "log", "--format=%s", before.head+".."+after.head)
	if err != nil {
		return false
	}
	for _, subject := range strings.Split(out, "\n") {
		if strings.HasPrefix(subject, `Revert "`) {
			return true
		}
	}
	return false
}

// column is the table's tests column: passing/failing (failures and
// errors), "-" for what the iteration did not tell.
func (m testMeasure) column() string {
	if m.from == "" {
		return "-"
	}
	passed := "-"
	if m.passedKnown {
		passed = strconv.Itoa(m.counts.passed)
	}
	return passed + "/" + strconv.Itoa(m.counts.failed+m.counts.errors)
}

// score shows a progress score with its sign: +3, -3, 0.
func score(n int) string {
	if n > 0 {
		return "+" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}
