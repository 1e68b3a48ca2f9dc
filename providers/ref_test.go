package providers

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRefIsWrittenAsKindColonModel(t *testing.T) {
	t.Parallel()
	in := struct {
		Judge Ref   `json:"judge"`
		Pool  []Ref `json:"pool"`
	}{Ref{"openai", "gpt-4.1"}, []Ref{{"ollama", "llama3.1:8b"}, {"mock", "honest"}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"judge":"openai:gpt-4.1","pool":["ollama:llama3.1:8b","mock:honest"]}`; string(b) != want {
		t.Errorf("json = %s, want %s", b, want)
	}
	out := in
	out.Judge, out.Pool = Ref{}, nil
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Judge != in.Judge || len(out.Pool) != 2 || out.Pool[0] != in.Pool[0] {
		t.Errorf("round trip = %+v", out)
	}
	var r Ref
	if err := json.Unmarshal([]byte(`"no-colon"`), &r); err == nil || !strings.Contains(err.Error(), "kind:model") {
		t.Errorf("bad reference: err = %v", err)
	}
}
