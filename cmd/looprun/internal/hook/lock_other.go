//go:build !unix

package hook

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// staleLock is how old a lock file must be to be taken for one its
// holder, killed, left behind.
const staleLock = time.Minute

// lockFile takes the lock at path by creating the file, which no other
// hook may then create, waiting up to wait for its holder, and returns the
// function that releases it (removes the file). A lock file older than
// staleLock was left by a hook that was killed, and is removed.
func lockFile(path string, wait time.Duration) (func(), error) {
	deadline := time.Now().Add(wait)
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
		if err == nil {
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if info, err := os.Stat(path); err == nil && time.Since(info.ModTime()) > staleLock {
			os.Remove(path)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: another hook of the session held it for %s", path, wait)
		}
		time.Sleep(time.Millisecond)
	}
}
