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

// Store keeps one snapshot per loop, so that a loop that restarts does not
// forget that it was stuck. Loops are named by the host; a name means the
// same loop across restarts. Implementations must be safe for concurrent
// use.
type Store interface {
	// Load returns the snapshot last saved for loop. When nothing was
	// saved it returns an error matching [ErrNoState]: the loop starts
	// fresh. A saved state that cannot be used is an error matching
	// [ErrCorruptState], and the store keeps it as it is. Any other error
	// (the state could not be read) is neither.
	Load(ctx context.Context, loop string) (Snapshot, error)
	// Save replaces the snapshot of loop, whole: a concurrent Load, in
	// this process or another, sees the previous snapshot or this one,
	// never a mix. Of concurrent Saves, the last one wins.
	Save(ctx context.Context, loop string, s Snapshot) error
}

// FileStore is a Store that keeps each loop's snapshot in a JSON file of
// its own, <dir>/<loop>.json. Saves are atomic: the snapshot is written to
// a temporary file in the same directory, synced, renamed over the state
// file, and the directory is synced, so a crash or a concurrent writer
// (another goroutine or process) never leaves a half-written state file.
// It takes no lock: nothing reads, changes and writes back a file, each
// Save replaces it whole, and of two writers the last rename wins.
type FileStore struct {
	dir string

	// For tests: the clock that names aside files (nil: time.Now), and a
	// call between MoveAside's check and its rename.
	now             func() time.Time
	beforeMoveAside func()
}

// [NewFileStore] returns a store that keeps its files in dir. The directory
// is made (with its parents) on the first Save if it does not exist. An
// empty dir is the current directory, as the process finds it at each call.
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
// to 128 ASCII letters, digits, '.', '_' or '-', not starting with '.', so
// it can never name a file outside dir (no separator, no ".."). A name that
// Windows takes for a device (CON, PRN, AUX, NUL, COM0-9, LPT0-9, in any
// case, alone or before a '.') is refused on every system, so that a name
// means a file wherever the loop runs. Any other name is an error matching
// [ErrInvalidLoopName]. On a file system that ignores case (macOS, Windows by
// default), names that differ only in case name the same file: the same
// loop.
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

// Load reads and validates loop's snapshot. A missing file is an error
// matching [ErrNoState] (and fs.ErrNotExist). A file that is not a valid
// snapshot (see [ParseSnapshot]) is a *StateError with the file's
// path, matching [ErrCorruptState]; the file is left where it is, for the
// caller to refuse to go on (the safe default) or to call MoveAside and
// start fresh. A file larger than [MaxStateFileSize] is corrupt too, and is
// not read. A state written by a newer loopbreaker is an error matching
// [ErrNewerState], not corrupt: MoveAside leaves it alone. A file that
// cannot be read (permissions, I/O) is returned as that error, matching
// none of these: it may be fine, and is not moved.
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

// [MaxStateFileSize] bounds a state file: Load refuses a larger one as
// corrupt without reading it, and Save refuses to write one. A snapshot
// with every window full and 10,000 fingerprints in its error history
// takes about 0.6 MiB.
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

// Save validates snap (a snapshot that Load would refuse is not written:
// the error matches [ErrCorruptState]) and writes it atomically as loop's
// state file, making the directory if needed. An error before the new
// file is renamed into place leaves the previous state file untouched and
// no temporary file behind. The one error after it (syncing the directory,
// on systems that can) means the new file is in place and readable but a
// crash of the machine could still lose the rename. A snapshot whose JSON
// would take more than [MaxStateFileSize] is not written.
//
// A Save whose process died before its rename (a crash, SIGKILL) leaves its
// temporary file, .<loop>.json.tmp-*, behind. A later Save of the same loop
// removes such files once they are a minute old and, on systems with
// advisory file locks (Linux, macOS, the BSDs), only when no live writer
// holds them locked.
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

// MoveAside renames loop's state file to <loop>.json.corrupt-<time>, the
// time in UTC to the nanosecond (e.g.
// "agent.json.corrupt-20260119T090000.000000000Z", with "-1", "-2", ...
// added when that name is taken), and returns the new path, so that the
// loop can start fresh while the bad file is kept for a person to look at.
//
// Only a file that Load refuses as corrupt ([ErrCorruptState]) is moved. A
// valid snapshot is an error matching [ErrNotCorrupt] and stays where it is:
// it holds what the loop learned, and moving it would let a stuck loop
// start again as if it were not. A missing file is an error matching
// fs.ErrNotExist; a file that cannot be read is that error; neither moves
// anything.
//
// MoveAside is safe against other processes. The new name is reserved by
// creating it exclusively (O_EXCL), so it never replaces an existing file,
// not even one another MoveAside is making at the same moment; the rename
// that follows replaces only that reservation. Of two MoveAside calls at
// once, one moves the file and the other finds it missing. If a Save
// replaces the corrupt file after the check and before the rename, the
// file moved is a valid one: MoveAside puts it back (by a hard link, which
// never replaces a newer Save; by a rename where the file system has no
// hard links) and returns an error matching [ErrNotCorrupt]. A crash between
// the reservation and the rename can leave an empty reserved file.
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

// [NewFromStore] returns a breaker for cfg with the state that store holds
// for loop, and reports whether there was one. When nothing was saved
// ([ErrNoState]) the breaker is fresh and restored is false. Every other
// error, a corrupt state ([ErrCorruptState]) included, is returned with no
// breaker: a loop that was stuck must not silently start again as if it
// were not. To start fresh anyway, a FileStore's MoveAside keeps the bad
// file out of the way.
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
