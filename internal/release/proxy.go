package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// snapshot returns the git tree of the working tree as `git add -A` would
// commit it (tracked files as they are now, and the new files git does
// not ignore), without touching the index, HEAD or the files: the tree
// the proxy publishes, as the release commit would hold it.
func snapshot(root string) (string, error) {
	tmp, err := os.MkdirTemp("", "lbrelease-index")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	env := append(os.Environ(), "GIT_INDEX_FILE="+filepath.Join(tmp, "index"))
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = root, env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return strings.TrimSpace(string(out)), nil
	}
	if _, err := git("rev-parse", "--verify", "-q", "HEAD"); err == nil {
		if _, err := git("read-tree", "HEAD"); err != nil {
			return "", err
		}
	}
	if _, err := git("add", "-A", "."); err != nil {
		return "", err
	}
	return git("write-tree")
}

// writeProxy writes into dir a module proxy (GOPROXY=file://dir) that
// serves every published module of the repository at r.version, made from
// the git tree given as the go command makes a module's zip from a tag:
// the module's directory without its nested modules, and the
// repository's LICENSE where the module has none.
func (r *repo) writeProxy(dir, tree string) error {
	order, err := r.releaseOrder()
	if err != nil {
		return err
	}
	files, err := os.MkdirTemp("", "lbrelease-tree")
	if err != nil {
		return err
	}
	defer os.RemoveAll(files)
	if err := extract(r.root, tree, files); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    string
	}{r.version, time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		return err
	}
	for _, m := range order {
		escaped, err := module.EscapePath(m.path)
		if err != nil {
			return err
		}
		at := filepath.Join(dir, filepath.FromSlash(escaped), "@v")
		if err := os.MkdirAll(at, 0o755); err != nil {
			return err
		}
		src := filepath.Join(files, filepath.FromSlash(m.dir))
		if err := copyIfMissing(filepath.Join(files, "LICENSE"), filepath.Join(src, "LICENSE")); err != nil {
			return err
		}
		gomod, err := os.ReadFile(filepath.Join(src, "go.mod"))
		if err != nil {
			return err
		}
		for name, data := range map[string][]byte{
			"list":              []byte(r.version + "\n"),
			r.version + ".info": info,
			r.version + ".mod":  gomod,
		} {
			if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
				return err
			}
		}
		f, err := os.Create(filepath.Join(at, r.version+".zip"))
		if err != nil {
			return err
		}
		err = zip.CreateFromDir(f, module.Version{Path: m.path, Version: r.version}, src)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", m.path, err)
		}
	}
	return nil
}

// extract writes the files of the git tree into dir, as git archive
// exports them (what .gitattributes leaves out is left out).
func extract(root, tree, dir string) error {
	archive := exec.Command("git", "-c", "core.autocrlf=input", "-c", "core.eol=lf", "archive", "--format=tar", tree)
	archive.Dir = root
	untar := exec.Command("tar", "-x", "-f", "-", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	var archiveErr, untarErr bytes.Buffer // the two run at once
	archive.Stderr, untar.Stderr = &archiveErr, &untarErr
	if err := untar.Start(); err != nil {
		return err
	}
	if err := archive.Run(); err != nil {
		_ = untar.Wait()
		return fmt.Errorf("git archive %s: %w: %s", tree, err, archiveErr.String())
	}
	if err := untar.Wait(); err != nil {
		return fmt.Errorf("tar -x: %w: %s", err, untarErr.String())
	}
	return nil
}

// copyIfMissing copies the file from to to, unless to exists.
func copyIfMissing(from, to string) error {
	if _, err := os.Lstat(to); err == nil {
		return nil
	}
	data, err := os.ReadFile(from)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}

// proxyEnv returns the environment in which the go command resolves the
// repository's modules from the proxy in dir and everything else from the
// proxy it is set up with, outside the workspace: the modules' checksums
// are not in the public checksum database, which the others are checked
// against as usual.
func proxyEnv(dir, upstream string) []string {
	return []string{
		"GOWORK=off",
		"GOFLAGS=-mod=mod",
		"GOPROXY=file://" + filepath.ToSlash(dir) + "," + upstream,
		"GONOSUMDB=" + corePath,
		"GOPRIVATE=",
		"GONOPROXY=",
	}
}
