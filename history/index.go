package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go
)

// IndexFile is the index's file name in a runs directory.
const IndexFile = "index.db"

// CompareFile marks a compare directory: the runs below it belong to that
// comparison.
const CompareFile = "compare.json"

// maxDepth is how deep below the runs directory run directories are looked
// for (a compare's runs sit at compare-x/runs/<model>/rep-N).
const maxDepth = 4

// ErrNotFound is returned when no indexed run matches.
var ErrNotFound = errors.New("no such run in the index")

// ErrNewerIndex is returned by Open for an index written by a newer swarm
// (a schema version this one does not know): rebuild it with `swarm runs
// reindex` after removing it, or use the newer swarm.
var ErrNewerIndex = errors.New("index written by a newer swarm")

// migrations are the schema's versions in order: migrations[i] takes the
// database from user_version i to i+1.
var migrations = []string{
	`CREATE TABLE runs (
		dir TEXT PRIMARY KEY,
		id TEXT NOT NULL,
		started_ms INTEGER,
		mission TEXT NOT NULL DEFAULT '',
		mission_file TEXT NOT NULL DEFAULT '',
		task_hash TEXT NOT NULL DEFAULT '',
		scale TEXT NOT NULL DEFAULT '',
		models TEXT NOT NULL DEFAULT '',
		status TEXT NOT NULL DEFAULT '',
		reason TEXT NOT NULL DEFAULT '',
		shadow_median REAL,
		bundles_planned INTEGER,
		bundles_scored INTEGER,
		evidence_cited INTEGER,
		evidence_verified INTEGER,
		evidence_fabricated INTEGER,
		recall REAL,
		cost_usd REAL,
		cost_partial INTEGER NOT NULL DEFAULT 0,
		duration_ms INTEGER,
		compare TEXT NOT NULL DEFAULT '',
		error TEXT NOT NULL DEFAULT '',
		signature TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE run_models (
		model TEXT NOT NULL,
		dir TEXT NOT NULL,
		PRIMARY KEY (model, dir)
	) WITHOUT ROWID;
	CREATE INDEX runs_started ON runs (started_ms);
	CREATE INDEX runs_status ON runs (status, started_ms);
	CREATE INDEX runs_task ON runs (task_hash, started_ms);
	CREATE INDEX runs_shadow ON runs (shadow_median);
	CREATE INDEX runs_cost ON runs (cost_usd);
	CREATE INDEX runs_duration ON runs (duration_ms);
	CREATE INDEX run_models_dir ON run_models (dir);`,
}

// Index is the SQLite index of one runs directory.
type Index struct {
	db      *sql.DB
	runsDir string
}

// Open opens (creating or migrating) the index of runsDir, at
// runsDir/index.db. The runs directory must exist.
func Open(ctx context.Context, runsDir string) (*Index, error) {
	fi, err := os.Stat(runsDir)
	if err != nil {
		return nil, fmt.Errorf("runs directory: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("runs directory %s: not a directory", runsDir)
	}
	file := filepath.Join(runsDir, IndexFile)
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/x on Windows: file:///C:/x
	}
	dsn := (&url.URL{Scheme: "file", Path: p, RawQuery: "_pragma=busy_timeout(10000)&_pragma=synchronous(normal)&_txlock=immediate"}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &Index{db: db, runsDir: runsDir}, nil
}

// migrate brings the schema to the newest version (PRAGMA user_version).
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("%w (schema version %d; this swarm knows up to %d)", ErrNewerIndex, v, len(migrations))
	}
	for ; v < len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("schema version %d: %w", v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
		return err
	}
	return tx.Commit()
}

// Close closes the index.
func (ix *Index) Close() error { return ix.db.Close() }

// RunsDir is the runs directory the index is of.
func (ix *Index) RunsDir() string { return ix.runsDir }

// Stats says what a Sync, Reindex or GC did.
type Stats struct {
	Indexed   int `json:"indexed"`   // run directories read and written to the index
	Unchanged int `json:"unchanged"` // rows already up to date (Sync)
	Removed   int `json:"removed"`   // rows whose directory is gone
	Errors    int `json:"errors"`    // runs indexed with an error
	Total     int `json:"total"`     // rows in the index afterwards
}

