// Package layering holds no code: its test enforces the one-way imports of
// the design (DESIGN.md, "Layout") on the module's packages, as go list
// reports them for Linux, Windows and macOS. A rule broken names the import
// chain that breaks it, e.g. "providers/mock → workspace".
package layering
