package looprun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countTests runs a testCounter over output, written in one piece.
func countTests(output string) (testCounts, bool) {
	var c testCounter
	_, _ = c.Write([]byte(output))
	return c.counts()
}

// Each runner's counts, read from its real output: the files in
// testdata/testcounts were printed by go test (go 1.26.8) on a module of
// two packages, by pytest 7.2.1 (Debian's python3-pytest), jest 30.5.2,
// vitest 4.1.12 (in colour, and with NO_COLOR) and cargo test (cargo
// 1.95.0) on a crate with a unit and an integration test, each passing,
// failing, and unable to build or collect.
func TestTestCountsOfEachRunner(t *testing.T) {
	for _, tc := range []struct {
		file string
		want testCounts
		why  string
	}{
		{"gotest-pass.txt", testCounts{passed: 2}, "without -v, the packages that passed"},
		{"gotest-fail.txt", testCounts{passed: 1, failed: 2}, "a failing subtest is its test's failure"},
		{"gotest-fail-v.txt", testCounts{passed: 2, failed: 2}, "with -v, the tests"},
		{"gotest-build.txt", testCounts{failed: 2, errors: 1}, "a compile error"},
		{"gotest-setup.txt", testCounts{passed: 1, errors: 1}, "a test file that does not compile"},
		{"pytest-pass.txt", testCounts{passed: 2}, ""},
		{"pytest-fail.txt", testCounts{passed: 3, failed: 1, errors: 1}, "a fixture's error"},
		{"pytest-fail-q.txt", testCounts{passed: 3, failed: 1, errors: 1}, "-q: no frame of ="},
		{"pytest-collect.txt", testCounts{errors: 1}, "a test file that does not collect"},
		{"jest-pass.txt", testCounts{passed: 4}, ""},
		{"jest-fail.txt", testCounts{passed: 3, failed: 1}, "its suite failed for its test"},
		{"jest-syntax.txt", testCounts{passed: 4, errors: 1}, "a suite that failed to run"},
		{"vitest-pass.txt", testCounts{passed: 4}, ""},
		{"vitest-fail.txt", testCounts{passed: 3, failed: 1}, "in colour"},
		{"vitest-fail-nocolor.txt", testCounts{passed: 3, failed: 1}, ""},
		{"vitest-syntax.txt", testCounts{passed: 4, errors: 1}, "a file that failed to parse"},
		{"cargo-pass.txt", testCounts{passed: 3}, "the unit, integration and doc tests added up"},
		{"cargo-fail.txt", testCounts{passed: 1, failed: 1}, "cargo stops at the first binary that fails"},
		{"cargo-compile.txt", testCounts{errors: 4}, "could not compile, twice"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "testcounts", tc.file))
			require.NoError(t, err)
			got, ok := countTests(string(data))
			assert.True(t, ok)
			assert.Equal(t, tc.want, got, tc.why)
		})
	}
}

// The plain closing line, in any language: "N passed, N failed" alone on
// a line, a skipped count after it and one word with a colon before it
// allowed; and outputs of no runner, which give no counts.
func TestTestCountsOfThePlainLine(t *testing.T) {
	for _, tc := range []struct {
		output string
		want   testCounts
		ok     bool
	}{
		{"12 passed, 3 failed\n", testCounts{passed: 12, failed: 3}, true},
		{"Result: 12 passed, 0 failed, 2 skipped\n", testCounts{passed: 12}, true},
		{"  40 passed, 2 failed", testCounts{passed: 40, failed: 2}, true},
		{"building...\ndone\n", testCounts{}, false},
		{"I ran the tests: 3 passed after my fix, 2 failed before\n", testCounts{}, false},
		{"Result: 12 passed and 3 failed\n", testCounts{}, false},
		{"2 files changed, 3 insertions(+)\n", testCounts{}, false},
		{"99999999999 passed\n", testCounts{}, false},
	} {
		got, ok := countTests(tc.output)
		assert.Equal(t, tc.ok, ok, tc.output)
		assert.Equal(t, tc.want, got, tc.output)
	}
}

// The counter reads the output as it streams: the same output cut into
// pieces anywhere counts the same, and a line too long to be a summary is
// passed over.
func TestTestCountsStreamInPieces(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "testcounts", "gotest-fail-v.txt"))
	require.NoError(t, err)
	want, _ := countTests(string(data))
	for _, size := range []int{1, 3, 7, 64} {
		var c testCounter
		for p := data; len(p) > 0; p = p[min(size, len(p)):] {
			_, _ = c.Write(p[:min(size, len(p))])
		}
		got, ok := c.counts()
		assert.True(t, ok)
		assert.Equal(t, want, got, "pieces of %d bytes", size)
	}
	got, ok := countTests(strings.Repeat("x", maxCountedLine) + " 12 passed, 3 failed\n")
	assert.False(t, ok)
	assert.Equal(t, testCounts{}, got)
}

// The status block's TESTS_STATUS may carry the counts in free text.
func TestTestCountsInFreeText(t *testing.T) {
	got, ok := countTestsIn("FAILING (40 passed, 2 failed, 1 error)")
	assert.True(t, ok)
	assert.Equal(t, testCounts{passed: 40, failed: 2, errors: 1}, got)
	_, ok = countTestsIn("PASSING")
	assert.False(t, ok)
}

// Any output is read without a panic, and its counts are the same
// however it is cut, never negative.
func FuzzTestCounter(f *testing.F) {
	for _, name := range []string{"gotest-build.txt", "pytest-fail.txt", "jest-syntax.txt", "vitest-fail.txt", "cargo-compile.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", "testcounts", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint16(17))
	}
	f.Add([]byte("Tests: -1 failed\ntest result: ok. 99999999999 passed; 1 failed;\n"), uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		whole, okWhole := countTests(string(data))
		var c testCounter
		at := int(cut) % (len(data) + 1)
		_, _ = c.Write(data[:at])
		_, _ = c.Write(data[at:])
		pieces, okPieces := c.counts()
		if whole != pieces || okWhole != okPieces {
			t.Fatalf("whole %+v %v, in two pieces %+v %v", whole, okWhole, pieces, okPieces)
		}
		if whole.passed < 0 || whole.failed < 0 || whole.errors < 0 {
			t.Fatalf("negative counts %+v", whole)
		}
		if _, ok := countTestsIn(string(data)); ok && len(data) == 0 {
			t.Fatal("counts in nothing")
		}
	})
}
