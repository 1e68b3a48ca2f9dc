package nexus

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/swarm-dev/swarm/config"
)

// runConcurrency is how many LLM calls a run keeps in flight at once (the
// run-wide bound the commanders, squad leads and workers share) and why.
type runConcurrency struct {
	N int `json:"concurrency"`
	// Rule says where N came from: "providers" (the roster's provider
	// limits), "scale" (the scale's concurrency, lower than the providers'
	// limits or the providers set none).
	Rule   string `json:"rule"`
	Detail string `json:"detail"`
}

// effectiveConcurrency derives the run-wide bound on LLM calls in flight.
//
// Each provider kind of the roster accepts at most cap(kind) calls at once:
// its max_concurrency, and, when it has a requests_per_minute limit and the
// worker layer has a timeout, no more than the rate limiter can start within
// one worker timeout (rpm/60 × timeouts.worker): a worker that waited longer
// than that for the rate limiter would time out before its call started.
// The kinds' limits are enforced by the provider middleware anyway; the run
// bound only keeps calls from queueing there, where the worker's deadline
// already runs. The run keeps at most
//
//	N = min(scales.<scale>.concurrency, Σ cap(kind) over the roster's distinct kinds)
//
// in flight; a kind with neither limit contributes no bound (the scale's
// value then decides). The scale's concurrency is a ceiling for the run (a
// guard on goroutines and sockets), never a reason to run below what the
// providers accept when it is set at least as high as the scale's widest
// layer, as the shipped defaults are.
func effectiveConcurrency(cfg *config.Config, p Plan, scale config.Scale) runConcurrency {
	ceiling := max(1, scale.Concurrency)
	workerTimeout := time.Duration(float64(scale.Timeouts.Worker) * timeoutFactor(cfg, p.Personality))
	sum, bounded := 0, true
	var parts []string
	for _, kind := range rosterKinds(p.Roster) {
		kc := cfg.Providers[kind]
		c := math.MaxInt
		if kc.MaxConcurrency > 0 {
			c = kc.MaxConcurrency
		}
		if kc.RequestsPerMin > 0 && workerTimeout > 0 {
			c = min(c, max(1, int(kc.RequestsPerMin/60*workerTimeout.Seconds())))
		}
		if c == math.MaxInt {
			bounded = false
			parts = append(parts, kind+": no limit")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: %d", kind, c))
		sum += c
	}
	detail := strings.Join(parts, ", ")
	if bounded && sum < ceiling {
		return runConcurrency{N: max(1, sum), Rule: "providers", Detail: detail}
	}
	return runConcurrency{N: ceiling, Rule: "scale", Detail: fmt.Sprintf("scale concurrency %d (providers: %s)", ceiling, detail)}
}

// rosterKinds lists the distinct provider kinds of a roster, in roster order.
func rosterKinds(r config.Roster) []string {
	seen := map[string]bool{}
	var out []string
	for _, ref := range r.Refs() {
		if !seen[ref.Kind] {
			seen[ref.Kind] = true
			out = append(out, ref.Kind)
		}
	}
	return out
}
