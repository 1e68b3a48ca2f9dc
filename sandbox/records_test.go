package sandbox

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadInteractions: each line becomes one interaction (blank lines
// skipped, line numbers kept); a bad line stops the reading with an error
// naming the file and line.
func TestReadInteractions(t *testing.T) {
	t.Parallel()
	proxy, err := NewProxy(DefaultProxyConfig())
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Line     int
		ID       string
		Accepted bool
		P        float64
		Truth    int
	}
	for _, tc := range []struct {
		why     string
		in      string
		want    []got
		wantErr string // "": no error
	}{
		{"p given; a blank line keeps the numbering", "{\"id\":\"a\",\"accepted\":true,\"p\":0.25}\n\n  \n{\"accepted\":false,\"p\":1,\"ground_truth\":-1}\n", []got{
			{Line: 1, ID: "a", Accepted: true, P: 0.25}, {Line: 4, P: 1, Truth: -1}}, ""},
		{"observables go through the proxy", "{\"accepted\":true,\"observables\":{\"task_progress\":1}}\n", []got{
			{Line: 1, Accepted: true, P: proxy.P(Observables{TaskProgress: 1})}}, ""},
		{"accepted is required", "{\"accepted\":true,\"p\":0.5}\n{\"p\":0.5}\n", []got{{Line: 1, Accepted: true, P: 0.5}}, `in.jsonl:2: missing "accepted"`},
		{"an unknown field", "{\"accepted\":true,\"p\":0.5,\"q\":1}\n", nil, `in.jsonl:1: json: unknown field "q"`},
		{"a wrong type", "{\"accepted\":\"yes\",\"p\":0.5}\n", nil, "in.jsonl:1: json: cannot unmarshal string into Go struct field metricsLine.accepted of type bool"},
		{"not JSON", "p=0.5\n", nil, "in.jsonl:1: invalid character"},
		{"p and observables", "{\"accepted\":true,\"p\":0.5,\"observables\":{}}\n", nil, `in.jsonl:1: give either "p" or "observables", not both`},
		{"neither p nor observables", "{\"accepted\":true}\n", nil, `in.jsonl:1: needs "p" or "observables"`},
		{"p outside [0, 1]", "{\"accepted\":true,\"p\":-0.1}\n", nil, "in.jsonl:1: p = -0.1 is outside [0, 1]"},
		{"a ground truth that is not ±1", "{\"accepted\":true,\"p\":0.5,\"ground_truth\":2}\n", nil, "in.jsonl:1: ground_truth must be +1 or -1"},
		{"a line over the limit", "{\"id\":\"" + strings.Repeat("x", maxRecordBytes) + "\"}\n", nil, "in.jsonl: bufio.Scanner: token too long"},
	} {
		t.Run(tc.why, func(t *testing.T) {
			var seen []got
			err := ReadInteractions("in.jsonl", strings.NewReader(tc.in), proxy, func(line int, in Interaction) error {
				seen = append(seen, got{Line: line, ID: in.ID, Accepted: in.Accepted, P: in.P, Truth: in.GroundTruth})
				return nil
			})
			wantErrPrefix(t, err, tc.wantErr)
			if d := cmp.Diff(tc.want, seen); d != "" {
				t.Errorf("interactions (-want +got):\n%s", d)
			}
		})
	}
	t.Run("a bad line is a *LineError with its line", func(t *testing.T) {
		err := ReadInteractions("f", strings.NewReader("{\"accepted\":true,\"p\":0.5}\n{}\n"), proxy, func(int, Interaction) error { return nil })
		var le *LineError
		if !errors.As(err, &le) || le.Name != "f" || le.Line != 2 {
			t.Fatalf("err = %#v, want a *LineError at f:2", err)
		}
	})
	t.Run("the callback's error stops the reading and is returned as is", func(t *testing.T) {
		stop := errors.New("stop")
		calls := 0
		err := ReadInteractions("f", strings.NewReader("{\"accepted\":true,\"p\":0.5}\n{\"accepted\":true,\"p\":0.5}\n"), proxy, func(int, Interaction) error { calls++; return stop })
		if err != stop || calls != 1 {
			t.Fatalf("err = %v after %d calls, want stop after 1", err, calls)
		}
	})
}

// TestReadDecisions: each line becomes one decision record (blank lines
// skipped, line numbers kept); a bad or over-long line stops the reading
// with an error naming the file and line.
func TestReadDecisions(t *testing.T) {
	t.Parallel()
	type got struct {
		Line   int
		ID     string
		Action string
	}
	for _, tc := range []struct {
		why     string
		in      string
		want    []got
		wantErr string // "": no error
	}{
		{"a blank line keeps the numbering", "{\"decision_id\":\"a\",\"action\":\"x\"}\n\n{\"decision_id\":\"b\"}\n",
			[]got{{1, "a", "x"}, {3, "b", ""}}, ""},
		{"decision_id is required", "{\"decision_id\":\"a\"}\n{\"action\":\"x\"}\n", []got{{1, "a", ""}}, "in.jsonl:2: missing decision_id"},
		{"an unknown field", "{\"decision_id\":\"a\",\"q\":1}\n", nil, `in.jsonl:1: json: unknown field "q"`},
		{"not JSON", "{\"decision_id\":\"a\"}\nx\n", []got{{1, "a", ""}}, "in.jsonl:2: invalid character"},
		{"a line past bufio's default 64 KiB is read", "{\"decision_id\":\"a\",\"action\":\"" + strings.Repeat("x", 70<<10) + "\"}\n{\"decision_id\":\"b\"}\n",
			[]got{{1, "a", strings.Repeat("x", 70<<10)}, {2, "b", ""}}, ""},
		{"a line over the limit names its line", "{\"decision_id\":\"a\"}\n{\"decision_id\":\"" + strings.Repeat("x", maxRecordBytes) + "\"}\n",
			[]got{{1, "a", ""}}, "in.jsonl:2: line too long: over 16777216 bytes"},
	} {
		t.Run(tc.why, func(t *testing.T) {
			var seen []got
			err := ReadDecisions("in.jsonl", strings.NewReader(tc.in), func(line int, d Decision) error {
				seen = append(seen, got{line, d.DecisionID, d.Action})
				return nil
			})
			wantErrPrefix(t, err, tc.wantErr)
			if d := cmp.Diff(tc.want, seen); d != "" {
				t.Errorf("records (-want +got):\n%s", d)
			}
		})
	}
}

// wantErrPrefix stops the test unless err is nil (want "") or its text
// starts with want.
func wantErrPrefix(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("err = %v", err)
	case want != "" && (err == nil || !strings.HasPrefix(err.Error(), want)):
		t.Fatalf("err = %v, want %q", err, want)
	}
}
