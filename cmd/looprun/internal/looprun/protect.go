package looprun

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/loopbreaker/loopbreaker/protect"
)

// The protected files: looprun's Guard keeps the paths of -protect from the
// agent, checking them after each iteration (through the breaker), and
// checks looprun's own command line before the loop starts.

// withStateDir returns the protected paths with the state directory among
// them.
func withStateDir(paths []string) []string {
	for _, p := range paths {
		if path.Clean(filepath.ToSlash(p)) == stateDirName {
			return paths
		}
	}
	return append([]string{stateDirName + "/"}, paths...)
}

// newGuard makes the loop's Guard. What looprun itself writes and deletes
// in the state directory is left out of the check: the iteration logs,
// which it prunes, the copies, the state store's temporary and
// moved-aside files, and the journal. Each loop keeps its copies apart, so loops of other
// names in the same directory do not remove them.
func newGuard(o *options) (*protect.Guard, error) {
	return protect.New(o.dir, protect.Config{
		Protected: o.protect,
		Exclude: []string{
			stateDirName + "/" + logsDirName + "/",
			stateDirName + "/protected/",
			stateDirName + "/.*.tmp-*",
			stateDirName + "/*.corrupt-*",
			stateDirName + "/*" + notesSuffix,
			// The journal, which grows each iteration (a copy of it each
			// time would cost more than the loop), the hooks' events and
			// the reports: looprun's account of the loop, not its memory.
			stateDirName + "/*.journal.jsonl*",
			stateDirName + "/*.hook-events.jsonl*",
			stateDirName + "/*.report.html",
			// The session offered to the next run, which looprun drops
			// when the circuit opens, and the sessions that ended.
			stateDirName + "/*.session.json",
			stateDirName + "/*.sessions.jsonl",
		},
		BackupDir: filepath.Join(stateDirName, "protected", o.name),
	})
}

// checkOwnCommand refuses a command line of the person's own that would
// delete a protected path, as a shell would read it: looprun runs it
// without a shell, but sh -c '...' is a shell. What the checker cannot
// tell (a variable of the environment, which it does not read) is the
// person's business, not a refusal: note says so, and the check after
// each iteration stands behind it.
func checkOwnCommand(g *protect.Guard, o *options) (note string, err error) {
	if len(o.argv) == 0 {
		return "", nil
	}
	err = g.CheckCommand(shellLine(o.argv), o.dir)
	var refusal *protect.RefusalError
	switch {
	case !errors.As(err, &refusal):
		return "", err
	case refusal.Path == "":
		return fmt.Sprintf("%s: %s; the protected files are checked after each iteration", refusal.Command, refusal.Reason), nil
	}
	return "", fmt.Errorf("refusing to run the command: %s: %s\n(the command line is yours, not the agent's: change it, or leave %s out of -protect)", refusal.Command, refusal.Reason, refusal.Path)
}

// shellLine quotes argv for a POSIX shell.
func shellLine(argv []string) string {
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// maxLossLines bounds the lines of the summary's list of losses.
const maxLossLines = 20

// lostSummary lists, after the summary, what the last iteration's check
// found lost and what was restored.
func (r *runner) lostSummary() {
	loss := r.guard.LastLoss()
	if loss == nil {
		return
	}
	fmt.Fprintf(r.out, "\nprotected files lost in the last iteration (copies in %s):\n", filepath.Join(stateDirName, "protected", r.o.name))
	for i, l := range loss.Lost {
		if i == maxLossLines {
			fmt.Fprintf(r.out, "  and %d more\n", len(loss.Lost)-i)
			break
		}
		fmt.Fprintf(r.out, "  %s\n", l)
	}
}
