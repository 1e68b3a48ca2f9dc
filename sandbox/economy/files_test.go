package economy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadFileLocatesBadValuesAndKeepsOrder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		why, file, want string
		read            func(name string, r *strings.Reader) (any, error)
	}{
		{"a bad value is named by its path at its own line and column",
			"supply: {a: 1}\nbids:\n  - agent: x\n    budget: -1\n",
			"f.yaml:4:5: bids[0].budget: -1 is negative",
			func(n string, r *strings.Reader) (any, error) { return ReadAuctionFile(n, r) }},
		{"a missing key is reported at the top of the file",
			"{}\n", "f.yaml:1:1: identities: give at least one identity",
			func(n string, r *strings.Reader) (any, error) { return ReadIdentityFile(n, r) }},
		{"an empty file is an error, not a report of nothing",
			"", "f.yaml:1:1: (file): empty file",
			func(n string, r *strings.Reader) (any, error) { return ReadCrashFile(n, r) }},
		{"resources and agents keep the file's order, not the alphabet's",
			"supply: {z: 1, a: 1}\nbids: [{agent: y, budget: 1, valuations: {z: 1, a: 2}}, {agent: b, budget: 1, valuations: {z: 2, a: 1}}]\n",
			`"prices":{"z"`,
			func(n string, r *strings.Reader) (any, error) { return ReadAuctionFile(n, r) }},
		{"an epoch listed twice is one key, in its first place",
			"identities: [{id: a}]\nepochs: [3, 1, 3]\n",
			`{"trust":{"a":{"3":0.3,"1":0.3}}}`,
			func(n string, r *strings.Reader) (any, error) { return ReadIdentityFile(n, r) }},
	} {
		t.Run(tc.why, func(t *testing.T) {
			out, err := tc.read("f.yaml", strings.NewReader(tc.file))
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				b, err := json.Marshal(out)
				if err != nil {
					t.Fatal(err)
				}
				got = string(b)
				if strings.Contains(got, tc.want) {
					got = tc.want
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}
