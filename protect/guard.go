package protect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/loopbreaker/loopbreaker"
)

// DefaultMaxBackupBytes bounds the copies a Guard keeps of the protected
// files, in memory and in its backup directory, when
// [Config.MaxBackupBytes] is zero: 16 MiB in all.
const DefaultMaxBackupBytes = 16 << 20

// maxProtectedEntries bounds the files and directories a Guard protects;
// past it, Refresh reports an error and protects the first ones.
const maxProtectedEntries = 100_000

// DefaultPaths returns the paths a Guard protects when
// [Config.Protected] is nil: the loop's own state directory and
// superkit's list, relative to the root: .loopbreaker/, .ralphrc,
// IMPLEMENTATION_PLAN.md, AGENTS.md, specs/, .claude/, CLAUDE.md and
// memory/. Each call returns a new slice.
func DefaultPaths() []string {
	return []string{
		".loopbreaker/",
		".ralphrc",
		"IMPLEMENTATION_PLAN.md",
		"AGENTS.md",
		"specs/",
		".claude/",
		"CLAUDE.md",
		"memory/",
	}
}

// Config says what a Guard protects and where it keeps its copies.
// Its zero value protects [DefaultPaths] with copies of up to 16
// MiB in .loopbreaker/protected.
//
// Paths are relative to the Guard's root (an absolute path must lie inside
// it), with / or the system's separator. A path names a file, a link (which
// is protected as a link, not what it points to) or a directory, which is
// protected with everything in it; a trailing / changes nothing. A path
// that does not exist protects nothing until it appears. The glob
// characters * ? [...] make a pattern, as in [path.Match]: * matches any
// name, dot files too, but does not cross a /; specs/*.md protects the
// Markdown files in specs/ that exist when the Guard last took stock
// ([Guard.Refresh]), and one that appears later from the next refresh on.
type Config struct {
	// Protected lists the paths to protect. Nil means
	// [DefaultPaths]; an empty, non-nil list protects only the
	// ReadOnly paths.
	Protected []string

	// ReadOnly lists paths that must not even change. They are protected
	// as the Protected paths are, and a change to their content (or a
	// link's target) is a loss too. Editing any other protected file is
	// not: the agent is meant to update its plan, not delete it.
	ReadOnly []string

	// Exclude lists paths inside protected ones that are not checked or
	// copied: what the host itself creates and deletes (logs, temporary
	// files). CheckCommand still refuses rm and mv of them, as they lie
	// in a protected path; find's tests are matched only against the
	// files the Guard protects, which they are not.
	Exclude []string

	// BackupDir is the directory the copies are kept in, relative to the
	// root or absolute; not the root, nor a directory that holds it. Empty
	// means .loopbreaker/protected in the root. It is never checked or
	// copied itself, and CheckCommand refuses to delete it.
	BackupDir string

	// MaxBackupBytes bounds the copies in all, in bytes: files are copied
	// in the order of the paths above until the next would pass the
	// bound, and a larger one is not copied (a loss of it can be restored
	// only from git). Zero means [DefaultMaxBackupBytes]; negative: no
	// copies.
	MaxBackupBytes int64
}

// Guard keeps a loop's protected files from its agent. It knows the
// protected paths as they were when it last took stock (New,
// [Guard.Refresh]), and keeps a copy of each file, within a bound, in memory
// and in a backup directory. [Guard.Verify] tells which of them were lost
// since (deleted, emptied, or, for read-only ones, changed),
// [Guard.Restore] puts them back, and [Guard.CheckCommand] refuses a shell
// command line that would delete, truncate or move one before it runs.
//
// The check is stat-based: Verify reads no file that kept its size and
// modification time. A Guard is safe for concurrent use; its methods
// serialize on the Guard's own lock, never on a breaker's.
type Guard struct {
	root      string      // absolute, in the system's form
	rootInfo  fs.FileInfo // the root when the Guard was made: writes go only there
	roots     []string    // root's "/"-separated absolute forms: as given, and with links resolved when that differs
	specs     []guardSpec
	exclude   [][]string // path segments of patterns
	backupDir string     // absolute, in the system's form
	backupRel string     // backupDir from the root, "/"-separated; "" when it lies outside
	maxBytes  int64      // negative: no copies
	home      string     // HOME, for ~ in command lines, "/"-separated

	// The command check's paths: absolute, "/"-separated, glob
	// characters of the root escaped (see prepareCommandCheck).
	shellRoots     []string
	shellProtected []string
	shellReadOnly  []string
	shellNames     map[string]string // each of the above → its name in the config

	mu       sync.Mutex
	entries  []*guardEntry // in the order of the specs, each directory before what it holds
	byPath   map[string]*guardEntry
	onDisk   map[string]diskCopy // the copies in backupDir, by path
	swept    bool                // stale copies of an earlier run were removed from backupDir
	lastLoss *IntegrityError
}

