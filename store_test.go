package loopbreaker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Kill and restart through a file: the new process finds the loop open,
// with its counts, and waits out the rest of the cooldown.
func TestFileStoreCarriesAnOpenCircuitAcrossARestart(t *testing.T) {
	ctx := context.Background()
	store := NewFileStore(filepath.Join(t.TempDir(), "state"))
	b, clock := tripped(t, Config{})
	require.NoError(t, store.Save(ctx, "agent-1", b.Snapshot()))

	clock.Advance(12 * time.Second)
	cfg := Config{Now: clock.Now}
	nb, restored, err := NewFromStore(ctx, cfg, store, "agent-1")
	require.NoError(t, err)
	assert.True(t, restored)
	d := nb.Check()
	assert.Equal(t, Open, d.State)
	assert.Equal(t, 18*time.Second, d.RetryAfter)
	assert.Equal(t, b.Stats().Failures.Counts, nb.Stats().Failures.Counts)
	assert.Equal(t, b.Stats().History, nb.Stats().History)
}

// A missing file is not corruption: the loop starts fresh.
func TestFileStoreMissingFileMeansAFreshBreaker(t *testing.T) {
	ctx := context.Background()
	store := NewFileStore(t.TempDir())
	_, err := store.Load(ctx, "new-loop")
	assert.ErrorIs(t, err, ErrNoState)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.NotErrorIs(t, err, ErrCorruptState)

	b, restored, err := NewFromStore(ctx, Config{}, store, "new-loop")
	require.NoError(t, err)
	assert.False(t, restored)
	assert.Equal(t, Closed, b.State())
}

// A corrupt file is refused, says where and what, and stays as it was.
func TestFileStoreRefusesACorruptFileAndKeepsIt(t *testing.T) {
	for name, bad := range map[string]string{
		"truncated":      `{"version": 1, "state": "OPEN", "reason": {"kind": "consecutive_fail`,
		"empty":          "",
		"only a newline": "\n",
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			store := NewFileStore(dir)
			path := filepath.Join(dir, "agent.json")
			require.NoError(t, os.WriteFile(path, []byte(bad), 0o600))

			_, err := store.Load(ctx, "agent")
			require.ErrorIs(t, err, ErrCorruptState)
			assert.NotErrorIs(t, err, ErrNoState)
			var corrupt *StateError
			require.ErrorAs(t, err, &corrupt)
			assert.Equal(t, path, corrupt.Path)
			assert.Contains(t, err.Error(), path)
			assert.Contains(t, err.Error(), "unexpected EOF")

			b, _, err := NewFromStore(ctx, Config{}, store, "agent")
			assert.ErrorIs(t, err, ErrCorruptState)
			assert.Nil(t, b, "no breaker: a stuck loop must not silently start again")
			kept, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, bad, string(kept))
		})
	}
}

// The caller who chooses to start fresh moves the bad file aside; it is
// kept under a new name for a person to look at.
func TestFileStoreMoveAsideLetsALoopStartFresh(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store := NewFileStore(dir)
	path := filepath.Join(dir, "agent.json")
	require.NoError(t, os.WriteFile(path, []byte("{{{"), 0o600))

	_, _, err := NewFromStore(ctx, Config{}, store, "agent")
	require.ErrorIs(t, err, ErrCorruptState)
	aside, err := store.MoveAside("agent")
	require.NoError(t, err)
	assert.Equal(t, dir, filepath.Dir(aside))
	assert.True(t, strings.HasPrefix(filepath.Base(aside), "agent.json.corrupt-"), aside)
	kept, err := os.ReadFile(aside)
	require.NoError(t, err)
	assert.Equal(t, "{{{", string(kept))

	b, restored, err := NewFromStore(ctx, Config{}, store, "agent")
	require.NoError(t, err)
	assert.False(t, restored)
	assert.Equal(t, Closed, b.State())

	// Moving aside twice in a row keeps both copies.
	require.NoError(t, os.WriteFile(path, []byte("[[["), 0o600))
	aside2, err := store.MoveAside("agent")
	require.NoError(t, err)
	assert.NotEqual(t, aside, aside2)
	_, err = store.MoveAside("agent")
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// fixedStore returns a FileStore in a new directory whose aside names all
// come from one instant, so that every MoveAside wants the same name.
func fixedStore(t *testing.T) (*FileStore, string, string) {
	t.Helper()
	dir := t.TempDir()
	store := NewFileStore(dir)
	now := testStart
	store.now = func() time.Time { return now }
	return store, dir, filepath.Join(dir, "agent.json.corrupt-20260119T090000.000000000Z")
}

// asideFiles returns the contents of the aside files in dir, by name.
func asideFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	files := map[string]string{}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".corrupt-") {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			files[e.Name()] = string(data)
		}
	}
	return files
}

