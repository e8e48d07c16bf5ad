package looprun

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/loopbreaker/loopbreaker"
)

// stateDirName is the directory, in the working directory, that keeps the
// breaker's state between runs.
const stateDirName = ".loopbreaker"

// stateFile is the loop's state in the library's file store.
type stateFile struct {
	store *loopbreaker.FileStore
	name  string
	file  string
}

func openState(dir, name string) (*stateFile, error) {
	store := loopbreaker.NewFileStore(filepath.Join(dir, stateDirName))
	file, err := store.Path(name)
	if err != nil {
		return nil, err
	}
	return &stateFile{store: store, name: name, file: file}, nil
}

func (s *stateFile) path() string { return s.file }

// load restores cb from the saved state and reports whether there was
// one. A corrupt state file is an error: a loop that was stuck must not
// start again as if it were not. -reset moves such a file aside.
func (s *stateFile) load(cb Breaker) (bool, error) {
	snap, err := s.store.Load(context.Background(), s.name)
	switch {
	case errors.Is(err, loopbreaker.ErrNoState):
		return false, nil
	case errors.Is(err, loopbreaker.ErrCorruptState):
		return false, fmt.Errorf("%w\n(the file is kept; run with -reset to move it aside and start afresh)", err)
	case err != nil:
		return false, err
	}
	return true, cb.Restore(snap)
}

func (s *stateFile) save(cb Breaker) error {
	return s.store.Save(context.Background(), s.name, cb.Snapshot())
}

// reset forgets the saved state: a readable one is removed, a corrupt one
// is moved aside for a person to look at, and one a newer looprun wrote is
// left alone, as an error. It returns what it did.
func (s *stateFile) reset() (string, error) {
	_, err := s.store.Load(context.Background(), s.name)
	switch {
	case errors.Is(err, loopbreaker.ErrNoState):
		return "no saved state", nil
	case errors.Is(err, loopbreaker.ErrNewerState):
		return "", fmt.Errorf("%w\n(-reset does not remove a state a newer looprun wrote)", err)
	case errors.Is(err, loopbreaker.ErrCorruptState):
		aside, err := s.store.MoveAside(s.name)
		if err != nil {
			return "", err
		}
		return "corrupt state moved aside to " + aside, nil
	}
	if err := os.Remove(s.file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return "state " + s.file + " reset", nil
}
