package loopbreaker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Store keeps one snapshot per loop, named by the host, so that a loop that
// restarts remembers that it was stuck. Implementations must be safe for
// concurrent use.
type Store interface {
	// Load returns loop's last snapshot: an error matching [ErrNoState]
	// when none was saved, [ErrCorruptState] for one that cannot be used
	// (and kept as it is), neither when it could not be read.
	Load(ctx context.Context, loop string) (Snapshot, error)
	// Save replaces loop's snapshot whole: a concurrent Load sees the old
	// one or the new, never a mix; of concurrent Saves the last wins.
	Save(ctx context.Context, loop string, s Snapshot) error
}

// FileStore is a Store that keeps each loop's snapshot in its own JSON file,
// <dir>/<loop>.json, written atomically: a crash or a concurrent writer
// never leaves a half-written file, and of two writers the last wins.
type FileStore struct {
	dir string

	// For tests: the clock that names aside files (nil: time.Now), and a
	// call between MoveAside's check and its rename.
	now             func() time.Time
	beforeMoveAside func()
}

// NewFileStore returns a store that keeps its files in dir, made on the
// first Save. An empty dir is the current directory.
func NewFileStore(dir string) *FileStore {
	if dir == "" {
		dir = "."
	}
	return &FileStore{dir: dir}
}

// maxLoopName bounds a loop name, so that the file names made of it fit
// every file system.
const maxLoopName = 128

// Path returns the state file of loop, <dir>/<loop>.json. A loop name is 1
// to 128 ASCII letters, digits, '.', '_' or '-', not starting with '.', and
// not a Windows device name (CON, NUL, COM1, ...); any other name is an
// error matching [ErrInvalidLoopName].
func (s *FileStore) Path(loop string) (string, error) {
	if loop == "" || len(loop) > maxLoopName || loop[0] == '.' {
		return "", fmt.Errorf("%w %q: 1 to %d characters, not starting with '.'", ErrInvalidLoopName, loop, maxLoopName)
	}
	for i := 0; i < len(loop); i++ {
		c := loop[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return "", fmt.Errorf("%w %q: only ASCII letters, digits, '.', '_' and '-'", ErrInvalidLoopName, loop)
		}
	}
	if windowsDevice(loop) {
		return "", fmt.Errorf("%w %q: Windows takes it for a device", ErrInvalidLoopName, loop)
	}
	return filepath.Join(s.dir, loop+".json"), nil
}

// windowsDevice reports whether Windows opens a device for a file named
// loop+".json": the part before the first '.' is a reserved device name.
func windowsDevice(loop string) bool {
	stem, _, _ := strings.Cut(loop, ".")
	switch len(stem) {
	case 3:
		stem = strings.ToUpper(stem)
		return stem == "CON" || stem == "PRN" || stem == "AUX" || stem == "NUL"
	case 4:
		prefix := strings.ToUpper(stem[:3])
		return (prefix == "COM" || prefix == "LPT") && '0' <= stem[3] && stem[3] <= '9'
	}
	return false
}

// Load reads and validates loop's snapshot. A missing file matches
// [ErrNoState] and fs.ErrNotExist; an invalid one, or one larger than
// [MaxStateFileSize], is a [*StateError] with its path matching
// [ErrCorruptState]; a newer one matches [ErrNewerState]; a read error is
// returned as it is. The file is never moved.
func (s *FileStore) Load(ctx context.Context, loop string) (Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return Snapshot{}, err
	}
	path, err := s.Path(loop)
	if err != nil {
		return Snapshot{}, err
	}
	snap, err := readSnapshot(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Snapshot{}, fmt.Errorf("%w for loop %q: %w", ErrNoState, loop, err)
	}
	if err != nil && !errors.Is(err, ErrCorruptState) && !errors.Is(err, ErrNewerState) {
		return Snapshot{}, fmt.Errorf("loopbreaker: load state of loop %q: %w", loop, err)
	}
	return snap, err
}

// MaxStateFileSize bounds a state file: Load refuses a larger one as
// corrupt without reading it, and Save does not write one.
const MaxStateFileSize = 64 << 20

// readSnapshot reads and parses the state file at path, reading no more
// than [MaxStateFileSize] bytes of it. A parse error carries the path.
func readSnapshot(path string) (Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return Snapshot{}, err
	}
	defer f.Close()
	tooLarge := func(size int64) error {
		return &StateError{Path: path, Err: fmt.Errorf("%d bytes or more, larger than a state file may be (%d)", size, MaxStateFileSize)}
	}
	if fi, err := f.Stat(); err != nil {
		return Snapshot{}, err
	} else if fi.Size() > MaxStateFileSize {
		return Snapshot{}, tooLarge(fi.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxStateFileSize+1))
	if err != nil {
		return Snapshot{}, err
	}
	if len(data) > MaxStateFileSize { // it grew since Stat
		return Snapshot{}, tooLarge(int64(len(data)))
	}
	snap, err := ParseSnapshot(data)
	var bad *StateError
	if errors.As(err, &bad) {
		bad.Path = path
	}
	return snap, err
}

// Save validates snap (an invalid one is an error matching
// [ErrCorruptState]) and writes it atomically as loop's state file. On an
// error the previous file is untouched, except when only the final
// directory sync failed. It removes temporary files that crashed Saves of
// the loop left, once they are a minute old.
func (s *FileStore) Save(ctx context.Context, loop string, snap Snapshot) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	path, err := s.Path(loop)
	if err != nil {
		return err
	}
	if err := snap.Validate(); err != nil {
		return err
	}
	fail := func(err error) error { return fmt.Errorf("loopbreaker: save state of loop %q: %w", loop, err) }
	data, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		return fail(err)
	}
	if len(data)+1 > MaxStateFileSize {
		return fail(fmt.Errorf("the snapshot takes %d bytes, more than a state file may hold (%d)", len(data)+1, MaxStateFileSize))
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fail(err)
	}
	if err := writeFileAtomic(path, append(data, '\n')); err != nil {
		return fail(err)
	}
	s.removeStaleTemps(path)
	return nil
}

