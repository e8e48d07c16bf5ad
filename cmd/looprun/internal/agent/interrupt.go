package agent

import (
	"path/filepath"
	"strings"
)

// maxShellHops bounds the shells between the hook and the agent that ran
// it: an agent runs a hook's command with a shell, which may stay the
// hook's parent.
const maxShellHops = 2

// process is what the hook reads of a process that may have run it.
type process struct {
	argv   []string
	parent int
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

// findAncestor returns the process id of the agent's process (isAgent
// says which) that ran the process whose parent is parent, looking past
// up to maxShellHops shells between them; read reads a process. notFound
// is the error when there is none.
func findAncestor(parent int, isAgent func(argv []string) bool, notFound error, read func(pid int) (process, error)) (int, error) {
	pid := parent
	for range maxShellHops + 1 {
		p, err := read(pid)
		if err != nil {
			return 0, err
		}
		if isAgent(p.argv) {
			return pid, nil
		}
		if !isShell(p.argv) || p.parent <= 1 {
			break
		}
		pid = p.parent
	}
	return 0, notFound
}
