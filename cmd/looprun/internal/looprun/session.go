package looprun

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Session continuity, as ralph-claude-code keeps it: the session the last
// iteration ran in (Claude Code's session_id) is offered to the next
// iteration, so that the agent goes on with its context rather than start
// afresh each time. It expires sessionExpiry after it started, and is
// dropped when the circuit opens, on Ctrl+C and when the loop completes:
// a stuck or finished conversation is not the one to go on with. The last
// sessionHistoryLen sessions that ended are kept in a history file.
const (
	sessionExpiry     = 24 * time.Hour
	sessionHistoryLen = 50

	// sessionEnv is the environment variable that offers the session to
	// the command: its id, or empty when there is none.
	sessionEnv = "LOOPRUN_SESSION_ID"
	// sessionPlaceholder is replaced by the session id in the command's
	// arguments, e.g. claude -p --resume {session}.
	sessionPlaceholder = "{session}"
)

// Why a session ended, as its history entry says.
const (
	endCircuitOpen = "circuit_open"
	endInterrupted = "interrupted"
	endComplete    = "complete"
	endExpired     = "expired"
	endReplaced    = "replaced" // the agent started another
	endReset       = "reset"    // -reset
)

// agentSession is one agent session, as the session file and the history keep
// it.
type agentSession struct {
	ID         string    `json:"session_id"`
	Started    time.Time `json:"started"`   // when looprun first saw it
	LastUsed   time.Time `json:"last_used"` // when an iteration last ran in it
	Iterations int       `json:"iterations"`
	// CostUSD is the session's cost so far as Claude Code last reported
	// it: on --resume its total_cost_usd is the session's running total,
	// and a run's own cost is what it adds to this.
	CostUSD float64    `json:"cost_usd,omitempty"`
	Ended   *time.Time `json:"ended,omitempty"`
	End     string     `json:"end,omitempty"` // why it ended (endCircuitOpen, ...)
}

// sessions keeps the loop's session in the state directory:
// <loop>.session.json holds the current one, <loop>.sessions.jsonl the
// last sessionHistoryLen that ended, one JSON object a line, oldest
// first.
type sessions struct {
	file, history string
	now           func() time.Time
	current       *agentSession
}

func openSessions(stateDir, loop string, now func() time.Time) *sessions {
	return &sessions{
		file:    filepath.Join(stateDir, loop+".session.json"),
		history: filepath.Join(stateDir, loop+".sessions.jsonl"),
		now:     now,
	}
}

// load reads the current session. A file that cannot be read is no
// session: the next iteration starts a new one, and nothing is lost but
// context.
func (s *sessions) load() error {
	data, err := os.ReadFile(s.file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var cur agentSession
	if json.Unmarshal(data, &cur) != nil || cur.ID == "" {
		return os.Remove(s.file)
	}
	s.current = &cur
	return nil
}

// offer returns the session to offer the next iteration, "" for none; a
// session older than sessionExpiry ends first.
func (s *sessions) offer() (string, error) {
	if s.current == nil {
		return "", nil
	}
	if s.now().Sub(s.current.Started) >= sessionExpiry {
		return "", s.drop(endExpired)
	}
	return s.current.ID, nil
}

// runCost returns the cost of a run in session id whose output reported
// the session's total cost as total: what the total adds to the total
// last seen for the current session, when the run was in it (Claude
// Code's total_cost_usd on --resume is the session's running total), else
// the whole total. A run cut short before it reported its cost is counted
// with the next run of the session.
func (s *sessions) runCost(id string, total float64) float64 {
	if s.current == nil || s.current.ID != id || id == "" || total < s.current.CostUSD {
		return total
	}
	return total - s.current.CostUSD
}

// ran records that an iteration ran in session id ("" when its output
// named none: the current session stays), and the session's total cost
// as the output reported it (hasCost; else the total stays).
func (s *sessions) ran(id string, total float64, hasCost bool) error {
	if id == "" {
		return nil
	}
	now := s.now()
	if s.current != nil && s.current.ID != id {
		if err := s.drop(endReplaced); err != nil {
			return err
		}
	}
	if s.current == nil {
		s.current = &agentSession{ID: id, Started: now}
	}
	s.current.LastUsed = now
	s.current.Iterations++
	if hasCost {
		s.current.CostUSD = total
	}
	data, err := json.Marshal(s.current)
	if err != nil {
		return err
	}
	return writeFileAtomic(s.file, append(data, '\n'))
}

// drop ends the current session, if any, for the reason end: it goes to
// the history, and is offered no more.
func (s *sessions) drop(end string) error {
	if s.current == nil {
		return nil
	}
	ended := *s.current
	s.current = nil
	now := s.now()
	ended.Ended, ended.End = &now, end
	err := os.Remove(s.file)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return errors.Join(err, s.remember(ended))
}

// remember adds an ended session to the history, which keeps the last
// sessionHistoryLen.
func (s *sessions) remember(ended agentSession) error {
	line, err := json.Marshal(ended)
	if err != nil {
		return err
	}
	lines := [][]byte{}
	if data, err := os.ReadFile(s.history); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if len(bytes.TrimSpace(sc.Bytes())) > 0 {
				lines = append(lines, append([]byte(nil), sc.Bytes()...))
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	lines = append(lines, line)
	lines = lines[max(0, len(lines)-sessionHistoryLen):]
	return writeFileAtomic(s.history, append(bytes.Join(lines, []byte("\n")), '\n'))
}

// writeFileAtomic writes data to path through a temporary file renamed
// over it, so that a reader never sees half of it.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// withSession returns the command's arguments with the session in place
// of sessionPlaceholder. Without a session, an argument that holds the
// placeholder is left out, and so is the flag before it when the
// placeholder is the whole argument: `--resume {session}` goes as a whole,
// so that the first iteration starts a new session; as does Codex's
// subcommand `resume {session}` (codex exec resume {session}).
func withSession(argv []string, id string) []string {
	out := make([]string, 0, len(argv))
	for _, a := range argv {
		switch {
		case !strings.Contains(a, sessionPlaceholder):
			out = append(out, a)
		case id != "":
			out = append(out, strings.ReplaceAll(a, sessionPlaceholder, id))
		case a == sessionPlaceholder && len(out) > 1 && (strings.HasPrefix(out[len(out)-1], "-") || out[len(out)-1] == "resume"):
			out = out[:len(out)-1] // the flag that takes it
		}
	}
	return out
}
