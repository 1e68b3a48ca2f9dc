// Package redacttest holds credentials in every format the redaction pass
// must remove, for tests that plant them in a run and look for them in
// everything it wrote. Every value is made up.
package redacttest

import "strings"

// Planted is one credential as a text would show it.
type Planted struct {
	Name string
	// Text is how the credential appears (an assignment, a header, a key
	// block, grep's output of a key file).
	Text string
	// Raw are the parts of Text that must never be written anywhere.
	Raw []string
}

// body64 is 64 base64 characters of a made-up key body line.
func body64(seed string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var b strings.Builder
	x := uint32(2166136261)
	for _, c := range seed {
		x = (x ^ uint32(c)) * 16777619
	}
	for range 64 {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b.WriteByte(alphabet[x%64])
	}
	return b.String()
}

// alnum is body64 without its + and /.
func alnum(seed string) string {
	return strings.NewReplacer("+", "", "/", "").Replace(body64(seed) + body64(seed+"'"))
}

// Key body lines.
var (
	pemLines  = []string{"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + body64("pem0")[:32], body64("pem1"), body64("pem2"), body64("pem3")}
	pemLast   = "Zq7Tk2Vw9xY3mB4nC8dE1f=="
	grepLines = []string{body64("grep0"), body64("grep1"), body64("grep2")}
	grepLast  = "Hh5Jk9Lm2Np4Qr7St1Uv=="
)

// Secret is the registered secret value the tests add (AddSecrets), as a
// provider's key configured through api_key_env would be.
const Secret = "cfg-registered-Zx81Qw72Lp"

// All returns every format.
func All() []Planted {
	pem := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Join(pemLines, "\n") + "\n" + pemLast + "\n-----END RSA PRIVATE KEY-----"
	var grep strings.Builder
	for i, l := range grepLines {
		grep.WriteString("keys/deploy.pem:" + string(rune('2'+i)) + ":" + l + "\n")
	}
	grep.WriteString("keys/deploy.pem:5:" + grepLast + "\n")
	return []Planted{
		{"env password", "DB_PASSWORD=hunter2-Correct-Horse", []string{"hunter2-Correct-Horse"}},
		{"GitHub token in env", "GITHUB_TOKEN=ghp_R4nd0mT0k3nVa1ueF0rT3st1ngAbCdEf12", []string{"ghp_R4nd0mT0k3nVa1ueF0rT3st1ngAbCdEf12", "R4nd0mT0k3nVa1ue"}},
		{"GitHub fine-grained token", "token github_pat_11AB7QZ2Y0" + alnum("pat")[:30] + "_" + alnum("pat2")[:41],
			[]string{"11AB7QZ2Y0" + alnum("pat")[:30]}},
		{"Stripe live key", "stripe: sk_live_51Hx9Kq2eZvKYlo2C8a7b6c5d4", []string{"sk_live_51Hx9Kq2eZvKYlo2C8a7b6c5d4", "51Hx9Kq2eZvKYlo2C"}},
		{"Stripe restricted key", "use rk_live_51Hx9Kq2eZvKYlo2RzR9y8x7w6", []string{"rk_live_51Hx9Kq2eZvKYlo2RzR9y8x7w6", "51Hx9Kq2eZvKYlo2Rz"}},
		{"AWS secret in env", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8xLpR2vT", []string{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8xLpR2vT", "K7MDENG/bPxRfiCY"}},
		{"AWS access key id", "aws_access_key_id = AKIAZ7QW3ERT5YUI2OPL", []string{"AKIAZ7QW3ERT5YUI2OPL"}},
		{"OpenAI key in env", "OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", []string{"sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "Ab3dEf6hIj9kLm2n"}},
		{"Anthropic key", "ANTHROPIC key: sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe", []string{"sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe", "Zx9Yw8Vu7Ts6Rq5Po4"}},
		{"Google API key", "maps key AIzaSyD4x8Kq2Lm9Np3Rs7Tv1Wx5Yz0Ab6Cd2Ef", []string{"AIzaSyD4x8Kq2Lm9Np3Rs7Tv1Wx5Yz0Ab6Cd2Ef", "D4x8Kq2Lm9Np3Rs7"}},
		{"Slack bot token", "SLACK xoxb-2048593716-4096817253641-Qm7Rt2Yp9Lk4Zx8Wv3Nb6Hc", []string{"xoxb-2048593716-4096817253641-Qm7Rt2Yp9Lk4Zx8Wv3Nb6Hc", "Qm7Rt2Yp9Lk4Zx8Wv3Nb6Hc"}},
		{"JWT", "Authorization cookie eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvZSJ9.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
			[]string{"eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvZSJ9", "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"}},
		{"PEM private key", pem, append(append([]string{}, pemLines...), pemLast)},
		{"private key body through grep", grep.String(), append(append([]string{}, grepLines...), grepLast)},
		{"registered secret echoed", "the configured key is " + Secret + ".", []string{Secret}},
	}
}

// Document is every format in one text, one to a paragraph.
func Document() string {
	var b strings.Builder
	for _, p := range All() {
		b.WriteString(p.Text)
		b.WriteString("\n\n")
	}
	return b.String()
}

// Raw is every raw value of every format.
func Raw() []string {
	var out []string
	for _, p := range All() {
		out = append(out, p.Raw...)
	}
	return out
}
