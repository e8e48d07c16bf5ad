package redisstore

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The failover tests kill the primary that holds the fleet's keys while
// 64 workers iterate, and measure what the fleet lost: the calls and the
// tokens the workers made against those the fleet counts at the end.
//
// To know what the primary held when it died, its writes are paused first
// (CLIENT PAUSE WRITE: the workers' scripts wait, as in a primary that
// hangs) and its counts read; then it is killed, with the workers' calls
// still waiting in it. The replica's counts once its link is down are what
// replication kept. So the loss splits exactly into what asynchronous
// replication lost (acknowledged on the primary, never on the replica) and
// the calls in flight when it died, at most one per worker, which count
// once or not at all: nothing may count twice.

const (
	failoverWorkers = 64
	tokensPerCall   = 10 // each iteration's input tokens
)

// failoverSetup is a Redis whose fleet keys live on primary, replicated to
// replica, and how to tell the replica took over.
type failoverSetup struct {
	client   redis.Scripter // the workers' client: a failover or a cluster client
	primary  *node
	replica  *node
	promoted func() bool // the replica is the primary now, for the clients
}

// failoverFigures are what a failover test measured.
type failoverFigures struct {
	madeCalls, countedCalls   int64
	madeTokens, countedTokens int64
	onPrimary, onReplica      int64 // calls the fleet had counted, on each, at the kill
	tokensOnPrimary           int64
	tokensOnReplica           int64
	outage                    time.Duration // from the kill until the replica took over
	outages                   int64         // outages the workers went through, all told
}

// counts reads the fleet's calls of the hour and input tokens from node n.
func counts(t *testing.T, c *redis.Client, name string) (calls, tokens int64) {
	t.Helper()
	v, err := c.HMGet(context.Background(), keysOf(name)[0], "used", "sin").Result()
	require.NoError(t, err)
	n := func(x any) int64 {
		s, _ := x.(string)
		f, _ := strconv.ParseFloat(s, 64)
		return int64(f)
	}
	return n(v[0]), n(v[1])
}

// runThroughFailover runs 64 workers of the fleet name on s.client,
// kills s.primary once the fleet has counted a few hundred calls, and
// goes on until every worker has rejoined the fleet on the promoted
// replica and the fleet has counted more; it returns the figures.
func runThroughFailover(t *testing.T, s failoverSetup, name string) failoverFigures {
	t.Helper()
	redis.SetLogger(quietLogger{})
	cfg := Config{
		Client:        s.client,
		Name:          name,
		RetryInterval: 50 * time.Millisecond,
		Breaker: loopbreaker.Config{
			Spend:    loopbreaker.SpendRules{MaxCallsPerHour: 100_000_000},
			Failures: loopbreaker.FailureRules{MaxConsecutive: -1, MaxSameError: -1},
		},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	workers := make([]*Worker, failoverWorkers)
	for i := range workers {
		c := cfg
		c.Worker = fmt.Sprintf("w%02d", i)
		w, err := New(c)
		require.NoError(t, err)
		workers[i] = w
	}
	var made, tokens atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if !w.Check().Allow {
					continue
				}
				made.Add(1)
				tokens.Add(tokensPerCall)
				w.Record(loopbreaker.Iteration{Usage: loopbreaker.Usage{InputTokens: tokensPerCall}})
				// An agent's iteration takes time; this one a
				// millisecond, so that the 64 leave the servers
				// some CPU.
				time.Sleep(time.Millisecond)
			}
		}()
	}
	stopped := false
	defer func() {
		if !stopped {
			close(stop)
			wg.Wait()
		}
	}()

	admin := s.primary.admin("", nil)
	replica := s.replica.admin("", nil)
	waitFor(t, 30*time.Second, "the fleet counting 300 calls on the primary", func() bool {
		calls, _ := counts(t, admin, name)
		return calls >= 300
	})

	var f failoverFigures
	require.NoError(t, admin.Do(context.Background(), "CLIENT", "PAUSE", "60000", "WRITE").Err())
	f.onPrimary, f.tokensOnPrimary = counts(t, admin, name)
	killed := time.Now()
	require.NoError(t, s.primary.cmd.Process.Signal(syscall.SIGKILL))
	_ = s.primary.cmd.Wait()
	s.primary.cmd = nil
	waitFor(t, 10*time.Second, "the replica seeing its primary gone", func() bool {
		info, err := replica.Info(context.Background(), "replication").Result()
		return err == nil && (strings.Contains(info, "master_link_status:down") || strings.Contains(info, "role:master"))
	})
	f.onReplica, f.tokensOnReplica = counts(t, replica, name)
	waitFor(t, 30*time.Second, "the replica promoted", s.promoted)
	f.outage = time.Since(killed)

	// The fleet goes on: every worker rejoins, and the promoted replica
	// counts more calls.
	waitFor(t, 30*time.Second, "every worker rejoining the fleet", func() bool {
		for _, w := range workers {
			w.mu.Lock()
			down := w.down
			w.mu.Unlock()
			if down {
				return false
			}
		}
		return true
	})
	after, _ := counts(t, replica, name)
	waitFor(t, 30*time.Second, "the fleet counting 300 calls more after the failover", func() bool {
		calls, _ := counts(t, replica, name)
		return calls >= after+300
	})
	close(stop)
	wg.Wait()
	stopped = true
	// A worker whose call timed out since (a busy machine) is on its own
	// breaker again: it rejoins, bringing its calls, before the count.
	waitFor(t, 30*time.Second, "every worker back in the fleet", func() bool {
		back := true
		for _, w := range workers {
			w.State() // tries Redis again once RetryInterval has passed
			w.mu.Lock()
			back = back && !w.down
			w.mu.Unlock()
		}
		return back
	})
	for _, w := range workers {
		w.mu.Lock()
		f.outages += int64(w.outage)
		w.mu.Unlock()
	}
	f.madeCalls, f.madeTokens = made.Load(), tokens.Load()
	f.countedCalls, f.countedTokens = counts(t, replica, name)

	st := workers[0].Stats()
	assert.Equal(t, int(f.countedCalls), st.Budget.Used, "the fleet's own figures say the same")
	return f
}

