package langchain

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/providers"
)

// ---------- AWS Bedrock InvokeModel (Anthropic model body) ----------

const bedrockModel = "anthropic.claude-3-5-sonnet-20240620-v1:0"

func bedrockEnv(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

func bedrockCheck(t *testing.T, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/model/"+bedrockModel+"/invoke" ||
		!strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(r.Header.Get("Authorization"), "/us-west-2/bedrock/aws4_request") {
		t.Errorf("%s %s auth %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
	}
}

func newBedrock(t *testing.T, f *fake) providers.Provider {
	t.Helper()
	p, err := New(providers.Ref{Kind: "bedrock", Model: bedrockModel}, providers.KindConfig{BaseURL: f.srv.URL, Options: map[string]string{"region": "us-west-2"}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBedrockInvokeModel(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	bedrockEnv(t)
	f := newFake(t, bedrockCheck, reply{body: anthropicMsg("end_turn", 31, 8, "All good.")})
	resp, err := newBedrock(t, f).Complete(t.Context(), twoSystems)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "All good." || resp.Usage != (providers.Usage{InputTokens: 31, OutputTokens: 8}) {
		t.Errorf("response %+v", resp)
	}
	b := f.last().body
	if b["anthropic_version"] != "bedrock-2023-05-31" || b["max_tokens"] != 300.0 || b["system"] != "You are the judge.\n\nBe brief." {
		t.Errorf("body %v", b)
	}
	f2 := newFake(t, bedrockCheck, reply{body: anthropicMsg("end_turn", 10, 4, `{"name":"first"}`)}, reply{body: anthropicMsg("end_turn", 20, 6, `{"name":"fixed","score":5}`)})
	checkStructuredRepair(t, newBedrock(t, f2), f2, providers.Usage{InputTokens: 30, OutputTokens: 10})
}

func TestBedrockStopsAndErrors(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	bedrockEnv(t)
	awsErr := func(status int, typ, msg string) reply {
		return reply{status: status, hdr: map[string]string{"X-Amzn-ErrorType": typ + ":http://internal.amazon.com/coral/com.amazon.bedrock/", "X-Amzn-Requestid": "r"}, body: `{"message":"` + msg + `"}`}
	}
	tests := []struct {
		name  string
		rp    reply
		want  providers.Class
		trunc bool
	}{
		{"max_tokens is truncated", reply{body: anthropicMsg("max_tokens", 5, 300, `{"name":`)}, providers.ClassUnparseable, true},
		{"429 ThrottlingException", awsErr(429, "ThrottlingException", "Too many requests, please wait before trying again."), providers.ClassRateLimited, false},
		{"400 ValidationException", awsErr(400, "ValidationException", "max_tokens: 300000 > 8192"), providers.ClassPermanent, false},
		{"403 AccessDeniedException", awsErr(403, "AccessDeniedException", "You don't have access to the model with the specified model ID."), providers.ClassPermanent, false},
		{"400 ServiceQuotaExceededException", awsErr(400, "ServiceQuotaExceededException", "Your request exceeded the quota."), providers.ClassQuota, false},
		{"408 ModelTimeoutException", awsErr(408, "ModelTimeoutException", "Model has timed out"), providers.ClassTimeout, false},
		{"503 ServiceUnavailableException", awsErr(503, "ServiceUnavailableException", "Service unavailable"), providers.ClassTransient, false},
		{"500 InternalServerException", awsErr(500, "InternalServerException", "internal"), providers.ClassTransient, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, bedrockCheck, tc.rp)
			_, err := newBedrock(t, f).Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
			c, _, _ := errClass(err)
			if c != tc.want || errors.Is(err, providers.ErrTruncated) != tc.trunc {
				t.Errorf("class %q truncated %v (%v), want %q %v", c, errors.Is(err, providers.ErrTruncated), err, tc.want, tc.trunc)
			}
			if f.calls() != 1 {
				t.Errorf("%d requests, want 1 (the SDK's own retries must be off)", f.calls())
			}
		})
	}
}

func TestBedrockNeedsRegion(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	bedrockEnv(t)
	_, err := New(providers.Ref{Kind: "bedrock", Model: bedrockModel}, providers.KindConfig{})
	if err == nil || !strings.Contains(err.Error(), "region") {
		t.Errorf("err = %v, want a missing-region error", err)
	}
	t.Setenv("AWS_REGION", "eu-central-1")
	if _, err := New(providers.Ref{Kind: "bedrock", Model: bedrockModel}, providers.KindConfig{}); err != nil {
		t.Errorf("AWS_REGION not used: %v", err)
	}
}
