//go:build unix

package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// endWait bounds how long the hook waits, once it interrupted the agent,
// for the agent to end.
const endWait = 5 * time.Second

// interruptAncestor ends the agent's run that ran this hook as Ctrl-C
// does: it sends SIGINT to the agent's process, the hook's parent or the
// parent of the shells between (findAncestor: the first whose argv is
// the agent's, as isAgent says). The hook waits for the agent to end (up
// to endWait), its answer written: a hook that ended first would let the
// agent take its answer and ask the model again before the signal lands.
// notFound is the error when no such process ran the hook.
func interruptAncestor(isAgent func(argv []string) bool, notFound error) error {
	parent := os.Getppid()
	pid, err := findAncestor(parent, isAgent, notFound, readProcess)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGINT); err != nil {
		return err
	}
	for deadline := time.Now().Add(endWait); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil || os.Getppid() != parent {
			break // the agent is gone, or the shell between
		}
	}
	return nil
}

// readProcess reads a process's arguments and parent from /proc, or from
// ps(1) where there is no /proc (macOS, the BSDs: its arguments then are
// its command line split at spaces).
func readProcess(pid int) (process, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	cmdline, err := os.ReadFile(dir + "/cmdline")
	if errors.Is(err, fs.ErrNotExist) {
		if _, statErr := os.Stat("/proc/self"); errors.Is(statErr, fs.ErrNotExist) {
			return readProcessPS(pid)
		}
	}
	if err != nil {
		return process{}, err
	}
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return process{}, err
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 2 {
		return process{}, fmt.Errorf("%s/stat: %q", dir, stat)
	}
	parent, err := strconv.Atoi(fields[1])
	if err != nil {
		return process{}, fmt.Errorf("%s/stat: %w", dir, err)
	}
	return process{argv: strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00"), parent: parent}, nil
}

// readProcessPS reads a process with ps(1).
func readProcessPS(pid int) (process, error) {
	out, err := exec.Command("ps", "-o", "ppid=", "-o", "command=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return process{}, fmt.Errorf("ps -p %d: %w", pid, err)
	}
	fields := strings.Fields(string(out))
	if len(fields) < 2 {
		return process{}, fmt.Errorf("ps -p %d: %q", pid, out)
	}
	parent, err := strconv.Atoi(fields[0])
	if err != nil {
		return process{}, fmt.Errorf("ps -p %d: %w", pid, err)
	}
	return process{argv: fields[1:], parent: parent}, nil
}
