package hook

import (
	"errors"
	"path/filepath"
	"strings"
)

// ErrNotCodexExec is why a Codex run was not ended: the hook was not run
// by a `codex exec` (Codex's interface has a person in front of it, who
// ends the run; the model's tool calls stay refused meanwhile).
var ErrNotCodexExec = errors.New("the hook was not run by codex exec")

// maxShellHops bounds the shells between the hook and the Codex that ran
// it: Codex runs a hook's command with a shell, which may stay the hook's
// parent.
const maxShellHops = 2

// process is what the hook reads of a process that may have run it.
type process struct {
	argv   []string
	parent int
}

// isCodexExec reports whether argv is Codex's, running exec (or its alias
// e): codex [flags] exec [flags] [prompt].
func isCodexExec(argv []string) bool {
	if len(argv) < 2 || programName(argv[0]) != "codex" {
		return false
	}
	if argv[1] == "e" {
		return true
	}
	for _, a := range argv[1:] {
		if a == "exec" {
			return true
		}
	}
	return false
}

// isShell reports whether argv is a shell's.
func isShell(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	switch programName(argv[0]) {
	case "sh", "bash", "dash", "zsh", "ksh":
		return true
	}
	return false
}

// programName is a program's name without its directory, its extension or
// a login shell's leading dash.
func programName(arg0 string) string {
	name := filepath.Base(strings.TrimPrefix(arg0, "-"))
	return strings.TrimSuffix(name, filepath.Ext(name))
}

// findCodexExec returns the process id of the `codex exec` that ran the
// process whose parent is parent, looking past up to maxShellHops shells
// between them; read reads a process.
func findCodexExec(parent int, read func(pid int) (process, error)) (int, error) {
	pid := parent
	for range maxShellHops + 1 {
		p, err := read(pid)
		if err != nil {
			return 0, err
		}
		if isCodexExec(p.argv) {
			return pid, nil
		}
		if !isShell(p.argv) || p.parent <= 1 {
			break
		}
		pid = p.parent
	}
	return 0, ErrNotCodexExec
}
