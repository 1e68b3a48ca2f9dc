package nexus

import (
	"context"

	"github.com/swarm-dev/swarm/providers"
)

// The stack every model call of a run goes through, outermost first: one
// list, the order of which is the order of the call (providers.Stack).
//
//	replay         journal.go: a request the journal holds an answer for is
//	               answered from it (Before) and recorded as replayed; any
//	               other answer is journaled (After) under the model that gave it
//	route          pool.go: the breaker of (model, role's layer); the role's
//	               fallbacks answer while it is open; sets Call.Ref and runs
//	               that model's own stack, the rest of this list:
//	concurrency    the kind's concurrency cap (shared by every model of the kind)
//	retry          the kind's retries plus the personality's extra retries
//	adaptive       the model's adaptive concurrency limit (ratelimits.go)
//	rate_limit     the kind's rate limit
//	timeout        the per-attempt timeout (callTimeout)
//	record         recorder.go: scrubs the answer and the error, validates the
//	               answer (Call.Validation), meters it, writes the llm_call
//	               event and the transcript line: every attempt, inside retry
//	token_ceiling  run.max_tokens of the caller's role
//	(provider)     WithProviderWrap's wrap of the registry's provider
//
// The first two are a role's (roleStack: forRole); the others a model's
// (modelStack: provider), built once per model and shared by every role
// that calls it. The call's phase is resolved once, where the call enters
// (Call.Phase), and every layer reads it there.

// Layer names, in stack order.
const (
	layerReplay       = "replay"
	layerRoute        = "route"
	layerConcurrency  = "concurrency"
	layerRetry        = "retry"
	layerAdaptive     = "adaptive"
	layerRateLimit    = "rate_limit"
	layerTimeout      = "timeout"
	layerRecord       = "record"
	layerTokenCeiling = "token_ceiling"
)

// roleStack is the stack of a role's calls: replay (when the run has a
// journal), then route, its end, which runs a model's stack on the same
// call.
func (pp *providerPool) roleStack(route func(context.Context, *providers.Call)) *providers.Stack {
	var layers []providers.Layer
	if pp.journal != nil {
		layers = append(layers, providers.Layer{Name: layerReplay, Hook: replayHook{pp: pp}})
	}
	return &providers.Stack{Layers: layers, Next: route}
}

// modelStack is the stack of model ref below routing, over p (the
// registry's provider, wrapped): limits, retries, timeout, recording,
// token ceiling. ck is the kind's config with the run's call timeout.
func (pp *providerPool) modelStack(ref providers.Ref, p providers.Provider, ck providers.KindConfig, kl *providers.KindLimits) *providers.Stack {
	extra := pp.cfg.Personalities[pp.personality].ExtraRetries
	return &providers.Stack{Provider: p, Layers: []providers.Layer{
		{Name: layerConcurrency, Around: providers.Wrap(kl.Cap())},
		{Name: layerRetry, Around: providers.Wrap(providers.Retry(providers.StandardRetry(ck, extra)))},
		{Name: layerAdaptive, Around: pp.adaptiveLayer(ref, kl)},
		{Name: layerRateLimit, Around: providers.Wrap(kl.Rate())},
		{Name: layerTimeout, Around: providers.Wrap(providers.Timeout(ck.Timeout))},
		{Name: layerRecord, Hook: pp.recordHook(ref)},
		{Name: layerTokenCeiling, Around: providers.Wrap(pp.tokenCeiling)},
	}}
}

// entry is the provider an agent calls: it makes the Call (the agent's
// model, the phase the call belongs to) and runs it through st.
func (pp *providerPool) entry(ref providers.Ref, st *providers.Stack) providers.Provider {
	return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
		c := &providers.Call{Request: req, Ref: ref, Phase: string(pp.rec.phaseOf(ctx))}
		st.Run(ctx, c)
		return c.Response, c.Err
	})
}
