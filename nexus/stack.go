package nexus

import (
	"github.com/swarm-dev/swarm/providers"
)

// stack wraps a recorded provider with the kind's concurrency cap, retries
// (plus the personality's extra retries), rate limit and per-call timeout.
// The recorder sits inside, so every attempt is an event.
func stack(p providers.Provider, kc providers.KindConfig, personality string, cfg *Config) providers.Provider {
	return providers.Standard(p, kc, cfg.Personalities[personality].ExtraRetries)
}
