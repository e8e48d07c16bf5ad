package looprun

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// treeState is what the working tree under the directory looked like: the
// commit checked out and a hash of every file git reports as changed or
// untracked, keyed by its path from the top of the repository, the form
// git prints paths in.
type treeState struct {
	head   string
	prefix string // dir from the top of the repository: "" or "sub/dir/"
	dirty  map[string][32]byte
}

// gitTree reads the working tree under dir, which may be the top of a
// repository or a directory in it; ok is false outside a git repository
// (or without git). Only what is under dir counts, and not looprun's own
// state directory.
//
// It runs git twice (each run costs milliseconds, and a loop reads the
// tree before and after every iteration): rev-parse for the top, dir's
// place under it and the commit (none yet: it prints the first two and
// exits 1), and status.
func gitTree(dir string) (treeState, bool) {
	where, err := git(dir, "rev-parse", "--show-toplevel", "--show-prefix", "--verify", "-q", "HEAD")
	lines := strings.Split(strings.TrimSuffix(where, "\n"), "\n")
	var exit *exec.ExitError
	if len(lines) < 2 || lines[0] == "" || err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return treeState{}, false
	}
	top := lines[0]
	out, err := git(dir, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".")
	if err != nil {
		return treeState{}, false
	}
	st := treeState{prefix: lines[1], dirty: map[string][32]byte{}}
	if len(lines) > 2 {
		st.head = lines[2]
	}
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
		if st.isState(path) {
			continue // our own state is not the agent's work
		}
		content, err := os.ReadFile(filepath.Join(top, filepath.FromSlash(path)))
		if err != nil {
			content = []byte("deleted:" + e[:2]) // a deletion is a state too
		}
		st.dirty[path] = sha256.Sum256(content)
	}
	return st, true
}

// isState reports whether path, from the top of the repository, is in
// looprun's state directory.
func (st treeState) isState(path string) bool {
	return strings.HasPrefix(path, st.prefix+stateDirName+"/")
}

// changedFiles counts the files under dir that differ between two states
// of the tree: files changed, created, deleted or reverted in the working
// tree, and the files of any commits made in between.
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
		// Like status, diff and show print paths from the top of the
		// repository; "-- ." keeps to what is under dir.
		args := []string{"show", "-z", "--name-only", "--format=", after.head, "--", "."} // the first commit
		if before.head != "" {
			args = []string{"diff", "-z", "--name-only", before.head, after.head, "--", "."}
		}
		if out, err := git(dir, args...); err == nil {
			for _, path := range strings.Split(out, "\x00") {
				if path != "" && !after.isState(path) {
					changed[path] = true
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

// planCounts reads a markdown task list (ralph-claude-code's
// fix_plan.md): "- [x]" items are done, "- [ ]" items remain.
func planCounts(path string) (done, remaining int, err error) {
	p, err := readPlan(path)
	return p.done, p.remaining, err
}

// plan is what a markdown task list says.
type plan struct {
	done, remaining int
	// next is the text of the first item that remains ("- [ ] logout"
	// gives "logout"): the task the agent works on next, as
	// ralph-claude-code's prompt asks it to take the plan's first open
	// item.
	next string
	// open are the texts of the items that remain, in order, the first
	// maxPlanItems of them: a skipped task's successor is among them.
	open []string
}

// maxPlanItems bounds the open items a plan keeps.
const maxPlanItems = 1000

// readPlan reads a markdown task list: "- [x]" (or "* [x]") items are
// done, "- [ ]" items remain.
func readPlan(path string) (plan, error) {
	var p plan
	data, err := os.ReadFile(path)
	if err != nil {
		return p, err
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
				p.done++
			case strings.HasPrefix(rest, "[ ]"):
				p.remaining++
				item := strings.TrimSpace(rest[len("[ ]"):])
				if p.next == "" {
					p.next = item
				}
				if len(p.open) < maxPlanItems {
					p.open = append(p.open, item)
				}
			}
		}
	}
	return p, nil
}