// guardSpec is one protected path, cleaned and split.
type guardSpec struct {
	path     string // relative, "/"-separated
	segs     []string
	readOnly bool
}

// entryKind is what a protected entry is.
type entryKind uint8

const (
	kindFile entryKind = iota
	kindDir
	kindLink
)

// guardEntry is one protected file, directory or link as it was when the
// Guard last took stock.
type guardEntry struct {
	path     string // relative, "/"-separated
	file     string // absolute, in the system's form
	kind     entryKind
	readOnly bool
	info     fs.FileInfo
	target   string // a link's target
	sum      [32]byte
	summed   bool   // sum holds the content's SHA-256
	data     []byte // the copy; nil when there is none
	copied   bool   // data is the copy (an empty file's copy is empty)
	gitBlob  string // for a file without a copy: git's blob id of its content, when git held it then
}

// New returns a Guard for the directory tree at root, with cfg (see
// [Config]). It takes stock of the protected paths (it reads the files
// it will keep copies of) but writes nothing: the first [Guard.Refresh]
// writes the copies to the backup directory and reports the paths it could
// not read. An invalid cfg is an error matching loopbreaker.ErrInvalidConfig that
// names the field; a root that is not a directory is an error too.
func New(root string, cfg Config) (*Guard, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("protect: guard root: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("protect: guard root %s is not a directory", abs)
	}
	g := &Guard{root: abs, rootInfo: info, maxBytes: cfg.MaxBackupBytes, byPath: map[string]*guardEntry{}, onDisk: map[string]diskCopy{}}
	g.roots = []string{slashAbs(abs)}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil && resolved != abs {
		g.roots = append(g.roots, slashAbs(resolved))
	}
	if g.maxBytes == 0 {
		g.maxBytes = DefaultMaxBackupBytes
	}
	if home, err := os.UserHomeDir(); err == nil {
		g.home = slashAbs(home)
	}

	var errs []error
	protected := cfg.Protected
	if protected == nil {
		protected = DefaultPaths()
	}
	for _, list := range []struct {
		field    string
		paths    []string
		readOnly bool
	}{{"Protected", protected, false}, {"ReadOnly", cfg.ReadOnly, true}, {"Exclude", cfg.Exclude, false}} {
		for i, p := range list.paths {
			clean, err := g.relPath(p)
			if err != nil {
				errs = append(errs, &loopbreaker.ConfigError{Field: fmt.Sprintf("protect.Config.%s[%d]", list.field, i), Value: p, Reason: err.Error()})
				continue
			}
			if list.field == "Exclude" {
				g.exclude = append(g.exclude, strings.Split(clean, "/"))
				continue
			}
			g.specs = append(g.specs, guardSpec{path: clean, segs: strings.Split(clean, "/"), readOnly: list.readOnly})
		}
	}
	backup := cfg.BackupDir
	if backup == "" {
		backup = filepath.Join(".loopbreaker", "protected")
	}
	if !filepath.IsAbs(backup) {
		backup = filepath.Join(abs, backup)
	}
	g.backupDir = filepath.Clean(backup)
	if up, err := filepath.Rel(g.backupDir, abs); err == nil && up != ".." && !strings.HasPrefix(filepath.ToSlash(up), "../") {
		errs = append(errs, &loopbreaker.ConfigError{Field: "protect.Config.BackupDir", Value: cfg.BackupDir, Reason: "must not be the root or hold it"})
	} else if rel, err := filepath.Rel(abs, g.backupDir); err == nil && !strings.HasPrefix(filepath.ToSlash(rel), "../") && rel != ".." {
		g.backupRel = filepath.ToSlash(rel)
		g.exclude = append(g.exclude, strings.Split(escapeGlob(g.backupRel), "/"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	g.prepareCommandCheck()
	g.mu.Lock()
	defer g.mu.Unlock()
	_ = g.takeStock() // what it cannot read, Refresh reports
	return g, nil
}

// relPath makes a protected path relative to the root, "/"-separated and
// clean, and checks that it is a valid pattern inside the root.
func (g *Guard) relPath(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	q := p
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(g.root, p)
		if err != nil {
			return "", errors.New("not inside the root " + g.root)
		}
		q = rel
	}
	q = path.Clean(filepath.ToSlash(q))
	switch {
	case q == ".":
		return "", errors.New("is the root itself: name the paths in it")
	case q == ".." || strings.HasPrefix(q, "../"):
		return "", errors.New("not inside the root " + g.root)
	}
	if _, err := path.Match(q, ""); err != nil {
		return "", fmt.Errorf("not a valid pattern: %w", err)
	}
	return q, nil
}

// abs returns the system path of a relative "/"-separated path.
func (g *Guard) abs(rel string) string {
	if rel == "" {
		return g.root
	}
	return filepath.Join(g.root, filepath.FromSlash(rel))
}

// slashAbs turns an absolute system path into the "/"-separated form the
// command check works in ("C:\x" becomes "/C:/x").
func slashAbs(p string) string {
	s := filepath.ToSlash(p)
	if !strings.HasPrefix(s, "/") {
		s = "/" + s
	}
	return s
}

// fromSlashAbs is slashAbs undone.
func fromSlashAbs(s string) string {
	if runtime.GOOS == "windows" && len(s) > 2 && s[0] == '/' && s[2] == ':' {
		s = s[1:]
	}
	return filepath.FromSlash(s)
}

// excluded reports whether rel lies in an excluded path (or the backup
// directory).
func (g *Guard) excluded(rel string) bool {
	if len(g.exclude) == 0 {
		return false
	}
	segs := strings.Split(rel, "/")
	for _, ex := range g.exclude {
		if segsUnder(segs, ex) {
			return true
		}
	}
	return false
}

// segsUnder reports whether the path segs is the pattern pat, or lies
// under a path pat matches.
func segsUnder(segs, pat []string) bool {
	if len(segs) < len(pat) {
		return false
	}
	for i, p := range pat {
		if ok, _ := path.Match(p, segs[i]); !ok {
			return false
		}
	}
	return true
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// expand returns the existing paths a spec names, in lexical order
// within each pattern segment. A literal spec is returned as it is, to be
// looked at by the caller.
func (g *Guard) expand(sp guardSpec) ([]string, error) {
	if !hasMeta(sp.path) {
		return []string{sp.path}, nil
	}
	cur := []string{""}
	var errs []error
	for _, seg := range sp.segs {
		var next []string
		for _, c := range cur {
			if !hasMeta(seg) {
				next = append(next, path.Join(c, seg))
				continue
			}
			ents, err := os.ReadDir(g.abs(c))
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrInvalid) && !isNotDir(err) {
					errs = append(errs, err)
				}
				continue
			}
			for _, e := range ents {
				if ok, _ := path.Match(seg, e.Name()); ok {
					next = append(next, path.Join(c, e.Name()))
				}
			}
		}
		cur = next
	}
	return cur, errors.Join(errs...)
}

// isNotDir reports whether err says a path is not a directory (a file
// where one of its parents was).
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// scanned is a path found when taking stock.
type scanned struct {
	path     string
	info     fs.FileInfo
	readOnly bool
}

// scan lists the protected files, directories and links that exist now,
// in the order of the specs, each directory before what it holds. It
// returns what it could not look at as errors.
func (g *Guard) scan() ([]scanned, error) {
	var out []scanned
	seen := map[string]int{}
	var errs []error
	full := false
	add := func(rel string, info fs.FileInfo, readOnly bool) {
		if i, ok := seen[rel]; ok {
			out[i].readOnly = out[i].readOnly || readOnly
			return
		}
		if len(out) >= maxProtectedEntries {
			full = true
			return
		}
		seen[rel] = len(out)
		out = append(out, scanned{path: rel, info: info, readOnly: readOnly})
	}
	for _, sp := range g.specs {
		paths, err := g.expand(sp)
		if err != nil {
			errs = append(errs, err)
		}
		for _, rel := range paths {
			if g.excluded(rel) {
				continue
			}
			info, err := os.Lstat(g.abs(rel))
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) && !isNotDir(err) {
					errs = append(errs, err)
				}
				continue
			}
			if kindOf(info) == nil {
				continue // a socket, a device: nothing to keep
			}
			add(rel, info, sp.readOnly)
			if !info.IsDir() {
				continue
			}
			top := g.abs(rel)
			err = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					if p != top {
						errs = append(errs, err)
					}
					return nil
				}
				if p == top {
					return nil
				}
				r, _ := filepath.Rel(top, p)
				sub := rel + "/" + filepath.ToSlash(r)
				if g.excluded(sub) {
					if d.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
				info, err := d.Info()
				if err != nil {
					if !errors.Is(err, fs.ErrNotExist) {
						errs = append(errs, err)
					}
					return nil
				}
				if kindOf(info) != nil {
					add(sub, info, sp.readOnly)
				}
				if full {
					return filepath.SkipAll
				}
				return nil
			})
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	if full {
		errs = append(errs, fmt.Errorf("more than %d protected paths: only the first are protected", maxProtectedEntries))
	}
	return out, errors.Join(errs...)
}

// kindOf returns the entry kind of info; nil for what a Guard does not keep.
func kindOf(info fs.FileInfo) *entryKind {
	k := kindFile
	switch m := info.Mode(); {
	case m.IsRegular():
	case m.IsDir():
		k = kindDir
	case m&fs.ModeSymlink != 0:
		k = kindLink
	default:
		return nil
	}
	return &k
}

// sameStat reports whether a path looks as it did: same kind, size and
// modification time.
func sameStat(a, b fs.FileInfo) bool {
	return a.Mode().Type() == b.Mode().Type() && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
