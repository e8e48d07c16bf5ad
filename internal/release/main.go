// Command release is the repository's release machinery (RELEASING.md):
// the modules in the order they are tagged, the version being released,
// a module proxy of the tree as it would be tagged, and go mod tidy in a
// module outside the workspace. Run it from anywhere in a clone:
//
//	go run ./internal/release tags            # the tags of the release, in order
//	go run ./internal/release version v0.2.0  # every module requires the others at v0.2.0
//	go run ./internal/release tidy [DIR...]   # go mod tidy each module (all by default)
//	go run ./internal/release proxy DIR       # a file-system module proxy of the tree
//	go run ./internal/release check           # the convention, as the test checks it
//
// Its test installs looprun and the libraries from that proxy into an
// empty module cache, as a user would from the real one.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

const usageText = `usage: go run ./internal/release tags | version vX.Y.Z | tidy [DIR...] | proxy DIR | check`

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(usageText)
	}
	r, err := findRepo()
	if err != nil {
		return err
	}
	switch cmd, args := args[0], args[1:]; {
	case cmd == "tags" && len(args) == 0:
		order, err := r.releaseOrder()
		if err != nil {
			return err
		}
		for _, m := range order {
			fmt.Fprintf(stdout, "%-32s %s\n", m.tag(r.version), m.path)
		}
		return nil
	case cmd == "check" && len(args) == 0:
		if bad := r.problems(); len(bad) > 0 {
			return errors.New("the modules break RELEASING.md's convention:\n\t" + strings.Join(bad, "\n\t"))
		}
		fmt.Fprintf(stdout, "%d modules, released at %s\n", len(r.modules), r.version)
		return nil
	case cmd == "version" && len(args) == 1:
		return r.setVersion(args[0])
	case cmd == "proxy" && len(args) == 1:
		dir, err := filepath.Abs(args[0])
		if err != nil {
			return err
		}
		tree, err := snapshot(r.root)
		if err != nil {
			return err
		}
		if err := r.writeProxy(dir, tree); err != nil {
			return err
		}
		upstream, err := goEnv("GOPROXY")
		if err != nil {
			return err
		}
		// A module cache of its own: the tree's modules, under the
		// version being released, must never enter the real one.
		env := append(proxyEnv(dir, upstream), "GOMODCACHE="+filepath.Join(dir, "modcache"))
		fmt.Fprintf(stdout, "# the tree's modules at %s, for the go command outside the workspace\n", r.version)
		fmt.Fprintf(stdout, "# (go clean -modcache empties its module cache, which is read-only)\n")
		for _, kv := range env {
			fmt.Fprintf(stdout, "export %s\n", kv)
		}
		return nil
	case cmd == "tidy":
		return r.tidy(args, stderr)
	}
	return errors.New(usageText)
}

// goEnv returns the go command's setting of name.
func goEnv(name string) (string, error) {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// setVersion makes version the one being released: every module requires
// the repository's others at it, and go.work serves them at it.
func (r *repo) setVersion(version string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version || semver.Major(version) != "v0" && semver.Major(version) != "v1" {
		return fmt.Errorf("%q is not a version the modules can take (v0.x.y or v1.x.y: a v2 needs /v2 module paths)", version)
	}
	for _, m := range r.modules {
		for _, req := range m.mod.Require {
			if ours(req.Mod.Path) {
				if err := m.mod.AddRequire(req.Mod.Path, version); err != nil {
					return err
				}
			}
		}
		data, err := m.mod.Format()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(r.root, filepath.FromSlash(m.dir), "go.mod"), data, 0o644); err != nil {
			return err
		}
	}
	var old []*modfile.Replace
	for _, rep := range r.work.Replace {
		if ours(rep.Old.Path) {
			old = append(old, rep)
		}
	}
	for _, rep := range old {
		if err := r.work.DropReplace(rep.Old.Path, rep.Old.Version); err != nil {
			return err
		}
	}
	for _, m := range r.modules {
		if m.published() {
			if err := r.work.AddReplace(m.path, version, "./"+strings.TrimPrefix(m.dir, "."), ""); err != nil {
				return err
			}
		}
	}
	r.work.Cleanup()
	return os.WriteFile(filepath.Join(r.root, "go.work"), modfile.Format(r.work.Syntax), 0o644)
}

// tidy runs go mod tidy in the modules of dirs (every module when none),
// outside the workspace, the repository's modules served at the version
// being released from a proxy of the tree; then drops their lines from
// go.sum (the workspace serves them), and completes go.work.sum.
func (r *repo) tidy(dirs []string, stderr io.Writer) error {
	var mods []*repoModule
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(r.root, abs)
		if err != nil {
			return err
		}
		var found *repoModule
		for _, m := range r.modules {
			if m.dir == filepath.ToSlash(rel) {
				found = m
			}
		}
		if found == nil {
			return fmt.Errorf("%s is no module of go.work", d)
		}
		mods = append(mods, found)
	}
	if len(mods) == 0 {
		mods = r.modules
	}
	tmp, err := os.MkdirTemp("", "lbrelease")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	proxy, cache := filepath.Join(tmp, "proxy"), filepath.Join(tmp, "modcache")
	tree, err := snapshot(r.root)
	if err != nil {
		return err
	}
	if err := r.writeProxy(proxy, tree); err != nil {
		return err
	}
	upstream, err := goEnv("GOPROXY")
	if err != nil {
		return err
	}
	real, err := goEnv("GOMODCACHE")
	if err != nil {
		return err
	}
	// A module cache of its own, so that the tree's modules, published
	// here under the version being released, never enter the real one;
	// what the real one has is served from it first.
	env := append(os.Environ(), proxyEnv(proxy, "file://"+filepath.ToSlash(filepath.Join(real, "cache", "download"))+","+upstream)...)
	env = append(env, "GOMODCACHE="+cache)
	defer func() {
		clean := exec.Command("go", "clean", "-modcache")
		clean.Env = env
		_ = clean.Run()
	}()
	for _, m := range mods {
		fmt.Fprintf(stderr, "== go mod tidy in %s\n", m.dir)
		dir := filepath.Join(r.root, filepath.FromSlash(m.dir))
		cmd := exec.Command("go", "mod", "tidy")
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, stderr, stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go mod tidy in %s: %w", m.dir, err)
		}
		if err := dropOurSums(filepath.Join(dir, "go.sum")); err != nil {
			return err
		}
	}
	fmt.Fprintln(stderr, "== go mod download (go.work.sum)")
	download := exec.Command("go", "mod", "download")
	download.Dir, download.Stdout, download.Stderr = r.root, stderr, stderr
	return download.Run()
}

// dropOurSums removes the lines of the repository's modules from the
// go.sum file name.
func dropOurSums(name string) error {
	data, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var kept bytes.Buffer
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if p, _, _ := strings.Cut(line, " "); !ours(p) {
			kept.WriteString(line)
		}
	}
	if kept.Len() == 0 {
		return os.Remove(name)
	}
	return os.WriteFile(name, kept.Bytes(), 0o644)
}
