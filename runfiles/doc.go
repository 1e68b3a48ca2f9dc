// Package runs is the run directory's contract: the name of every file and
// directory a run writes (ResultFile, EventsFile, SealedDir, ...), the run
// statuses result.json records (StatusComplete, ...), telemetry.json
// (Telemetry and its parts: CallStats, BreakerStats, WavesTelemetry, ...),
// the follow-up record (FollowUp), the manifest a run is
// started with (Manifest, run.json), and the readers of a finished run
// directory that need no engine: ReadManifest, ReadReports,
// VerifyCommitment, CommittedHashes, EnvelopePath. It does not import the
// engine (nexus).
package runfiles
