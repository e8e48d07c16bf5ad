package looprun

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The iteration logs: each iteration's output, in the state directory's
// logs/ as <loop>-<iteration>.log. A log keeps the first logHeadBytes of the
// output and its last sampleBytes, with a line between them saying how much
// was cut, so a log is at most 5 MiB and a few bytes. A loop keeps its
// newest logsKept logs, and of those only as many of the newest as hold
// logsTotalBytes together; older logs are deleted after each iteration.
const (
	logsDirName    = "logs"
	logHeadBytes   = 4 << 20
	logsKept       = 100
	logsTotalBytes = 64 << 20
)

// iterationLogs are the logs of one loop.
type iterationLogs struct {
	dir  string // the state directory's logs/
	loop string // the loop's name
}

// create creates (or truncates) the log of an iteration. again says the
// iteration runs again after a provider limit: the log goes on after the
// limited run's, below a line that says so.
func (l iterationLogs) create(iteration int, again bool) (*os.File, error) {
	// The state directory as the state's file store makes it; the logs,
	// which may hold anything the agent printed, for the user alone.
	if err := os.MkdirAll(filepath.Dir(l.dir), 0o755); err != nil {
		return nil, err
	}
	if err := os.Mkdir(l.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	path := l.path(iteration)
	if !again {
		return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err == nil {
		_, err = fmt.Fprintf(f, "\n[looprun: the provider limit has lifted; iteration %d runs again]\n", iteration)
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, err
}

// path is the log of an iteration.
func (l iterationLogs) path(iteration int) string {
	return filepath.Join(l.dir, fmt.Sprintf("%s-%d.log", l.loop, iteration))
}

// prune deletes the loop's logs beyond the newest logsKept and beyond the
// newest that hold logsTotalBytes. Newest is the last written; the
// iteration number breaks ties (it starts again at 1 after -reset, so it
// cannot come first). The logs of other loops are left alone.
func (l iterationLogs) prune() error {
	entries, err := os.ReadDir(l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	type logFile struct {
		name      string
		iteration int
		modified  time.Time
		size      int64
	}
	var logs []logFile
	for _, e := range entries {
		iteration, ok := l.iteration(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // deleted meanwhile
		}
		logs = append(logs, logFile{e.Name(), iteration, info.ModTime(), info.Size()})
	}
	sort.Slice(logs, func(i, j int) bool {
		a, b := logs[i], logs[j]
		if !a.modified.Equal(b.modified) {
			return a.modified.After(b.modified)
		}
		return a.iteration > b.iteration
	})
	var total int64
	var errs []error
	for i, f := range logs {
		total += f.size
		if i < logsKept && total <= logsTotalBytes {
			continue
		}
		if err := os.Remove(filepath.Join(l.dir, f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// iteration returns the iteration number of a log file name of this
// loop, "<loop>-<iteration>.log".
func (l iterationLogs) iteration(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, l.loop+"-")
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, ".log")
	if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}
