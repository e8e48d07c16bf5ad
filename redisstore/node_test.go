package redisstore

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// node is a redis-server (or redis-sentinel) of a test's own on a loopback
// TCP port, set up by the lines of its configuration file, with nothing
// saved to disk. The production tests run several: TLS, Sentinel, Cluster.
type node struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	conf string
	cmd  *exec.Cmd
	log  string

	cluster bool // cluster-enabled: its admin reads a replica's keys too (READONLY)
}

// lookRedis returns the path of the Debian program name (redis-server,
// redis-sentinel, redis-cli); without it the test is skipped, but in CI,
// whose .ci/run installs it, where it fails.
func lookRedis(t testing.TB, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed; .ci/run installs it with apt-get", name)
		}
		t.Skipf("%s is not installed (Debian: apt-get install redis-server redis-sentinel); the production tests run it", name)
	}
	return bin
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startNode starts program (redis-server or redis-sentinel) on a free
// loopback port with the configuration lines given, waits until its port
// takes connections, and stops it when the test ends.
func startNode(t testing.TB, program string, lines ...string) *node {
	t.Helper()
	n := &node{t: t, bin: lookRedis(t, program), port: freePort(t)}
	dir, err := os.MkdirTemp("", "lbnode")
	require.NoError(t, err)
	n.dir = dir
	n.log = filepath.Join(dir, "redis.log")
	n.conf = filepath.Join(dir, "redis.conf")
	base := []string{
		"bind 127.0.0.1",
		"port " + strconv.Itoa(n.port),
		"dir " + dir,
		"logfile " + n.log,
		"save \"\"",
		"appendonly no",
	}
	if program == "redis-sentinel" {
		base = base[:4]
	}
	for i, l := range lines {
		n.cluster = n.cluster || l == "cluster-enabled yes"
		if l == "tls-port PORT" { // TLS only, on the node's port
			lines = append([]string(nil), lines...)
			lines[i], base[1] = base[1], "port 0"
			lines[i] = "tls-port " + strconv.Itoa(n.port)
		}
	}
	require.NoError(t, os.WriteFile(n.conf, []byte(strings.Join(append(base, lines...), "\n")+"\n"), 0o600))
	t.Cleanup(func() {
		n.kill()
		os.RemoveAll(dir)
	})
	n.start()
	return n
}

// addr is the node's host:port.
func (n *node) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.port)) }

// start starts the node and waits until its port answers.
func (n *node) start() {
	n.t.Helper()
	n.cmd = exec.Command(n.bin, n.conf)
	require.NoError(n.t, n.cmd.Start())
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", n.addr(), time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(n.log)
			n.t.Fatalf("%s on %s did not take connections: %v\n%s", filepath.Base(n.bin), n.addr(), err, log)
		}
		time.Sleep(5 * time.Millisecond) // waiting for the server to listen, no assertion on time
	}
}

// kill kills the node, as a crash would, and waits for it to go.
func (n *node) kill() {
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Kill()
	_ = n.cmd.Wait()
	n.cmd = nil
}

// admin returns a client of the node as the default user (password
// optional), for the test's own commands, closed when the test ends.
func (n *node) admin(password string, tlsConfig *tls.Config) *redis.Client {
	opts := &redis.Options{Addr: n.addr(), Password: password, TLSConfig: tlsConfig, ContextTimeoutEnabled: true}
	if n.cluster {
		opts.OnConnect = func(ctx context.Context, cn *redis.Conn) error { return cn.ReadOnly(ctx).Err() }
	}
	c := redis.NewClient(opts)
	n.t.Cleanup(func() { c.Close() })
	return c
}

// waitFor polls cond until it holds, at most within, and fails the test
// with what otherwise. It waits for a real server's condition (a failover,
// a replica in sync); it asserts nothing about how long that took.
func waitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pki is a certificate authority a test makes, and the files of a server
// certificate it signed for 127.0.0.1.
type pki struct {
	pool               *x509.CertPool
	ca, cert, key      string // PEM files
	clientCert         tls.Certificate
	clientCert2Unknown tls.Certificate // signed by another authority
}

