package nexus

import (
	"slices"
	"sort"

	"github.com/swarm-dev/swarm/internal/stats"
	"github.com/swarm-dev/swarm/runfiles"
)

func newPriceUsed(pu *priceUse) runfiles.PriceUsed {
	p := pu.Price
	out := runfiles.PriceUsed{InputPerMTok: p.InputPerMTok, OutputPerMTok: p.OutputPerMTok, CacheReadPerMTok: p.CacheReadPerMTok,
		CacheWritePerMTok: p.CacheWritePerMTok, ReasoningPerMTok: p.ReasoningPerMTok, Origin: p.Origin, AsOf: p.AsOf, Source: p.Source}
	if pu.cacheReadAssumed {
		out.Assumed = append(out.Assumed, "cache_read")
	}
	if pu.cacheWriteAssumed {
		out.Assumed = append(out.Assumed, "cache_write")
	}
	return out
}

// cacheReadShare is the share of input tokens read from the prompt cache;
// nil when none was (no hit, or a provider that reports none: 0 would
// claim a measurement).
func cacheReadShare(cacheRead, input int) *float64 {
	if cacheRead <= 0 || input <= 0 {
		return nil
	}
	v := float64(cacheRead) / float64(input)
	return &v
}

func callStats(s *usageStats) runfiles.CallStats {
	u := s.usage
	c := runfiles.CallStats{Calls: s.Calls, Errors: s.Errors, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		ReasoningTokens: u.ReasoningTokens, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
		PromptCacheHits: s.PromptCacheHits, CacheReadShare: cacheReadShare(u.CacheReadTokens, u.InputTokens), UnpricedCalls: s.Unpriced}
	if s.Unpriced == 0 || s.Priced > 0 {
		cost := s.CostUSD
		c.CostUSD = &cost
	}
	lat := append([]float64(nil), s.LatencyMS...)
	sort.Float64s(lat)
	c.LatencyP50MS = stats.NearestRankSorted(lat, 0.50)
	c.LatencyP95MS = stats.NearestRankSorted(lat, 0.95)
	if len(s.Classes) > 0 {
		c.FailureClasses = map[string]int{}
		for k, v := range s.Classes {
			c.FailureClasses[string(k)] = v
		}
	}
	return c
}

// wavesTelemetry returns the record with each wave's outcome from the bundles
// (nil when the run did not deploy in waves).
func wavesTelemetry(w *runfiles.WavesTelemetry, bundles []*BundleOutcome) *runfiles.WavesTelemetry {
	if w == nil {
		return nil
	}
	out := *w
	out.Waves = slices.Clone(w.Waves)
	byCmd := map[string]*BundleOutcome{}
	for _, o := range bundles {
		byCmd[o.Commander] = o
	}
	for i := range out.Waves {
		rec := &out.Waves[i]
		rec.BundlesOK, rec.BundlesFailed = 0, 0
		for _, id := range rec.Commanders {
			if o := byCmd[id]; o != nil && !o.Failed {
				rec.BundlesOK++
			} else if o != nil {
				rec.BundlesFailed++
			}
		}
	}
	return &out
}
