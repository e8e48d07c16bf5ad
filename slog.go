package loopbreaker

import "log/slog"

// LogValue makes Stats a log/slog group of its key fields: the state,
// counts and, when they apply, the reason, budget, limit and spend.
func (s Stats) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 18)
	attrs = append(attrs,
		slog.String("state", s.State.String()),
		slog.Int("iterations", s.Iterations),
		slog.Int("consecutive_failures", s.Failures.Consecutive),
		slog.Int("total_failures", s.Failures.Total),
		slog.Int("unique_errors", s.Failures.Unique),
		slog.Int("opens", s.Opens),
	)
	if s.Reason.Kind != ReasonNone {
		attrs = append(attrs, slog.String("reason", s.Reason.String()), slog.String("reason_kind", s.Reason.Kind.String()))
	}
	if s.RetryAfter > 0 {
		attrs = append(attrs, slog.Duration("retry_after", s.RetryAfter))
	}
	if s.Complete.Kind != ReasonNone {
		attrs = append(attrs, slog.String("complete", s.Complete.String()))
	}
	if s.Budget.Limit > 0 {
		attrs = append(attrs, slog.Int("budget_used", s.Budget.Used), slog.Int("budget_limit", s.Budget.Limit))
	}
	if s.ProviderLimit.Kind != ReasonNone {
		attrs = append(attrs, slog.String("provider_limit", s.ProviderLimit.String()))
		if !s.ProviderLimitUntil.IsZero() {
			attrs = append(attrs, slog.Time("provider_limit_until", s.ProviderLimitUntil))
		}
	}
	if !s.Spend.Total.zero() {
		attrs = append(attrs, slog.Int("spent_tokens", s.Spend.Total.Tokens()), slog.Float64("spent_usd", s.Spend.Total.CostUSD))
	}
	if s.Failures.LastFingerprint != "" {
		attrs = append(attrs, slog.String("last_fingerprint", s.Failures.LastFingerprint))
	}
	if n := len(s.History); n > 0 {
		attrs = append(attrs, slog.String("last_transition", s.History[n-1].String()))
	}
	return slog.GroupValue(attrs...)
}