// checkFailoverFigures requires what the docs promise of a failover:
// nothing counted twice, and no more lost than replication lost and the
// call in flight when a worker lost Redis, one per outage of a worker (a
// worker whose call timed out on a busy machine, rejoined, and lost Redis
// again had two).
func checkFailoverFigures(t *testing.T, f failoverFigures) {
	t.Helper()
	lostCalls, lostTokens := f.madeCalls-f.countedCalls, f.madeTokens-f.countedTokens
	replication := f.onPrimary - f.onReplica
	t.Logf("made %d calls, the fleet counted %d: lost %d (replication %d of the %d the primary held, in flight %d, in %d outages of %d workers); "+
		"tokens made %d, counted %d: lost %d (replication %d); the replica took over %s after the kill",
		f.madeCalls, f.countedCalls, lostCalls, replication, f.onPrimary, lostCalls-replication, f.outages, failoverWorkers,
		f.madeTokens, f.countedTokens, lostTokens, f.tokensOnPrimary-f.tokensOnReplica, f.outage.Round(time.Millisecond))
	assert.GreaterOrEqual(t, lostCalls, int64(0), "no call counted twice")
	assert.GreaterOrEqual(t, lostTokens, int64(0), "no token counted twice")
	assert.GreaterOrEqual(t, replication, int64(0))
	assert.GreaterOrEqual(t, f.outages, int64(failoverWorkers), "every worker lost the primary")
	assert.LessOrEqual(t, lostCalls, replication+f.outages, "the loss is what replication lost and one call in flight per outage")
	assert.LessOrEqual(t, lostTokens, f.tokensOnPrimary-f.tokensOnReplica+f.outages*tokensPerCall)
}

