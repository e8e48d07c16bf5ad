// Package report writes the page a person opens to see what a loop did:
// one self-contained HTML file (its CSS and charts inline, nothing
// fetched when it is opened) drawn from the loop's state file, its
// journal and its logs. looprun report writes it to a file; looprun
// -serve serves it, refreshed, while the loop runs.
package report

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/journal"
)

// Loop is what the report shows of one loop (one worker, on a fleet).
type Loop struct {
	// Name is the loop's name; StateDir its state directory
	// (.loopbreaker/ in its working directory).
	Name     string
	StateDir string
	// Saved says a state file was found; Stats are the breaker's figures
	// as it was saved (or, live, as they are), SavedAt when.
	Saved   bool
	Stats   loopbreaker.Stats
	SavedAt time.Time
	// Entries are the journal's, oldest first; Unreadable counts its
	// lines that could not be read.
	Entries    []journal.Entry
	Unreadable int
	// Logs maps an iteration to its log file, for those still kept.
	Logs map[int]string
}

// Fleet is the breaker a fleet shares, as Redis holds it now.
type Fleet struct {
	Name  string // the fleet's name (-fleet)
	Redis string // where, without user or password
	Stats loopbreaker.Stats
	// Err is why the shared state could not be read; Stats is then zero.
	Err error
}

// Read reads the loop named loop in stateDir: its state file, its
// journal and its logs. A loop with neither a state nor a journal is an
// error matching fs.ErrNotExist.
func Read(stateDir, loop string) (*Loop, error) {
	l := &Loop{Name: loop, StateDir: stateDir, Logs: map[int]string{}}
	snap, err := loopbreaker.NewFileStore(stateDir).Load(context.Background(), loop)
	switch {
	case errors.Is(err, loopbreaker.ErrNoState):
	case err != nil:
		return nil, err
	default:
		stats, err := StatsOf(snap)
		if err != nil {
			return nil, err
		}
		l.Saved, l.Stats, l.SavedAt = true, stats, snap.SavedAt()
	}
	l.Entries, l.Unreadable, err = journal.Read(journal.Path(stateDir, loop))
	if err != nil {
		return nil, err
	}
	if !l.Saved && len(l.Entries) == 0 {
		return nil, fmt.Errorf("no loop %q in %s: neither a state file nor a journal: %w", loop, stateDir, os.ErrNotExist)
	}
	l.Logs = Logs(filepath.Join(stateDir, "logs"), loop)
	return l, nil
}

// StatsOf returns the figures of a saved state, as they were when it was
// saved.
func StatsOf(snap loopbreaker.Snapshot) (loopbreaker.Stats, error) {
	saved := snap.SavedAt()
	cfg := loopbreaker.DefaultConfig()
	cfg.Now = func() time.Time { return saved }
	cb, err := loopbreaker.New(cfg)
	if err != nil {
		return loopbreaker.Stats{}, err
	}
	if err := cb.Restore(snap); err != nil {
		return loopbreaker.Stats{}, err
	}
	return cb.Stats(), nil
}

// Logs returns the logs of loop that dir holds, by iteration
// (<loop>-<iteration>.log, as looprun names them).
func Logs(dir, loop string) map[int]string {
	logs := map[int]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return logs
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), loop+"-")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		digits, ok := strings.CutSuffix(rest, ".log")
		if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
			continue
		}
		if n, err := strconv.Atoi(digits); err == nil {
			logs[n] = filepath.Join(dir, e.Name())
		}
	}
	return logs
}

// Loops returns the names of the loops in stateDir: those with a state
// file or a journal.
func Loops(stateDir string) []string {
	entries, err := os.ReadDir(stateDir)
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var names []string
	for _, e := range entries {
		name := e.Name()
		loop, ok := strings.CutSuffix(name, ".journal.jsonl")
		if !ok {
			// <loop>.json is a state file; <loop>.session.json is
			// looprun's session of the loop.
			loop, ok = strings.CutSuffix(name, ".json")
			ok = ok && !strings.HasSuffix(loop, ".session") && !strings.HasPrefix(name, ".")
		}
		if ok && e.Type().IsRegular() && !seen[loop] {
			seen[loop] = true
			names = append(names, loop)
		}
	}
	return names
}