// The aside name never replaces a file that has it already: the next
// free name is taken.
func TestFileStoreMoveAsideNeverReplacesAnExistingFile(t *testing.T) {
	store, dir, stamped := fixedStore(t)
	path := filepath.Join(dir, "agent.json")
	require.NoError(t, os.WriteFile(stamped, []byte("a person's notes"), 0o600))
	require.NoError(t, os.WriteFile(stamped+"-1", []byte("an earlier copy"), 0o600))

	require.NoError(t, os.WriteFile(path, []byte("{{{"), 0o600))
	aside, err := store.MoveAside("agent")
	require.NoError(t, err)
	assert.Equal(t, stamped+"-2", aside)
	require.NoError(t, os.WriteFile(path, []byte("[[["), 0o600))
	aside, err = store.MoveAside("agent")
	require.NoError(t, err)
	assert.Equal(t, stamped+"-3", aside)

	assert.Equal(t, map[string]string{
		filepath.Base(stamped):        "a person's notes",
		filepath.Base(stamped) + "-1": "an earlier copy",
		filepath.Base(stamped) + "-2": "{{{",
		filepath.Base(stamped) + "-3": "[[[",
	}, asideFiles(t, dir))
}

// Goroutines move the state file aside while another keeps writing new
// corrupt ones, all wanting the same aside name: each file moved lands
// under a name of its own, and no call replaces another's copy.
func TestFileStoreConcurrentMoveAsidesNeverClobber(t *testing.T) {
	store, dir, _ := fixedStore(t)
	path := filepath.Join(dir, "agent.json")
	const writes = 100
	writing := make(chan struct{})
	go func() {
		defer close(writing)
		for i := 0; i < writes; i++ {
			if err := writeFileAtomic(path, []byte("not json "+strconv.Itoa(i))); err != nil {
				panic(err)
			}
		}
	}()

	var mu sync.Mutex
	moved := map[string]bool{}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := false; !done; {
				select {
				case <-writing:
					done = true
				default:
				}
				aside, err := store.MoveAside("agent")
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				mu.Lock()
				assert.NoError(t, err)
				assert.False(t, moved[aside], "two calls returned %s", aside)
				moved[aside] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	files := asideFiles(t, dir)
	assert.Len(t, files, len(moved), "one file for each call that moved one")
	contents := map[string]bool{}
	for name, text := range files {
		assert.True(t, moved[filepath.Join(dir, name)], name)
		assert.True(t, strings.HasPrefix(text, "not json "), "%s holds %q", name, text)
		assert.False(t, contents[text], "%q moved twice", text)
		contents[text] = true
	}
	t.Logf("%d of %d files moved aside", len(moved), writes)
	assert.Positive(t, len(moved))
}

// A valid snapshot is not moved: it holds what the loop learned.
func TestFileStoreMoveAsideLeavesAValidSnapshotInPlace(t *testing.T) {
	ctx := context.Background()
	store, dir, _ := fixedStore(t)
	b, _ := tripped(t, Config{})
	require.NoError(t, store.Save(ctx, "agent", b.Snapshot()))
	path := filepath.Join(dir, "agent.json")
	before, err := os.Stat(path)
	require.NoError(t, err)

	_, err = store.MoveAside("agent")
	assert.ErrorIs(t, err, ErrNotCorrupt)
	assert.Contains(t, err.Error(), path)
	after, err := os.Stat(path)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "the file is not touched")
	assert.Empty(t, asideFiles(t, dir))
}

