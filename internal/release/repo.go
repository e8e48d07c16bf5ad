package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// corePath is the path of the core module; every other module of the
// repository is under it.
const corePath = "github.com/loopbreaker/loopbreaker"

// repo is the repository as go.work describes it: its modules, and the
// version being released.
type repo struct {
	root    string // the directory of go.work
	work    *modfile.WorkFile
	modules []*repoModule // every module go.work uses, in its order
	version string        // the version go.work serves the core at
}

// repoModule is one module of the repository.
type repoModule struct {
	dir  string // from the repository's root, with slashes; "." for the core
	path string
	mod  *modfile.File
}

// published reports whether m is tagged and installed by users: every
// module but the examples and the repository's own machinery (internal/).
func (m *repoModule) published() bool {
	return m.dir != "examples" && !strings.HasPrefix(m.dir, "examples/") &&
		m.dir != "internal" && !strings.HasPrefix(m.dir, "internal/")
}

// tag is the git tag of m at version: the version for the core, else the
// module's directory and the version (protect/v0.1.0), as the go command
// looks them up.
func (m *repoModule) tag(version string) string {
	if m.dir == "." {
		return version
	}
	return m.dir + "/" + version
}

// ours reports whether the module path p is one of the repository's.
func ours(p string) bool {
	return p == corePath || strings.HasPrefix(p, corePath+"/")
}

// findRepo returns the repository holding the working directory, from
// the go.work the go command finds there.
func findRepo() (*repo, error) {
	out, err := exec.Command("go", "env", "GOWORK").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOWORK: %w", err)
	}
	work := strings.TrimSpace(string(out))
	if work == "" || work == "off" {
		return nil, errors.New("no go.work: run this inside a clone of the repository, with the workspace on")
	}
	return loadRepo(filepath.Dir(work))
}

// loadRepo reads go.work in root and the go.mod of every module it uses.
func loadRepo(root string) (*repo, error) {
	name := filepath.Join(root, "go.work")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	work, err := modfile.ParseWork(name, data, nil)
	if err != nil {
		return nil, err
	}
	r := &repo{root: root, work: work}
	for _, u := range work.Use {
		dir := path.Clean(filepath.ToSlash(u.Path))
		name := filepath.Join(root, filepath.FromSlash(dir), "go.mod")
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		mod, err := modfile.Parse(name, data, nil)
		if err != nil {
			return nil, err
		}
		if mod.Module == nil {
			return nil, fmt.Errorf("%s: no module line", name)
		}
		r.modules = append(r.modules, &repoModule{dir: dir, path: mod.Module.Mod.Path, mod: mod})
	}
	for _, rep := range work.Replace {
		if rep.Old.Path == corePath {
			r.version = rep.Old.Version
		}
	}
	if !semver.IsValid(r.version) || semver.Canonical(r.version) != r.version {
		return nil, fmt.Errorf("%s: no replace of %s at the version being released (replace %s v0.1.0 => ./)", name, corePath, corePath)
	}
	return r, nil
}

// module returns the module of path p, or nil.
func (r *repo) module(p string) *repoModule {
	for _, m := range r.modules {
		if m.path == p {
			return m
		}
	}
	return nil
}

// releaseOrder returns the published modules in the order they are
// tagged: each after the modules of the repository it requires.
func (r *repo) releaseOrder() ([]*repoModule, error) {
	var order []*repoModule
	done := map[*repoModule]bool{}
	visiting := map[*repoModule]bool{}
	var visit func(m *repoModule) error
	visit = func(m *repoModule) error {
		if done[m] {
			return nil
		}
		if visiting[m] {
			return fmt.Errorf("%s requires itself through the repository's other modules", m.path)
		}
		visiting[m] = true
		for _, req := range m.mod.Require {
			dep := r.module(req.Mod.Path)
			if dep == nil || !ours(req.Mod.Path) {
				continue
			}
			if !dep.published() {
				return fmt.Errorf("%s requires %s, which is not published", m.path, dep.path)
			}
			if err := visit(dep); err != nil {
				return err
			}
		}
		visiting[m] = false
		done[m] = true
		order = append(order, m)
		return nil
	}
	for _, m := range r.modules {
		if m.published() {
			if err := visit(m); err != nil {
				return nil, err
			}
		}
	}
	return order, nil
}

// problems returns every way the repository breaks the convention of
// RELEASING.md: a replace directive in a module, a module of the
// repository required at another version than the one being released, a
// line of the repository's modules in a go.sum, a published module that
// go.work does not serve at that version, a go.mod that go.work does not
// use.
func (r *repo) problems() []string {
	var bad []string
	served := map[string]bool{}
	for _, rep := range r.work.Replace {
		if !ours(rep.Old.Path) {
			continue
		}
		m := r.module(rep.Old.Path)
		switch {
		case m == nil:
			bad = append(bad, fmt.Sprintf("go.work replaces %s, which it does not use", rep.Old.Path))
		case rep.Old.Version != r.version:
			bad = append(bad, fmt.Sprintf("go.work replaces %s at %s, not at %s", rep.Old.Path, rep.Old.Version, r.version))
		case path.Clean(filepath.ToSlash(rep.New.Path)) != m.dir || rep.New.Version != "":
			bad = append(bad, fmt.Sprintf("go.work replaces %s with %s, not ./%s", rep.Old.Path, rep.New.Path, m.dir))
		default:
			served[m.path] = true
		}
	}
	for _, m := range r.modules {
		if want := path.Join(corePath, m.dir); m.path != want {
			bad = append(bad, fmt.Sprintf("%s/go.mod: module %s, not %s", m.dir, m.path, want))
		}
		if m.published() && !served[m.path] {
			bad = append(bad, fmt.Sprintf("go.work does not serve %s at %s: add `%s %s => ./%s` to its replace block", m.path, r.version, m.path, r.version, m.dir))
		}
		for _, rep := range m.mod.Replace {
			bad = append(bad, fmt.Sprintf("%s/go.mod: replace %s: no module has a replace directive (go install refuses it; go.work serves development)", m.dir, rep.Old.Path))
		}
		for _, req := range m.mod.Require {
			if ours(req.Mod.Path) && req.Mod.Version != r.version {
				bad = append(bad, fmt.Sprintf("%s/go.mod: requires %s %s, not %s, the version being released", m.dir, req.Mod.Path, req.Mod.Version, r.version))
			}
		}
		sum, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(m.dir), "go.sum"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			bad = append(bad, err.Error())
		}
		for _, line := range strings.Split(string(sum), "\n") {
			if p, _, _ := strings.Cut(line, " "); ours(p) {
				bad = append(bad, fmt.Sprintf("%s/go.sum: a line of %s: the workspace serves it, and a checksum of an unreleased tree would be wrong (go run ./internal/release tidy drops them)", m.dir, p))
			}
		}
	}
	used := map[string]bool{}
	for _, m := range r.modules {
		used[m.dir] = true
	}
	_ = filepath.WalkDir(r.root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := d.Name()
		if d.IsDir() && p != r.root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && name == "go.mod" {
			rel, _ := filepath.Rel(r.root, filepath.Dir(p))
			if dir := filepath.ToSlash(rel); !used[dir] {
				bad = append(bad, fmt.Sprintf("%s/go.mod: not used by go.work (go work use ./%s)", dir, dir))
			}
		}
		return nil
	})
	slices.Sort(bad)
	return bad
}
