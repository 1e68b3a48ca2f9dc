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
//	cfg, _ := nexus.LoadConfig("", nil)     // the embedded config.yml; or a file decoded on top of it
//	                                        // (a registry instead of nil also checks its provider kinds)
//	reg := &providers.Registry{}
//	mock.Register(reg, mock.Options{})      // and/or openai.Register(reg), langchain.Register(reg)
//	res, err := nexus.Run(ctx, nexus.Options{
//		Config: cfg, Registry: reg,
//		Mission: "Plan the migration of ...", Scale: "ss-50",
//		Provider: "mock:honest",                   // every role; Models overrides one role
//		OutDir:   dir,
//	})
//
// Run returns a *Result: the plan (agents, roster), the decomposition, one
// BundleOutcome per domain (bundle, Shadow Score, gate decision, review
// score, tier, formula score), the reviews and meta-review corrections, the
// synthesis and the Telemetry. Options.Observers receive every Event as it
// happens (the CLI's progress view and --json use them). The run directory
// (Options.OutDir) is written as the run goes; errors wrapping ErrBadInput
// are the caller's input, ErrInterrupted means ctx was cancelled and the
// partial Result and directory hold what existed.
//
// # Two steps
//
// Prepare does Phase 0 alone (the Plan: agents, roster, domains; no LLM
// call, nothing written), so a caller can show or check the plan first;
// Mission.Seal runs Phases 1 and 1.5 and returns the Sealed decomposition
// and envelope; Mission.Run runs the rest. Several missions can be judged
// against one envelope: seal one, Close it, and hand the Sealed value to
// the others' RunSealed (this is how `swarm compare` runs its contenders).
// Run is Prepare followed by Mission.Run.
//
// Consensus maths (Median, Tier, Formula, FormulaFromAtoms, MetaReviewAll)
// are usable on their own.
package nexus