// A Save that replaces the corrupt file between MoveAside's check and its
// rename: the good file is put back, and nothing is left aside.
func TestFileStoreMoveAsidePutsBackAFileSavedSinceTheCheck(t *testing.T) {
	ctx := context.Background()
	store, dir, _ := fixedStore(t)
	path := filepath.Join(dir, "agent.json")
	require.NoError(t, os.WriteFile(path, []byte("{{{"), 0o600))
	b, _ := tripped(t, Config{})
	store.beforeMoveAside = func() { require.NoError(t, store.Save(ctx, "agent", b.Snapshot())) }

	_, err := store.MoveAside("agent")
	assert.ErrorIs(t, err, ErrNotCorrupt)
	snap, err := store.Load(ctx, "agent")
	require.NoError(t, err)
	assert.Equal(t, Open, snap.data.State)
	assert.Empty(t, asideFiles(t, dir))
}

// A file removed between the check and the rename: nothing to move, and
// the reserved name is given back.
func TestFileStoreMoveAsideOfAFileRemovedSinceTheCheck(t *testing.T) {
	store, dir, _ := fixedStore(t)
	path := filepath.Join(dir, "agent.json")
	require.NoError(t, os.WriteFile(path, []byte("{{{"), 0o600))
	store.beforeMoveAside = func() { require.NoError(t, os.Remove(path)) }

	_, err := store.MoveAside("agent")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// A state file that cannot be read is an error, but not corruption: it
// may be fine, and must not be moved aside as if it were bad.
func TestFileStoreUnreadableFileIsNeitherMissingNorCorrupt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.json")
	require.NoError(t, os.Mkdir(path, 0o700))
	store := NewFileStore(dir)
	_, err := store.Load(context.Background(), "agent")
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrNoState)
	assert.NotErrorIs(t, err, ErrCorruptState)
	assert.Contains(t, err.Error(), path)

	b, _, err := NewFromStore(context.Background(), Config{}, store, "agent")
	assert.Error(t, err)
	assert.Nil(t, b)
	_, err = store.MoveAside("agent")
	assert.Error(t, err)
	assert.DirExists(t, path, "not moved")
	assert.Empty(t, asideFiles(t, dir))
}

// An empty directory is the current one, as for the os package: Save,
// Load and MoveAside work there.
func TestFileStoreInTheCurrentDirectory(t *testing.T) {
	dir := t.TempDir()
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(dir))
	t.Cleanup(func() { require.NoError(t, os.Chdir(wd)) })

	ctx := context.Background()
	store := NewFileStore("")
	b, _ := tripped(t, Config{})
	require.NoError(t, store.Save(ctx, "agent", b.Snapshot()))
	snap, err := store.Load(ctx, "agent")
	require.NoError(t, err)
	assert.Equal(t, Open, snap.data.State)
	require.FileExists(t, filepath.Join(dir, "agent.json"))

	require.NoError(t, os.WriteFile("agent.json", []byte("{{{"), 0o600))
	aside, err := store.MoveAside("agent")
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(dir, filepath.Base(aside)))
}

// Loop names become file names: only safe ones are accepted.
func TestFileStoreRejectsUnsafeLoopNames(t *testing.T) {
	store := NewFileStore(t.TempDir())
	ctx := context.Background()
	for _, name := range []string{
		"", ".", "..", "../x", "..\\x", "a/../../b", "/etc/passwd", "a/b", `a\b`, "C:x", ".hidden", "a b", "a\x00b", "ü",
		strings.Repeat("x", 129), "NUL", "con", "Aux.v2", "com1", "LPT9.x",
	} {
		_, err := store.Path(name)
		assert.ErrorIs(t, err, ErrInvalidLoopName, "%q", name)
		assert.ErrorIs(t, store.Save(ctx, name, Snapshot{}), ErrInvalidLoopName, "%q", name)
		_, err = store.Load(ctx, name)
		assert.ErrorIs(t, err, ErrInvalidLoopName, "%q", name)
		_, err = store.MoveAside(name)
		assert.ErrorIs(t, err, ErrInvalidLoopName, "%q", name)
	}
	for _, name := range []string{"Agent_1.v2-x", "a..b", "x.", strings.Repeat("x", 128), "console", "nul_2", "com", "COM10", "lpt"} {
		path, err := store.Path(name)
		require.NoError(t, err, "%q", name)
		assert.Equal(t, filepath.Join(store.dir, name+".json"), path)
	}
}

