//go:build unix

package hook

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockFile takes an advisory lock on the file at path (made if need be),
// waiting up to wait for its holder, and returns the function that
// releases it. The lock goes with the process: a hook killed while it
// holds it holds it no more.
func lockFile(path string, wait time.Duration) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("%s: another hook of the session held it for %s", path, wait)
			}
			return nil, err
		}
		time.Sleep(time.Millisecond)
	}
}
