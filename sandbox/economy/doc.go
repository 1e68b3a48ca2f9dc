// Package economy implements the five "virtual agent economies" mechanisms
// of the swarm reference (swarm-ai-safety/swarm) as stand-alone, per-epoch
// callable libraries:
//
//   - a Dworkin-style auction (tâtonnement, proportional rationing, envy check);
//   - a mission economy (objectives, contributions, evaluation, payouts,
//     free-rider index);
//   - high-frequency negotiation (an order book with batch clearing, latency
//     noise and halts) with a flash-crash detector, and the separate
//     confidence-cascade model;
//   - permeability and contagion (effective permeability, spillover,
//     containment, optimal permeability);
//   - identity (credentials with expiry and revocation, proof of personhood,
//     trust score, behavioural similarity, greedy Sybil clustering) and the
//     Sybil lever the simulation loop calls.
//
// One package rather than one per mechanism: the mechanisms share the Gini
// helper, the interaction record and the seeded generator, and the
// simulation loop that wires them together imports a single package.
//
// Every type holds its own state: there is no global state and no I/O, and
// every mechanism is deterministic given its seed.
//
// # Input files
//
// ReadAuctionFile, ReadMissionFile, ReadMarketFile, ReadCrashFile,
// ReadPermeabilityFile and ReadIdentityFile are the evaluators behind
// `swarm sandbox econ`: each decodes one YAML or JSON file (from a reader
// it is handed; unknown keys are errors) into a typed input (AuctionInput,
// ...), checks it, and returns a typed report whose JSON is what the
// command prints. A bad value is a *yamlx.Error FILE:LINE:COL: KEY: MESSAGE
// (located from a *FieldError naming its path).
//
// # Random draws
//
// The market (latency noise), the permeability model (spillover draws) and
// the confidence cascade draw random numbers. They take a Source, which
// *math/rand/v2.Rand satisfies; NewRand(seed) is the generator they use by
// default: PCG (math/rand/v2.NewPCG) seeded with (seed, SeedStream). The same
// seed always gives the same draws on every platform. The reference uses
// Python's MT19937 instead, so draw-dependent results are matched in
// distribution, not bit for bit (docs/sandbox.md lists which).
package economy
