package redisstore

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/redis/go-redis/v9"
)

// Defaults used where a Config field is zero.
const (
	DefaultTimeout       = 200 * time.Millisecond
	DefaultRetryInterval = time.Second
	DefaultProbeLease    = 10 * time.Minute
	DefaultIdleTTL       = 24 * time.Hour
	DefaultPollInterval  = time.Second
)

// Config sets up one worker of a fleet. Name and Client are required; the
// zero value of every other field means its default.
type Config struct {
	// Client reaches the Redis that holds the fleet's breaker: a
	// *redis.Client, *redis.ClusterClient or *redis.Ring, or anything
	// that runs scripts. A *redis.Client or *redis.ClusterClient must be
	// made with ContextTimeoutEnabled: true, or go-redis ignores the
	// worker's Timeout and a Redis that stopped answering holds each call
	// for the client's ReadTimeout (New refuses it).
	Client redis.Scripter

	// Name names the fleet: workers with the same Name on the same Redis
	// share one breaker. Its keys are "{loopbreaker:<Name>}:..." (one
	// hash tag, so Redis Cluster keeps them on one slot). It must not be
	// empty or hold '{' or '}'.
	Name string

	// Worker names this worker in the fleet, e.g. its host and process;
	// the probe lease names its owner by it. Empty means the host name,
	// the process id and a random suffix. Two live workers must not share
	// a name.
	Worker string

	// Breaker is the breaker's Config, as for [loopbreaker.New]: the
	// thresholds of the shared signals, the call budget, the spend caps
	// and the waits of a provider limit without a reset time are applied
	// by Redis, those of the worker's own signals by its local breaker,
	// and all of them by the local breaker alone while Redis is out of
	// reach. Every worker of a
	// fleet should use the same thresholds: each call applies the calling
	// worker's. Its Now is the local clock (the outage timers, and the
	// local breaker); the shared state runs on Redis's clock.
	// [loopbreaker.Config.OnStateChange] hears the local breaker's
	// transitions, not the fleet's.
	Breaker loopbreaker.Config

	// Timeout bounds each call to Redis. Default 200ms.
	Timeout time.Duration

	// RetryInterval is how often, while Redis is out of reach, Check
	// tries it again. Default 1s.
	RetryInterval time.Duration

	// ProbeLease is how long the half-open probe may run: a probe not
	// recorded within it is lost (its worker died, or ran too long) and
	// the circuit opens again, as after a failed probe. Set it above
	// the longest iteration. Default 10m.
	ProbeLease time.Duration

	// IdleTTL is how long the keys of an idle breaker live: every call
	// sets it again, and no key expires while the circuit is open,
	// half-open or held. At least an hour (the call budget's window).
	// Default 24h.
	IdleTTL time.Duration

	// PollInterval is how often Wait asks again while another worker's
	// half-open probe runs. Default 1s.
	PollInterval time.Duration

	// FailClosed makes the worker refuse every iteration, with
	// [loopbreaker.ErrUnavailable], while Redis is out of reach. By default the
	// worker's local breaker decides alone.
	FailClosed bool

	// Logger receives one warning when Redis goes out of reach and one
	// line when the worker rejoins. Nil means slog.Default().
	Logger *slog.Logger
}

// ErrInvalidConfig is matched (errors.Is) by the error New returns for a
// Config it cannot use, and by the errors of an invalid Breaker config.
var ErrInvalidConfig = loopbreaker.ErrInvalidConfig

