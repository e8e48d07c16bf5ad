package main

import (
	"bytes"
	"debug/buildinfo"
	"os/exec"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVersionIsTheModulesFromBuildInfo: an installed looprun says the
// version of the module it was installed at (the release test installs
// one from a module proxy); one built in a clone says (devel).
func TestVersionIsTheModulesFromBuildInfo(t *testing.T) {
	var out bytes.Buffer
	writeVersion(&out, &debug.BuildInfo{Main: debug.Module{Path: "github.com/loopbreaker/loopbreaker/cmd/looprun", Version: "v0.1.0"}}, true)
	assert.Equal(t, "looprun v0.1.0\n", out.String())
	out.Reset()
	writeVersion(&out, nil, false)
	assert.Equal(t, "looprun (unknown)\n", out.String(), "a binary without build information")

	for _, args := range [][]string{{"-version"}, {"--version"}} {
		assert.True(t, versionRequested(args), args)
	}
	for _, args := range [][]string{nil, {"-version", "--", "claude"}, {"-quiet", "-version"}, {"version"}} {
		assert.False(t, versionRequested(args), args)
	}

	built, err := buildinfo.ReadFile(looprunBin)
	require.NoError(t, err)
	got, err := exec.Command(looprunBin, "-version").Output()
	require.NoError(t, err)
	assert.Equal(t, "looprun "+built.Main.Version+"\n", string(got), "built in the clone: (devel), or what git says with -buildvcs")
}

// TestVersionBesideOtherArgumentsIsAUsageError: -version does not start a
// loop, nor is it quietly ignored.
func TestVersionBesideOtherArgumentsIsAUsageError(t *testing.T) {
	var stderr bytes.Buffer
	cmd := exec.Command(looprunBin, "-version", "-max-iterations", "1")
	cmd.Dir, cmd.Stderr = t.TempDir(), &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 2, exit.ExitCode(), stderr.String())
	assert.Contains(t, stderr.String(), "-version takes no other flags or arguments")

	help, err := exec.Command(looprunBin, "-h").Output()
	require.NoError(t, err)
	assert.Contains(t, string(help), "-version", "-h lists it")
}
