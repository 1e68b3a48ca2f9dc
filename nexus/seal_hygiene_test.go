package nexus_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/vocab"
)

// protocolWords are the words that would tell an agent below the Nexus
// that a seal exists: the seed protocol forbids any mention of the
// sealed-envelope protocol to commanders (issue 20, "Seal hygiene").
var protocolWords = regexp.MustCompile(`(?i)seal|shadow\s*score|criteri|envelope|commitment\s*hash`)

// hygienicRoles are the roles whose every prompt is scanned: the
// commanders' teams, and the Nexus, whose decomposition the capsules are
// built from. The seal author, the judge and the reviewers may see the words.
var hygienicRoles = map[string]bool{
	commanders.RoleCommander: true, commanders.RoleSquadLead: true, commanders.RoleWorker: true, commanders.RoleNexus: true,
}

// scanProtocolWords fails on every prompt of the hygienic roles and every
// capsule of the run that names the protocol; it returns how many prompts
// carried hardening feedback and how many carried the previous-run block.
func scanProtocolWords(t *testing.T, what string, res *nexus.Result) (feedback, previous int) {
	t.Helper()
	scanned := map[string]int{}
	for _, tr := range res.Transcripts {
		if !hygienicRoles[tr.Role] {
			continue
		}
		for _, m := range tr.Messages {
			scanned[tr.Role]++
			if strings.Contains(m.Content, vocab.FeedbackHeading) {
				feedback++
			}
			if strings.Contains(m.Content, `kind="previous_run"`) || strings.Contains(m.Content, "This run follows up an earlier run") {
				previous++
			}
			if w := protocolWords.FindString(m.Content); w != "" {
				t.Errorf("%s: a prompt to %s (%s) says %q:\n%s", what, tr.AgentID, tr.Role, w, around(m.Content, w))
			}
		}
	}
	for _, role := range []string{commanders.RoleCommander, commanders.RoleSquadLead, commanders.RoleWorker, commanders.RoleNexus} {
		if scanned[role] == 0 {
			t.Errorf("%s: no %s prompt scanned: the scan proves nothing", what, role)
		}
	}
	capsules, err := filepath.Glob(filepath.Join(res.Dir, "capsules", "*.json"))
	if err != nil || len(capsules) == 0 {
		t.Fatalf("%s: no capsule written (%v)", what, err)
	}
	for _, c := range capsules {
		b, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		if w := protocolWords.FindString(string(b)); w != "" {
			t.Errorf("%s: capsule %s says %q:\n%s", what, filepath.Base(c), w, around(string(b), w))
		}
	}
	return feedback, previous
}

// around is the text near the first occurrence of w, for an error message.
func around(text, w string) string {
	i := strings.Index(text, w)
	lo, hi := max(0, i-160), min(len(text), i+len(w)+160)
	return "..." + text[lo:hi] + "..."
}

// Issue 20, "Seal hygiene": hardening feedback said an explanation was
// withheld "because it restated the sealed criterion", and follow-up
// capsules spoke of "failed sealed criteria" and the Shadow Score. A
// hardened run (a judge failing half the criteria with messages that
// restate them, so the feedback withholds them) and a follow-up of it, at
// ss-250 so that squad leads are scanned too: no prompt to a commander,
// squad lead, worker or the Nexus, and no capsule, names the protocol.
func TestNoPromptBelowTheNexusNamesTheSeal(t *testing.T) {
	t.Parallel()
	// The mission's own "rollback criteria" would be the user's word, not
	// the protocol's: the scan needs a mission without it.
	mission := strings.Replace(loadMission(t, "auth-migration.md"), "rollback criteria", "rollback conditions", 1)
	if w := protocolWords.FindString(mission); w != "" {
		t.Fatalf("fixture: the mission itself says %q", w)
	}
	// A scripted seal author (8 criteria) and a judge that fails three of
	// them in every bundle: one with a message restating the criterion
	// (withheld from the feedback), one with no message, one plainly.
	verdicts := make([]map[string]string, 0, len(previousCriteria))
	for i, c := range previousCriteria {
		v := map[string]string{"id": c.ID, "status": "pass", "actual": "covered", "message": ""}
		switch i {
		case 0:
			v = map[string]string{"id": c.ID, "status": "fail", "actual": "nothing on this point", "message": c.Assertion}
		case 1:
			v = map[string]string{"id": c.ID, "status": "fail", "actual": "nothing on this point", "message": ""}
		case 2:
			v = map[string]string{"id": c.ID, "status": "fail", "actual": "nothing on this point", "message": "nothing on this point"}
		}
		verdicts = append(verdicts, v)
	}
	script, err := json.Marshal(map[string]any{"rules": []map[string]any{
		{"schema": vocab.SchemaSealedCriteria, "json": map[string]any{"criteria": previousCriteria}},
		{"schema": vocab.SchemaVerdicts, "json": map[string]any{"verdicts": verdicts}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	scripted := loadScript(t, string(script))
	// Small teams (smallTeams): two squad leads of two workers per
	// commander are squad leads scanned all the same.
	eight := func(o *nexus.Options) {
		o.Registry = mockRegistry(mock.Options{Script: scripted})
		smallTeams(o.Config)
		s := o.Config.Scales["ss-250"]
		s.SealedCriteria = len(previousCriteria)
		o.Config.Scales["ss-250"] = s
	}
	prev, err := runMission(t, mission, "ss-250", "mock:honest", eight)
	if err != nil {
		t.Fatal(err)
	}
	hardened := 0
	for _, b := range prev.Bundles {
		if b.Hardening != nil {
			hardened++
		}
	}
	if feedback, _ := scanProtocolWords(t, "hardened run", prev); hardened == 0 || feedback == 0 {
		t.Fatalf("fixture: %d bundles hardened, %d prompts carried feedback; want both", hardened, feedback)
	}
	withheld := false
	for _, b := range prev.Bundles {
		for _, v := range b.Initial.Verdicts {
			withheld = withheld || strings.Contains(v.Message, "withheld")
		}
	}
	if !withheld {
		t.Fatal("fixture: no failure message was withheld: the feedback's wording is not exercised")
	}
	res, err := runMission(t, mission, "ss-250", "mock:honest", followUp(prev.Dir), func(o *nexus.Options) {
		smallTeams(o.Config)
		s := o.Config.Scales["ss-250"]
		s.SealedCriteria = len(previousCriteria)
		o.Config.Scales["ss-250"] = s
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, previous := scanProtocolWords(t, "follow-up run", res); previous == 0 {
		t.Fatal("fixture: no prompt of the follow-up carried the previous-run block")
	}
}
