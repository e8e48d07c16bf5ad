package looprun

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failingTestScript fails the same way every time, the test's failure at
// another line each time.
const failingTestScript = `echo "attempt $n" > work.txt
echo "--- FAIL: TestLogin (0.01s)"
echo "    login_test.go:$((10+n)): want 200, got 500"
exit 1
`

// When the circuit opens, the pause shows what the loop was stuck on, as
// GSD's exit.sh does before its menu: the error and how often it was seen,
// the progress score and the risk, and what to try, from superkit's
// recovery strategies for the kind of stuck.
func TestThePauseShowsTheStuckAnalysis(t *testing.T) {
	r := newRepo(t, failingTestScript)
	out, code := r.looprun(t, "", "-interactive", "no")
	require.Equal(t, exitTripped, code, out)
	assert.Regexp(t, `(?m)^      stuck: error [0-9a-f]{8} seen 3 times$`, out)
	assert.Contains(t, out, "      progress score -1; risk HIGH\n")
	assert.Contains(t, out, "      try (superkit's recovery strategies for the same error):\n"+
		"        1. change the approach entirely\n"+
		"        2. check whether the error comes from the environment (a tool, a service, a setting), not the code\n")
}

// -json says what the breaker knows at the end: the failures in a row,
// the risk, the last progress score, the tests the check reported, and
// the analysis of the open circuit with what to try.
func TestJSONSaysWhatTheBreakerKnows(t *testing.T) {
	r := newRepo(t, `echo "attempt $n" > work.txt
`)
	cmd := r.command(nil, "-interactive", "no", "-json", "-check", `echo "Error: login returns 500"; echo "40 passed, 2 failed"; exit 1`)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := exited(t, cmd, cmd.Run())
	require.Equal(t, exitTripped, code, stderr.String())
	var res struct {
		ConsecutiveFailures int    `json:"consecutive_failures"`
		Risk                string `json:"risk"`
		ProgressScore       *int   `json:"progress_score"`
		Tests               struct {
			Passing *int   `json:"passing"`
			Failing int    `json:"failing"`
			From    string `json:"from"`
		} `json:"tests"`
		Stuck struct {
			Kind    string   `json:"kind"`
			Seen    int      `json:"seen"`
			Error   string   `json:"error"`
			Try     []string `json:"try"`
			TryFrom string   `json:"try_from"`
		} `json:"stuck"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res), stdout.String())
	assert.Equal(t, 3, res.ConsecutiveFailures)
	assert.Equal(t, "HIGH", res.Risk)
	require.NotNil(t, res.ProgressScore)
	assert.Equal(t, -1, *res.ProgressScore, "a file changed (+1), the previous error again (-2)")
	require.NotNil(t, res.Tests.Passing)
	assert.Equal(t, 40, *res.Tests.Passing)
	assert.Equal(t, 2, res.Tests.Failing)
	assert.Equal(t, "check", res.Tests.From)
	assert.Equal(t, "consecutive_failures", res.Stuck.Kind)
	assert.Equal(t, 3, res.Stuck.Seen)
	assert.Equal(t, "Error: login returns 500", res.Stuck.Error)
	assert.Len(t, res.Stuck.Try, 4)
	assert.Equal(t, "superkit's recovery strategies for the same error", res.Stuck.TryFrom)
}

// After a restart the errors seen before it are shown with their text,
// which the breaker keeps, in the summary and in -json: not "(before this
// run)".
func TestErrorsOfAnEarlierRunKeepTheirText(t *testing.T) {
	r := newRepo(t, failingTestScript)
	out, code := r.looprun(t, "", "-interactive", "no")
	require.Equal(t, exitTripped, code, out)

	cmd := r.command(nil, "-interactive", "no", "-json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code = exited(t, cmd, cmd.Run())
	require.Equal(t, exitTripped, code, stderr.String())
	assert.Regexp(t, `(?m)^[0-9a-f]{8}\s+3\s+--- FAIL: TestLogin \(0\.01s\)$`, stderr.String())
	assert.NotContains(t, stderr.String(), "(before this run)")
	var res struct {
		Errors []jsonError `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res))
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "--- FAIL: TestLogin (0.01s)", res.Errors[0].Sample)
	assert.Equal(t, 1, strings.Count(stdout.String(), "\n"))
}
