package hook

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// LogMark is where a project's hooks' log (.loopbreaker/hooks/events.log)
// ended at a moment: the lines written after it tell what the hooks did
// since, for a command that runs the agent (looprun's loop), which the
// agent's output may not tell (Codex's never says why a run ended).
type LogMark struct {
	path   string
	file   os.FileInfo // nil when there was no log
	offset int64
}

// The notes of the log that say the hook ended a run (see eventLog.note),
// which EndedReason reads.
const (
	endedNote        = "ended: %s"                        // the reason
	endedRefusedNote = "ended after %d refused calls: %s" // the refusals, the reason
)

// apiErrorNote says an API error ended the turn (StopFailure): its
// class, what it asks of the loop, the agent's words of it. APIError
// reads it.
const apiErrorNote = "api error %s (%s): %s"

// maxLogRead bounds what EndedReason reads of the log.
const maxLogRead = 1 << 20

// MarkLog notes where the hooks' log of the project at dir ends.
func MarkLog(dir string) LogMark {
	m := LogMark{path: filepath.Join(dir, stateDirName, "hooks", eventLogName)}
	if info, err := os.Stat(m.path); err == nil {
		m.file, m.offset = info, info.Size()
	}
	return m
}

// EndedReason returns why looprun's hook ended session's run, from the
// lines of the log written since the mark ("looprun hook ended the run:
// <reason>"); "" when none says so, or session is "". A log started anew
// since (it is kept to a size: the old one is moved aside) is read whole.
func (m LogMark) EndedReason(session string) string {
	if session == "" {
		return ""
	}
	return endedInLog(m.since(), session)
}

// APIError returns the class of the last API error that ended a turn of
// session's (StopFailure: rate_limit, billing_error, ...; see
// agent.APIErrorLimit), from the lines of the log written since the mark;
// "" when none says so, or session is "".
func (m LogMark) APIError(session string) string {
	if session == "" {
		return ""
	}
	class := ""
	for line := range strings.Lines(m.since()) {
		_, rest, ok := strings.Cut(strings.TrimSpace(line), " session "+session+" "+StopFailure+": api error ")
		if !ok {
			continue
		}
		if c, _, ok := strings.Cut(rest, " "); ok {
			class = c
		}
	}
	return class
}

// since returns the lines of the log written since the mark (up to
// maxLogRead bytes); a log started anew since is read whole.
func (m LogMark) since() string {
	f, err := os.Open(m.path)
	if err != nil {
		return ""
	}
	defer f.Close()
	offset := m.offset
	if info, err := f.Stat(); err != nil || m.file == nil || !os.SameFile(info, m.file) || info.Size() < offset {
		offset = 0
	}
	data, err := io.ReadAll(io.NewSectionReader(f, offset, maxLogRead))
	if err != nil {
		return ""
	}
	return string(data)
}

// endedInLog returns the reason of the last line of log that says the
// hook ended session's run, as eventLog.note writes it: "<time> session
// <id> <event>: " and endedNote or endedRefusedNote.
func endedInLog(log, session string) string {
	reason := ""
	for line := range strings.Lines(log) {
		_, rest, ok := strings.Cut(strings.TrimSpace(line), " session "+session+" ")
		if !ok {
			continue
		}
		_, what, _ := strings.Cut(rest, ": ") // after the event's name
		if !strings.HasPrefix(what, "ended: ") && !strings.HasPrefix(what, "ended after ") {
			continue
		}
		if _, why, _ := strings.Cut(what, ": "); strings.TrimSpace(why) != "" {
			reason = "looprun hook ended the run: " + why
		}
	}
	return reason
}
