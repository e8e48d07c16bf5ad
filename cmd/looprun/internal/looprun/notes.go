package looprun

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// The agent is told what the breaker knows, before the iteration after a
// stop (a person's resume or skip, or the probe after the cooldown) and
// while tasks are skipped: in place of notesPlaceholder in the prompt
// file, and in the file notesPath names, whose path the command gets in
// notesEnv. Nothing to tell: the placeholder is replaced by nothing, the
// file is removed, and the variable is empty.
const (
	notesPlaceholder = "{looprun_notes}"
	notesEnv         = "LOOPRUN_NOTES"
	notesSuffix      = ".notes.md"
)

// notesPath is the file of the loop's notes to the agent, in the state
// directory.
func (r *runner) notesPath() string {
	return filepath.Join(r.o.dir, stateDirName, r.o.name+notesSuffix)
}

// writeNotes writes what the next iteration's agent is told, or removes
// the file when there is nothing to tell, and returns the text and the
// file's absolute path ("" for none). A file that cannot be written is
// an error on stderr: the placeholder still carries the text.
func (r *runner) writeNotes(task string, skipped []string) (text, path string) {
	text = r.notes(task, skipped)
	file := r.notesPath()
	if text == "" {
		if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintln(r.errOut, "looprun: notes to the agent:", err)
		}
		return "", ""
	}
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		fmt.Fprintln(r.errOut, "looprun: notes to the agent:", err)
		return text, ""
	}
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	return text, file
}

// notes is what the agent is told before the iteration on task: why the
// loop stopped and what it kept meeting, what to try instead, and the
// tasks a person skipped. "" when there is nothing to tell.
func (r *runner) notes(task string, skipped []string) string {
	var b strings.Builder
	if a := r.stuck; a != nil {
		b.WriteString("## What looprun saw before this iteration\n\n")
		fmt.Fprintf(&b, "The loop was stopped: %s.\n", a.reason)
		if a.text != "" {
			from := ""
			if a.from != "" {
				from = ", from " + a.from
			}
			fmt.Fprintf(&b, "\nThe error it kept meeting (seen %d times%s):\n\n", max(a.seen, 1), from)
			for _, line := range strings.Split(a.text, "\n") {
				b.WriteString("    " + line + "\n")
			}
		}
		if a.task != "" {
			fmt.Fprintf(&b, "\nThe task it was stuck on: %q", a.task)
			if a.taskFailures > 0 {
				fmt.Fprintf(&b, " (%d failures in a row)", a.taskFailures)
			}
			b.WriteString(".\n")
		}
		if a.approaches != "" {
			fmt.Fprintf(&b, "\nThe approaches that went round without resolving anything: %s.\n", a.approaches)
		}
		if len(a.strategies.steps) > 0 {
			fmt.Fprintf(&b, "\nDo not try the same again. Try instead, in this order (%s):\n\n", a.strategies.source)
			for i, step := range a.strategies.steps {
				fmt.Fprintf(&b, "%d. %s\n", i+1, capitalize(step))
			}
		}
	}
	if len(skipped) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("## Skipped tasks\n\nA person chose to skip these tasks; leave them alone:\n\n")
		for _, t := range skipped {
			fmt.Fprintf(&b, "- %s\n", t)
		}
		if task != "" {
			fmt.Fprintf(&b, "\nWork on this task now: %s\n", task)
		}
	}
	return b.String()
}

// capitalize starts s with a capital letter.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return strings.ToUpper(string(r)) + s[n:]
}

// nextTask is the task of the plan's the iteration works on: its first
// open item that a person did not skip (Skip puts the task on the
// breaker's list), as ralph-claude-code's prompt has the agent take the
// first open item; the first open item when every one was skipped.
func nextTask(p plan, skipped []string) string {
	for _, item := range p.open {
		if !slices.ContainsFunc(skipped, func(s string) bool { return sameTask(s, item) }) {
			return item
		}
	}
	return p.next
}

// sameTask reports whether the breaker's name of a task (trimmed, at most
// 200 runes) is the plan's item.
func sameTask(name, item string) bool {
	item = strings.TrimSpace(item)
	if name == item {
		return true
	}
	return utf8.RuneCountInString(item) > 200 && strings.HasPrefix(item, name)
}
