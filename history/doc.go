// Package history is the index of past runs: one SQLite database
// (IndexFile, index.db) kept in a runs directory, through modernc.org/sqlite
// (pure Go, no cgo).
//
// Run directories stay the source of truth. The index is a cache that can
// always be rebuilt from them (Index.Reindex, `swarm runs reindex`); a run
// never needs it to work, and a failure to update it is a warning, never a
// failed run. Run directories are read only through the data-contract
// packages (runfiles, events, config, shadow, workspace) and small structs
// of this package for the parts of result.json whose Go type lives in the
// engine (nexus, which history never imports): see resultFile.
//
// A run directory that cannot be read (half written, forged, a file that is
// not JSON) is indexed with its error (Run.Error), never skipped silently
// and never a crash. Absent numbers stay absent: a run without a Shadow
// Score, a workspace, ground truth or prices has NULL there, never 0.
package history
