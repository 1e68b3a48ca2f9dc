package nexus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/swarm-dev/swarm/runfiles"
)

// setTreeCaps lowers the workspace fingerprint's bounds for one test (0:
// the shipped bound).
func setTreeCaps(t *testing.T, files, walk int) {
	t.Helper()
	oldFiles, oldWalk := maxTreeFiles, maxTreeWalk
	if files > 0 {
		maxTreeFiles = files
	}
	if walk > 0 {
		maxTreeWalk = walk
	}
	t.Cleanup(func() { maxTreeFiles, maxTreeWalk = oldFiles, oldWalk })
}

// workspaceManifest is the manifest of a run on the workspace dir alone.
func workspaceManifest(t *testing.T, dir string) *runfiles.Manifest {
	t.Helper()
	sum, err := treeHash(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &runfiles.Manifest{Workspace: &runfiles.ManifestWorkspace{Dir: dir, TreeHash: sum.Hash, TreeFiles: sum.Files, TreeByStat: sum.ByStat, TreeTruncated: sum.Truncated}}
}

// writeAt overwrites one byte of path at off, then sets its modification
// time back to what it was (as a tool restoring times would): the file's
// size and mtime are the same, its content is not.
func writeAt(t *testing.T, path string, off int64) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{'!'}, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// Issue 22 (point 16b): a change to a non-git workspace is noticed on
// resume however big the workspace is. Before, a tree over 50 000 files or
// 1 GiB had no fingerprint at all ("" then and "" now: "unchanged"), so any
// change to it went unnoticed.
func TestResumeNoticesChangesToHugeWorkspaces(t *testing.T) {
	// Serial: lowers nexus's tree caps, package variables.
	for _, tc := range []struct {
		why         string
		files, walk int                            // caps for the test (0: the shipped ones)
		setup       func(t *testing.T, dir string) // the workspace when the run started
		change      func(t *testing.T, dir string) // what happens before the resume (nil: nothing)
		want        string                         // in the reported change; "" = none reported
	}{
		{
			why:   "a 1 GiB file (sparse) rewritten in place, same size, mtime set back: its change time tells",
			setup: bigFile, change: func(t *testing.T, dir string) { writeAt(t, filepath.Join(dir, "big.bin"), 1<<29) },
			want: "file contents: 2 files then, 2 now",
		},
		{
			why:   "a 1 GiB file deleted",
			setup: bigFile, change: func(t *testing.T, dir string) { rm(t, filepath.Join(dir, "big.bin")) },
			want: "file contents: 2 files then, 1 now",
		},
		{
			why:   "a workspace with a 1 GiB file that did not change is not reported (no false alarm)",
			setup: bigFile,
		},
		{
			why:   "more files than are hashed by content (cap lowered to 3): a file beyond the cap rewritten, same size and mtime",
			files: 3, setup: smallFiles(6), change: func(t *testing.T, dir string) { writeAt(t, filepath.Join(dir, "f05.txt"), 0) },
			want: "file contents: 6 files then, 6 now",
		},
		{
			why:   "more files than are hashed by content, nothing changed: not reported",
			files: 3, setup: smallFiles(6),
		},
		{
			why:  "more files than are fingerprinted at all (cap lowered to 4): a change cannot be ruled out, said so",
			walk: 4, setup: smallFiles(6),
			want: "more than 4 files: too large to fingerprint",
		},
	} {
		t.Run(tc.why, func(t *testing.T) {
			setTreeCaps(t, tc.files, tc.walk)
			dir := t.TempDir()
			tc.setup(t, dir)
			was := workspaceManifest(t, dir)
			if tc.change != nil {
				// The kernel stamps change times from a coarse clock (one
				// tick, up to 10 ms): let one pass so the change's time
				// differs. Nothing here asserts on time.
				time.Sleep(30 * time.Millisecond)
				tc.change(t, dir)
			}
			got := strings.Join(manifestChanges(was, workspaceManifest(t, dir)), "; ")
			if tc.want == "" {
				if diff := cmp.Diff("", got); diff != "" {
					t.Errorf("changes reported for an unchanged workspace (-want +got):\n%s", diff)
				}
				return
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("changes = %q, want one saying %q", got, tc.want)
			}
		})
	}
}

// A manifest written by a swarm that left a tree over its caps without a
// fingerprint (tree_hash absent) cannot vouch for the files: reported.
func TestResumeReportsAnUnfingerprintedWorkspace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	smallFiles(2)(t, dir)
	was := &runfiles.Manifest{Workspace: &runfiles.ManifestWorkspace{Dir: dir, TreeFiles: 60_000}}
	got := strings.Join(manifestChanges(was, workspaceManifest(t, dir)), "; ")
	if want := "not fingerprinted when the run started: 60000 files"; !strings.Contains(got, want) {
		t.Errorf("changes = %q, want one saying %q", got, want)
	}
}

func bigFile(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# a workspace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 1<<30); err != nil { // sparse: 1 GiB that costs no disk
		t.Fatal(err)
	}
}

func smallFiles(n int) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		for i := range n {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func rm(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}