// found is a run directory the walk found.
type found struct {
	rel, compare string
}

// walk lists the run directories below the runs directory: a directory
// with run.json, result.json or events.jsonl is a run (and not looked
// into); others are looked into up to maxDepth. Symbolic links and hidden
// directories are not followed.
func (ix *Index) walk() ([]found, error) { return ix.walkFrom("", "") }

// walkFrom is walk below the directory rel (relative, slash-separated;
// "" for the runs directory), whose runs belong to compare.
func (ix *Index) walkFrom(start, compare string) ([]found, error) {
	var out []found
	var visit func(rel string, depth int, compare string) error
	visit = func(rel string, depth int, compare string) error {
		dir := filepath.Join(ix.runsDir, filepath.FromSlash(rel))
		entries, err := os.ReadDir(dir)
		if err != nil {
			if rel == "" {
				return err
			}
			return nil // a directory that went away or cannot be listed
		}
		if rel != "" {
			if fi, err := os.Lstat(filepath.Join(dir, CompareFile)); err == nil && fi.Mode().IsRegular() {
				compare = rel
			}
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			sub := e.Name()
			if rel != "" {
				sub = rel + "/" + e.Name()
			}
			if isRunDir(filepath.Join(dir, e.Name())) {
				out = append(out, found{rel: sub, compare: compare})
				continue
			}
			if depth < maxDepth {
				if err := visit(sub, depth+1, compare); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := visit(start, strings.Count(start, "/")+1+min(len(start), 1), compare); err != nil {
		return nil, err
	}
	return out, nil
}

// Sync brings the index up to date with the runs directory: run
// directories that are new or changed (by the size and time of run.json,
// result.json, telemetry.json and events.jsonl) are read, rows whose
// directory is gone are removed.
func (ix *Index) Sync(ctx context.Context) (Stats, error) { return ix.sync(ctx, false) }

// Reindex rebuilds the index from the runs directory: every run directory
// is read again.
func (ix *Index) Reindex(ctx context.Context) (Stats, error) { return ix.sync(ctx, true) }

func (ix *Index) sync(ctx context.Context, all bool) (Stats, error) {
	var st Stats
	dirs, err := ix.walk()
	if err != nil {
		return st, fmt.Errorf("runs directory: %w", err)
	}
	known := map[string]string{}
	rows, err := ix.db.QueryContext(ctx, "SELECT dir, signature FROM runs")
	if err != nil {
		return st, err
	}
	for rows.Next() {
		var d, s string
		if err := rows.Scan(&d, &s); err != nil {
			rows.Close()
			return st, err
		}
		known[d] = s
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, err
	}
	var todo []found
	present := map[string]bool{}
	for _, f := range dirs {
		present[f.rel] = true
		sig, ok := known[f.rel]
		if !all && ok && sig == signature(filepath.Join(ix.runsDir, filepath.FromSlash(f.rel))) {
			st.Unchanged++
			continue
		}
		todo = append(todo, f)
	}
	var gone []string
	for d := range known {
		if !present[d] {
			gone = append(gone, d)
		}
	}
	runs := readAll(ctx, ix.runsDir, todo)
	if err := ctx.Err(); err != nil {
		return st, err
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return st, err
	}
	defer tx.Rollback()
	for _, r := range runs {
		if err := put(ctx, tx, r); err != nil {
			return st, err
		}
		st.Indexed++
		if r.Error != "" {
			st.Errors++
		}
	}
	for _, d := range gone {
		if err := remove(ctx, tx, d); err != nil {
			return st, err
		}
		st.Removed++
	}
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM runs").Scan(&st.Total); err != nil {
		return st, err
	}
	return st, tx.Commit()
}

// readAll reads the run directories on every core.
func readAll(ctx context.Context, runsDir string, todo []found) []Run {
	out := make([]Run, len(todo))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(todo), 1)) {
		wg.Go(func() {
			for i := range next {
				out[i] = ReadRun(runsDir, todo[i].rel)
				out[i].Compare = todo[i].compare
			}
		})
	}
	for i := range todo {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// Update indexes one run directory (runDir, inside the runs directory)
// now: what a run, a resume or a compare calls when it ends. A compare
// directory indexes every run below it.
func (ix *Index) Update(ctx context.Context, runDir string) error {
	abs, err := filepath.Abs(runDir)
	if err != nil {
		return err
	}
	root, err := filepath.Abs(ix.runsDir)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s is not inside the runs directory %s", runDir, ix.runsDir)
	}
	rel = filepath.ToSlash(rel)
	// The compare the directory belongs to: its nearest ancestor (below
	// the runs directory) holding compare.json.
	compare := ""
	for p := path.Dir(rel); p != "."; p = path.Dir(p) {
		if fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p), CompareFile)); err == nil && fi.Mode().IsRegular() {
			compare = p
			break
		}
	}
	var todo []found
	if isRunDir(abs) {
		todo = []found{{rel: rel, compare: compare}}
	} else if todo, err = ix.walkFrom(rel, compare); err != nil {
		return err
	}
	if len(todo) == 0 {
		return fmt.Errorf("%s: %w", runDir, fs.ErrNotExist)
	}
	runs := readAll(ctx, ix.runsDir, todo)
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, r := range runs {
		if err := put(ctx, tx, r); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// GC removes the rows whose run directory is gone, without reading any
// run, and returns their directories; with dryRun it only lists them. It
// never deletes a run directory.
func (ix *Index) GC(ctx context.Context, dryRun bool) ([]string, error) {
	rows, err := ix.db.QueryContext(ctx, "SELECT dir FROM runs ORDER BY dir")
	if err != nil {
		return nil, err
	}
	var gone []string
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			rows.Close()
			return nil, err
		}
		if !isRunDir(filepath.Join(ix.runsDir, filepath.FromSlash(d))) {
			gone = append(gone, d)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil || dryRun || len(gone) == 0 {
		return gone, err
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	for _, d := range gone {
		if err := remove(ctx, tx, d); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	_, err = ix.db.ExecContext(ctx, "VACUUM")
	return gone, err
}

func remove(ctx context.Context, tx *sql.Tx, dir string) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM run_models WHERE dir = ?", dir); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, "DELETE FROM runs WHERE dir = ?", dir)
	return err
}

// put writes one row (replacing the run's earlier one).
func put(ctx context.Context, tx *sql.Tx, r Run) error {
	if err := remove(ctx, tx, r.Dir); err != nil {
		return err
	}
	var started *int64
	if r.Started != nil {
		ms := r.Started.UnixMilli()
		started = &ms
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO runs (dir, id, started_ms, mission, mission_file, task_hash, scale, models,
		status, reason, shadow_median, bundles_planned, bundles_scored, evidence_cited, evidence_verified, evidence_fabricated,
		recall, cost_usd, cost_partial, duration_ms, compare, error, signature)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Dir, r.ID, started, r.Mission, r.MissionFile, r.TaskHash, r.Scale, strings.Join(r.Models, " "),
		r.Status, r.Reason, r.ShadowMedian, r.BundlesPlanned, r.BundlesScored, r.EvidenceCited, r.EvidenceVerified, r.EvidenceFabricated,
		r.Recall, r.CostUSD, r.CostPartial, r.DurationMS, r.Compare, r.Error, r.signature)
	if err != nil {
		return fmt.Errorf("index %s: %w", r.Dir, err)
	}
	for _, m := range slices.Compact(slices.Sorted(slices.Values(r.Models))) {
		if _, err := tx.ExecContext(ctx, "INSERT INTO run_models (model, dir) VALUES (?, ?)", m, r.Dir); err != nil {
			return fmt.Errorf("index %s: %w", r.Dir, err)
		}
	}
	return nil
}

// unixMilli is a row's start time.
func unixMilli(ms *int64) *time.Time {
	if ms == nil {
		return nil
	}
	t := time.UnixMilli(*ms).UTC()
	return &t
}
