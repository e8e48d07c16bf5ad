package loopbreaker

import "time"

// CooldownPolicy returns how long the circuit stays open, from base
// ([Config.Cooldown]) and the openings since it last closed (1 for the
// first). A negative result is zero. It runs under the breaker's lock and
// must not call the breaker.
type CooldownPolicy func(base time.Duration, opens int) time.Duration

// ConstantCooldown is the default policy: every opening waits base, as in
// ralph-starter.
func ConstantCooldown(base time.Duration, opens int) time.Duration { return base }

// DoublingCooldown returns superkit's policy: base, doubled after each
// failed probe, up to ceiling (zero or less: no ceiling).
func DoublingCooldown(ceiling time.Duration) CooldownPolicy {
	if ceiling <= 0 {
		ceiling = maxDuration
	}
	return func(base time.Duration, opens int) time.Duration {
		d := base
		for i := 1; i < opens && d < ceiling; i++ {
			if d > maxDuration/2 {
				return ceiling
			}
			d *= 2
		}
		return min(d, ceiling)
	}
}

const maxDuration = time.Duration(1<<63 - 1)
