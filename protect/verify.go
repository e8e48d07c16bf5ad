package protect

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loopbreaker/loopbreaker"
)

// [ErrProtected] is matched (errors.Is) by the errors that say a protected
// path was lost ([IntegrityError]) or that a command line would lose one
// ([RefusalError]).
var ErrProtected = errors.New("protect: protected path")

// The ways a protected path is lost ([Loss.What]).
const (
	LossDeleted    = "deleted"    // it is gone
	LossEmptied    = "emptied"    // a file that had content has none
	LossChanged    = "changed"    // a read-only file's content, or a read-only link's target, changed
	LossReplaced   = "replaced"   // something of another kind is there: a directory where a file was
	LossUnreadable = "unreadable" // it cannot be looked at ([Loss.Why] says why)
)

// Loss is one protected path found lost.
type Loss struct {
	// Path is the path, relative to the Guard's root and "/"-separated; a
	// directory's ends in "/".
	Path string
	// What is what happened to it: [LossDeleted], [LossEmptied],
	// [LossChanged], [LossReplaced] or [LossUnreadable].
	What string
	// From is where [Guard.Restore] put it back from: "copy" (the Guard's
	// copy; for a directory or a link, what the Guard knew of it) or
	// "git" (the content git held for it, a file without a copy). Empty
	// when it was not put back, and after [Guard.Verify], which restores
	// nothing.
	From string
	// Why says what the Guard could not do: why the path cannot be looked
	// at, or why Restore did not put it back ("not restored: ..."). Empty
	// otherwise.
	Why string
}

// String returns e.g. "CLAUDE.md deleted, restored from its copy".
func (l Loss) String() string { return l.text(0) }

// text is String, with the number of files in a deleted directory that
// were restored along with it.
func (l Loss) text(inside int) string {
	s := l.Path + " " + l.What
	if inside > 0 {
		s += fmt.Sprintf(" with the %d %s in it", inside, plural(inside, "file"))
	}
	switch {
	case l.From == "copy" && (strings.HasSuffix(l.Path, "/") || inside > 0):
		s += ", restored"
	case l.From == "copy":
		s += ", restored from its copy"
	case l.From == "git":
		s += ", restored from git"
	}
	if l.Why != "" {
		s += ": " + l.Why
	}
	return s
}

// IntegrityError says which protected paths were lost, and what
// [Guard.Restore] did about each. It matches [ErrProtected].
type IntegrityError struct {
	// Lost holds the paths lost, in path order (a directory before what
	// it held).
	Lost []Loss
}

func (e *IntegrityError) Error() string {
	return "protect: protected files lost: " + summarize(e.Lost)
}

// Is makes every IntegrityError match [ErrProtected].
func (e *IntegrityError) Is(target error) bool { return target == ErrProtected }

// maxListed bounds the losses a summary lists one by one.
const maxListed = 10

// summarize lists the losses, each file of a deleted directory that came
// back with it counted in the directory's line, at most maxListed of them.
func summarize(lost []Loss) string {
	type line struct {
		loss   Loss
		inside int
	}
	var lines []line
	dir := -1 // the line of the deleted directory the next losses may lie in
	for _, l := range lost {
		if dir >= 0 {
			d := lines[dir].loss
			if strings.HasPrefix(l.Path, d.Path) && l.What == LossDeleted && l.From == d.From && l.Why == d.Why {
				if !strings.HasSuffix(l.Path, "/") {
					lines[dir].inside++
				}
				continue
			}
			if !strings.HasPrefix(l.Path, d.Path) {
				dir = -1
			}
		}
		lines = append(lines, line{loss: l})
		if strings.HasSuffix(l.Path, "/") && l.What == LossDeleted && dir < 0 {
			dir = len(lines) - 1
		}
	}
	var parts []string
	for i, ln := range lines {
		if i == maxListed {
			parts = append(parts, fmt.Sprintf("and %d more", len(lines)-i))
			break
		}
		parts = append(parts, ln.loss.text(ln.inside))
	}
	return strings.Join(parts, "; ")
}

// Verify compares the protected paths with the state the Guard last took
// stock of, and returns an *IntegrityError (matching [ErrProtected]) that
// lists what was lost: a file, link or directory deleted (a directory's
// files each count), a file emptied, a read-only file changed, something
// of another kind in a path's place, a path that cannot be looked at. It
// returns nil when all is intact. Editing a protected file that is not
// read-only is no loss. Verify changes nothing; it reads only the
// read-only files whose size or modification time changed.
func (g *Guard) Verify() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.remember(g.check())
}

// Restore verifies the protected paths as Verify does and puts back what
// was deleted or emptied: a directory is made again, a link pointed where
// it pointed, a file written from its copy, or, for a file too large to
// copy, from the content git held for it when the Guard last took stock
// (when git held exactly that content). A file that exists is never
// written over, but for an emptied one, which has nothing to lose. Each
// file comes back with its mode and modification time. Nothing is written
// outside the root, nor through a folder that is now a link or a file
// (specs/ moved away and a link to another directory in its place): what
// lies under it is reported not restored. It returns what
// Verify would, with what was done about each loss ([Loss.From],
// [Loss.Why]), and nil when nothing was lost.
func (g *Guard) Restore() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.remember(g.restore())
}

// LastLoss returns what the last Verify or Restore (the breaker's own
// included) found lost, and what Restore did about it; nil when the
// protected paths were intact then, or before the first. It is a copy.
func (g *Guard) LastLoss() *IntegrityError {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lastLoss == nil {
		return nil
	}
	return &IntegrityError{Lost: slices.Clone(g.lastLoss.Lost)}
}

