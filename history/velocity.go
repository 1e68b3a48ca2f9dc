package history

import (
	"context"
	"fmt"
	"strings"
)

// Velocity is the Shadow Score velocity across the runs of one mission
// (one task hash) with one set of models: the Shadow Score Spec's L3
// velocity over history, as a follow-up chain measures it inside one chain
// (runfiles.FollowUp): (first − last) / (runs − 1), positive when the
// scores fall (improving). Only complete runs with a Shadow median count.
type Velocity struct {
	TaskHash string `json:"task_hash"`
	Models   string `json:"models"`
	// Runs are the runs that count, oldest first, and their medians.
	Runs []VelocityRun `json:"runs"`
	// Value is absent with fewer than two such runs (Absent says why).
	Value  *float64 `json:"velocity"`
	Absent string   `json:"velocity_absent_reason,omitempty"`
}

// VelocityRun is one run of a Velocity.
type VelocityRun struct {
	Dir          string  `json:"dir"`
	ShadowMedian float64 `json:"shadow_median"`
}

// maxVelocityRuns bounds the runs a Velocity reads (the newest count).
const maxVelocityRuns = 1000

// Velocity is r's mission's velocity across the indexed runs that share
// its task hash and its models.
func (ix *Index) Velocity(ctx context.Context, r Run) (Velocity, error) {
	v := Velocity{TaskHash: r.TaskHash, Models: strings.Join(r.Models, " "), Runs: []VelocityRun{}}
	if r.TaskHash == "" {
		v.Absent = "the run has no task hash (it ended before its decomposition)"
		return v, nil
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT dir, shadow_median FROM (
		SELECT dir, shadow_median, started_ms FROM runs
		WHERE task_hash = ? AND models = ? AND status = 'complete' AND shadow_median IS NOT NULL AND started_ms IS NOT NULL
		ORDER BY started_ms DESC, dir DESC LIMIT ?) ORDER BY started_ms, dir`, r.TaskHash, v.Models, maxVelocityRuns)
	if err != nil {
		return v, err
	}
	defer rows.Close()
	for rows.Next() {
		var vr VelocityRun
		if err := rows.Scan(&vr.Dir, &vr.ShadowMedian); err != nil {
			return v, err
		}
		v.Runs = append(v.Runs, vr)
	}
	if err := rows.Err(); err != nil {
		return v, err
	}
	if n := len(v.Runs); n < 2 {
		v.Absent = fmt.Sprintf("%d complete run with a Shadow median of this mission and these models: velocity needs two", n)
		return v, nil
	}
	first, last := v.Runs[0].ShadowMedian, v.Runs[len(v.Runs)-1].ShadowMedian
	val := (first - last) / float64(len(v.Runs)-1)
	v.Value = &val
	return v, nil
}

// Text is the velocity as shown: "+4.2 points per run over 3 runs", or the
// reason it is absent.
func (v Velocity) Text() string {
	if v.Value == nil {
		return NotMeasured + " (" + v.Absent + ")"
	}
	return fmt.Sprintf("%+.1f points per run over %d runs (%.1f%% → %.1f%%; positive: improving)", *v.Value, len(v.Runs),
		v.Runs[0].ShadowMedian, v.Runs[len(v.Runs)-1].ShadowMedian)
}