// Save writes a private file, leaves no temporary file behind, and
// refuses a snapshot Load would refuse.
func TestFileStoreSaveIsPrivateTidyAndValid(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "made", "on", "demand")
	store := NewFileStore(dir)
	b, _ := tripped(t, Config{})
	require.NoError(t, store.Save(ctx, "agent", b.Snapshot()))
	require.NoError(t, store.Save(ctx, "agent", b.Snapshot()))

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	info, err := entries[0].Info()
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), info.Mode().Perm())

	snap := b.Snapshot()
	snap.data.TotalFailures = -1
	assert.ErrorIs(t, store.Save(ctx, "agent", snap), ErrCorruptState)
	got, err := store.Load(ctx, "agent")
	require.NoError(t, err)
	assert.Equal(t, 3, got.data.TotalFailures, "the previous file is untouched")

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, store.Save(cancelled, "agent", b.Snapshot()), context.Canceled)
	_, err = store.Load(cancelled, "agent")
	assert.ErrorIs(t, err, context.Canceled)
}

// saveHelperEnv names the directory the helper process saves into.
const saveHelperEnv = "LOOPBREAKER_SAVE_HELPER_DIR"

// Two processes save to the same state file many times while this one
// reads it: every read is a whole snapshot from one of them, never a mix.
func TestFileStoreSavesFromTwoProcessesNeverInterleave(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	var helpers []*exec.Cmd
	done := make(chan error, 2)
	for id := 1; id <= 2; id++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFileStoreSaveHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), saveHelperEnv+"="+dir, "LOOPBREAKER_SAVE_HELPER_ID="+strconv.Itoa(id))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		helpers = append(helpers, cmd)
		go func() {
			err := cmd.Wait()
			if err != nil {
				err = fmt.Errorf("%w: %s", err, out.String())
			}
			done <- err
		}()
	}

	store := NewFileStore(dir)
	reads, finished := 0, 0
	writers := map[int]bool{}
	for finished < len(helpers) {
		select {
		case err := <-done:
			require.NoError(t, err)
			finished++
			continue
		default:
		}
		snap, err := store.Load(context.Background(), "shared")
		if errors.Is(err, ErrNoState) {
			continue
		}
		require.NoError(t, err, "read %d", reads)
		reads++
		// Helper n saw each of its 1000 errors n times, over
		// 1000*n+n-1 iterations: a mix of two files would not add up.
		require.Len(t, snap.data.Errors, 1000)
		writer := snap.data.Errors[0].Count
		for _, e := range snap.data.Errors {
			require.Equal(t, writer, e.Count, "every entry is from the same writer")
		}
		require.Equal(t, 1000*writer+writer-1, snap.data.Iterations)
		writers[writer] = true
	}
	t.Logf("%d reads of whole snapshots from writers %v", reads, writers)
	assert.Positive(t, reads)
}

// TestFileStoreSaveHelperProcess is the writer that
// TestFileStoreSavesFromTwoProcessesNeverInterleave starts twice; run
// directly, it does nothing.
func TestFileStoreSaveHelperProcess(t *testing.T) {
	dir := os.Getenv(saveHelperEnv)
	if dir == "" {
		t.Skip("only runs as a helper process")
	}
	id, err := strconv.Atoi(os.Getenv("LOOPBREAKER_SAVE_HELPER_ID"))
	require.NoError(t, err)
	store := NewFileStore(dir)
	b, err := New(Config{Failures: FailureRules{MaxConsecutive: -1, MaxSameError: -1}})
	require.NoError(t, err)
	// Helper n sees each of 1000 errors n times, and n-1 successes: 1000
	// fingerprints make a file of many pages.
	for i := 0; i < 1000; i++ {
		for range id {
			b.RecordFailure("helper error " + letters(i))
		}
	}
	for range id - 1 {
		b.RecordSuccess()
	}
	for i := 0; i < 200; i++ {
		require.NoError(t, store.Save(context.Background(), "shared", b.Snapshot()))
	}
}

// letters spells n in letters, so that every n is an error of its own
// (Normalize replaces digits).
func letters(n int) string {
	var sb strings.Builder
	for {
		sb.WriteByte(byte('g' + n%20))
		n /= 20
		if n == 0 {
			return sb.String()
		}
	}
}

