package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// treeState is what the working tree looked like: the commit checked out
// and a hash of every file git reports as changed or untracked.
type treeState struct {
	head  string
	dirty map[string][32]byte
}

// gitTree reads the working tree of dir; ok is false outside a git
// repository (or without git).
func gitTree(dir string) (treeState, bool) {
	out, err := git(dir, "status", "--porcelain=v1", "-z", "--untracked-files=all")
	if err != nil {
		return treeState{}, false
	}
	st := treeState{dirty: map[string][32]byte{}}
	st.head, _ = git(dir, "rev-parse", "--verify", "-q", "HEAD")
	st.head = strings.TrimSpace(st.head)
	entries := strings.Split(out, "\x00")
	for i := 0; i < len(entries); i++ {
		e := entries[i]
		if len(e) < 4 {
			continue
		}
		path := e[3:]
		if e[0] == 'R' || e[0] == 'C' {
			i++ // the source path of a rename or copy follows
		}
		if strings.HasPrefix(path, stateDirName+"/") {
			continue // our own state is not the agent's work
		}
		content, err := os.ReadFile(filepath.Join(dir, path))
		if err != nil {
			content = []byte("deleted:" + e[:2]) // a deletion is a state too
		}
		st.dirty[path] = sha256.Sum256(content)
	}
	return st, true
}

// changedFiles counts the files that differ between two states of the
// tree: files changed, created, deleted or reverted in the working tree,
// and the files of any commits made in between.
func changedFiles(dir string, before, after treeState) int {
	changed := map[string]bool{}
	for path, h := range after.dirty {
		if before.dirty[path] != h {
			changed[path] = true
		}
	}
	for path := range before.dirty {
		if _, still := after.dirty[path]; !still {
			changed[path] = true // committed, reverted or deleted
		}
	}
	if before.head != after.head && after.head != "" {
		args := []string{"show", "--name-only", "--format=", after.head} // the first commit
		if before.head != "" {
			args = []string{"diff", "--name-only", before.head, after.head}
		}
		if out, err := git(dir, args...); err == nil {
			sc := bufio.NewScanner(strings.NewReader(out))
			for sc.Scan() {
				if name := strings.TrimSpace(sc.Text()); name != "" {
					changed[name] = true
				}
			}
		}
	}
	return len(changed)
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	return out.String(), err
}

// planCounts reads a markdown task list (seed 002's fix_plan.md): "- [x]"
// items are done, "- [ ]" items remain.
func planCounts(path string) (done, remaining int, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		for _, bullet := range []string{"- ", "* "} {
			rest, ok := strings.CutPrefix(line, bullet)
			if !ok {
				continue
			}
			switch {
			case strings.HasPrefix(rest, "[x]"), strings.HasPrefix(rest, "[X]"):
				done++
			case strings.HasPrefix(rest, "[ ]"):
				remaining++
			}
		}
	}
	return done, remaining, nil
}
