package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/loopbreaker/loopbreaker"
)

// The Ralph loop inside the agent, as Anthropic's ralph-loop plugin runs
// it with a stop hook: when the model ends its turn, the hook sends it
// back to work with the same prompt, until the model keeps its completion
// promise (<promise>TEXT</promise> in its last message) or -max-iterations
// turns have run. Here a breaker of its own, whose iterations are the
// turns, stops it too: turns in a row that change no file (-no-progress),
// turns that end on a failed tool call, the same error turn after turn,
// the same last message three times; and so does the tool steps' breaker
// (its circuit open, a spend cap).

// stop answers Stop: the model is sent back to work with the prompt, or
// let stop, the person told why.
func (s *session) stop() (Answer, error) {
	if err := s.readSpend(); err != nil {
		return Answer{}, err
	}
	s.keep()
	t := &s.st.Turn
	turn := turnState{Tree: t.Tree, Iterations: t.Iterations + 1}
	defer func() { *t = turn }() // the next turn starts afresh
	if d := s.steps.Check(); !d.Allow {
		return s.ralphEnds(fmt.Sprintf("the tool calls are stopped (%s)", d.Reason)), nil
	}
	if s.h.set.promise != "" && keptPromise(s.ev.LastMessage, s.h.set.promise) {
		return s.ralphEnds(fmt.Sprintf("the model kept its promise <promise>%s</promise> after %d turns", s.h.set.promise, turn.Iterations)), nil
	}

	ralph, err := s.h.breaker(s.h.set.ralph, s.st.Ralph)
	if err != nil {
		return Answer{}, &CorruptError{Path: s.h.store.path(s.ev.SessionID), Err: err}
	}
	changed := t.Edits
	if tree, ok := workTree(s.h.project); ok {
		if t.Tree != "" && tree != t.Tree {
			changed++
		}
		turn.Tree = tree
	}
	it := loopbreaker.Iteration{
		Progress: &loopbreaker.Progress{FilesChanged: changed},
		Action:   &loopbreaker.Action{Message: s.ev.LastMessage},
	}
	if t.LastError != "" {
		it.Err = errors.New(t.LastError)
	}
	ralph.Record(it)
	snap := ralph.Snapshot()
	s.st.Ralph = &snap
	if d := ralph.Check(); !d.Allow {
		return s.ralphEnds(d.Reason.Detail()), nil
	}
	if max := s.h.set.maxIter; max > 0 && turn.Iterations >= max {
		return s.ralphEnds(fmt.Sprintf("-max-iterations %d turns have run", max)), nil
	}

	prompt, err := os.ReadFile(filepath.Join(s.h.project, s.h.set.prompt))
	if err != nil {
		return Answer{}, fmt.Errorf("the Ralph loop's prompt: %w", err)
	}
	text := strings.TrimSpace(string(prompt))
	if ralph.State() == loopbreaker.HalfOpen {
		text += fmt.Sprintf("\n\n(loopbreaker warning: %s. Another turn like it ends the loop.)", ralph.Stats().Reason)
	}
	s.h.log.note(s.ev, "Ralph turn %d: sent back to work", turn.Iterations+1)
	return Answer{Block: text, Notice: fmt.Sprintf("looprun: Ralph loop, turn %d", turn.Iterations+1)}, nil
}

// ralphEnds lets the model stop, and tells the person why the loop ends.
func (s *session) ralphEnds(why string) Answer {
	s.h.log.note(s.ev, "the Ralph loop ends: %s", why)
	return Answer{Notice: "looprun: the Ralph loop ends: " + why + "."}
}

// keptPromise reports whether message holds <promise>promise</promise>,
// white space around the promise's words aside.
func keptPromise(message, promise string) bool {
	want := strings.Join(strings.Fields(promise), " ")
	for rest := message; ; {
		_, after, ok := strings.Cut(rest, "<promise>")
		if !ok {
			return false
		}
		inner, tail, ok := strings.Cut(after, "</promise>")
		if !ok {
			return false
		}
		if strings.Join(strings.Fields(inner), " ") == want {
			return true
		}
		rest = tail
	}
}

// workTree returns a digest of the git work tree at dir, as the files'
// states and sizes and modification times and HEAD say, and whether dir
// is in one: a turn that changed a file, by any tool, changes it.
func workTree(dir string) (string, bool) {
	cmd := exec.Command("git", "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", false
	}
	h := sha256.New()
	h.Write(out)
	top := dir
	if t, err := exec.Command("git", "-C", dir, "rev-parse", "--show-toplevel").Output(); err == nil {
		top = strings.TrimSpace(string(t))
	}
	records := strings.Split(string(out), "\x00")
	for i := 0; i < len(records); i++ {
		rec := records[i]
		if rec == "" {
			continue
		}
		// The path is the record's last field: after 8 fields of a
		// changed entry (1), 9 of a renamed or copied one (2), whose
		// original path follows as a field of its own, 10 of an unmerged
		// one (u), and the marker of an untracked or ignored one (?, !).
		var p string
		switch rec[0] {
		case '1':
			p = field(rec, 8)
		case '2':
			p = field(rec, 9)
			i++ // the original path: gone, or stat'ed as its own entry
		case 'u':
			p = field(rec, 10)
		case '?', '!':
			p = rec[min(2, len(rec)):]
		default:
			continue // a header (# branch.oid ...)
		}
		if info, err := os.Lstat(filepath.Join(top, p)); err == nil && p != "" {
			fmt.Fprintf(h, "%s %d %d\n", p, info.Size(), info.ModTime().UnixNano())
		}
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// field returns what follows the first n space-separated fields of rec.
func field(rec string, n int) string {
	parts := strings.SplitN(rec, " ", n+1)
	if len(parts) <= n {
		return ""
	}
	return parts[n]
}
