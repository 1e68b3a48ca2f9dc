// Package swarm holds the default configuration embedded in the binary.
package swarm

import _ "embed"

// DefaultConfig is the repository's config.yml.
//
//go:embed config.yml
var DefaultConfig []byte
