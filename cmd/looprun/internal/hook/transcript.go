package hook

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/loopbreaker/loopbreaker"
)

// transcriptMark is how far a session's transcript was read for its
// spend, the last model message counted, which the lines read next may go
// on with, and the tool calls read whose hooks have not come yet, and of
// those the ones that failed.
type transcriptMark struct {
	Path   string    `json:"path,omitempty"`
	Offset int64     `json:"offset,omitempty"`
	LastID string    `json:"last_id,omitempty"`
	Last   usageMark `json:"last"`
	Calls  []string  `json:"calls,omitempty"`
	Failed []string  `json:"failed,omitempty"`
	// Pending are the calls let through whose hook after them has not
	// come (Agent.SilentFailures), and Ended those of them whose result
	// came in the transcript with no hook: failures, to be recorded.
	Pending []pendingCall `json:"pending,omitempty"`
	Ended   []endedCall   `json:"ended,omitempty"`
	// Words are the model's last words to the person read since the
	// last step was recorded (cut to maxWords): the next step had them.
	Words string `json:"words,omitempty"`
}

// maxWords bounds the words a mark keeps: they say the step was not
// silent, and the state is written at every hook.
const maxWords = 512

// takeWords returns the model's words read since the last step, and
// forgets them: the step about to be recorded had them.
func (m *transcriptMark) takeWords() string {
	w := m.Words
	m.Words = ""
	return w
}

// pendingCall is a tool call let through, as a step: its id, the tool
// and its arguments (stepArgs).
type pendingCall struct {
	ID   string `json:"id"`
	Tool string `json:"tool"`
	Args string `json:"args"`
}

// endedCall is a pending call that ended with no hook after it, and its
// result: its error.
type endedCall struct {
	pendingCall
	Result string `json:"result"`
}

// maxResult bounds the result of an ended call that the state keeps.
const maxResult = 4 << 10

// await notes a call let through, whose hook after it may never come.
func (m *transcriptMark) await(c pendingCall) {
	m.Pending = append(m.Pending, c)
	m.Pending = m.Pending[max(len(m.Pending)-maxCalls, 0):]
}

// arrived forgets a pending call: its hook after it came.
func (m *transcriptMark) arrived(id string) {
	m.Pending = slices.DeleteFunc(m.Pending, func(c pendingCall) bool { return c.ID == id })
}

// ended moves the pending call of r's id, if any, to Ended: its result
// came, and its hook did not.
func (m *transcriptMark) ended(r *CallResult) {
	i := slices.IndexFunc(m.Pending, func(c pendingCall) bool { return c.ID == r.ID })
	if i < 0 {
		return
	}
	text := r.Text
	if len(text) > maxResult {
		text = strings.ToValidUTF8(text[:maxResult], "")
	}
	m.Ended = append(m.Ended, endedCall{pendingCall: m.Pending[i], Result: text})
	m.Pending = slices.Delete(m.Pending, i, i+1)
}

// maxCalls bounds the tool calls a mark keeps: the calls of one answer
// run at once, and their hooks come soon after.
const maxCalls = 64

// took reports whether the transcript read so far holds the tool call id,
// and forgets it: its hook has come.
func (m *transcriptMark) took(id string) bool { return forget(&m.Calls, id) }

// failed reports whether the transcript read so far says the tool call id
// failed, and forgets it.
func (m *transcriptMark) failed(id string) bool { return forget(&m.Failed, id) }

// forget removes id from ids, and reports whether it was there.
func forget(ids *[]string, id string) bool {
	for i, c := range *ids {
		if c == id {
			*ids = append((*ids)[:i], (*ids)[i+1:]...)
			return true
		}
	}
	return false
}

// remember adds more to ids, keeping the last maxCalls.
func remember(ids []string, more []string) []string {
	ids = append(ids, more...)
	return ids[max(len(ids)-maxCalls, 0):]
}

// usageMark is a Usage as the state keeps it.
type usageMark struct {
	Input      int    `json:"input,omitempty"`
	Output     int    `json:"output,omitempty"`
	CacheRead  int    `json:"cache_read,omitempty"`
	CacheWrite int    `json:"cache_write,omitempty"`
	Model      string `json:"model,omitempty"`
}