// remember keeps lost as the last loss and returns it as an error.
func (g *Guard) remember(lost []Loss) error {
	if len(lost) == 0 {
		g.lastLoss = nil
		return nil
	}
	g.lastLoss = &IntegrityError{Lost: lost}
	return &IntegrityError{Lost: slices.Clone(lost)}
}

// AfterIteration is what a breaker does with its Guard after each
// recorded iteration ([loopbreaker.Guard]): it restores what was lost, as
// Restore does, or, when nothing was, takes stock and refreshes the
// copies, as Refresh does. One lock covers both, so nothing lost between
// them is taken as intact. It returns how many paths were lost and the
// summary the breaker's reason gives ("CLAUDE.md deleted, restored from
// its copy"); 0 and "" when nothing was. The errors of the refresh are
// left to a host that calls Refresh itself.
func (g *Guard) AfterIteration() (lost int, summary string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	losses := g.restore()
	_ = g.remember(losses)
	if len(losses) > 0 {
		return len(losses), summarize(losses)
	}
	_ = g.takeStock()
	_ = g.writeCopies()
	return 0, ""
}

// A Guard is what the breaker's Config.Guard takes.
var _ loopbreaker.Guard = (*Guard)(nil)

// check lists the losses, in path order. Called with g.mu held.
func (g *Guard) check() []Loss {
	var lost []Loss
	for _, e := range g.entries {
		var l Loss
		info, err := os.Lstat(e.file)
		switch {
		case errors.Is(err, fs.ErrNotExist) || isNotDir(err):
			l.What = LossDeleted
		case err != nil:
			l.What, l.Why = LossUnreadable, "cannot be looked at: "+unwrapPath(err).Error()
		case kindOf(info) == nil || *kindOf(info) != e.kind:
			l.What = LossReplaced
		case e.kind == kindFile && e.info.Size() > 0 && info.Size() == 0:
			l.What = LossEmptied
		case e.readOnly && g.changed(e, info):
			l.What = LossChanged
		default:
			continue
		}
		l.Path = e.display()
		lost = append(lost, l)
	}
	slices.SortFunc(lost, func(a, b Loss) int { return strings.Compare(a.Path, b.Path) })
	return lost
}

// display is the entry's path as a Loss gives it.
func (e *guardEntry) display() string {
	if e.kind == kindDir {
		return e.path + "/"
	}
	return e.path
}

// unwrapPath returns the cause of a *fs.PathError, the path being said
// already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// changed reports whether a read-only entry's content changed: a file
// whose size or time changed is read and its sum compared.
func (g *Guard) changed(e *guardEntry, info fs.FileInfo) bool {
	switch e.kind {
	case kindLink:
		target, err := os.Readlink(e.file)
		return err != nil || target != e.target
	case kindFile:
		if sameStat(e.info, info) {
			return false
		}
		if !e.summed {
			return true // its content was never known: any change counts
		}
		var now guardEntry
		var errs []error
		now.hash(e.file, &errs)
		return !now.summed || now.sum != e.sum
	}
	return false
}

// restore verifies and puts back what it can, inside the root only.
// Called with g.mu held.
func (g *Guard) restore() []Loss {
	lost := g.check()
	var r *os.Root
	var rootErr error
	for i := range lost {
		l := &lost[i]
		e := g.byPath[strings.TrimSuffix(l.Path, "/")]
		switch l.What {
		case LossDeleted, LossEmptied:
			if r == nil && rootErr == nil {
				r, rootErr = g.openRoot()
			}
			if rootErr != nil {
				l.Why = "not restored: " + rootErr.Error()
				continue
			}
			g.putBack(r, e, l)
		case LossChanged, LossReplaced:
			l.Why = "not restored: something is there, and a Guard never writes over it"
		}
	}
	if r != nil {
		r.Close()
	}
	return lost
}

// putBack restores one entry that was deleted or emptied, through r, the
// root: never through a folder the agent replaced with a link.
func (g *Guard) putBack(r *os.Root, e *guardEntry, l *Loss) {
	err := realDirs(r, path.Dir(e.path), 0o755)
	if err == nil {
		name := filepath.FromSlash(e.path)
		switch e.kind {
		case kindDir:
			err = r.Mkdir(name, e.info.Mode().Perm())
			switch {
			case err == nil:
				_ = r.Chmod(name, e.info.Mode().Perm())
			case errors.Is(err, fs.ErrExist):
				err = realDirs(r, e.path, 0o755) // made meanwhile: a folder, or refused
			}
		case kindLink:
			err = r.Symlink(e.target, name)
		case kindFile:
			data, from, why := g.content(e)
			if from == "" {
				l.Why = "not restored: " + why
				return
			}
			if err = writeRestored(r, e.path, data, e.info, l.What == LossEmptied); err == nil {
				l.From = from
				return
			}
		}
	}
	if err != nil {
		l.Why = "not restored: " + unwrapPath(err).Error()
		return
	}
	l.From = "copy"
}

// content returns the content a lost file is restored with, and where it
// comes from; "" and why not when there is none.
func (g *Guard) content(e *guardEntry) (data []byte, from, why string) {
	if e.copied {
		return e.data, "copy", ""
	}
	if e.gitBlob != "" {
		if data, err := g.gitBlobContent(e.gitBlob, e.path); err == nil && (!e.summed || sha256.Sum256(data) == e.sum) {
			return data, "git", ""
		}
	}
	if g.maxBytes < 0 {
		return nil, "", "no copies are kept (MaxBackupBytes is negative), and git held no commit of it as it was"
	}
	return nil, "", fmt.Sprintf("it had no copy (the copies may take %s in all), and git held no commit of it as it was", formatBytes(g.maxBytes))
}

// formatBytes writes a byte count the way people read it: 16 MiB, 512 KiB.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
