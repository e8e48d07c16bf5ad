//go:build linux

package looprun

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2).
const prSetChildSubreaper = 36

// subreaper is set when looprun has become a child subreaper: stopLeftovers
// then kills every child of the process once a command has ended.
var subreaper bool

// becomeSubreaper makes looprun a child subreaper: a process whose parent
// ends while it runs, however far below looprun it was started, becomes
// looprun's child instead of init's. A command's process that left its
// process group (setsid, a daemon's double fork) is found that way after
// the command has ended. Where the kernel refuses (before Linux 3.4),
// looprun kills the process group alone.
func becomeSubreaper() {
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	subreaper = errno == 0
}

// stopLeftovers kills what cmd left running once it has ended: its
// process group, and, when looprun is a subreaper, every process that has
// become looprun's child, which is whatever the command started and
// outlived it, in its group or not. They are killed with SIGKILL and
// reaped, so that no zombie is left.
func stopLeftovers(cmd *exec.Cmd) {
	killGroup(cmd)
	if subreaper {
		killOrphans()
	}
}

// killOrphans kills and reaps every child of looprun. It runs only when
// os/exec waits for none: looprun runs its commands, and git, one at a
// time, and os/exec has reaped the last, so every child left is an orphan
// it adopted. Each one killed gives looprun its own children, so this
// goes on until a round finds none to reap.
func killOrphans() {
	self := os.Getpid()
	for {
		pids := childrenOf(self)
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL) // a zombie already is gone: fine
		}
		reaped := 0
		for _, pid := range pids {
			if reap(pid) {
				reaped++
			}
		}
		if reaped == 0 {
			return
		}
	}
}

// reap waits for the child pid to end and reaps it; false when it is not
// looprun's child (any more).
func reap(pid int) bool {
	for {
		var status syscall.WaitStatus
		_, err := syscall.Wait4(pid, &status, 0, nil)
		if !errors.Is(err, syscall.EINTR) {
			return err == nil
		}
	}
}

// childrenOf lists the processes whose parent is pid, from /proc.
func childrenOf(pid int) []int {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil
	}
	var children []int
	for _, name := range names {
		child, err := strconv.Atoi(name)
		if err != nil {
			continue // not a process
		}
		if parent, ok := parentOf(name); ok && parent == pid {
			children = append(children, child)
		}
	}
	return children
}

// parentOf reads the parent's pid from /proc/<pid>/stat.
func parentOf(pid string) (int, bool) {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, false // ended meanwhile
	}
	return parentFromStat(stat)
}

// parentFromStat reads the parent's pid from the text of /proc/<pid>/stat,
// whose fields are "pid (command) state ppid ...". The command may hold
// spaces and parentheses, so the fields are counted from the last ')'.
func parentFromStat(stat []byte) (int, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	fields := bytes.Fields(stat[i+1:])
	if len(fields) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(fields[1]))
	return ppid, err == nil
}
