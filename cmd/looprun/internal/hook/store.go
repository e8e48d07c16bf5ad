package hook

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// stateVersion is the version of the session state this looprun writes.
const stateVersion = 1

// staleAfter is how long a session's state is kept without a hook
// touching it: a session that ended without its SessionEnd (killed, its
// machine down) is pruned after that.
const staleAfter = 24 * time.Hour

// lockWait bounds how long a hook waits for another hook of the same
// session (a parallel tool call) to let go of its state.
const lockWait = 10 * time.Second

// state is what a hook keeps of a session between its calls, in
// .loopbreaker/hooks/<session>.json.
type state struct {
	Version int `json:"version"`
	// Steps is the tool steps' breaker; Ralph the Ralph loop's, whose
	// iterations are the model's turns. Nil before the first.
	Steps *loopbreaker.Snapshot `json:"steps,omitempty"`
	Ralph *loopbreaker.Snapshot `json:"ralph,omitempty"`
	// Transcript is how far the spend was read.
	Transcript transcriptMark `json:"transcript"`
	// Refused counts the tool calls refused in a row while the circuit
	// was open.
	Refused int `json:"refused,omitempty"`
	// Warned lists the warnings the model was given, so that each is
	// given once while it holds.
	Warned []string `json:"warned,omitempty"`
	// Turn is what the current turn did, for the Ralph loop.
	Turn turnState `json:"turn"`
	// Agents are how far the transcripts of the session's subagents were
	// read, the latest last (at most maxAgents): each has its own, where
	// alone its spend is, read at each hook of the session.
	Agents []agentMark `json:"agents,omitempty"`
	// StallTree is the git work tree as it was before the first shell
	// command of the current run of silent steps (noTree outside git),
	// which tells whether the run changed a file; "" before one.
	StallTree string `json:"stall_tree,omitempty"`
}

// agentMark is how far a subagent's transcript was read.
type agentMark struct {
	ID   string         `json:"id"`
	Mark transcriptMark `json:"mark"`
}

// maxAgents bounds the subagents whose transcripts a state follows; the
// oldest is forgotten first (what it spent is counted).
const maxAgents = 16

// agent returns the mark of the subagent id's transcript, made when new.
func (st *state) agent(id string) *transcriptMark {
	for i := range st.Agents {
		if st.Agents[i].ID == id {
			return &st.Agents[i].Mark
		}
	}
	if len(st.Agents) >= maxAgents {
		st.Agents = st.Agents[1:]
	}
	st.Agents = append(st.Agents, agentMark{ID: id})
	return &st.Agents[len(st.Agents)-1].Mark
}

// turnState is what the model's current turn did, and the Ralph loop's
// count of turns.
type turnState struct {
	Edits      int    `json:"edits,omitempty"`      // files written by the agent's editing tools
	LastError  string `json:"last_error,omitempty"` // the error of the turn's last tool call, when it failed
	Tree       string `json:"tree,omitempty"`       // the git work tree as the last turn left it
	Iterations int    `json:"iterations,omitempty"` // the Ralph loop's turns so far
}

// store keeps each session's state in a file of its own in dir, and a
// hook holds the session's lock file while it reads, changes and writes
// the state: the hooks of parallel tool calls run at the same time.
type store struct {
	dir string
	now func() time.Time
}

// CorruptError is a session's state that cannot be read.
type CorruptError struct {
	Path string // the state file
	Err  error  // what is wrong with it
}

func (e *CorruptError) Error() string { return fmt.Sprintf("corrupt state %s: %v", e.Path, e.Err) }

func (e *CorruptError) Unwrap() error { return e.Err }

// fileName returns the base name of a session's files: its id, or a hash
// of an id that cannot name a file.
func fileName(id string) string {
	if plainID(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "session-" + hex.EncodeToString(sum[:16])
}

// plainID reports whether a session id can name a file as it is: up to
// 128 letters, digits, dots, dashes and underscores, not starting with a
// dot, a dash or an underscore (Claude Code's ids are UUIDs).
func plainID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '-' && c != '_') {
			return false
		}
	}
	return true
}

// path returns the session's state file.
func (s *store) path(id string) string { return filepath.Join(s.dir, fileName(id)+".json") }

// ready makes the directory, with a .gitignore that keeps it out of git.
func (s *store) ready() error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	ignore := filepath.Join(s.dir, ".gitignore")
	if _, err := os.Stat(ignore); errors.Is(err, fs.ErrNotExist) {
		return os.WriteFile(ignore, []byte("# looprun's hooks: the state of each session, kept out of git\n*\n"), 0o644)
	}
	return nil
}

// lock takes the session's lock, waiting up to lockWait for another hook
// of the session to let go of it, and returns the function that releases
// it.
func (s *store) lock(id string) (func(), error) {
	if err := s.ready(); err != nil {
		return nil, err
	}
	return lockFile(filepath.Join(s.dir, fileName(id)+".lock"), lockWait)
}

// load returns the session's state: a fresh one when there is none, a
// *CorruptError when it cannot be read.
func (s *store) load(id string) (*state, error) {
	p := s.path(id)
	data, err := os.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &state{Version: stateVersion}, nil
	case err != nil:
		return nil, err
	}
	var st state
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return nil, &CorruptError{Path: p, Err: err}
	}
	switch {
	case st.Version > stateVersion:
		return nil, fmt.Errorf("%s was written by a newer looprun (version %d; this one reads %d)", p, st.Version, stateVersion)
	case st.Version < 1:
		return nil, &CorruptError{Path: p, Err: fmt.Errorf("version %d", st.Version)}
	}
	return &st, nil
}

// save replaces the session's state whole. It is not synced to disk: a
// session does not outlive a crash of its machine, and Claude Code waits
// for each hook.
func (s *store) save(id string, st *state) error {
	st.Version = stateVersion
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return replaceFile(s.path(id), append(data, '\n'), 0o600, false)
}

// replaceFile replaces the file at path whole with data: it is written to
// a temporary file in the same directory (and synced, if sync), which is
// renamed over it, so that no reader ever sees half of it.
func replaceFile(path string, data []byte, perm os.FileMode, sync bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && perm != 0o600 { // CreateTemp makes it 0600
		err = f.Chmod(perm)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// moveAside renames the session's state to <session>.json.corrupt-<time>,
// kept for a person to look at, and returns the new path.
func (s *store) moveAside(id string) (string, error) {
	p := s.path(id)
	aside := p + ".corrupt-" + s.now().UTC().Format("20060102T150405.000000000Z")
	return aside, os.Rename(p, aside)
}

// remove deletes the session's state and its lock: the session ended.
func (s *store) remove(id string) error {
	err := os.Remove(s.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	_ = os.Remove(filepath.Join(s.dir, fileName(id)+".lock"))
	return err
}

// prune removes the files of sessions no hook has touched for
// staleAfter (their state, lock, temporary and moved-aside files).
func (s *store) prune() error {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	stale := func(name string) bool {
		info, err := os.Stat(filepath.Join(s.dir, name))
		return err == nil && s.now().Sub(info.ModTime()) >= staleAfter
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir():
			continue
		case strings.HasSuffix(name, ".lock"):
			// A lock goes with its session's state: the lock file itself
			// is never written, so its age says nothing.
			base := strings.TrimSuffix(name, ".lock")
			if _, err := os.Stat(filepath.Join(s.dir, base+".json")); err == nil && !stale(base+".json") {
				continue
			}
			if !stale(name) {
				continue
			}
		case !strings.Contains(name, ".json") || !stale(name):
			continue
		}
		if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
