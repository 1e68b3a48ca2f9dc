// Package nexus runs a mission through the Nexus pipeline, phases 0–8:
// intake, decomposition, sealed acceptance criteria, context capsules,
// commanders (with squad leads and workers), cross-review and meta-review,
// shadow validation with hardening, consensus with the Shadow Gate and
// synthesis, and the action report with telemetry.
//
// # The pipeline is a library
//
// The swarm CLI is a thin layer over this package: a Go program runs a
// mission with a configuration and a set of providers and gets a typed
// result, without the CLI.
//
//	cfg, _ := config.Load("", nil)          // the embedded config.yml; or a file decoded on top of it
//	                                        // (a registry instead of nil also checks its provider kinds)
//	reg := &providers.Registry{}
//	mock.Register(reg, mock.Options{})      // or builtin.Registry(mock.Options{}): every kind swarm ships
//	res, err := nexus.Run(ctx, nexus.Options{
//		Config: cfg, Registry: reg,
//		Mission: "Plan the migration of ...", Scale: "ss-50",
//		Provider: providers.Ref{Kind: "mock", Model: "honest"}, // every role; Models overrides one role
//		OutDir:   dir,
//	})
//
// Run returns a *Result: the plan (agents, roster), the decomposition, one
// BundleOutcome per domain (bundle, Shadow Score, gate decision, review
// score, tier, formula score), the reviews and meta-review corrections, the
// synthesis and the Telemetry. The run directory (Options.OutDir) is
// written as the run goes; errors wrapping config.ErrBadInput are the caller's
// input, ErrInterrupted means ctx was cancelled and the
// partial Result and directory hold what existed.
//
// The data around the engine lives in packages that do not import it:
// config (the configuration: types, load, validation), events (a run's
// events and their payloads) and runs (the run directory: file names,
// statuses, manifest, readers of a finished run).
//
// # Two steps
//
// Prepare does Phase 0 alone (the Plan: agents, roster, domains; no LLM
// call, nothing written), so a caller can show or check the plan first;
// Mission.Seal runs Phases 1 and 1.5 and returns the Sealed decomposition
// and envelope; Mission.Run runs the rest (sealing first if Seal was not
// called). Several missions can be judged against one envelope: seal one,
// Close it, and hand the Sealed value to the others' Mission.RunSealed
// (this is how `swarm compare` runs its contenders). Run is Prepare
// followed by Mission.Run.
//
// # Inside the engine
//
// Each phase is a function (a method on deps, the run's shared parts:
// config, plan, run directory, recorder, meter, provider pool, sandbox
// bridge, workspace) that takes what it needs as parameters and returns
// its output: decompose returns a Decomposition, sealPhase the envelope,
// capsules the capsules, deploy the bundles (starting the cross-review,
// which hands each bundle to the judging, through callbacks), consensus
// and synthesise their results. pipeline (run.go) runs them top to bottom
// and gathers their outputs; the run's one ending (Mission.end, then
// ending) assembles the Result from them, concludes it and writes the
// final files, however the run ended.
//
// # Events and observers
//
// Everything a run does is an events.Event: a phase starting or ending, an LLM
// call, an agent starting or finishing, the seal, a judgement, a gate
// decision, a cost-ceiling mark, a breaker trip, the run's end. Each is
// written to events.jsonl and handed, in order, to every events.Observer
// (Options.Observers, Mission.Observe; events.ObserverFunc adapts a function).
// Event.Kind says what happened, Event.Phase in which phase (a Phase
// constant of package events: phases 4, 5 and 6 overlap, and an event carries the phase its
// work belongs to), and Event.Data holds the kind's typed payload: events.CallData
// for an llm_call, events.GateData for a gate, events.SealedData for the seal,
// events.PhaseNEnd for the end of phase N, and so on (nil for kinds without one).
// Observers switch on its type.
// An events.jsonl line decodes back into the same typed Event
// (json.Unmarshal), and runfiles.CommittedHashes reads the seal from a run
// directory's events. The swarm CLI's progress view, its --json stream and
// its log, and compare's per-contender call tally are all Observers.
package nexus
