package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/redis/go-redis/v9"
)

// commandCounter counts the scripts a client runs: the round trips of
// Check and Record (a connection's handshake, once, is not counted).
type commandCounter struct{ n atomic.Int64 }

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name == "evalsha" || name == "eval" {
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1) // one round trip for the pipeline; the worker sends none
		return next(ctx, cmds)
	}
}

// BenchmarkFleetCheckRecord runs 64 workers of one fleet (and, to compare,
// one), each a goroutine with its own Worker, doing Check and Record of a
// successful iteration with a call budget on, against a redis-server on
// this machine, on its unix socket and on loopback TCP; the "spend" runs
// add the spend caps, over the fleet's life and by the hour, and record
// each iteration's usage; the "share" runs add the burn rate's caps and
// the window share to those, with two usage windows reported. It reports
// the
// round trips to Redis per iteration, the p50 and p99 latency of one
// iteration's Check+Record, and the time Redis spent running the script
// per call (its own count, INFO commandstats: what bounds a fleet's
// iterations per second, as Redis runs one script at a time); ns/op is the
// fleet's time per iteration, all workers together.
func BenchmarkFleetCheckRecord(b *testing.B) {
	for _, bench := range []struct {
		network      string
		workers      int
		spend, share bool
	}{{"unix", 64, false, false}, {"tcp", 64, false, false}, {"unix", 1, false, false}, {"tcp", 1, false, false},
		{"unix", 64, true, false}, {"unix", 1, true, false}, {"unix", 64, true, true}, {"unix", 1, true, true}} {
		network, workers := bench.network, bench.workers
		name := fmt.Sprintf("%s/workers=%d", network, workers)
		cfg := loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCallsPerHour: 1 << 30}}
		var it loopbreaker.Iteration
		if bench.spend {
			name += "/spend"
			cfg.Spend.MaxTokens, cfg.Spend.MaxCostUSD, cfg.Spend.MaxTokensPerHour, cfg.Spend.MaxCostUSDPerHour = 1<<50, 1e12, 1<<50, 1e12
			it.Usage = loopbreaker.Usage{InputTokens: 1200, OutputTokens: 300, CostUSD: 0.0123}
		}
		if bench.share {
			name += "/share"
			cfg.Spend.MaxCostUSDPerMinute, cfg.Spend.MaxTokensPerMinute, cfg.Spend.MaxWindowShare = 1e12, 1<<50, 80
		}
		b.Run(name, func(b *testing.B) {
			srv := startRedisOn(b, true)
			client := srv.clientOn(b, network)
			counter := &commandCounter{}
			client.AddHook(counter)
			ws := make([]*Worker, workers)
			for i := range ws {
				w, err := New(Config{
					Client:  client,
					Name:    "bench-" + network,
					Worker:  fmt.Sprintf("w%02d", i),
					Breaker: cfg,
				})
				if err != nil {
					b.Fatal(err)
				}
				ws[i] = w
			}
			ws[0].Check() // loads the script
			if bench.share {
				reset := time.Now().Add(time.Hour)
				ws[0].ObserveWindow(loopbreaker.Window{Length: 5 * time.Hour, Used: 10, Reset: reset, Source: "api.anthropic.com"})
				ws[0].ObserveWindow(loopbreaker.Window{Length: 7 * 24 * time.Hour, Used: 10, Reset: reset, Source: "api.anthropic.com"})
			}
			var warm sync.WaitGroup
			for _, w := range ws { // dials the connections
				warm.Add(1)
				go func() {
					defer warm.Done()
					w.Check()
					w.Record(loopbreaker.Iteration{})
				}()
			}
			warm.Wait()
			var next atomic.Int64
			latencies := make([][]time.Duration, workers)
			counter.n.Store(0)
			if err := client.ConfigResetStat(context.Background()).Err(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			var wg sync.WaitGroup
			for i, w := range ws {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						start := time.Now()
						if !w.Check().Allow {
							b.Error("refused")
							return
						}
						w.Record(it)
						latencies[i] = append(latencies[i], time.Since(start))
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			all := slices.Concat(latencies...)
			slices.Sort(all)
			if len(all) == 0 {
				return
			}
			b.ReportMetric(float64(counter.n.Load())/float64(b.N), "roundtrips/op")
			b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(scriptMicros(b, client), "script-µs/call")
		})
	}
}

// scriptMicros returns the microseconds Redis spent per run of the script
// since its statistics were last reset.
func scriptMicros(b *testing.B, client *redis.Client) float64 {
	info, err := client.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if !strings.HasPrefix(line, "cmdstat_evalsha:") {
			continue
		}
		for _, field := range strings.Split(strings.TrimSpace(strings.TrimPrefix(line, "cmdstat_evalsha:")), ",") {
			if v, ok := strings.CutPrefix(field, "usec_per_call="); ok {
				f, _ := strconv.ParseFloat(v, 64)
				return f
			}
		}
	}
	return 0
}
