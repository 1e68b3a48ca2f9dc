package nexus_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/vocab"
)

// previousCriteria are the sealed criteria of the run a follow-up follows:
// ids and wording no other run of these tests writes, so finding any of
// them in a follow-up's prompt can only mean it was passed on.
var previousCriteria = []shadow.Criterion{
	{ID: "sc-901", Category: "happy_path", Assertion: `The plan names the "quokka ledger" as the source of every issued token.`, Expected: `"quokka ledger" named as the token source`},
	{ID: "sc-902", Category: "edge_case", Assertion: `The plan says how a "marmalade window" of stale sessions is drained.`, Expected: `A "marmalade window" drain procedure`},
	{ID: "sc-903", Category: "error_handling", Assertion: `The plan states what happens when the "zephyr cache" rejects a refresh.`, Expected: `"zephyr cache" rejection answered`},
	{ID: "sc-904", Category: "security", Assertion: `The plan requires a "basilisk audit" of every signing key rotation.`, Expected: `"basilisk audit" of key rotation`},
	{ID: "sc-905", Category: "happy_path", Assertion: `The plan lists a "periwinkle rollback" for the session store cut-over.`, Expected: `"periwinkle rollback" listed`},
	{ID: "sc-906", Category: "edge_case", Assertion: `The plan covers clients stuck in the "gossamer handshake" during migration.`, Expected: `"gossamer handshake" clients handled`},
	{ID: "sc-907", Category: "error_handling", Assertion: `The plan describes a "tamarind fallback" when the identity provider is down.`, Expected: `"tamarind fallback" for an outage`},
	{ID: "sc-908", Category: "security", Assertion: `The plan forbids "obsidian tokens" in any client side storage.`, Expected: `"obsidian tokens" never stored client side`},
}

// previousMessages are the scripted judge's failure messages: each restates
// its criterion's key term (the judge scrub withholds them from hardening
// feedback; a follow-up must not pass them on either).
var previousMessages = map[string]string{
	"sc-901": "quokka ledger missing", "sc-902": "marmalade window missing", "sc-903": "zephyr cache missing",
	"sc-904": "basilisk audit missing", "sc-905": "periwinkle rollback missing", "sc-906": "gossamer handshake missing",
	"sc-907": "tamarind fallback missing", "sc-908": "obsidian tokens missing",
}

