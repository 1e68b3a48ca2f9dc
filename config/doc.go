// Package config is swarm's configuration: the types of config.yml and its
// sections (Config, Scale, Run, Shadow, ...), loading (Load, Parse: the
// embedded default with a user file merged on top, strict YAML, every error
// naming file, line and key), validation (Config.Validate, Error, Errors),
// the model roster (Roster, ResolveRoster) and pricing (ModelPrice, Price,
// BuiltinPrices). It does not import the engine (nexus): a program can read
// and check a configuration without running anything.
package config
