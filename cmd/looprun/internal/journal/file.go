package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// A journal file is kept to MaxSize: a write that finds it larger moves
// it aside to <file>.1 (replacing an older one) and starts a new one, so a
// loop's journal takes at most twice MaxSize on disk, and Read reads both.
// At about 500 bytes a line, MaxSize holds some 60,000 iterations.
const MaxSize = 32 << 20

// Path returns the journal of loop in the state directory stateDir.
func Path(stateDir, loop string) string { return filepath.Join(stateDir, loop+".journal.jsonl") }

// Writer appends entries to a journal file. It is safe for concurrent
// use; each entry is one write of one line, so that writers of other
// processes appending to the same file never interleave within a line.
type Writer struct {
	mu   sync.Mutex
	path string
	max  int64
}

// NewWriter returns a writer of the journal at path. The file and its
// directory are made at the first write.
func NewWriter(path string) *Writer { return &Writer{path: path, max: MaxSize} }

// Path returns the journal's file.
func (w *Writer) Path() string { return w.path }

// Append writes e at the end of the journal.
func (w *Writer) Append(e Entry) error {
	line, err := e.Encode()
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if info, err := os.Stat(w.path); err == nil && info.Size()+int64(len(line)) > w.max {
		if err := os.Rename(w.path, w.path+".1"); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(w.path), 0o755); err != nil {
		return err
	}
	// The journal holds errors and tasks out of the agent's output: for
	// its owner alone, as the logs are.
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(line)
	return errors.Join(err, f.Close())
}

// Remove deletes the journal (and the part moved aside): -reset starts
// the loop afresh.
func (w *Writer) Remove() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []error
	for _, p := range []string{w.path + ".1", w.path} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// maxLine bounds one line of a journal: an entry carries a few lines of
// an error, never a whole output.
const maxLine = 1 << 20

// Read returns the entries of the journal at path, oldest first: those of
// the part moved aside, then the file's. A missing journal is no entries
// and no error. A line that is not an entry (cut short by a crash, or
// being written) is left out and counted in skipped.
func Read(path string) (entries []Entry, skipped int, err error) {
	for _, p := range []string{path + ".1", path} {
		es, n, err := readFile(p)
		if err != nil {
			return nil, 0, err
		}
		entries, skipped = append(entries, es...), skipped+n
	}
	return entries, skipped, nil
}

func readFile(path string) ([]Entry, int, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	return decode(f)
}

// decode reads the entries of a journal's lines.
func decode(r io.Reader) ([]Entry, int, error) {
	var entries []Entry
	skipped := 0
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			var e Entry
			if json.Unmarshal(line, &e) == nil && e.Kind != "" {
				entries = append(entries, e)
			} else {
				skipped++
			}
		}
		if errors.Is(err, io.EOF) {
			return entries, skipped, nil
		}
		if err != nil {
			return nil, 0, fmt.Errorf("reading the journal: %w", err)
		}
	}
}

// readLine returns the next line of br without its newline; a line
// longer than maxLine is returned cut (it does not parse, and is
// skipped).
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		if len(line)+len(part) <= maxLine {
			line = append(line, part...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// Tail reads, from a file other processes append entries to (the hooks'
// events), the whole lines added since the last call. It is not safe for
// concurrent use.
type Tail struct {
	path   string
	offset int64
	file   os.FileInfo
}

// NewTail returns a tail of the file at path that starts at its end now:
// what was written before is not read.
func NewTail(path string) *Tail {
	t := &Tail{path: path}
	if info, err := os.Stat(path); err == nil {
		t.offset, t.file = info.Size(), info
	}
	return t
}

// Path returns the file the tail reads.
func (t *Tail) Path() string { return t.path }

// Next returns the entries of the whole lines added since the last call.
// A file replaced or cut shorter since is read from its start.
func (t *Tail) Next() ([]Entry, error) {
	f, err := os.Open(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		t.offset, t.file = 0, nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if t.file == nil || !os.SameFile(info, t.file) || info.Size() < t.offset {
		t.offset = 0
	}
	t.file = info
	if info.Size() == t.offset {
		return nil, nil
	}
	data, err := io.ReadAll(io.NewSectionReader(f, t.offset, min(info.Size()-t.offset, MaxSize)))
	if err != nil {
		return nil, err
	}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil, nil // a line being written: the next call reads it whole
	}
	t.offset += int64(end + 1)
	entries, _, err := decode(bytes.NewReader(data[:end+1]))
	return entries, err
}
