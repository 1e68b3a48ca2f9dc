// Package workspace gives a mission's agents read-only access to the
// directory the mission is about, and checks the evidence they cite.
//
// All file access goes through one type built on os.Root, so paths that
// escape the root (.., absolute paths, symlinks resolving outside it) are
// refused by the standard library, not by string checks. A deny list
// (.git, .env*, *.pem, *.key, id_* and the patterns of a .swarmignore)
// and size limits apply on top; .gitignore is honoured for listing and
// grep. The read tools (list_dir, read_file, grep, glob) are offered to the
// models as providers.Tool definitions; each call answers the model in
// JSON, and a refusal or a limit reached is an answer, never a crash.
//
// Evidence verification checks a citation.Citation (path, lines, quote)
// against the same root: Verified, Unverifiable or Fabricated.
//
// This package imports providers (for the tool types), citation (for what
// it checks) and internal helpers, and nothing else of swarm's.
package workspace