// A state file written by a newer loopbreaker, with a field this build
// does not know, is not corrupt: Load says it is newer, never that it is
// corrupt, and MoveAside leaves it where it is.
func TestFileStoreStateOfANewerVersionIsNotCorrupt(t *testing.T) {
	dir := t.TempDir()
	store := NewFileStore(dir)
	path, err := store.Path("agent")
	require.NoError(t, err)
	m := validSnapshotJSON(t)
	m["version"] = SnapshotVersion + 1
	m["spend"] = map[string]any{"usd": 1.5}
	data, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))

	_, err = store.Load(context.Background(), "agent")
	require.ErrorIs(t, err, ErrNewerState)
	assert.NotErrorIs(t, err, ErrCorruptState)
	var newer *StateError
	require.ErrorAs(t, err, &newer)
	assert.Equal(t, SnapshotVersion+1, newer.Newer)
	assert.Equal(t, path, newer.Path)
	assert.Contains(t, err.Error(), fmt.Sprintf("written by a newer loopbreaker (version %d", SnapshotVersion+1))
	assert.NotContains(t, err.Error(), "corrupt")

	_, _, err = NewFromStore(context.Background(), Config{}, store, "agent")
	assert.ErrorIs(t, err, ErrNewerState)

	_, err = store.MoveAside("agent")
	assert.ErrorIs(t, err, ErrNewerState)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, data, after, "the newer state is kept as it is")
}

// A file larger than any state file can be is refused as corrupt without
// being read whole, and is left untouched; Save never writes one.
func TestFileStoreRefusesAnOversizedFileUnread(t *testing.T) {
	dir := t.TempDir()
	store := NewFileStore(dir)
	path, err := store.Path("agent")
	require.NoError(t, err)
	b, _ := newTestBreaker(t, Config{})
	valid, err := json.Marshal(b.Snapshot())
	require.NoError(t, err)
	// A valid snapshot padded with white space past the bound: the JSON
	// decoder would accept it.
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = f.Write(valid)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(MaxStateFileSize+1))
	_, err = f.Seek(int64(len(valid)), io.SeekStart)
	require.NoError(t, err)
	_, err = f.Write(bytes.Repeat([]byte{' '}, 1<<20))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	allocBefore := mem.TotalAlloc
	_, err = store.Load(context.Background(), "agent")
	runtime.ReadMemStats(&mem)

	require.ErrorIs(t, err, ErrCorruptState)
	assert.Contains(t, err.Error(), "larger than a state file may be")
	assert.Less(t, mem.TotalAlloc-allocBefore, uint64(1<<20), "Load read the oversized file")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, int64(MaxStateFileSize+1), fi.Size(), "the file is left untouched")
}

// Temporary files of Saves whose process died are removed by a later Save
// once they are stale, but never one a live writer still holds, a fresh
// one, or another loop's.
func TestFileStoreSaveRemovesTempFilesOfCrashedSaves(t *testing.T) {
	dir := t.TempDir()
	store := NewFileStore(dir)
	clock := newFakeClock()
	store.now = clock.Now
	b, _ := newTestBreaker(t, Config{})
	old := clock.Now().Add(-2 * staleTempAge)

	crashed := filepath.Join(dir, ".agent.json.tmp-111")
	fresh := filepath.Join(dir, ".agent.json.tmp-222")
	held := filepath.Join(dir, ".agent.json.tmp-333")
	other := filepath.Join(dir, ".other.json.tmp-444")
	for _, name := range []string{crashed, fresh, held, other} {
		require.NoError(t, os.WriteFile(name, []byte(`{"version":`), 0o600))
		require.NoError(t, os.Chtimes(name, old, old))
	}
	require.NoError(t, os.Chtimes(fresh, clock.Now(), clock.Now()))
	writer, err := os.Open(held)
	require.NoError(t, err)
	defer writer.Close()
	lockWriting(writer) // a live writer, still writing

	require.NoError(t, store.Save(context.Background(), "agent", b.Snapshot()))

	assert.NoFileExists(t, crashed, "a stale temp file of a crashed Save is removed")
	assert.FileExists(t, fresh, "a fresh temp file may belong to a Save in progress")
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
		assert.FileExists(t, held, "a temp file a live writer holds is kept")
	}
	assert.FileExists(t, other, "another loop's temp files are not this Save's to remove")
}