// validate reports every field that cannot be used.
func (c *Config) validate() error {
	var errs []error
	bad := func(field string, value any, reason string) {
		errs = append(errs, &loopbreaker.ConfigError{Field: field, Value: value, Reason: reason})
	}
	if c.Client == nil {
		bad("Client", nil, "is required")
	}
	if c.Name == "" || strings.ContainsAny(c.Name, "{}") {
		bad("Name", c.Name, "must not be empty or hold '{' or '}'")
	}
	for _, d := range []struct {
		field string
		value time.Duration
		min   time.Duration
	}{
		{"Timeout", c.Timeout, 0},
		{"RetryInterval", c.RetryInterval, 0},
		{"ProbeLease", c.ProbeLease, 0},
		{"PollInterval", c.PollInterval, 0},
	} {
		if d.value < d.min {
			bad(d.field, d.value, "must not be negative (zero means the default)")
		}
	}
	if c.IdleTTL != 0 && c.IdleTTL < time.Hour { // the call budget's window
		bad("IdleTTL", c.IdleTTL, "must be at least an hour, the call budget's window (zero means the default, 24h)")
	}
	if o := clientOptions(c.Client); o != nil && !*o {
		bad("Client", fmt.Sprintf("%T", c.Client), "must be made with ContextTimeoutEnabled: true, so that Timeout bounds each call")
	}
	if err := c.Breaker.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// clientOptions returns whether a client whose options it can read honours
// context deadlines; nil for one it cannot read.
func clientOptions(c redis.Scripter) *bool {
	var on bool
	switch c := c.(type) {
	case *redis.Client:
		on = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		on = c.Options().ContextTimeoutEnabled
	default:
		return nil
	}
	return &on
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	setDefault(&c.Timeout, DefaultTimeout)
	setDefault(&c.RetryInterval, DefaultRetryInterval)
	setDefault(&c.ProbeLease, DefaultProbeLease)
	setDefault(&c.IdleTTL, DefaultIdleTTL)
	setDefault(&c.PollInterval, DefaultPollInterval)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Breaker.Now == nil {
		c.Breaker.Now = time.Now
	}
	return c
}

func setDefault[T comparable](field *T, def T) {
	var zero T
	if *field == zero {
		*field = def
	}
}

// shared are the thresholds of the signals Redis judges, with the core's
// defaults applied, as the script reads them.
type shared struct {
	cooldowns       string // ms of the 1st, 2nd, ... open of a streak
	callsPerHour    int    // 0: no budget
	maxFailures     int    // -1: off
	maxSameError    int    // -1: off
	maxSameInARow   int    // 0: off
	maxFingerprints int
	maxOpens        int // openings in a row before giving up; 0: never

	// The spend caps; 0: no cap.
	maxTokens        int
	maxCost          float64
	maxTokensPerHour int
	maxCostPerHour   float64

	// The burn rate's caps (0: no cap) and its window; the window share
	// (0: no cap) and whether it stops rather than waits.
	maxCostPerMinute   float64
	maxTokensPerMinute int
	burnWindow         time.Duration
	maxWindowShare     int
	stopAtWindowShare  bool

	// How long a provider limit without a reset time lasts.
	limitWait, throttleWait time.Duration
}

// burning reports whether a burn-rate cap is set.
func (s shared) burning() bool { return s.maxCostPerMinute > 0 || s.maxTokensPerMinute > 0 }

// cooldownSteps is how many opens of a streak the cooldown table covers;
// later opens wait as long as the last.
const cooldownSteps = 16

// sharedOf returns the thresholds of cfg's shared signals. It calls cfg's
// CooldownPolicy, the host's code, once per step.
func sharedOf(cfg loopbreaker.Config) shared {
	s := shared{
		callsPerHour:    max(cfg.Spend.MaxCallsPerHour, 0),
		maxFailures:     orDefault(cfg.Failures.MaxConsecutive, loopbreaker.DefaultConfig().Failures.MaxConsecutive),
		maxSameError:    orDefault(cfg.Failures.MaxSameError, loopbreaker.DefaultConfig().Failures.MaxSameError),
		maxSameInARow:   max(cfg.Failures.MaxSameErrorInARow, 0),
		maxFingerprints: orDefault(cfg.Failures.MaxFingerprints, loopbreaker.DefaultConfig().Failures.MaxFingerprints),
		maxOpens:        max(orDefault(cfg.MaxConsecutiveOpens, loopbreaker.DefaultConfig().MaxConsecutiveOpens), 0),

		maxTokens:        max(cfg.Spend.MaxTokens, 0),
		maxCost:          math.Max(cfg.Spend.MaxCostUSD, 0),
		maxTokensPerHour: max(cfg.Spend.MaxTokensPerHour, 0),
		maxCostPerHour:   math.Max(cfg.Spend.MaxCostUSDPerHour, 0),

		maxCostPerMinute:   math.Max(cfg.Spend.MaxCostUSDPerMinute, 0),
		maxTokensPerMinute: max(cfg.Spend.MaxTokensPerMinute, 0),
		burnWindow:         orDefault(cfg.Spend.BurnWindow, loopbreaker.DefaultConfig().Spend.BurnWindow),
		maxWindowShare:     max(cfg.Spend.MaxWindowShare, 0),
		stopAtWindowShare:  cfg.Spend.StopAtWindowShare,

		limitWait:    orDefault(cfg.Limits.Wait, loopbreaker.DefaultConfig().Limits.Wait),
		throttleWait: orDefault(cfg.Limits.ThrottleWait, loopbreaker.DefaultConfig().Limits.ThrottleWait),
	}
	if s.maxFailures < 0 {
		s.maxFailures = -1
	}
	if s.maxSameError < 0 {
		s.maxSameError = -1
	}
	base := orDefault(cfg.Cooldown, loopbreaker.DefaultConfig().Cooldown)
	policy := cfg.CooldownPolicy
	if policy == nil {
		policy = loopbreaker.ConstantCooldown
	}
	steps := make([]string, cooldownSteps)
	for i := range steps {
		steps[i] = fmt.Sprint(max(policy(base, i+1), 0).Milliseconds())
	}
	s.cooldowns = strings.Join(steps, ",")
	return s
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// localConfig returns cfg with the shared signals and caps switched off:
// the local breaker of a worker in touch with Redis judges only the
// worker's own signals. (It still adds up the worker's own spend, which an
// outage starts from.)
func localConfig(cfg loopbreaker.Config) loopbreaker.Config {
	cfg.MaxConsecutiveOpens = -1 // the fleet's circuit gives up
	cfg.Failures.MaxConsecutive = -1
	cfg.Failures.MaxSameError = -1
	cfg.Failures.MaxSameErrorInARow = -1
	cfg.Spend.MaxCallsPerHour = -1
	cfg.Spend.MaxTokens, cfg.Spend.MaxCostUSD, cfg.Spend.MaxTokensPerHour, cfg.Spend.MaxCostUSDPerHour = -1, -1, -1, -1
	cfg.Spend.MaxCostUSDPerMinute, cfg.Spend.MaxTokensPerMinute = -1, -1
	cfg.Spend.MaxWindowShare, cfg.Spend.StopAtWindowShare = -1, false
	return cfg
}
