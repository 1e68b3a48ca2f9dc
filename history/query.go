package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/swarm-dev/swarm/runfiles"
)

// Sort keys of Query.Sort.
var sortColumns = map[string]string{
	"started":  "started_ms",
	"mission":  "mission",
	"status":   "status",
	"shadow":   "shadow_median",
	"cost":     "cost_usd",
	"duration": "duration_ms",
	"recall":   "recall",
	"verified": "evidence_verified",
	"id":       "id",
}

// rankedColumns are the sort columns that measure a run's work: sorted by
// one of them, complete runs come before every other status.
var rankedColumns = map[string]bool{"shadow_median": true, "recall": true, "evidence_verified": true}

// SortKeys lists the keys Query.Sort accepts, sorted.
func SortKeys() []string {
	keys := make([]string, 0, len(sortColumns))
	for k := range sortColumns {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// DefaultLimit is the page size when Query.Limit is 0; MaxLimit the
// largest one.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// Query selects and orders runs. Empty fields select everything.
type Query struct {
	// Mission matches the mission's title or file name (a substring, any
	// case) or its task hash (exactly).
	Mission string
	// Model matches a model the run used ("mock:honest"), exactly.
	Model string
	// Status matches the run's status exactly.
	Status string
	// Since and Until bound the start time (Since ≤ started < Until); a
	// run whose start is unknown matches neither bound.
	Since, Until time.Time
	// Search matches any of id, directory, mission, reason, models and
	// error (a substring, any case).
	Search string
	// Sort is one of SortKeys (default "started"); Asc sorts ascending
	// (default descending: newest, highest first). Runs without the value
	// come last either way; sorted by shadow, recall or verified, complete
	// runs come before runs of any other status.
	Sort string
	Asc  bool
	// Limit is the page size (DefaultLimit when 0, at most MaxLimit) and
	// Page the page, from 1.
	Limit, Page int
}

// Page is one page of runs and how many match in all.
type Page struct {
	Runs  []Run `json:"runs"`
	Total int   `json:"total"`
	Page  int   `json:"page"`
	Limit int   `json:"limit"`
	Pages int   `json:"pages"`
}

// ErrBadQuery marks a Query that cannot be run (an unknown sort key, a
// negative page).
var ErrBadQuery = errors.New("bad query")

func (q Query) where() (string, []any) {
	var conds []string
	var args []any
	if q.Mission != "" {
		conds = append(conds, "(instr(lower(mission), lower(?)) > 0 OR instr(lower(mission_file), lower(?)) > 0 OR task_hash = ?)")
		args = append(args, q.Mission, q.Mission, q.Mission)
	}
	if q.Model != "" {
		conds = append(conds, "dir IN (SELECT dir FROM run_models WHERE model = ?)")
		args = append(args, q.Model)
	}
	if q.Status != "" {
		conds = append(conds, "status = ?")
		args = append(args, q.Status)
	}
	if !q.Since.IsZero() {
		conds = append(conds, "started_ms >= ?")
		args = append(args, q.Since.UnixMilli())
	}
	if !q.Until.IsZero() {
		conds = append(conds, "started_ms < ?")
		args = append(args, q.Until.UnixMilli())
	}
	if q.Search != "" {
		conds = append(conds, "instr(lower(id || ' ' || dir || ' ' || mission || ' ' || mission_file || ' ' || reason || ' ' || models || ' ' || error), lower(?)) > 0")
		args = append(args, q.Search)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

const runColumns = `dir, id, started_ms, mission, mission_file, task_hash, scale, models, status, reason, shadow_median,
	bundles_planned, bundles_scored, evidence_cited, evidence_verified, evidence_fabricated, recall, cost_usd, cost_partial,
	duration_ms, compare, error`

func scanRun(s interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var started *int64
	var models string
	err := s.Scan(&r.Dir, &r.ID, &started, &r.Mission, &r.MissionFile, &r.TaskHash, &r.Scale, &models, &r.Status, &r.Reason,
		&r.ShadowMedian, &r.BundlesPlanned, &r.BundlesScored, &r.EvidenceCited, &r.EvidenceVerified, &r.EvidenceFabricated,
		&r.Recall, &r.CostUSD, &r.CostPartial, &r.DurationMS, &r.Compare, &r.Error)
	r.Started = unixMilli(started)
	r.Models = strings.Fields(models)
	if r.Models == nil {
		r.Models = []string{}
	}
	return r, err
}

// List returns one page of the runs the query selects.
func (ix *Index) List(ctx context.Context, q Query) (Page, error) {
	col := "started_ms"
	if q.Sort != "" {
		c, ok := sortColumns[q.Sort]
		if !ok {
			return Page{}, fmt.Errorf("%w: sort %q: want one of %s", ErrBadQuery, q.Sort, strings.Join(SortKeys(), ", "))
		}
		col = c
	}
	if q.Limit < 0 || q.Page < 0 {
		return Page{}, fmt.Errorf("%w: limit and page must not be negative", ErrBadQuery)
	}
	p := Page{Limit: q.Limit, Page: max(q.Page, 1)}
	if p.Limit == 0 {
		p.Limit = DefaultLimit
	}
	p.Limit = min(p.Limit, MaxLimit)
	where, args := q.where()
	if err := ix.db.QueryRowContext(ctx, "SELECT count(*) FROM runs"+where, args...).Scan(&p.Total); err != nil {
		return Page{}, err
	}
	p.Pages = max((p.Total+p.Limit-1)/p.Limit, 1)
	dir := "DESC"
	if q.Asc {
		dir = "ASC"
	}
	// Runs without the value come last; sorted by a measure of the work
	// (rankedColumns), a run that did not complete never ranks beside or
	// above one that did, whatever its partial figure. The directory breaks
	// ties, so pages never overlap.
	order := fmt.Sprintf(" ORDER BY %s IS NULL, ", col)
	if rankedColumns[col] {
		order += fmt.Sprintf("status != '%s', ", runfiles.StatusComplete)
	}
	order += fmt.Sprintf("%s %s, dir %s", col, dir, dir)
	rows, err := ix.db.QueryContext(ctx, "SELECT "+runColumns+" FROM runs"+where+order+" LIMIT ? OFFSET ?",
		append(args, p.Limit, (p.Page-1)*p.Limit)...)
	if err != nil {
		return Page{}, err
	}
	defer rows.Close()
	p.Runs = []Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return Page{}, err
		}
		p.Runs = append(p.Runs, r)
	}
	return p, rows.Err()
}

// Get returns the run of one directory (relative to the runs directory,
// slash-separated).
func (ix *Index) Get(ctx context.Context, dir string) (Run, error) {
	r, err := scanRun(ix.db.QueryRowContext(ctx, "SELECT "+runColumns+" FROM runs WHERE dir = ?", dir))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("%s: %w", dir, ErrNotFound)
	}
	return r, err
}

// Find returns the run a user named: its directory (relative to the runs
// directory), its run id, or a unique prefix of either. Several runs
// matching is an error listing them.
func (ix *Index) Find(ctx context.Context, ref string) (Run, error) {
	if r, err := ix.Get(ctx, ref); err == nil || !errors.Is(err, ErrNotFound) {
		return r, err
	}
	rows, err := ix.db.QueryContext(ctx, "SELECT "+runColumns+" FROM runs WHERE id = ? OR substr(id, 1, length(?)) = ? OR substr(dir, 1, length(?)) = ? ORDER BY id = ? DESC, dir LIMIT 11",
		ref, ref, ref, ref, ref, ref)
	if err != nil {
		return Run{}, err
	}
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return Run{}, err
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return Run{}, err
	}
	if len(runs) == 0 {
		return Run{}, fmt.Errorf("%q: %w", ref, ErrNotFound)
	}
	// An exact run id wins over prefixes, when only one run has it.
	exact := slices.DeleteFunc(slices.Clone(runs), func(r Run) bool { return r.ID != ref })
	switch {
	case len(exact) == 1:
		return exact[0], nil
	case len(runs) == 1:
		return runs[0], nil
	}
	var dirs []string
	for _, r := range runs[:min(len(runs), 10)] {
		dirs = append(dirs, r.Dir)
	}
	return Run{}, fmt.Errorf("%q matches several runs: %s: name one by its directory", ref, strings.Join(dirs, ", "))
}

// Statuses are the statuses of the indexed runs, sorted.
func (ix *Index) Statuses(ctx context.Context) ([]string, error) {
	return ix.strings(ctx, "SELECT DISTINCT status FROM runs ORDER BY status")
}

// Models are the models of the indexed runs, sorted.
func (ix *Index) Models(ctx context.Context) ([]string, error) {
	return ix.strings(ctx, "SELECT DISTINCT model FROM run_models ORDER BY model")
}

func (ix *Index) strings(ctx context.Context, query string) ([]string, error) {
	rows, err := ix.db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
