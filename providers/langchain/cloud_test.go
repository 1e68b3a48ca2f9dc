package langchain

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/providers"
)

// ---------- Google Gemini REST (generativelanguage v1beta) ----------

func geminiResp(text, finish string, in, outTok int) string {
	b, _ := json.Marshal(map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}}, "finishReason": finish, "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": in, "candidatesTokenCount": outTok, "totalTokenCount": in + outTok},
		"modelVersion":  "gemini-test-001"})
	return string(b)
}

// geminiStream wraps a response the way the REST streamGenerateContent
// endpoint does (a JSON array), which the genai chat session uses.
func geminiStream(obj string) string { return "[" + obj + "]" }

func geminiErr(code int, status, msg string, details ...any) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status, "details": details}})
	return string(b)
}

func googleCheck(t *testing.T, r *http.Request) {
	key := r.Header.Get("X-Goog-Api-Key")
	if key == "" {
		key = r.URL.Query().Get("key")
	}
	if key != "gk" || !strings.HasPrefix(r.URL.Path, "/v1beta/models/gemini-test:") {
		t.Errorf("%s?%s key %q", r.URL.Path, r.URL.RawQuery, key)
	}
}

func newGoogle(t *testing.T, f *fake) providers.Provider {
	t.Helper()
	t.Setenv("SWARM_TEST_GOOGLE", "gk")
	p, err := New(providers.Ref{Kind: "google", Model: "gemini-test"}, providers.KindConfig{BaseURL: f.srv.URL, APIKeyEnv: "SWARM_TEST_GOOGLE"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGoogleGemini(t *testing.T) {
	f := newFake(t, googleCheck, reply{body: geminiStream(geminiResp("All good.", "STOP", 12, 5))})
	resp, err := newGoogle(t, f).Complete(t.Context(), twoSystems)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "All good." || resp.Usage != (providers.Usage{InputTokens: 12, OutputTokens: 5}) || resp.FinishReason != providers.FinishStop {
		t.Errorf("response %+v", resp)
	}
	b := f.last().body
	gc, _ := b["generationConfig"].(map[string]any)
	si, _ := json.Marshal(b["systemInstruction"])
	if gc["maxOutputTokens"] != 300.0 || gc["temperature"] == nil || gc["temperature"].(float64) < 0.199 || gc["temperature"].(float64) > 0.201 {
		t.Errorf("generationConfig %v", gc)
	}
	if !strings.Contains(string(si), "You are the judge.\\n\\nBe brief.") {
		t.Errorf("systemInstruction %s: want both system messages", si)
	}
	f2 := newFake(t, googleCheck, reply{body: geminiStream(geminiResp("```json\n{\"name\":\"first\"}\n```", "STOP", 10, 4))}, reply{body: geminiStream(geminiResp(`{"name":"fixed","score":5}`, "STOP", 20, 6))})
	checkStructuredRepair(t, newGoogle(t, f2), f2, providers.Usage{InputTokens: 30, OutputTokens: 10})
}

func TestGoogleGeminiStopsAndErrors(t *testing.T) {
	retryInfo := map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}
	perDay := map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{map[string]any{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests", "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}}}
	perMin := map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{map[string]any{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests", "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}}}
	quotaMsg := "You exceeded your current quota, please check your plan and billing details."
	tests := []struct {
		name  string
		rp    reply
		want  providers.Class
		trunc bool
		wait  time.Duration
	}{
		{"MAX_TOKENS is truncated", reply{body: geminiStream(geminiResp(`{"name":"a","score":1}`, "MAX_TOKENS", 5, 300))}, providers.ClassUnparseable, true, 0},
		{"SAFETY is refused", reply{body: geminiStream(geminiResp("", "SAFETY", 5, 0))}, providers.ClassRefused, false, 0},
		{"prompt blocked", reply{body: geminiStream(`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":5,"totalTokenCount":5}}`)}, providers.ClassRefused, false, 0},
		{"429 per minute, RetryInfo", reply{status: 429, body: geminiErr(429, "RESOURCE_EXHAUSTED", quotaMsg, perMin, retryInfo)}, providers.ClassRateLimited, false, 37 * time.Second},
		{"429 per day is quota", reply{status: 429, body: geminiErr(429, "RESOURCE_EXHAUSTED", quotaMsg, perDay, retryInfo)}, providers.ClassQuota, false, 37 * time.Second},
		{"400 INVALID_ARGUMENT", reply{status: 400, body: geminiErr(400, "INVALID_ARGUMENT", "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).")}, providers.ClassPermanent, false, 0},
		{"403 bad key", reply{status: 403, body: geminiErr(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers.")}, providers.ClassPermanent, false, 0},
		{"500 INTERNAL", reply{status: 500, body: geminiErr(500, "INTERNAL", "An internal error has occurred.")}, providers.ClassTransient, false, 0},
		{"504 DEADLINE_EXCEEDED", reply{status: 504, body: geminiErr(504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete.")}, providers.ClassTimeout, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, googleCheck, tc.rp)
			_, err := newGoogle(t, f).Complete(t.Context(), twoSystems)
			c, wait, _ := errClass(err)
			if c != tc.want || wait != tc.wait || errors.Is(err, providers.ErrTruncated) != tc.trunc {
				t.Errorf("class %q retry-after %s truncated %v (%v), want %q %s %v", c, wait, errors.Is(err, providers.ErrTruncated), err, tc.want, tc.wait, tc.trunc)
			}
		})
	}
}

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
