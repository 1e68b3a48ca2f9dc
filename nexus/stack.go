package nexus

import (
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/providers"
)

// stack wraps a recorded provider with the kind's concurrency cap, retries
// (plus the personality's extra retries), rate limit and per-call timeout.
// The recorder sits inside, so every attempt is an event. The cap and rate
// limit are the kind's, shared by every model of that kind; o adds the
// model's adaptive concurrency limit (ratelimits.go).
func stack(p providers.Provider, kc providers.KindConfig, personality string, cfg *config.Config, limits *providers.KindLimits, o providers.StandardOptions) providers.Provider {
	return providers.StandardWith(p, kc, cfg.Personalities[personality].ExtraRetries, limits, o)
}
