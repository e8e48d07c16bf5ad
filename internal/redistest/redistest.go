// Package redistest starts a redis-server of a test's own, on a unix
// socket in a temporary directory, for the tests of the commands and
// examples that run against Redis (looprun on a fleet, the fleet example).
// It speaks to the server with the standard library only, so that the
// core module it lives in needs no Redis client.
package redistest

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Start starts redis-server, without persistence, and returns its socket's
// path; the server stops when the test ends. Without redis-server the
// test is skipped, or fails under CI (CI set), where .ci/run installs it.
func Start(t testing.TB) string {
	t.Helper()
	server, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not installed; .ci/run installs it with apt-get")
		}
		t.Skip("redis-server is not installed (Debian: apt-get install redis-server)")
	}
	// A unix socket's path is short (about 100 bytes): t.TempDir's may be
	// too long.
	dir, err := os.MkdirTemp("", "lbredis")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(server, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	require.Eventually(t, func() bool { return ping(sock) },
		10*time.Second, 5*time.Millisecond, "redis-server did not answer")
	return sock
}

// ping reports whether a Redis answers PING on the socket.
func ping(sock string) bool {
	conn, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		return false
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(time.Second)); err != nil {
		return false
	}
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}
