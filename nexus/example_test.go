package nexus_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/mock"
)

// A Go program runs a mission with a configuration and a set of providers
// and gets a typed result, without the CLI. The deterministic mock serves
// every role here, offline.
func ExampleRun() {
	cfg, err := nexus.LoadConfig("") // the embedded config.yml
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