// TestFleetGoesOnThroughASentinelFailover: a fleet behind Redis Sentinel
// (Debian's redis-sentinel, go-redis's failover client) whose primary is
// killed while 64 workers iterate goes on once the sentinel promotes the
// replica, and loses no more than the docs say.
func TestFleetGoesOnThroughASentinelFailover(t *testing.T) {
	primary := startNode(t, "redis-server")
	replica := startNode(t, "redis-server", "replicaof 127.0.0.1 "+strconv.Itoa(primary.port))
	ra := replica.admin("", nil)
	waitFor(t, 10*time.Second, "the replica in sync", func() bool {
		info, err := ra.Info(context.Background(), "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	})
	sentinel := startNode(t, "redis-sentinel",
		"sentinel monitor fleet 127.0.0.1 "+strconv.Itoa(primary.port)+" 1",
		"sentinel down-after-milliseconds fleet 1000",
		"sentinel failover-timeout fleet 5000")
	sa := redis.NewSentinelClient(&redis.Options{Addr: sentinel.addr()})
	defer sa.Close()
	waitFor(t, 20*time.Second, "the sentinel knowing the replica", func() bool {
		r, err := sa.Replicas(context.Background(), "fleet").Result()
		return err == nil && len(r) == 1
	})
	client := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName:            "fleet",
		SentinelAddrs:         []string{sentinel.addr()},
		ContextTimeoutEnabled: true,
		PoolSize:              failoverWorkers + 16,
		MaxRetries:            -1,
		DialerRetries:         1,
	})
	defer client.Close()
	replicaAddr := replica.addr()
	f := runThroughFailover(t, failoverSetup{
		client:  client,
		primary: primary,
		replica: replica,
		promoted: func() bool {
			addr, err := sa.GetMasterAddrByName(context.Background(), "fleet").Result()
			return err == nil && strings.Join(addr, ":") == replicaAddr
		},
	}, "sentinel")
	checkFailoverFigures(t, f)
}

// quietLogger drops go-redis's own log lines: a failover test's
// connections are refused by the hundred while the primary is down.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// TestFleetGoesOnThroughAClusterFailover: a fleet on a real Redis Cluster
// of three primaries, each with a replica, on loopback ports, keeps all
// its keys in one slot; when the primary of that slot is killed while 64
// workers iterate, its replica takes the slot over and the fleet goes on,
// losing no more than the docs say.
func TestFleetGoesOnThroughAClusterFailover(t *testing.T) {
	cli := lookRedis(t, "redis-cli")
	var nodes []*node
	var addrs []string
	for range 6 {
		n := startNode(t, "redis-server", "cluster-enabled yes", "cluster-config-file nodes.conf", "cluster-node-timeout 1000")
		nodes = append(nodes, n)
		addrs = append(addrs, n.addr())
	}
	create := exec.Command(cli, append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "1", "--cluster-yes")...)
	out, err := create.CombinedOutput()
	require.NoError(t, err, "%s", out)

	// The fleet's keys, one hash tag, are in one slot.
	name := "cluster"
	first := nodes[0].admin("", nil)
	slot, err := first.ClusterKeySlot(context.Background(), keysOf(name)[0]).Result()
	require.NoError(t, err)
	for _, k := range keysOf(name) {
		s, err := first.ClusterKeySlot(context.Background(), k).Result()
		require.NoError(t, err)
		assert.Equal(t, slot, s, k)
	}
	byAddr := map[string]*node{}
	for _, n := range nodes {
		byAddr[n.addr()] = n
	}
	// The primary of that slot, and its replica, once the cluster is up.
	var primary, replica *node
	waitFor(t, 30*time.Second, "the cluster up, with a replica for the fleet's slot", func() bool {
		p, r := slotNodes(first, slot)
		primary, replica = byAddr[p], byAddr[r]
		if primary == nil || replica == nil {
			return false
		}
		info, err := replica.admin("", nil).Info(context.Background(), "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	})
	client := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:                 addrs,
		ContextTimeoutEnabled: true,
		PoolSize:              failoverWorkers + 16,
		MaxRetries:            -1,
		DialerRetries:         1,
	})
	defer client.Close()
	replicaAddr := replica.addr()
	probe := byAddr[addrs[0]]
	if probe == primary {
		probe = byAddr[addrs[1]]
	}
	watcher := probe.admin("", nil)
	f := runThroughFailover(t, failoverSetup{
		client:  client,
		primary: primary,
		replica: replica,
		promoted: func() bool {
			p, _ := slotNodes(watcher, slot)
			return p == replicaAddr
		},
	}, name)
	checkFailoverFigures(t, f)
}

// slotNodes returns the addresses of the primary and of a replica that
// serve slot, as the node c asks says, online; "" for one it does not know.
func slotNodes(c *redis.Client, slot int64) (primary, replica string) {
	shards, err := c.ClusterShards(context.Background()).Result()
	if err != nil {
		return "", ""
	}
	for _, sh := range shards {
		for _, r := range sh.Slots {
			if r.Start > slot || slot > r.End {
				continue
			}
			for _, n := range sh.Nodes {
				addr := net.JoinHostPort(n.IP, strconv.FormatInt(n.Port, 10))
				switch {
				case n.Health != "online":
				case n.Role == "master":
					primary = addr
				case n.Role == "replica":
					replica = addr
				}
			}
		}
	}
	return primary, replica
}
