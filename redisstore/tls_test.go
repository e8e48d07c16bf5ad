package redisstore

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopbreaker/loopbreaker"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tlsServer starts a redis-server that speaks only TLS, with a certificate
// of the test's own CA, requires clients to show a certificate of that
// CA, and has the fleet's ACL user for the fleet "tls", a user whose
// rights cover another fleet's keys only, and an admin.
func tlsServer(t *testing.T) (*node, *pki) {
	t.Helper()
	dir := t.TempDir()
	p := makePKI(t, dir)
	n := startNode(t, "redis-server",
		"tls-port PORT", // replaced below: the port is the node's
		"tls-cert-file "+p.cert, "tls-key-file "+p.key, "tls-ca-cert-file "+p.ca,
		"tls-auth-clients yes",
		"user default on >admin-secret ~* &* +@all",
		aclLine("fleet", "s3cret-fleet-pw", "tls"),
		aclLine("stranger", "s3cret-stranger-pw", "another"),
	)
	return n, p
}

// TestWorkerOnTLSWithAnACLUser: a worker reaches Redis on rediss:// with a
// certificate of the test's own CA, as an ACL user allowed only the
// fleet's keys and the commands the docs list, and the fleet works: its
// failures open the circuit for another worker on the same terms.
func TestWorkerOnTLSWithAnACLUser(t *testing.T) {
	n, p := tlsServer(t)
	newWorker := func(url string, tlsConfig *tls.Config) *Worker {
		opts, err := redis.ParseURL(url)
		require.NoError(t, err)
		opts.ContextTimeoutEnabled = true
		opts.MaxRetries = -1
		if tlsConfig != nil {
			opts.TLSConfig = tlsConfig
		}
		c := redis.NewClient(opts)
		t.Cleanup(func() { c.Close() })
		w, err := New(Config{Client: c, Name: "tls", Breaker: loopbreaker.Config{Failures: loopbreaker.FailureRules{MaxConsecutive: 2}}})
		require.NoError(t, err)
		return w
	}
	url := fmt.Sprintf("rediss://fleet:s3cret-fleet-pw@%s/0", n.addr())
	good := tlsFor(p.pool, &p.clientCert)
	a, b := newWorker(url, good), newWorker(url, good)
	require.NoError(t, a.Ping())

	require.True(t, a.Check().Allow)
	a.RecordFailure("deploy: connection refused")
	require.True(t, b.Check().Allow)
	b.RecordFailure("deploy: connection refused")
	d := a.Check()
	assert.False(t, d.Allow, "the fleet's second failure in a row opened the circuit")
	assert.Equal(t, loopbreaker.ReasonConsecutiveFailures, d.Reason.Kind)
	assert.Equal(t, 2, b.Stats().Failures.Consecutive)
}

// TestTLSAndACLMistakesAreClearErrors: a certificate the worker does not
// trust, a client certificate of another CA, a wrong password and a user
// without rights on the fleet's keys are each an error that says so and
// names Redis's address, never the password; a worker on them does not
// count as being in the fleet.
func TestTLSAndACLMistakesAreClearErrors(t *testing.T) {
	n, p := tlsServer(t)
	otherCA := makePKI(t, t.TempDir()).pool // another CA of the test's: not the server's
	cases := []struct {
		name     string
		url      string
		tls      *tls.Config
		password string
		want     []string
	}{
		{"server certificate of a CA the worker does not trust",
			"rediss://fleet:s3cret-fleet-pw@%s/0", tlsFor(otherCA, &p.clientCert), "s3cret-fleet-pw",
			[]string{"certificate signed by unknown authority"}},
		{"client certificate of another CA",
			// Under TLS 1.3 the client's handshake ends before the server
			// judges its certificate: the refusal comes as the server's
			// alert, or as the connection closed, on the first command.
			"rediss://fleet:s3cret-fleet-pw@%s/0", tlsFor(p.pool, &p.clientCert2Unknown), "s3cret-fleet-pw",
			[]string{"certificate|connection reset|broken pipe|EOF"}},
		{"wrong password",
			"rediss://fleet:not-the-pw-123@%s/0", tlsFor(p.pool, &p.clientCert), "not-the-pw-123",
			[]string{"WRONGPASS"}},
		{"a user without rights on the fleet's keys",
			"rediss://stranger:s3cret-stranger-pw@%s/0", tlsFor(p.pool, &p.clientCert), "s3cret-stranger-pw",
			[]string{"NOPERM"}},
		{"plain TCP to a TLS port",
			"redis://fleet:s3cret-fleet-pw@%s/0", nil, "s3cret-fleet-pw",
			nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := redis.ParseURL(fmt.Sprintf(tc.url, n.addr()))
			require.NoError(t, err)
			// One dial per call: with go-redis's retries, a refused
			// handshake can outlast the worker's Timeout, and the error
			// then says only that the deadline passed.
			opts.ContextTimeoutEnabled, opts.MaxRetries, opts.DialerRetries, opts.TLSConfig = true, -1, 1, tc.tls
			c := redis.NewClient(opts)
			defer c.Close()
			var logged strings.Builder
			w, err := New(Config{Client: c, Name: "tls", Logger: slog.New(slog.NewTextHandler(&logged, nil))})
			require.NoError(t, err)
			err = w.Ping()
			require.Error(t, err)
			msg := err.Error()
			assert.Contains(t, msg, "redis at "+n.addr()+": ", "names the address")
			for _, want := range tc.want {
				assert.Regexp(t, want, msg)
			}
			assert.NotContains(t, msg, tc.password)

			// A worker on them goes on under its own breaker, and the
			// warning it logs names the cause without the password.
			assert.True(t, w.Check().Allow)
			assert.Contains(t, logged.String(), "out of reach")
			assert.NotContains(t, logged.String(), tc.password)
			var nerr interface{ Timeout() bool }
			assert.False(t, errors.As(err, &nerr) && nerr.Timeout(), "refused at once, not timed out: %v", err)
		})
	}
}

// TestDocsGiveTheACLLineTheTestsUse: the ACL rule docs/fleet.md tells
// users to give the fleet's user is the one the TLS tests run with.
func TestDocsGiveTheACLLineTheTestsUse(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "fleet.md"))
	require.NoError(t, err)
	line := aclLine("loopbreaker", "PASSWORD", "NAME")
	assert.True(t, strings.Contains(string(doc), line), "docs/fleet.md lacks the ACL line:\n%s", line)
}
