package nexus_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
)

// A Go program runs a mission with a configuration and a set of providers
// and gets a typed result, without the CLI. The deterministic mock serves
// every role here, offline.
func ExampleRun() {
	cfg, err := config.Load("", nil) // the embedded config.yml
	if err != nil {
		log.Fatal(err)
	}
	reg := &providers.Registry{}
	mock.Register(reg, mock.Options{})

	dir, err := os.MkdirTemp("", "swarm-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	res, err := nexus.Run(context.Background(), nexus.Options{
		Config:   cfg,
		Registry: reg,
		Mission:  "# Test-gap hunt\n\nFind the untested error handling and edge cases in the billing service and plan the regression tests.",
		Scale:    "ss-50",
		Provider: providers.Ref{Kind: "mock", Model: "honest"},
		OutDir:   filepath.Join(dir, "run"),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("agents:", res.Telemetry.Agents.Total)
	for _, b := range res.Bundles {
		fmt.Printf("%s: shadow %.1f%% (%s), gate %s, tier %s, in synthesis %v\n",
			b.ID, *b.ShadowScore, b.Level, b.Gate.Action, b.Tier, b.InSynthesis)
	}
	fmt.Println("top action:", res.Synthesis.TopAction != "")
	_, err = os.Stat(filepath.Join(res.Dir, "report.md"))
	fmt.Println("report written:", err == nil)
	// Output:
	// agents: 36
	// architecture: shadow 0.0% (perfect), gate proceed, tier CONSENSUS, in synthesis true
	// testing: shadow 0.0% (perfect), gate proceed, tier CONSENSUS, in synthesis true
	// top action: true
	// report written: true
}

// Prepare computes the plan (what a briefing shows) without any LLM call
// or file; Seal runs Phases 1 and 1.5; Run runs the rest.
func ExamplePrepare() {
	cfg, err := config.Load("", nil)
	if err != nil {
		log.Fatal(err)
	}
	reg := &providers.Registry{}
	mock.Register(reg, mock.Options{})
	dir, err := os.MkdirTemp("", "swarm-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	m, err := nexus.Prepare(nexus.Options{
		Config: cfg, Registry: reg, Scale: "ss-50", Provider: providers.Ref{Kind: "mock", Model: "honest"}, OutDir: filepath.Join(dir, "run"),
		Mission: "# Test-gap hunt\n\nFind the untested error handling and edge cases in the billing service and plan the regression tests.",
	})
	if err != nil {
		log.Fatal(err)
	}
	p := m.Plan()
	fmt.Println("plan:", p.Commanders, "commanders,", p.Agents, "agents,", p.Criteria, "sealed criteria")
	sealed, err := m.Seal(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("sealed:", len(sealed.Decomposition.Domains), "domains, hash", sealed.Hash()[:7])
	res, err := m.Run(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", res.Status, "· judged", res.Aggregate.Scored, "of", res.Aggregate.Planned, "· same envelope:", res.SealedHash == sealed.Hash())
	// Output:
	// plan: 2 commanders, 36 agents, 6 sealed criteria
	// sealed: 2 domains, hash sha256:
	// status: complete · judged 2 of 2 · same envelope: true
}

// Two contenders are judged against ONE envelope: one mission seals (and
// is closed), each contender runs against the sealed value with RunSealed.
func ExampleMission_RunSealed() {
	cfg, err := config.Load("", nil)
	if err != nil {
		log.Fatal(err)
	}
	reg := &providers.Registry{}
	mock.Register(reg, mock.Options{})
	dir, err := os.MkdirTemp("", "swarm-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	options := func(provider, out string) nexus.Options {
		ref, err := providers.ParseRef(provider)
		if err != nil {
			log.Fatal(err)
		}
		return nexus.Options{Config: cfg, Registry: reg, Scale: "ss-50", Provider: ref, OutDir: filepath.Join(dir, out),
			Mission: "# Test-gap hunt\n\nFind the untested error handling and edge cases in the billing service and plan the regression tests."}
	}

	sealer, err := nexus.Prepare(options("mock:honest", "seal"))
	if err != nil {
		log.Fatal(err)
	}
	sealed, err := sealer.Seal(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if err := sealer.Close(); err != nil { // result.json says "sealed"
		log.Fatal(err)
	}
	for _, contender := range []string{"mock:honest", "mock:sloppy"} {
		m, err := nexus.Prepare(options(contender, contender[5:]))
		if err != nil {
			log.Fatal(err)
		}
		res, err := m.RunSealed(ctx, sealed)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s, %d of %d bundles scored, shared envelope %v\n",
			contender, res.Status, res.Aggregate.Scored, res.Aggregate.Planned, res.SealedHash == sealed.Hash())
	}
	// Output:
	// mock:honest: complete, 2 of 2 bundles scored, shared envelope true
	// mock:sloppy: complete, 2 of 2 bundles scored, shared envelope true
}

// An Observer sees every event of a run as it happens, typed: switch on
// Event.Data's type for the payload of each kind. Here: the gate decisions
// and the calls' cost as they stream by.
func ExampleObserverFunc() {
	cfg, err := config.Load("", nil)
	if err != nil {
		log.Fatal(err)
	}
	reg := &providers.Registry{}
	mock.Register(reg, mock.Options{})
	dir, err := os.MkdirTemp("", "swarm-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	m, err := nexus.Prepare(nexus.Options{
		Config: cfg, Registry: reg, Scale: "ss-50", Provider: providers.Ref{Kind: "mock", Model: "honest"}, OutDir: filepath.Join(dir, "run"),
		Mission: "# Test-gap hunt\n\nFind the untested error handling and edge cases in the billing service and plan the regression tests.",
	})
	if err != nil {
		log.Fatal(err)
	}
	calls := 0 // observers are called one event at a time
	var sealed string
	m.Observe(events.ObserverFunc(func(e events.Event) {
		switch d := e.Data.(type) {
		case events.CallData:
			calls++
		case events.SealedData:
			sealed = d.SealedHash
		case events.GateData:
			fmt.Printf("phase %s gate: %s %s (shadow %.1f%%)\n", e.Phase, d.BundleID, d.Action, *d.ShadowScore)
		}
	}))
	res, err := m.Run(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("calls observed = calls made:", calls == res.Telemetry.Calls)
	fmt.Println("sealed before any commander:", sealed == res.SealedHash)
	// Unordered output:
	// phase 6 gate: architecture proceed (shadow 0.0%)
	// phase 6 gate: testing proceed (shadow 0.0%)
	// calls observed = calls made: true
	// sealed before any commander: true
}
