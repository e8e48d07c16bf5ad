package protect

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// A Guard writes only inside its root: its restores, and its copies in the
// backup directory. The agent may have put a link, or a file, where a
// folder was, so every write goes through an os.Root, which cannot leave
// the directory it was opened on, and the folders on the way are checked
// not to be links: a restore never writes through one, even to a place
// inside the root.

// openRoot opens the Guard's root, and checks that it is still the
// directory the Guard was made for (not one moved into its place).
func (g *Guard) openRoot() (*os.Root, error) {
	r, err := os.OpenRoot(g.root)
	if err != nil {
		return nil, err
	}
	if info, err := r.Stat("."); err != nil || !os.SameFile(info, g.rootInfo) {
		r.Close()
		return nil, fmt.Errorf("%s is not the directory the Guard was made for any more", g.root)
	}
	return r, nil
}

// realDirs makes sure that each folder of dir ("/"-separated, relative to
// r; "." or "" is r itself) is a directory, not a link: it makes the
// missing ones with perm (a perm of 0 makes none: a missing one is an
// error matching fs.ErrNotExist), and refuses a link or a file in the way.
func realDirs(r *os.Root, dir string, perm fs.FileMode) error {
	dir = path.Clean(dir)
	if dir == "." {
		return nil
	}
	cur := ""
	for _, seg := range strings.Split(dir, "/") {
		cur = path.Join(cur, seg)
		name := filepath.FromSlash(cur)
		info, err := r.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) && perm != 0 {
			if err = r.Mkdir(name, perm); err == nil || errors.Is(err, fs.ErrExist) {
				info, err = r.Lstat(name)
			}
		}
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a link, not a folder, and a Guard never writes through one", cur)
		case !info.IsDir():
			return fmt.Errorf("%s is not a folder", cur)
		}
	}
	return nil
}

// openBackup opens the backup directory, making it when it is missing and
// create is true (else a missing one is an error matching fs.ErrNotExist).
// In the root, each of its folders must be a directory, not a link.
func (g *Guard) openBackup(create bool) (*os.Root, error) {
	perm := fs.FileMode(0o700)
	if !create {
		perm = 0
	}
	if g.backupRel == "" { // outside the root, where the host put it
		if create {
			if err := os.MkdirAll(g.backupDir, perm); err != nil {
				return nil, err
			}
		}
		return os.OpenRoot(g.backupDir)
	}
	r, err := g.openRoot()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if err := realDirs(r, g.backupRel, perm); err != nil {
		return nil, err
	}
	return r.OpenRoot(filepath.FromSlash(g.backupRel))
}

// writeCopy writes a copy into the backup directory b atomically (a
// temporary file renamed), readable by its owner only (a protected file
// may hold a secret), and dates it as the file it copies.
func writeCopy(b *os.Root, rel string, data []byte, mtime time.Time) (diskCopy, error) {
	dir := path.Dir(rel)
	if err := realDirs(b, dir, 0o700); err != nil {
		return diskCopy{}, err
	}
	var random [8]byte
	_, _ = rand.Read(random[:])
	tmp := filepath.FromSlash(path.Join(dir, ".copy-"+hex.EncodeToString(random[:])))
	dst := filepath.FromSlash(rel)
	f, err := b.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return diskCopy{}, err
	}
	_, err = f.Write(data)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = b.Rename(tmp, dst)
	}
	if err != nil {
		b.Remove(tmp)
		return diskCopy{}, err
	}
	_ = b.Chtimes(dst, mtime, mtime)
	info, err := b.Lstat(dst)
	if err != nil {
		return diskCopy{}, err
	}
	return diskCopy{size: info.Size(), mtime: info.ModTime()}, nil
}

// writeRestored writes a restored file at rel in the root r: a new one,
// never over a file that exists, or, for an emptied one, into the file if
// it is still the same empty file.
func writeRestored(r *os.Root, rel string, data []byte, was fs.FileInfo, emptied bool) error {
	name := filepath.FromSlash(rel)
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	var before fs.FileInfo
	if emptied {
		flags = os.O_WRONLY
		info, err := r.Lstat(name)
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() || info.Size() != 0 {
			return errors.New("it is not empty any more")
		}
		before = info
	}
	f, err := r.OpenFile(name, flags, was.Mode().Perm())
	if err != nil {
		return err
	}
	if emptied {
		if info, err := f.Stat(); err != nil || !os.SameFile(info, before) || info.Size() != 0 {
			f.Close()
			return errors.New("it is not empty any more")
		}
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(was.Mode().Perm())
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return err
	}
	_ = r.Chtimes(name, was.ModTime(), was.ModTime())
	return nil
}