// staleTempAge is how old a temporary file of a Save must be before a
// later Save removes it as left by a writer that crashed: far longer than
// any Save takes.
const staleTempAge = time.Minute

// tempPattern returns the pattern of the temporary files that Saves of the
// state file at path write.
func tempPattern(path string) string {
	dir, name := filepath.Split(path)
	return filepath.Join(dir, "."+name+".tmp-*")
}

// removeStaleTemps removes the temporary files that Saves of the state file
// at path left when their process died before the rename (a crash, a
// SIGKILL): only this loop's, only those older than staleTempAge, and,
// where the system has advisory locks, only those no live writer holds
// locked. Nothing it fails to remove is an error: the next Save tries
// again.
func (s *FileStore) removeStaleTemps(path string) {
	names, _ := filepath.Glob(tempPattern(path))
	now := time.Now
	if s.now != nil {
		now = s.now
	}
	for _, name := range names {
		fi, err := os.Lstat(name)
		if err != nil || !fi.Mode().IsRegular() || now().Sub(fi.ModTime()) < staleTempAge {
			continue
		}
		removeUnlocked(name)
	}
}

// writeFileAtomic writes data to path through a synced temporary file in
// the same directory, renamed over path, and syncs the directory so that
// the rename survives a crash.
func writeFileAtomic(path string, data []byte) (err error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	lockWriting(f) // released when f is closed, or its process dies
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable. Windows cannot sync a directory,
// and makes renames durable by itself.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// MoveAside renames loop's corrupt state file to
// <loop>.json.corrupt-<UTC time> and returns the new path, so that the loop
// can start fresh and a person can look at the file. A valid or newer
// snapshot is not moved (an error matching [ErrNotCorrupt] or
// [ErrNewerState]); nor is a missing or unreadable file. It never replaces
// another file, and is safe against other processes.
func (s *FileStore) MoveAside(loop string) (string, error) {
	path, err := s.Path(loop)
	if err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("loopbreaker: move aside state of loop %q: %w", loop, err)
	}
	if err := corrupt(path); errors.Is(err, ErrNotCorrupt) {
		return fail(fmt.Errorf("%s holds a valid snapshot: %w", path, err))
	} else if err != nil {
		return fail(err)
	}
	aside, err := s.reserveAside(path)
	if err != nil {
		return fail(err)
	}
	if s.beforeMoveAside != nil {
		s.beforeMoveAside()
	}
	if err := os.Rename(path, aside); err != nil {
		os.Remove(aside)
		return fail(err)
	}
	// A Save may have replaced the file since it was checked.
	if err := corrupt(aside); err != nil {
		return fail(putBack(aside, path, err))
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return aside, fmt.Errorf("loopbreaker: move aside state of loop %q: %w", loop, err)
	}
	return aside, nil
}

// corrupt returns nil when the file at path is one Load refuses as corrupt;
// otherwise the error that reading it gave (a state of a newer version
// included), or [ErrNotCorrupt].
func corrupt(path string) error {
	_, err := readSnapshot(path)
	switch {
	case err == nil:
		return ErrNotCorrupt
	case errors.Is(err, ErrCorruptState):
		return nil
	}
	return err
}

// maxAsideTries bounds the search for a free aside name.
const maxAsideTries = 1000

// reserveAside creates an empty file under a name for path's aside copy
// that nothing else has, and returns the name. O_EXCL makes the creation
// fail when the name exists, however it came to.
func (s *FileStore) reserveAside(path string) (string, error) {
	now := time.Now
	if s.now != nil {
		now = s.now
	}
	base := path + ".corrupt-" + now().UTC().Format("20060102T150405.000000000Z")
	name := base
	for i := 1; i <= maxAsideTries; i++ {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			return name, f.Close()
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		name = base + "-" + strconv.Itoa(i)
	}
	return "", fmt.Errorf("no free name after %s: %d taken", base, maxAsideTries)
}

// putBack returns the file moved to aside, which turned out not to be
// corrupt (why says what it is), to path, and returns an error that wraps
// why. A hard link never replaces a file a newer Save put at path; if
// there is one, the copy at aside is older and goes, as a Save would have
// replaced it. Without hard links, a rename puts it back.
func putBack(aside, path string, why error) error {
	err := os.Link(aside, path)
	switch {
	case err == nil || errors.Is(err, fs.ErrExist):
		err = os.Remove(aside)
	default:
		err = os.Rename(aside, path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf("%s was replaced since the check (%w), and putting it back from %s failed: %w", path, why, aside, err)
	}
	return fmt.Errorf("%s was replaced since the check, and is left in place: %w", path, why)
}

// NewFromStore returns a breaker for cfg with the state store holds for
// loop, and whether there was one. With nothing saved ([ErrNoState]) the
// breaker is fresh; any other error, a corrupt state included, is returned
// with no breaker. [FileStore.MoveAside] clears the way to start fresh.
func NewFromStore(ctx context.Context, cfg Config, store Store, loop string) (b *CircuitBreaker, restored bool, err error) {
	b, err = New(cfg)
	if err != nil {
		return nil, false, err
	}
	snap, err := store.Load(ctx, loop)
	if errors.Is(err, ErrNoState) {
		return b, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if err := b.Restore(snap); err != nil {
		return nil, false, err
	}
	return b, true, nil
}
