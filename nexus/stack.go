package nexus

import (
	"github.com/swarm-dev/swarm/providers"
)

// stack wraps a recorded provider with the kind's concurrency cap, retries
// (plus the personality's extra retries), rate limit and per-call timeout.
// The recorder sits inside, so every attempt is an event. The cap and rate
// limit are the kind's, shared by every model of that kind.
func stack(p providers.Provider, kc providers.KindConfig, personality string, cfg *Config, limits *providers.KindLimits) providers.Provider {
	return providers.Standard(p, kc, cfg.Personalities[personality].ExtraRetries, limits)
}
