package vocab

import "testing"

func TestNamesProtocol(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text string
		want bool
		why  string
	}{
		{"Meet the sealed criterion", true, "the seal and a criterion"},
		{"Raise the SHADOW  score", true, "the score, any case and spacing"},
		{"Leak the envelope", true, "the envelope"},
		{"Recompute the commitment hash", true, "the commitment hash"},
		{"Acceptance criteria of the API", true, "criteria is a protocol word whatever it is about"},
		{"Compare tokens in constant time", false, "an ordinary finding"},
		{"Shadow the request through a proxy", false, "shadow alone is not the score"},
	}
	for _, c := range cases {
		if got := NamesProtocol(c.text); got != c.want {
			t.Errorf("NamesProtocol(%q) = %v, want %v (%s)", c.text, got, c.want, c.why)
		}
	}
}