func markOf(u loopbreaker.Usage) usageMark {
	return usageMark{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadTokens, CacheWrite: u.CacheWriteTokens, Model: u.Model}
}

// more returns what u spent beyond m, of the same message: a message
// whose later lines report more output than its first.
func (m usageMark) more(u loopbreaker.Usage) loopbreaker.Usage {
	return loopbreaker.Usage{
		Model:            u.Model,
		InputTokens:      max(u.InputTokens-m.Input, 0),
		OutputTokens:     max(u.OutputTokens-m.Output, 0),
		CacheReadTokens:  max(u.CacheReadTokens-m.CacheRead, 0),
		CacheWriteTokens: max(u.CacheWriteTokens-m.CacheWrite, 0),
	}
}

// maxTranscriptRead bounds what one hook reads of a transcript; the rest
// is read by the next hook.
const maxTranscriptRead = 64 << 20

// maxLongLine bounds a line of the transcript that is read: a model's
// message longer than that (a tool call carrying a file of many MiB) is
// passed over.
const maxLongLine = 16 << 20

// readSpend reads what the transcript at path gained since mark, and
// returns the usage of the model's messages in it, each message once
// (Claude Code writes a message of several blocks as several lines), and
// the usage windows of its last line that reports them (nil for none),
// and moves mark on past the last whole line, noting the tool calls read,
// those that failed, and the pending ones that ended. A transcript that is not there
// (yet) spends nothing; one that shrank was replaced, and is read from its
// end on, so that nothing is counted twice.
func readSpend(path string, mark *transcriptMark, message func([]byte) (Message, bool)) (spent []loopbreaker.Usage, windows []loopbreaker.Window, err error) {
	if path == "" {
		return nil, nil, nil
	}
	if mark.Path != path {
		*mark = transcriptMark{Path: path}
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if info.Size() < mark.Offset {
		mark.Offset = info.Size()
		return nil, nil, nil
	}
	if _, err := f.Seek(mark.Offset, io.SeekStart); err != nil {
		return nil, nil, err
	}
	r := bufio.NewReaderSize(io.LimitReader(f, maxTranscriptRead), 64<<10)
	var long []byte
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: a tool's result, or a model's message whose
			// tool call carries a file. It is kept whole up to
			// maxLongLine, and past that only counted.
			n := int64(len(line))
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				n += int64(len(line))
				if len(long) < maxLongLine {
					long = append(long, line...)
				}
			}
			if err != nil {
				return spent, windows, nil // the line is not whole yet
			}
			mark.Offset += n
			if int64(len(long)) < n {
				continue // too long to be read: it is no model's message
			}
			line = long
		} else if err != nil {
			return spent, windows, nil // io.EOF: a partial line waits for the next hook
		} else {
			mark.Offset += int64(len(line))
		}
		m, ok := message(line)
		if !ok {
			continue
		}
		if len(m.Calls) > 0 {
			mark.Calls = remember(mark.Calls, m.Calls)
		}
		if len(m.Failed) > 0 {
			mark.Failed = remember(mark.Failed, m.Failed)
		}
		if m.Result != nil {
			mark.ended(m.Result)
		}
		if w := strings.TrimSpace(m.Words); w != "" {
			if len(w) > maxWords {
				w = strings.ToValidUTF8(w[:maxWords], "")
			}
			mark.Words = w
		}
		if len(m.Windows) > 0 {
			windows = m.Windows
		}
		id, u := m.ID, m.Usage
		if id == "" && u == (loopbreaker.Usage{}) {
			continue // tool calls alone
		}
		if id != "" && id == mark.LastID {
			u, mark.Last = mark.Last.more(u), maxMark(mark.Last, u)
		} else {
			mark.LastID, mark.Last = id, markOf(u)
		}
		spent = append(spent, u)
	}
}

// maxMark returns the larger of each count of m and u.
func maxMark(m usageMark, u loopbreaker.Usage) usageMark {
	return usageMark{
		Input: max(m.Input, u.InputTokens), Output: max(m.Output, u.OutputTokens),
		CacheRead: max(m.CacheRead, u.CacheReadTokens), CacheWrite: max(m.CacheWrite, u.CacheWriteTokens),
		Model: u.Model,
	}
}
