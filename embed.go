// Package swarm holds the default configuration and the pricing table
// embedded in the binary.
package swarm

import _ "embed"

// DefaultConfig is the repository's config.yml.
//
//go:embed config.yml
var DefaultConfig []byte

// DefaultPricing is the repository's pricing.yaml: the built-in price of
// each model (see config.Config.PriceOf).
//
//go:embed pricing.yaml
var DefaultPricing []byte
