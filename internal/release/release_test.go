package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testRepo is the repository this test runs in.
func testRepo(t *testing.T) *repo {
	t.Helper()
	r, err := findRepo()
	require.NoError(t, err)
	return r
}

// writer returns a function that writes a file of a tree in root.
func writer(t *testing.T, root string) func(name, text string) {
	return func(name, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(text), 0o644))
	}
}

// TestModulesFollowTheReleaseConvention: no module has a replace
// directive, each requires the others at the version being released,
// go.work serves every published module at that version and uses every
// go.mod of the tree, and no go.sum holds a line of the repository's own
// modules.
func TestModulesFollowTheReleaseConvention(t *testing.T) {
	r := testRepo(t)
	assert.Empty(t, r.problems())

	order, err := r.releaseOrder()
	require.NoError(t, err)
	require.NotEmpty(t, order)
	assert.Equal(t, corePath, order[0].path, "the core is tagged first")
	seen := map[string]bool{}
	for _, m := range order {
		for _, req := range m.mod.Require {
			if ours(req.Mod.Path) {
				assert.True(t, seen[req.Mod.Path], "%s is tagged before %s, which requires it", req.Mod.Path, m.path)
			}
		}
		seen[m.path] = true
	}
}

// TestProblemsNameEachBreachOfTheConvention: the check that guards the
// convention fails on each way of breaking it.
func TestProblemsNameEachBreachOfTheConvention(t *testing.T) {
	root := t.TempDir()
	write := writer(t, root)
	write("go.work", "go 1.26.0\n\nuse (\n\t.\n\t./lib\n\t./examples/x\n)\n\nreplace github.com/loopbreaker/loopbreaker v0.2.0 => ./\n")
	write("go.mod", "module github.com/loopbreaker/loopbreaker\n\ngo 1.23\n")
	write("lib/go.mod", "module github.com/loopbreaker/loopbreaker/lib\n\ngo 1.26.0\n\nrequire github.com/loopbreaker/loopbreaker v0.1.0\n\nreplace github.com/loopbreaker/loopbreaker => ../\n")
	write("lib/go.sum", "github.com/loopbreaker/loopbreaker v0.1.0 h1:x=\nexample.com/other v1.0.0 h1:y=\n")
	write("examples/x/go.mod", "module github.com/loopbreaker/loopbreaker/examples/x\n\ngo 1.26.0\n")
	write("stray/go.mod", "module github.com/loopbreaker/loopbreaker/stray\n\ngo 1.26.0\n")
	r, err := loadRepo(root)
	require.NoError(t, err)
	assert.Equal(t, "v0.2.0", r.version)
	got := strings.Join(r.problems(), "\n")
	for _, want := range []string{
		"lib/go.mod: replace github.com/loopbreaker/loopbreaker",
		"lib/go.mod: requires github.com/loopbreaker/loopbreaker v0.1.0, not v0.2.0",
		"lib/go.sum: a line of github.com/loopbreaker/loopbreaker",
		"go.work does not serve github.com/loopbreaker/loopbreaker/lib at v0.2.0",
		"stray/go.mod: not used by go.work",
	} {
		assert.Contains(t, got, want)
	}
	assert.NotContains(t, got, "examples/x", "an example is not published")
	assert.NotContains(t, got, "example.com/other")
}

// TestSetVersionMovesEveryRequirementAndTheWorkspace: `release version`
// leaves the tree following the convention at the new version.
func TestSetVersionMovesEveryRequirementAndTheWorkspace(t *testing.T) {
	root := t.TempDir()
	write := writer(t, root)
	write("go.work", "go 1.26.0\n\nuse (\n\t.\n\t./lib\n)\n\nreplace (\n\tgithub.com/loopbreaker/loopbreaker v0.1.0 => ./\n\tgithub.com/loopbreaker/loopbreaker/lib v0.1.0 => ./lib\n)\n")
	write("go.mod", "module github.com/loopbreaker/loopbreaker\n\ngo 1.23\n")
	write("lib/go.mod", "module github.com/loopbreaker/loopbreaker/lib\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/loopbreaker/loopbreaker v0.1.0\n\texample.com/other v1.0.0\n)\n")
	r, err := loadRepo(root)
	require.NoError(t, err)
	require.Empty(t, r.problems())
	require.Error(t, r.setVersion("v2.0.0"), "a v2 needs new module paths")
	require.Error(t, r.setVersion("0.2"))
	require.NoError(t, r.setVersion("v0.2.0"))

	r, err = loadRepo(root)
	require.NoError(t, err)
	assert.Equal(t, "v0.2.0", r.version)
	assert.Empty(t, r.problems())
	lib, err := os.ReadFile(filepath.Join(root, "lib", "go.mod"))
	require.NoError(t, err)
	assert.Contains(t, string(lib), "github.com/loopbreaker/loopbreaker v0.2.0")
	assert.Contains(t, string(lib), "example.com/other v1.0.0", "another module's requirement stays")
}

