package protect

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Refresh takes stock of the protected paths as they are now and takes
// that as intact: files that appeared in a protected directory or that a
// protected pattern now matches are protected from now on, and files that
// are gone are no longer. The copies of new and changed files are taken
// (only those, found by size and modification time) and written to the
// backup directory, whose copies of files no longer protected are removed.
// Call it when the protected files are known to be as they should be:
// after an iteration that [Guard.Verify] found intact, or after a person
// has put things right.
//
// The error says what could not be looked at or copied (a path that
// cannot be read, a backup directory that cannot be written): the rest is
// protected all the same, and a copy that could not be written is still
// kept in memory.
func (g *Guard) Refresh() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	err := g.takeStock()
	return errors.Join(err, g.writeCopies())
}

// takeStock scans the protected paths and makes what it finds the state
// the next Verify compares with, copying new and changed files into
// memory within the bound. It writes nothing. Called with g.mu held.
func (g *Guard) takeStock() error {
	found, err := g.scan()
	errs := []error{err}
	budget := g.maxBytes
	entries := make([]*guardEntry, 0, len(found))
	byPath := make(map[string]*guardEntry, len(found))
	var askGit []*guardEntry
	for _, f := range found {
		e := &guardEntry{path: f.path, kind: *kindOf(f.info), readOnly: f.readOnly, info: f.info}
		old := g.byPath[f.path]
		if old != nil {
			e.file = old.file
		} else {
			e.file = g.abs(f.path)
		}
		same := old != nil && old.kind == e.kind && sameStat(old.info, f.info)
		switch e.kind {
		case kindLink:
			if same {
				e.target = old.target
			} else if e.target, err = os.Readlink(e.file); err != nil {
				errs = append(errs, err)
			}
		case kindFile:
			if same {
				e.sum, e.summed, e.data, e.copied, e.gitBlob = old.sum, old.summed, old.data, old.copied, old.gitBlob
			}
			if g.maxBytes >= 0 && f.info.Size() <= budget {
				if !e.copied {
					e.copy(e.file, budget, &errs)
				}
			} else if e.copied {
				e.data, e.copied = nil, false // another file took its place in the bound
			}
			if e.copied {
				budget -= int64(len(e.data))
				break
			}
			if e.readOnly && !e.summed {
				e.hash(e.file, &errs)
			}
			if e.gitBlob == "" {
				askGit = append(askGit, e)
			}
		}
		entries = append(entries, e)
		byPath[e.path] = e
	}
	if len(askGit) > 0 {
		g.findGitBlobs(askGit)
	}
	g.entries, g.byPath = entries, byPath
	return errors.Join(errs...)
}

// copy reads the file into memory as its copy, if it fits the budget left.
func (e *guardEntry) copy(file string, budget int64, errs *[]error) {
	data, err := os.ReadFile(file)
	if err != nil {
		*errs = append(*errs, err)
		return
	}
	e.sum, e.summed = sha256.Sum256(data), true
	e.gitBlob = ""
	if int64(len(data)) <= budget { // it may have grown since its stat
		e.data, e.copied = data, true
	}
}

// hash sums a file without keeping it.
func (e *guardEntry) hash(file string, errs *[]error) {
	f, err := os.Open(file)
	if err != nil {
		*errs = append(*errs, err)
		return
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		*errs = append(*errs, err)
		return
	}
	h.Sum(e.sum[:0])
	e.summed = true
}

// writeCopies makes the backup directory hold the copy of each copied
// file, and nothing else: it writes the copies that are not there or
// differ, and removes the copies of files no longer protected (the first
// time, those an earlier run left too). Called with g.mu held.
func (g *Guard) writeCopies() error {
	copies := len(g.onDisk) > 0
	for _, e := range g.entries {
		copies = copies || e.copied
	}
	b, err := g.openBackup(copies)
	if !copies && errors.Is(err, fs.ErrNotExist) {
		g.swept = true // no copies, and none left from an earlier run
		return nil
	}
	if err != nil {
		return fmt.Errorf("protect: copying protected files to %s: %w", g.backupDir, unwrapPath(err))
	}
	defer b.Close()
	var errs []error
	if !g.swept {
		clear(g.onDisk)
		err := fs.WalkDir(b.FS(), ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			e := g.byPath[p]
			info, err := d.Info()
			if err == nil && e != nil && e.copied && sameCopy(info, e) {
				g.onDisk[p] = diskCopy{sum: e.sum, size: info.Size(), mtime: info.ModTime()}
				return nil
			}
			if err := b.Remove(filepath.FromSlash(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
		g.swept = true
	}
	for _, e := range g.entries {
		if !e.copied {
			continue
		}
		if c, ok := g.onDisk[e.path]; ok && c.sum == e.sum {
			if info, err := b.Lstat(filepath.FromSlash(e.path)); err == nil && info.Size() == c.size && info.ModTime().Equal(c.mtime) {
				continue // still there as written
			}
		}
		c, err := writeCopy(b, e.path, e.data, e.info.ModTime())
		if err != nil {
			errs = append(errs, fmt.Errorf("protect: copying protected %s: %w", e.path, err))
			delete(g.onDisk, e.path)
			continue
		}
		c.sum = e.sum
		g.onDisk[e.path] = c
	}
	for rel := range g.onDisk {
		if e := g.byPath[rel]; e != nil && e.copied {
			continue
		}
		err := b.Remove(filepath.FromSlash(rel))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		delete(g.onDisk, rel)
	}
	return errors.Join(errs...)
}

// diskCopy is what a copy in the backup directory looked like when the
// Guard wrote it, or found it current.
type diskCopy struct {
	sum   [32]byte
	size  int64
	mtime time.Time
}

// sameCopy reports whether a copy found on disk is current: its size is
// the copy's, and its modification time the file's, as the Guard sets it.
func sameCopy(info fs.FileInfo, e *guardEntry) bool {
	return info.Mode().IsRegular() && info.Size() == int64(len(e.data)) && info.ModTime().Equal(e.info.ModTime())
}
