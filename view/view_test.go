package view_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/history"
	"github.com/swarm-dev/swarm/internal/runfixture"
	"github.com/swarm-dev/swarm/view"
)

// fixture is the runs directory TestMain builds (runfixture.Build, then
// indexed); secret is a file beside it, outside it, that a link inside it
// points to.
var fixture, secret string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	cleanup, err := runfixture.JournalKey()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	parent, err := os.MkdirTemp("", "view-fixture-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(parent)
	fixture, secret = filepath.Join(parent, "runs"), filepath.Join(parent, "secret.txt")
	ctx := context.Background()
	if err := runfixture.Build(ctx, fixture); err != nil {
		fmt.Fprintln(os.Stderr, "building the fixture runs directory:", err)
		return 1
	}
	if err := os.WriteFile(secret, []byte("SECRET-OUTSIDE"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// A symbolic link inside the runs directory to a file outside it.
	if err := os.Symlink(secret, filepath.Join(fixture, runfixture.OK, "escape.txt")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ix, err := history.Open(ctx, fixture)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, err = ix.Reindex(ctx)
	ix.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// newServer serves the fixture; the index is opened per test.
func newServer(t *testing.T, loopbackOnly bool) *httptest.Server {
	t.Helper()
	ix, err := history.Open(t.Context(), fixture)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	s, err := view.New(view.Options{RunsDir: fixture, Index: ix, LoopbackOnly: loopbackOnly})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

func do(t *testing.T, method, url string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestStatusCodes: every page and file answers as it should, with the
// security headers on every answer, errors included.
func TestStatusCodes(t *testing.T) {
	t.Parallel()
	ts := newServer(t, true)
	cases := []struct {
		name, method, path string // why: the name
		want               int
		ctype              string
	}{
		{"the runs list", "GET", "/", 200, "text/html"},
		{"the runs list filtered", "GET", "/?status=failed&q=x&sort=cost&order=asc&page=1&limit=5", 200, "text/html"},
		{"a complete run", "GET", "/run/" + runfixture.OK, 200, "text/html"},
		{"a workspace run", "GET", "/run/" + runfixture.Workspace, 200, "text/html"},
		{"a failed run", "GET", "/run/" + runfixture.Failed, 200, "text/html"},
		{"an unfinished run", "GET", "/run/" + runfixture.Unfinished, 200, "text/html"},
		{"a forged run renders with its error", "GET", "/run/" + runfixture.Forged, 200, "text/html"},
		{"a run not in the index", "GET", "/run/nope", 404, "text/html"},
		{"an unknown page", "GET", "/nope", 404, "text/html"},
		{"a bad sort key is a bad request", "GET", "/?sort=bogus", 400, "text/html"},
		{"a bad date is a bad request", "GET", "/?since=someday", 400, "text/html"},
		{"a bad page is a bad request", "GET", "/?page=-1", 400, "text/html"},
		{"a raw Markdown file is text", "GET", "/raw/" + runfixture.OK + "/report.md", 200, "text/plain"},
		{"a raw JSON file is JSON", "GET", "/raw/" + runfixture.OK + "/result.json", 200, "application/json"},
		{"a planted file is never HTML", "GET", "/raw/" + runfixture.Planted + "/result.json", 200, "application/json"},
		{"a raw file that is not there", "GET", "/raw/" + runfixture.OK + "/nope.json", 404, "text/html"},
		{"a directory is not a file", "GET", "/raw/" + runfixture.OK, 404, "text/html"},
		{"an embedded asset", "GET", "/static/style.css", 200, "text/css"},
		{"HEAD is allowed", "HEAD", "/", 200, "text/html"},
		{"POST is refused", "POST", "/", 405, "text/plain"},
		{"PUT is refused", "PUT", "/raw/" + runfixture.OK + "/report.md", 405, "text/plain"},
		{"DELETE is refused", "DELETE", "/run/" + runfixture.OK, 405, "text/plain"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp, body := do(t, tc.method, ts.URL+tc.path, nil)
			if resp.StatusCode != tc.want {
				t.Errorf("%s %s: %d, want %d\n%s", tc.method, tc.path, resp.StatusCode, tc.want, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tc.ctype) {
				t.Errorf("Content-Type %q, want %s", ct, tc.ctype)
			}
			if got := resp.Header.Get("Content-Security-Policy"); got != view.CSP {
				t.Errorf("Content-Security-Policy %q", got)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("no X-Content-Type-Options: nosniff")
			}
			if tc.want == 405 && resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("405 without Allow: GET, HEAD")
			}
			if tc.method == "HEAD" && body != "" {
				t.Errorf("HEAD answered a body")
			}
		})
	}
}

// TestCSPHasNoInlineScript: the policy allows scripts from the viewer only
// and the pages carry no inline script or handler.
func TestCSPHasNoInlineScript(t *testing.T) {
	t.Parallel()
	if !strings.Contains(view.CSP, "script-src 'self'") || strings.Contains(view.CSP, "unsafe-inline") || strings.Contains(view.CSP, "unsafe-eval") {
		t.Errorf("CSP %q", view.CSP)
	}
	ts := newServer(t, true)
	for _, p := range []string{"/", "/run/" + runfixture.Workspace} {
		_, body := do(t, "GET", ts.URL+p, nil)
		for _, bad := range []string{"<script>", " onclick=", " onload=", " style=", "http://", "https://"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s holds %q (inline script or style, or a link off the machine)", p, bad)
			}
		}
	}
}

// TestPathTraversalRefused: nothing outside the runs directory is served,
// whatever the path says.
func TestPathTraversalRefused(t *testing.T) {
	t.Parallel()
	ts := newServer(t, true)
	for _, p := range []string{
		"/raw/../secret.txt",
		"/raw/%2e%2e/secret.txt",
		"/raw/" + runfixture.OK + "/..%2f..%2fsecret.txt",
		"/raw/" + runfixture.OK + "/%2e%2e/%2e%2e/secret.txt",
		"/raw//etc/passwd",
		"/raw/" + runfixture.OK + "/escape.txt", // a link inside pointing outside
		"/raw/" + filepath.ToSlash(secret),
		"/run/../../etc",
	} {
		resp, body := do(t, "GET", ts.URL+p, nil)
		if resp.StatusCode == 200 || strings.Contains(body, "SECRET-OUTSIDE") {
			t.Errorf("%s: %d, body %.80q", p, resp.StatusCode, body)
		}
	}
}

// TestLoopbackHostOnly: a Host header that is not a loopback name is
// refused (DNS rebinding), unless remote clients are allowed.
func TestLoopbackHostOnly(t *testing.T) {
	t.Parallel()
	ts := newServer(t, true)
	for host, want := range map[string]int{"evil.example": 421, "localhost": 200, "127.0.0.1:9": 200, "[::1]:80": 200} {
		if resp, _ := do(t, "GET", ts.URL+"/", map[string]string{"Host": host}); resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
	remote := newServer(t, false)
	if resp, _ := do(t, "GET", remote.URL+"/", map[string]string{"Host": "viewer.lan"}); resp.StatusCode != 200 {
		t.Errorf("with remote clients allowed: %d", resp.StatusCode)
	}
}

// TestPlantedTextEscaped: script, javascript: links, markdown and HTML a
// model wrote come out as text, never markup.
func TestPlantedTextEscaped(t *testing.T) {
	t.Parallel()
	ts := newServer(t, true)
	for _, p := range []string{"/run/" + runfixture.Planted, "/", "/?q=Planted"} {
		resp, body := do(t, "GET", ts.URL+p, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", p, resp.StatusCode)
		}
		for _, bad := range []string{"<script>window.pwned", "<img src=x", `href="javascript:`, "<b>html</b>", `onerror="window`} {
			if strings.Contains(body, bad) {
				t.Errorf("%s holds %q unescaped", p, bad)
			}
		}
		if !strings.Contains(body, "&lt;script&gt;window.pwned=1&lt;/script&gt;") {
			t.Errorf("%s does not show the planted script as text", p)
		}
	}
}

// TestRunPageContent: the run page shows what the issue asks of it.
func TestRunPageContent(t *testing.T) {
	t.Parallel()
	ts := newServer(t, true)
	_, body := do(t, "GET", ts.URL+"/run/"+runfixture.Workspace, nil)
	for _, want := range []string{
		"Briefing", "Bundles", "Sealed criteria, revealed", "the run committed to before any commander started",
		`class="verdict v-pass"`, `class="card finding"`, `<pre class="code"><code><span class="ln">`, "verified",
		"Reviewer dissent", "Per role", "Per model", `href="/raw/workspace/result.json"`, `href="/raw/workspace/sealed/envelope.json"`,
		"Not shown yet", "Velocity across runs",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the workspace run's page lacks %q", want)
		}
	}
	// OK and Planted are runs of one task hash with the same models.
	_, body = do(t, "GET", ts.URL+"/run/"+runfixture.OK, nil)
	if !strings.Contains(body, "0.0 points per run over 2 runs") {
		t.Errorf("the OK run's page does not show its velocity across the two runs of its mission")
	}
	_, body = do(t, "GET", ts.URL+"/run/"+runfixture.Forged, nil)
	if !strings.Contains(body, "unreadable") || !strings.Contains(body, "invalid character") {
		t.Errorf("the forged run's page does not say what is wrong")
	}
}

// TestAbsentCostRendersAsDash: a model without a price has no cost in
// telemetry (nil, never $0): the run page renders, with a dash.
func TestAbsentCostRendersAsDash(t *testing.T) {
	t.Parallel()
	runs := filepath.Join(t.TempDir(), "runs")
	if err := runfixture.Synthetic(runs, 1); err != nil {
		t.Fatal(err)
	}
	ix, err := history.Open(t.Context(), runs)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Reindex(t.Context()); err != nil {
		t.Fatal(err)
	}
	s, err := view.New(view.Options{RunsDir: runs, Index: ix})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("GET", "/run/syn-00000", nil))
	if w.Code != 200 || !strings.Contains(w.Body.String(), `<td class="num">–</td></tr>`) {
		t.Errorf("%d\n%s", w.Code, w.Body)
	}
}

// TestListSyncsTheIndex: with SyncEvery, a run that appears while the
// viewer is up is listed; without, the list shows the index as it was.
func TestListSyncsTheIndex(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string // why
		every time.Duration
		want  string
	}{
		{"synced when due", time.Nanosecond, "2 runs"},
		{"never synced by the viewer", 0, "1 runs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runs := filepath.Join(t.TempDir(), "runs")
			if err := runfixture.Synthetic(runs, 1); err != nil {
				t.Fatal(err)
			}
			ix, err := history.Open(t.Context(), runs)
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			if _, err := ix.Sync(t.Context()); err != nil {
				t.Fatal(err)
			}
			s, err := view.New(view.Options{RunsDir: runs, Index: ix, SyncEvery: tc.every})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := runfixture.Synthetic(runs, 2); err != nil { // adds syn-00001
				t.Fatal(err)
			}
			w := httptest.NewRecorder()
			s.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
			if !strings.Contains(w.Body.String(), `<p class="muted" id="count">`+tc.want) {
				t.Errorf("want %q:\n%.2000s", tc.want, w.Body)
			}
		})
	}
}
