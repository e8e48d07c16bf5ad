package looprun

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// excludeStateDir keeps looprun's state directory out of git: it adds
// the directory, anchored at its place in the repository
// ("/.loopbreaker/", "/service/.loopbreaker/"), to the repository's
// .git/info/exclude, which git reads as it reads a .gitignore but which
// is no tracked file. An agent that runs `git add -A` does not commit the
// state, the logs, or the copies of the protected files. It reports
// whether it added the line; outside a git repository it does nothing.
func excludeStateDir(dir string) (bool, error) {
	where, err := git(dir, "rev-parse", "--show-prefix", "--git-path", "info/exclude")
	if err != nil {
		return false, nil // not a repository, or no git
	}
	prefix, path, ok := strings.Cut(strings.TrimSuffix(where, "\n"), "\n")
	if !ok || path == "" {
		return false, fmt.Errorf("git rev-parse said %q", where)
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	pattern := "/" + prefix + stateDirName + "/"
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == pattern {
			return false, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return false, err
	}
	var line string
	if len(data) > 0 && data[len(data)-1] != '\n' {
		line = "\n"
	}
	line += "# looprun's state, logs and copies of protected files\n" + pattern + "\n"
	_, err = f.WriteString(line)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	return err == nil, err
}

// statePathspec leaves looprun's state directory out of a commit, should
// it be tracked all the same. (git add refuses it: it names a path that
// .git/info/exclude ignores.)
const statePathspec = ":(exclude)" + stateDirName

// commitChanges commits what changed under dir, the state directory left
// out: `git add -A` and `git commit -m message`, both limited to dir, so
// that a -dir inside a repository commits its own files alone, and what a
// person staged elsewhere stays staged. With nothing changed there is no
// commit (committed is false, and no error): an empty commit would say
// nothing. It returns the new commit's short hash.
func commitChanges(dir, message string) (hash string, committed bool, err error) {
	if out, err := gitCombined(dir, "add", "-A", "--", "."); err != nil {
		return "", false, fmt.Errorf("git add: %w: %s", err, out)
	}
	diff := exec.Command("git", "diff", "--cached", "--quiet", "--", ".", statePathspec)
	diff.Dir = dir
	var exitErr *exec.ExitError
	switch err := diff.Run(); {
	case err == nil:
		return "", false, nil // nothing staged under dir
	case !errors.As(err, &exitErr) || exitErr.ExitCode() != 1:
		return "", false, fmt.Errorf("git diff --cached: %w", err)
	}
	if out, err := gitCombined(dir, "commit", "-q", "-m", message, "--", ".", statePathspec); err != nil {
		return "", false, fmt.Errorf("git commit: %w: %s", err, out)
	}
	hash, err = git(dir, "rev-parse", "--short", "HEAD")
	return strings.TrimSpace(hash), true, err
}

// commitLine is the command line commitChanges runs, as a shell would
// read it, for the protected files' check of commands.
func commitLine(message string) string {
	return shellLine([]string{"git", "add", "-A", "--", "."}) + " && " +
		shellLine([]string{"git", "commit", "-q", "-m", message, "--", ".", statePathspec})
}

// commitMessage names the iteration, and what it worked on: its task, or
// else what it changed.
func commitMessage(iteration int, task string, files int) string {
	what := task
	if what == "" {
		what = fmt.Sprintf("%d files changed", files)
		if files == 1 {
			what = "1 file changed"
		}
	}
	return fmt.Sprintf("looprun: iteration %d (%s)", iteration, firstLine(what))
}

// gitCombined runs git in dir and returns its output, stdout and stderr
// together, trimmed.
func gitCombined(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}
