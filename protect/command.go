package protect

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/loopbreaker/loopbreaker/protect/internal/cmdcheck"
)

// RefusalError says why [Guard.CheckCommand] refused a command line. It
// matches [ErrProtected].
type RefusalError struct {
	// Command is the command of the line that would touch a protected
	// path, as written (in "cd build; rm -rf *", "rm -rf *").
	Command string
	// Path is the protected path it would touch, as the Guard's config
	// names it (relative to the root, "/"-separated; the backup directory's
	// absolute when it lies outside the root). Empty when the checker
	// cannot tell what the command touches.
	Path string
	// Reason says what the command would do to the path ("rm -rf removes
	// protected /repo/specs"), or what the checker cannot tell ("cannot
	// tell what $DIR holds, so cannot tell what rm -rf would remove").
	Reason string
}

func (e *RefusalError) Error() string {
	return fmt.Sprintf("protect: refused %q: %s", e.Command, e.Reason)
}

// Is makes every RefusalError match [ErrProtected].
func (e *RefusalError) Is(target error) bool { return target == ErrProtected }

// CheckCommand checks a shell command line before it runs, as a POSIX
// shell (bash) would run it in the directory dir (relative to the root, or
// absolute; "" is the root). It returns nil when nothing in it would
// delete, truncate, move or overwrite a protected path (or the backup
// directory), or edit a read-only one, and a *RefusalError (matching
// [ErrProtected]) for the first command that would.
//
// It parses the line as bash does (mvdan.cc/sh's parser: quotes,
// here-documents, ;, &&, ||, pipes, subshells, functions, loops, braces),
// follows the variables the line sets and its cds, runs nothing, and
// judges rm, rmdir, unlink, shred, mv, cp, rename, >, tee, truncate, dd,
// find -delete and -exec (against find's tests and the files the Guard
// protects), rsync, sed -i that empties or cuts a file, and git clean,
// rm, checkout, restore, reset --hard, stash, mv and switch, also through
// sudo, env, xargs, timeout, bash -c, eval, a shell reading echo's or
// printf's text from a pipe, and the like. A glob is matched against the
// protected paths, not the disk (rm *.md touches AGENTS.md), and a file
// that does not exist yet can be written. In a git work tree it asks
// git (once, when the line holds a git command that removes files) which
// protected paths are tracked, modified, untracked or ignored: git clean
// -fd in a tree whose protected files are tracked is allowed, git clean
// -fdx refuses when an ignored protected directory would go.
//
// Where it cannot tell whether a protected path is touched (a variable it
// has not seen set, $(...), xargs fed by anything but find or ls, a shell
// fed text it cannot know, a line it cannot parse), it refuses and says
// why. Other programs are not
// judged (make clean, a script, python -c): the integrity check after the
// iteration is the backstop. Links are not followed.
func (g *Guard) CheckCommand(cmdline, dir string) error {
	switch {
	case dir == "":
		dir = g.root
	case !filepath.IsAbs(dir):
		dir = filepath.Join(g.root, dir)
	}
	st := &gitStatus{g: g}
	opt := cmdcheck.Options{
		ReadOnly:   g.shellReadOnly,
		Stat:       statSlash,
		Git:        st.state,
		IgnoreCase: runtime.GOOS == "darwin" || runtime.GOOS == "windows",
		Files:      g.commandFiles,
	}
	if g.home != "" {
		opt.Env = map[string]string{"HOME": g.home}
	}
	sg, err := cmdcheck.New(g.shellProtected, opt)
	if err != nil {
		return err // the paths are made absolute in New: not reached
	}
	r := sg.Check(cmdline, slashAbs(filepath.Clean(dir)))
	if r == nil {
		return nil
	}
	p := r.Path
	if name, ok := g.shellNames[p]; ok {
		p = name
	}
	return &RefusalError{Command: r.Command, Path: p, Reason: r.Why}
}

// commandFiles lists the protected files, folders and links as the Guard
// last took stock of them, and the backup directory, under each form of
// the root, for find's tests.
func (g *Guard) commandFiles() []cmdcheck.File {
	g.mu.Lock()
	defer g.mu.Unlock()
	files := make([]cmdcheck.File, 0, (len(g.entries)+1)*len(g.roots))
	for _, r := range g.roots {
		for _, e := range g.entries {
			files = append(files, cmdcheck.File{Path: r + "/" + e.path, Type: "fdl"[e.kind]})
		}
		if g.backupRel != "" {
			files = append(files, cmdcheck.File{Path: r + "/" + g.backupRel, Type: 'd'})
		}
	}
	if g.backupRel == "" {
		files = append(files, cmdcheck.File{Path: slashAbs(g.backupDir), Type: 'd'})
	}
	return files
}

// statSlash is os.Stat on a "/"-separated absolute path.
func statSlash(p string) (fs.FileInfo, error) { return os.Stat(fromSlashAbs(p)) }

// escapeGlob makes the glob characters of a literal path literal.
func escapeGlob(p string) string {
	if !strings.ContainsAny(p, `*?[\`) {
		return p
	}
	var b strings.Builder
	for _, c := range p {
		if strings.ContainsRune(`*?[\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// prepareCommandCheck computes the absolute paths the command check
// protects: each protected path under each form of the root (as given,
// and with links resolved, since a command may name either), and the
// backup directory.
func (g *Guard) prepareCommandCheck() {
	g.shellNames = map[string]string{}
	for _, r := range g.roots {
		g.shellRoots = append(g.shellRoots, escapeGlob(r))
	}
	add := func(list *[]string, abs, name string) {
		abs = path.Clean(abs)
		if slices.Contains(*list, abs) {
			return
		}
		if _, named := g.shellNames[abs]; !named {
			g.shellNames[abs] = name
		}
		*list = append(*list, abs)
	}
	for _, sp := range g.specs {
		for _, r := range g.shellRoots {
			if sp.readOnly {
				add(&g.shellReadOnly, r+"/"+sp.path, sp.path)
			} else {
				add(&g.shellProtected, r+"/"+sp.path, sp.path)
			}
		}
	}
	if g.backupRel != "" {
		for _, r := range g.shellRoots {
			add(&g.shellProtected, r+"/"+escapeGlob(g.backupRel), g.backupRel)
		}
	} else {
		abs := slashAbs(g.backupDir)
		add(&g.shellProtected, escapeGlob(abs), abs)
	}
}
