// Package claudetest runs the real Claude Code in tests: the pinned
// release of the npm package @anthropic-ai/claude-code, whose native
// binary needs no Node.js, offline, against a fake model
// (fakemodel.Anthropic) on the loopback interface.
//
// Tests find the binary through the environment variable
// LOOPBREAKER_CLAUDE, else as claude on the PATH when it is the pinned
// version. .ci/run installs it and sets both LOOPBREAKER_CLAUDE and
// LOOPBREAKER_CI; under CI a missing binary fails the test, and elsewhere
// the test is skipped with a message that says how to install it.
//
// Start gives Claude Code an environment of its own: a temporary HOME and
// TMPDIR, ANTHROPIC_BASE_URL at the fake model, an API key that is no
// key, and CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1. On Linux, where
// the test may make a network namespace (as root: CI runs as root), the
// test's thread, the fake model and every process the test starts live
// in a namespace of their own whose only interface is the loopback, as
// under unshare -n: nothing can reach the network, whatever Claude Code
// would try. Elsewhere the tests rely on the environment, and assert
// that the fake model saw the requests.
package claudetest

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/loopbreaker/loopbreaker/internal/netns"
	"github.com/loopbreaker/loopbreaker/internal/pinned"
)

const (
	// Version is the Claude Code release the tests are written against.
	Version = "2.1.328"
	// Package is the npm package that ships it.
	Package = "@anthropic-ai/claude-code"
	// BinaryEnv names the environment variable that gives the binary's
	// path.
	BinaryEnv = "LOOPBREAKER_CLAUDE"
	// RequireEnv names the environment variable that makes a missing
	// binary a failure rather than a skip: .ci/run sets it.
	RequireEnv = pinned.RequireEnv
)

// ErrNotFound is the error Binary returns when no Claude Code of Version
// is to be found.
var ErrNotFound = errors.New("claudetest: Claude Code " + Version + " not found")

// release is the pinned release, as package pinned finds it.
var release = pinned.Binary{
	Command: "claude", Env: BinaryEnv, Install: Install, NotFound: ErrNotFound,
	Is: func(v string) bool { return strings.HasPrefix(v, Version+" ") }, // "2.1.328 (Claude Code)"
}

// Binary returns the path of Claude Code: BinaryEnv's, which must run,
// else claude on the PATH when it says it is Version. The error wraps
// ErrNotFound when there is neither.
func Binary() (string, error) { return release.Find() }

// Install is the command that installs the pinned binary, for a message.
const Install = "npm install --prefix ~/.cache/loopbreaker/claude-code-" + Version + " " + Package + "@" + Version +
	" && export " + BinaryEnv + "=~/.cache/loopbreaker/claude-code-" + Version + "/node_modules/.bin/claude"

// Require returns the binary's path (see Binary). Without it the test is
// skipped, saying how to install it, or fails under CI (RequireEnv set).
func Require(t testing.TB) string {
	t.Helper()
	return release.Require(t)
}

// Env is the environment a test runs Claude Code in.
type Env struct {
	// Bin is the path of Claude Code's binary.
	Bin string
	// Model is the fake model Claude Code talks to.
	Model *fakemodel.Anthropic
	// Home is Claude Code's HOME (its ~/.claude.json and ~/.claude/,
	// the sessions it keeps); TMPDIR is another temporary directory.
	Home string
	// Offline says the test runs in a network namespace whose only
	// interface is the loopback (see the package comment); false where
	// no namespace could be made, and the test then relies on the
	// environment and on asserting what the fake model saw.
	Offline bool
}

// Start readies a test (or a benchmark) to run Claude Code against a fake model that
// answers with answer: it finds the binary (Require), moves the test into
// a network namespace of its own where it can (Env.Offline), starts the
// fake model there, and sets the environment Claude Code reads, for the
// test and every process it starts (t.Setenv: the test must not be
// parallel). The model is closed when the test ends.
//
// The namespace belongs to the test's goroutine's thread, which is locked
// to it and ends with it: call Start on the test's goroutine, and start
// Claude Code (or what runs it) from that goroutine.
func Start(t testing.TB, answer fakemodel.Answerer) *Env {
	t.Helper()
	e := &Env{Bin: Require(t)}
	e.Offline = netns.Isolate(t)
	e.Model = fakemodel.NewAnthropic(answer)
	t.Cleanup(e.Model.Close)
	e.Home = t.TempDir()
	for _, k := range []string{
		// Other ways to reach a model, or to configure one, that the
		// person running the tests may have set.
		"ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_CUSTOM_HEADERS",
		"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY", "CLAUDE_CONFIG_DIR",
		"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_OAUTH_TOKEN",
		"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "NO_PROXY", "no_proxy",
	} {
		t.Setenv(k, "") // restored when the test ends
		os.Unsetenv(k)
	}
	for k, v := range map[string]string{
		"HOME":               e.Home,
		"TMPDIR":             t.TempDir(), // Claude Code keeps files in $TMPDIR/claude-<uid>
		"ANTHROPIC_BASE_URL": e.Model.URL,
		"ANTHROPIC_API_KEY":  "sk-ant-fake-key-for-tests",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_AUTOUPDATER":                      "1",
	} {
		t.Setenv(k, v)
	}
	return e
}
