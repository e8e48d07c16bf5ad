package protect

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"strings"
	"sync"

	"github.com/loopbreaker/loopbreaker/protect/internal/cmdcheck"
)

// A Guard asks git two things: what content it holds for a protected file
// too large to copy (so that the file can come back from git), and, for the
// command check, which protected paths are tracked, modified, untracked or
// ignored (git clean removes only untracked files, git rm only tracked
// ones...). Outside a git repository, or without git, it asks nothing.

// runGit runs git in dir and returns its standard output. Optional locks
// are off: the agent's own git commands must not find the index locked.
func runGit(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, fmt.Errorf("git %s: %w: %s", args[0], err, firstLineOf(msg))
		}
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	return out.Bytes(), nil
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// gitWhere returns the top of the work tree the root is in ("/"-separated)
// and the root's path in it ("" or "sub/dir/"). Outside a work tree top is
// ""; without git, the error says so.
func (g *Guard) gitWhere() (top, prefix string, err error) {
	out, err := runGit(g.root, "rev-parse", "--show-toplevel", "--show-prefix")
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return "", "", nil // not a work tree (or a bare repository)
		}
		return "", "", err
	}
	top, prefix, _ = strings.Cut(strings.TrimSuffix(string(out), "\n"), "\n")
	return slashAbs(top), prefix, nil
}

// findGitBlobs records, for files without a copy, git's blob id of their
// content when HEAD holds exactly that content: such a file can come back
// from git. Nothing is recorded when git cannot tell.
func (g *Guard) findGitBlobs(entries []*guardEntry) {
	top, prefix, err := g.gitWhere()
	if err != nil || top == "" {
		return
	}
	args := []string{"hash-object", "--"}
	for _, e := range entries {
		args = append(args, e.file)
	}
	out, err := runGit(g.root, args...)
	if err != nil {
		return // a file gone meanwhile: it is asked about at the next refresh
	}
	worktree := strings.Fields(string(out))
	if len(worktree) != len(entries) {
		return
	}
	args = []string{"--literal-pathspecs", "ls-tree", "-r", "-z", "HEAD", "--"}
	for _, e := range entries {
		args = append(args, prefix+e.path)
	}
	out, err = runGit(fromSlashAbs(top), args...)
	if err != nil {
		return // no HEAD yet
	}
	head := map[string]string{}
	for _, rec := range strings.Split(string(out), "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 && f[1] == "blob" {
			head[p] = f[2]
		}
	}
	for i, e := range entries {
		if id := head[prefix+e.path]; id != "" && id == worktree[i] {
			e.gitBlob = id
		}
	}
}

// gitBlobContent returns the content of a blob as the work tree holds it
// at rel (git's filters and line-ending conversion applied, as a checkout
// would). The blob stays in git's object store after HEAD moves on, so a
// file committed and then deleted comes back too.
func (g *Guard) gitBlobContent(id, rel string) ([]byte, error) {
	top, prefix, err := g.gitWhere()
	if err != nil || top == "" {
		return nil, errors.New("not in a git work tree")
	}
	return runGit(fromSlashAbs(top), "cat-file", "--filters", "--path="+prefix+rel, id)
}

// gitStatus answers the command check's question: what does git hold at
// a protected path? It asks git once per command line, when the check
// first needs it (only git commands that remove files do), so the answer
// is as fresh as the command line it judges.
type gitStatus struct {
	g      *Guard
	once   sync.Once
	top    string // "/"-separated; "" outside a work tree
	prefix string // the root's path in the work tree: "" or "sub/dir/"
	paths  []gitPath
	err    error
}

// gitPath is a path that git status or ls-files reported.
type gitPath struct {
	segs  []string
	dir   bool // an ignored directory, reported as a whole
	state cmdcheck.GitState
}

// state is cmdcheck's Options.Git: the state of everything git holds at
// p (an absolute "/"-separated path, perhaps a pattern) or under it.
func (s *gitStatus) state(p string) (cmdcheck.GitState, error) {
	s.once.Do(s.load)
	if s.err != nil {
		return 0, s.err
	}
	if s.top == "" {
		return 0, nil // no work tree: git commands touch nothing
	}
	rel, ok := s.fromTop(p)
	if !ok {
		return 0, nil
	}
	var segs []string
	if rel != "" {
		segs = strings.Split(rel, "/")
	}
	var st cmdcheck.GitState
	for _, gp := range s.paths {
		if gitRelated(gp, segs) {
			st |= gp.state
		}
	}
	return st, nil
}

// fromTop returns p's path from the top of the work tree.
func (s *gitStatus) fromTop(p string) (string, bool) {
	for _, r := range s.g.shellRoots {
		if p == r {
			return strings.TrimSuffix(s.prefix, "/"), true
		}
		if rest, ok := strings.CutPrefix(p, r+"/"); ok {
			return s.prefix + rest, true
		}
	}
	top := escapeGlob(s.top)
	if p == top {
		return "", true
	}
	rest, ok := strings.CutPrefix(p, top+"/")
	return rest, ok
}

// gitRelated reports whether git's path gp is the path segs (a pattern),
// lies under it, or, for an ignored directory, holds it.
func gitRelated(gp gitPath, segs []string) bool {
	n := min(len(gp.segs), len(segs))
	for i := range n {
		if ok, _ := path.Match(segs[i], gp.segs[i]); !ok {
			return false
		}
	}
	return len(gp.segs) >= len(segs) || gp.dir
}

// load asks git for the tracked files and the status under the protected
// paths.
func (s *gitStatus) load() {
	s.top, s.prefix, s.err = s.g.gitWhere()
	if s.err != nil || s.top == "" {
		return
	}
	specs := s.g.gitPathspecs(s.prefix)
	dir := fromSlashAbs(s.top)
	out, err := runGit(dir, append([]string{"--literal-pathspecs", "ls-files", "-z", "--"}, specs...)...)
	if err != nil {
		s.err = err
		return
	}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			s.paths = append(s.paths, gitPath{segs: strings.Split(p, "/"), state: cmdcheck.Tracked})
		}
	}
	out, err = runGit(dir, append([]string{"--literal-pathspecs", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=matching", "--"}, specs...)...)
	if err != nil {
		s.err = err
		return
	}
	recs := strings.Split(string(out), "\x00")
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		if len(rec) < 4 {
			continue
		}
		xy, p := rec[:2], rec[3:]
		if xy[0] == 'R' || xy[0] == 'C' {
			i++ // the source of a rename or copy follows
		}
		gp := gitPath{segs: strings.Split(strings.TrimSuffix(p, "/"), "/"), dir: strings.HasSuffix(p, "/")}
		switch xy {
		case "??":
			gp.state = cmdcheck.Untracked
		case "!!":
			gp.state = cmdcheck.Ignored
		default:
			gp.state = cmdcheck.Tracked | cmdcheck.Modified
		}
		s.paths = append(s.paths, gp)
	}
}

// gitPathspecs returns where git is asked about: the leading literal part
// of each protected path (and of the backup directory), from the top of the
// work tree.
func (g *Guard) gitPathspecs(prefix string) []string {
	var specs []string
	for _, sp := range g.specs {
		var lit []string
		for _, seg := range sp.segs {
			if hasMeta(seg) {
				break
			}
			lit = append(lit, seg)
		}
		p := prefix + strings.Join(lit, "/")
		if p == "" {
			p = "."
		}
		specs = append(specs, strings.TrimSuffix(p, "/"))
	}
	if g.backupRel != "" {
		specs = append(specs, prefix+g.backupRel)
	}
	return specs
}