// TestInstalledFromAModuleProxyAsUsersDo publishes the tree, as it would
// be tagged, at the version being released in a file-system module proxy,
// and then, outside the workspace with an empty module cache, does what a
// user does: go install looprun at that version (it answers -version with
// it) and go get every published library into a new module that builds.
// The dependencies come from the proxy the go command is set up with.
func TestInstalledFromAModuleProxyAsUsersDo(t *testing.T) {
	r := testRepo(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the proxy is made from the git tree")
	}
	upstream, err := goEnv("GOPROXY")
	require.NoError(t, err)
	if upstream == "off" {
		t.Skip("GOPROXY=off: the dependencies cannot be downloaded")
	}
	start := time.Now()
	tmp := t.TempDir()
	proxy, cache, bin, user := filepath.Join(tmp, "proxy"), filepath.Join(tmp, "modcache"), filepath.Join(tmp, "bin"), filepath.Join(tmp, "user")
	tree, err := snapshot(r.root)
	require.NoError(t, err)
	require.NoError(t, r.writeProxy(proxy, tree))

	env := append(os.Environ(), proxyEnv(proxy, upstream)...)
	env = append(env, "GOMODCACHE="+cache, "GOBIN="+bin)
	t.Cleanup(func() { // the module cache is read-only
		clean := exec.Command("go", "clean", "-modcache")
		clean.Env = env
		_ = clean.Run()
	})
	goIn := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		var out bytes.Buffer
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &out, &out
		began := time.Now()
		require.NoError(t, cmd.Run(), "go %s in %s:\n%s", strings.Join(args, " "), dir, out.String())
		t.Logf("go %s: %s", strings.Join(args, " "), time.Since(began).Round(time.Millisecond))
		return out.String()
	}
	require.NoError(t, os.MkdirAll(user, 0o755))

	order, err := r.releaseOrder()
	require.NoError(t, err)
	var commands, libraries []*repoModule
	for _, m := range order {
		if strings.HasPrefix(m.dir, "cmd/") {
			commands = append(commands, m)
		} else {
			libraries = append(libraries, m)
		}
	}
	require.NotEmpty(t, commands)
	for _, m := range commands {
		goIn(user, "install", m.path+"@"+r.version)
		name := filepath.Base(m.path)
		out, err := exec.Command(filepath.Join(bin, name), "-version").Output()
		require.NoError(t, err, "%s -version", name)
		assert.Equal(t, name+" "+r.version+"\n", string(out))
	}

	// A new module of a user's that imports every published library.
	goIn(user, "mod", "init", "example.com/user")
	var imports strings.Builder
	for _, m := range libraries {
		for _, pkg := range importable(t, r, m) {
			fmt.Fprintf(&imports, "\t_ %q\n", pkg)
		}
	}
	main := "package main\n\nimport (\n" + imports.String() + ")\n\nfunc main() {}\n"
	require.NoError(t, os.WriteFile(filepath.Join(user, "main.go"), []byte(main), 0o644))
	for _, m := range libraries {
		goIn(user, "get", m.path+"@"+r.version)
	}
	goIn(user, "build", "./...")
	list := goIn(user, "list", "-m", "all")
	for _, m := range libraries {
		assert.Contains(t, list, m.path+" "+r.version+"\n")
	}
	t.Logf("installed %d commands and %d libraries at %s from the tree in %s", len(commands), len(libraries), r.version, time.Since(start).Round(time.Second))
}

// importable returns the packages of m a user can import: all but its
// commands, its internal packages and those of tests alone.
func importable(t *testing.T, r *repo, m *repoModule) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}} {{.Name}} {{len .GoFiles}}", "./...")
	cmd.Dir = filepath.Join(r.root, filepath.FromSlash(m.dir))
	out, err := cmd.Output()
	require.NoError(t, err, "go list in %s", m.dir)
	var pkgs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[1] == "main" || f[2] == "0" {
			continue
		}
		if p := f[0]; !strings.Contains(p+"/", "/internal/") {
			pkgs = append(pkgs, p)
		}
	}
	require.NotEmpty(t, pkgs, "%s has no package to import", m.path)
	return pkgs
}
