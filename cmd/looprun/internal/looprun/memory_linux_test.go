package looprun

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A command that prints a gigabyte (200 MB with -short) runs in bounded
// memory: looprun's peak resident size stays under 64 MiB, and the
// iteration's log holds the first 4 MiB and the last 1 MiB of the output.
// Kept whole, the gigabyte took looprun to 2.9 GiB.
//
// The peak is VmHWM of /proc/<pid>/status, which the second iteration
// reads while looprun runs: looprun's own peak since it started, the
// first iteration's reading, logging and extracting included. The
// Maxrss that wait4 reports is not asserted: it also counts the memory of
// this test binary, of which looprun is a copy until it runs (some 65 MiB
// with -race); it is logged. -quiet: looprun would show the gigabyte, and
// this test would hold it.
func TestGigabyteOfOutputStaysInBoundedMemory(t *testing.T) {
	size := 1_000_000_000
	if testing.Short() {
		size = 200_000_000
	}
	dir := t.TempDir()
	tmp := t.TempDir()
	hwm := filepath.Join(tmp, "hwm")
	script := fmt.Sprintf(`if [ ! -e "$MARK" ]; then
	: > "$MARK"
	head -c %d /dev/zero | tr '\0' y
	echo
	echo "Error: out of disk space" >&2
	exit 1
fi
grep VmHWM /proc/$PPID/status > "$HWM"
`, size)
	cmd := exec.Command(looprunBin, "-dir", dir, "-interactive", "no", "-quiet", "-max-iterations", "2", "-timeout", "5m", "--", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "MARK="+filepath.Join(tmp, "mark"), "HWM="+hwm)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := exited(t, cmd, cmd.Run())
	require.Equal(t, exitLimit, code, "%s%s", stdout.String(), stderr.String())
	assert.Empty(t, stderr.String())
	assert.Contains(t, stdout.String(), "Error: out of disk space", "the error at the end of the output is found")

	line, err := os.ReadFile(hwm) // "VmHWM:	   9120 kB"
	require.NoError(t, err)
	fields := strings.Fields(string(line))
	require.Len(t, fields, 3, "%q", line)
	require.Equal(t, "kB", fields[2])
	peak, err := strconv.Atoi(fields[1])
	require.NoError(t, err)
	t.Logf("peak resident size for %d bytes of output: %.1f MiB (Maxrss: %.1f MiB)",
		size, float64(peak)/1024, float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)/1024)
	assert.LessOrEqual(t, peak, 64<<10, "peak resident size in KiB")

	log, err := os.ReadFile(filepath.Join(dir, stateDirName, logsDirName, "loop-1.log"))
	require.NoError(t, err)
	cut := fmt.Sprintf("\n[looprun: %d bytes of output cut here; the last %d bytes follow]\n", size+len("\nError: out of disk space\n")-logHeadBytes-sampleBytes, sampleBytes)
	assert.Equal(t, logHeadBytes+len(cut)+sampleBytes, len(log))
	assert.Equal(t, bytes.Repeat([]byte("y"), logHeadBytes), log[:logHeadBytes])
	assert.Equal(t, cut, string(log[logHeadBytes:logHeadBytes+len(cut)]))
	assert.True(t, bytes.HasSuffix(log, []byte("yyy\nError: out of disk space\n")))
}