// runPrevious runs the auth-migration mission with a scripted seal author
// (previousCriteria) and a judge that fails sc-901, sc-902, sc-903 and
// sc-905 in every bundle: a complete run with a known Shadow Score (4 of 8
// failed: 50.0, significant) and known failed categories.
func runPrevious(t *testing.T) *nexus.Result {
	t.Helper()
	var verdicts []map[string]string
	failing := map[string]bool{"sc-901": true, "sc-902": true, "sc-903": true, "sc-905": true}
	for _, c := range previousCriteria {
		v := map[string]string{"id": c.ID, "status": "pass", "actual": "covered", "message": ""}
		if failing[c.ID] {
			v = map[string]string{"id": c.ID, "status": "fail", "actual": "nothing on this point", "message": previousMessages[c.ID]}
		}
		verdicts = append(verdicts, v)
	}
	script := map[string]any{"rules": []map[string]any{
		{"schema": vocab.SchemaSealedCriteria, "json": map[string]any{"criteria": previousCriteria}},
		{"schema": vocab.SchemaVerdicts, "json": map[string]any{"verdicts": verdicts}},
	}}
	b, err := json.Marshal(script)
	if err != nil {
		t.Fatal(err)
	}
	s := loadScript(t, string(b))
	// Small teams (smallTeams): the follow-ups read its score, categories
	// and findings, which its five domains give whatever their size.
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "mock:honest", small, func(o *nexus.Options) {
		o.Registry = mockRegistry(mock.Options{Script: s})
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runfiles.StatusComplete || res.Aggregate.Median == nil || *res.Aggregate.Median != 50 {
		t.Fatalf("fixture: previous run %s (%s), median %v, want complete at 50.0", res.Status, res.Error, res.Aggregate.Median)
	}
	return res
}

func followUp(prev string) runOpt {
	return func(o *nexus.Options) { o.FollowUp = prev }
}

// TestFollowUpPassesPriorContextAndNeverTheCriteria runs a mission, then a
// follow-up of it, and checks that the follow-up's decomposition and every
// commander's prompts carry the previous-run block (score, failed
// categories with counts, findings), that no prompt of the follow-up (any
// role, the seal author and judge included) carries a criterion id, text
// or judge message of the previous run's envelope, and that result.json,
// telemetry.json, report.md and the events show the chain and velocity.
func TestFollowUpPassesPriorContextAndNeverTheCriteria(t *testing.T) {
	t.Parallel()
	prev := runPrevious(t)
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "mock:honest", small, followUp(prev.Dir))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runfiles.StatusComplete {
		t.Fatalf("follow-up run %s: %s", res.Status, res.Error)
	}

	// The block reaches the decomposition and every commander.
	const marker = "This run follows up an earlier run of the mission, " // prompts/templates/previous_run.tmpl
	wantCats := "happy_path: 2 checks, 10 failures; edge_case: 1 checks, 5 failures; error_handling: 1 checks, 5 failures."
	decomposition, commanderPrompts := 0, map[string]bool{}
	for _, tr := range res.Transcripts {
		last := tr.Messages[len(tr.Messages)-1].Content
		switch tr.Role {
		case commanders.RoleNexus:
			if !strings.Contains(last, `kind="previous_run"`) || !strings.Contains(last, marker+prev.Plan.RunID) {
				t.Errorf("decomposition prompt lacks the previous-run block:\n%s", last)
			}
			decomposition++
		case commanders.RoleCommander:
			if strings.Contains(last, marker+prev.Plan.RunID) {
				commanderPrompts[tr.AgentID] = true
			}
		case commanders.RoleSealAuthor:
			if strings.Contains(last, marker) {
				t.Errorf("the seal author got the previous-run block:\n%s", last)
			}
		}
		if strings.Contains(last, marker) {
			for _, want := range []string{"Its score (the share of acceptance checks failed, lower is better): median 50.0% (significant), 5 of 5 bundles scored.", wantCats} {
				if !strings.Contains(last, want) {
					t.Errorf("prompt to %s: block lacks %q:\n%s", tr.AgentID, want, last)
				}
			}
		}
	}
	if decomposition != 1 {
		t.Errorf("%d decomposition prompts, want 1", decomposition)
	}
	if len(commanderPrompts) != res.Plan.Commanders {
		t.Errorf("%d of %d commanders got the previous-run block: %v", len(commanderPrompts), res.Plan.Commanders, commanderPrompts)
	}

	// No prompt of the follow-up carries the previous run's criteria.
	scanned := 0
	for _, tr := range res.Transcripts {
		for _, m := range tr.Messages {
			scanned++
			text := normalised(m.Content)
			for _, c := range previousCriteria {
				for what, s := range map[string]string{"id": c.ID, "assertion": c.Assertion, "expected": c.Expected, "judge message": previousMessages[c.ID]} {
					if strings.Contains(text, normalised(s)) {
						t.Errorf("%s of %s (previous run) reached %s (%s)", what, c.ID, tr.AgentID, tr.Role)
					}
				}
			}
		}
	}
	if scanned < 50 {
		t.Fatalf("only %d prompts scanned: the scan proves nothing", scanned)
	}

	// The chain and its velocity.
	fu := res.FollowUp
	if fu == nil {
		t.Fatal("no follow_up in the result")
	}
	if res.Aggregate.Median == nil {
		t.Fatal("the follow-up run has no score")
	}
	this := *res.Aggregate.Median
	wantChain := []runfiles.ChainRun{
		{RunID: prev.Plan.RunID, Dir: absDir(t, prev.Dir), Status: "complete", ShadowScore: ptr(50), Level: "significant", Scored: 5, Planned: 5},
		{RunID: res.Plan.RunID, Dir: absDir(t, res.Dir), Status: "complete", ShadowScore: ptr(this), Level: res.Aggregate.Level, Scored: 5, Planned: 5},
	}
	if d := cmp.Diff(wantChain, fu.Chain); d != "" {
		t.Errorf("chain (-want +got)\n%s", d)
	}
	if fu.Velocity == nil || *fu.Velocity != 50-this {
		t.Errorf("velocity %v (absent: %q), want %v", fu.Velocity, fu.VelocityAbsent, 50-this)
	}
	var onDisk struct {
		FollowUp *runfiles.FollowUp `json:"follow_up"`
	}
	for _, f := range []string{"result.json", "telemetry.json"} {
		b, err := os.ReadFile(filepath.Join(res.Dir, f))
		if err != nil {
			t.Fatal(err)
		}
		onDisk.FollowUp = nil
		if err := json.Unmarshal(b, &onDisk); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(fu, onDisk.FollowUp); d != "" {
			t.Errorf("%s follow_up (-want +got)\n%s", f, d)
		}
	}
	report, err := os.ReadFile(filepath.Join(res.Dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Follow-up", "| 1 | `" + prev.Plan.RunID + "` | complete | 50.0% (5 of 5 scored) |",
		"(this run) | complete |", "Shadow Score velocity: **"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	var ev *events.FollowUpData
	for _, e := range res.Events {
		if d, ok := e.Data.(events.FollowUpData); ok && e.Kind == events.FollowUp {
			ev = &d
		}
	}
	if ev == nil || ev.PreviousRunID != prev.Plan.RunID || ev.ChainRuns != 2 || ev.MissionChanged {
		t.Errorf("follow_up event %+v", ev)
	}
}

// TestRunWithoutFollowUpHasNoBlock: a run without --follow-up renders no
// previous-run block and records no follow_up (its golden files stay).
func TestRunWithoutFollowUpHasNoBlock(t *testing.T) {
	t.Parallel()
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-50", "mock:honest")
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Transcripts {
		for _, m := range tr.Messages {
			if strings.Contains(m.Content, "previous_run") || strings.Contains(m.Content, "follows up") {
				t.Errorf("prompt to %s mentions a previous run:\n%s", tr.AgentID, m.Content)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(res.Dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.FollowUp != nil || strings.Contains(string(b), "follow_up") {
		t.Error("a run without a follow-up records follow_up")
	}
}

// copyRun copies a run directory (files and their modes) to a new one.
func copyRun(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "prev")
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// editJSON rewrites a JSON file of a run directory through edit.
func editJSON(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestFollowUpOfAnUnusableRunIsBadInput: every previous run a follow-up
// cannot use is refused before anything is run or written, naming the
// directory, file or field at fault.
func TestFollowUpOfAnUnusableRunIsBadInput(t *testing.T) {
	t.Parallel()
	prev := runPrevious(t)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) string // the --follow-up directory
		want  string                    // in the error
	}{
		{"a directory that does not exist", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, "no such file"},
		{"a file, not a directory", func(t *testing.T) string { return filepath.Join(copyRun(t, prev.Dir), "result.json") }, "not a directory"},
		{"a run that never finished (no result.json)", func(t *testing.T) string {
			d := copyRun(t, prev.Dir)
			os.Remove(filepath.Join(d, "result.json"))
			return d
		}, "has no result.json: the run never finished"},
		{"result.json that is not JSON", func(t *testing.T) string {
			d := copyRun(t, prev.Dir)
			os.WriteFile(filepath.Join(d, "result.json"), []byte("{"), 0o600)
			return d
		}, "result.json: not a run's result"},
		{"an unknown status", func(t *testing.T) string {
			d := copyRun(t, prev.Dir)
			editJSON(t, filepath.Join(d, "result.json"), func(m map[string]any) { m["status"] = "great" })
			return d
		}, `status "great" is not a run status`},
		{"a score that is not a Shadow Score", func(t *testing.T) string {
			d := copyRun(t, prev.Dir)
			editJSON(t, filepath.Join(d, "result.json"), func(m map[string]any) { m["shadow_aggregate"].(map[string]any)["median"] = 140 })
			return d
		}, "shadow_aggregate.median 140 is not a Shadow Score"},
		{"a run that was only sealed", func(t *testing.T) string {
			d := copyRun(t, prev.Dir)
			editJSON(t, filepath.Join(d, "result.json"), func(m map[string]any) { m["status"] = "sealed" })
			return d
		}, "status sealed"},
		{"sealed criteria that no longer verify", func(t *testing.T) string {
			d := copyRun(t, prev.Dir)
			editJSON(t, runfiles.EnvelopePath(d), func(m map[string]any) {
				m["criteria"].([]any)[0].(map[string]any)["expected"] = "anything at all"
			})
			return d
		}, "envelope.json"},
		{"a score edited in result.json (the reports were judged against another hash)", func(t *testing.T) string {
			d := copyRun(t, prev.Dir)
			editJSON(t, filepath.Join(d, "result.json"), func(m map[string]any) { m["sealed_hash"] = "sha256:00" })
			return d
		}, "sealed_hash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.setup(t)
			out := filepath.Join(t.TempDir(), "run")
			_, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-50", "mock:honest", followUp(dir), func(o *nexus.Options) { o.OutDir = out })
			if !errors.Is(err, config.ErrBadInput) || !strings.Contains(err.Error(), "--follow-up "+dir) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v: want bad input naming %s and %q", err, dir, tc.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused follow-up left a run directory (stat: %v)", err)
			}
		})
	}
	t.Run("the run's own directory", func(t *testing.T) {
		d := copyRun(t, prev.Dir)
		_, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-50", "mock:honest", followUp(d), func(o *nexus.Options) { o.OutDir, o.Force = d, true })
		if !errors.Is(err, config.ErrBadInput) || !strings.Contains(err.Error(), "cannot follow itself up") {
			t.Errorf("error %v", err)
		}
	})
}

// TestFollowUpOfAnInterruptedRevisedMission: a previous run that has no
// score (interrupted) of a mission since revised is followed up with what
// it has (its findings), warns about both, and the chain has no velocity
// (never one computed over a missing score).
func TestFollowUpOfAnInterruptedRevisedMission(t *testing.T) {
	t.Parallel()
	prev := runPrevious(t)
	d := copyRun(t, prev.Dir)
	editJSON(t, filepath.Join(d, "result.json"), func(m map[string]any) {
		m["status"] = "interrupted"
		m["shadow_aggregate"] = map[string]any{"median": nil, "mean": nil, "level": "none", "planned": 5, "scored": 0, "failed": 5}
	})
	if err := os.RemoveAll(filepath.Join(d, "reports")); err != nil {
		t.Fatal(err)
	}
	res, err := runMission(t, loadMission(t, "auth-migration.md")+"\n- also: rotate the signing keys\n", "ss-50", "mock:honest", followUp(d))
	if err != nil {
		t.Fatal(err)
	}
	fu := res.FollowUp
	if fu == nil || !fu.MissionChanged {
		t.Fatalf("follow_up %+v: want the mission change noted", fu)
	}
	if fu.Velocity != nil || !strings.Contains(fu.VelocityAbsent, "run "+prev.Plan.RunID+" (interrupted) has no Shadow Score") {
		t.Errorf("velocity %v, reason %q", fu.Velocity, fu.VelocityAbsent)
	}
	if c := fu.Chain[0]; c.ShadowScore != nil || c.Status != "interrupted" {
		t.Errorf("previous run's entry %+v", c)
	}
	warned := strings.Join(fu.Warnings, "\n")
	for _, want := range []string{"no Shadow Score", "no judged Shadow Report", "mission differs"} {
		if !strings.Contains(warned, want) {
			t.Errorf("warnings lack %q:\n%s", want, warned)
		}
	}
	if len(fu.Prior.Findings) == 0 || len(fu.Prior.FailedCategories) != 0 {
		t.Errorf("prior context %+v: want the findings and no categories", fu.Prior)
	}
	report, _ := os.ReadFile(filepath.Join(res.Dir, "report.md"))
	if !strings.Contains(string(report), "Shadow Score velocity: none: run "+prev.Plan.RunID) {
		t.Errorf("report.md does not say why there is no velocity:\n%s", report)
	}
}

func ptr(v float64) *float64 { return &v }

func absDir(t *testing.T, d string) string {
	t.Helper()
	a, err := filepath.Abs(d)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