// makePKI makes a CA and a server certificate for 127.0.0.1 in dir, and a
// client certificate; each key is a fresh ECDSA P-256 key.
func makePKI(t testing.TB, dir string) *pki {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		return k
	}
	serial := int64(1)
	sign := func(tmpl, parent *x509.Certificate, pub any, signer *ecdsa.PrivateKey) *x509.Certificate {
		serial++
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
		require.NoError(t, err)
		c, err := x509.ParseCertificate(der)
		require.NoError(t, err)
		return c
	}
	caTmpl := func(name string) *x509.Certificate {
		return &x509.Certificate{Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	}
	caKey := newKey()
	ca := caTmpl("loopbreaker test CA")
	caCert := sign(ca, ca, &caKey.PublicKey, caKey)
	otherKey := newKey()
	other := caTmpl("another CA")
	otherCert := sign(other, other, &otherKey.PublicKey, otherKey)

	serverKey := newKey()
	serverCert := sign(&x509.Certificate{Subject: pkix.Name{CommonName: "redis"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature},
		caCert, &serverKey.PublicKey, caKey)
	client := func(parent *x509.Certificate, parentKey *ecdsa.PrivateKey) tls.Certificate {
		k := newKey()
		c := sign(&x509.Certificate{Subject: pkix.Name{CommonName: "worker"},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature},
			parent, &k.PublicKey, parentKey)
		return tls.Certificate{Certificate: [][]byte{c.Raw}, PrivateKey: k}
	}

	writePEM := func(name, kind string, der []byte) string {
		var b bytes.Buffer
		require.NoError(t, pem.Encode(&b, &pem.Block{Type: kind, Bytes: der}))
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b.Bytes(), 0o600))
		return p
	}
	keyDER, err := x509.MarshalECPrivateKey(serverKey)
	require.NoError(t, err)
	p := &pki{pool: x509.NewCertPool()}
	p.pool.AddCert(caCert)
	p.ca = writePEM("ca.crt", "CERTIFICATE", caCert.Raw)
	p.cert = writePEM("redis.crt", "CERTIFICATE", serverCert.Raw)
	p.key = writePEM("redis.key", "EC PRIVATE KEY", keyDER)
	p.clientCert = client(caCert, caKey)
	p.clientCert2Unknown = client(otherCert, otherKey)
	return p
}

// tlsFor returns a client TLS config that trusts pool and shows cert.
func tlsFor(pool *x509.CertPool, cert *tls.Certificate) *tls.Config {
	c := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != nil {
		c.Certificates = []tls.Certificate{*cert}
	}
	return c
}

// aclLine is the ACL rule docs/fleet.md gives, for user, password and
// fleet: the fleet's keys, and the commands a worker sends: EVALSHA and
// EVAL, and the commands the script runs, read from the script itself.
// (HELLO and AUTH are every user's; go-redis ignores a refused CLIENT
// SETINFO.)
func aclLine(user, password, fleet string) string {
	return fmt.Sprintf("user %s on >%s resetkeys ~{loopbreaker:%s}:* resetchannels -@all %s", user, password, fleet, aclCommands())
}

// aclCommands are the commands a worker needs, as ACL rules.
func aclCommands() string {
	seen := map[string]bool{}
	rules := []string{"+evalsha", "+eval"}
	for _, m := range regexp.MustCompile(`redis\.call\('([A-Z]+)'`).FindAllStringSubmatch(fleetSource, -1) {
		if name := strings.ToLower(m[1]); !seen[name] {
			seen[name] = true
			rules = append(rules, "+"+name)
		}
	}
	sort.Strings(rules[2:])
	return strings.Join(rules, " ")
}
