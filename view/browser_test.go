package view_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/swarm-dev/swarm/internal/runfixture"
)

// browserPath finds Chromium. Without it the browser tests fail under CI
// (CI=true: .ci/run installs Debian's chromium) and are skipped, loudly,
// elsewhere.
func browserPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "NO BROWSER: the browser tests of the viewer need Chromium (chromium, chromium-browser, google-chrome or headless-shell on PATH); " +
		"install it (Debian: apt-get install chromium) to run them"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg + ": SKIPPED, the viewer was not tested in a browser")
	return ""
}

// screenshotDir is where the browser tests write a screenshot of each page
// for a person to look at (never compared): $SWARM_VIEW_SCREENSHOTS, or
// swarm-view-screenshots in the temporary directory.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SWARM_VIEW_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "swarm-view-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser starts headless Chromium and returns a tab's context and the
// console messages that are errors or exceptions, collected as they come.
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	exe := browserPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1000),
		chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.WithoutCancel(t.Context()), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // start the browser now
		t.Fatalf("starting %s: %v", exe, err)
	}
	var mu sync.Mutex
	var errs []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				errs = append(errs, m.String())
				mu.Unlock()
			}
		}
	}()
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(errs)
	}
}

// load navigates and waits for the page's load event.
func load(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}

// clickAndWait clicks and waits for the next page to load.
func clickAndWait(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(sel)))); err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

func shoot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	// The viewport (what a person sees first), but the whole of the run
	// page that the README shows.
	shot := chromedp.CaptureScreenshot()
	if name == "run-workspace" {
		shot = chromedp.FullScreenshot(80)
	}
	b, err := chromedp.Run(ctx, shot)
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+ext(name)), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// rowDirs are the run directories the runs list shows, in order.
const rowDirs = `Array.from(document.querySelectorAll("table.runs tbody tr .run-link + div")).map(d => d.textContent.split(" · ")[0].trim())`

// TestBrowser drives headless Chromium over the fixture: every page loads
// without a console error, planted script never runs, the runs list's
// filters, search, sort and pages work, a finding card shows its code,
// and Tab reaches the controls.
func TestBrowser(t *testing.T) {
	ctx, consoleErrors := browser(t)
	ts := newServer(t, true)
	shots := screenshotDir(t)
	t.Logf("screenshots for review in %s", shots)

	t.Run("every page loads without a console error", func(t *testing.T) {
		pages := map[string]string{
			"runs":           "/",
			"runs-filtered":  "/?status=complete&sort=shadow&order=asc",
			"run-ok":         "/run/" + runfixture.OK,
			"run-workspace":  "/run/" + runfixture.Workspace,
			"run-failed":     "/run/" + runfixture.Failed,
			"run-unfinished": "/run/" + runfixture.Unfinished,
			"run-forged":     "/run/" + runfixture.Forged,
			"run-planted":    "/run/" + runfixture.Planted,
			"raw-report":     "/raw/" + runfixture.OK + "/report.md",
			"not-found":      "/run/nope",
			"bad-query":      "/?since=someday",
		}
		for _, name := range slices.Sorted(func(yield func(string) bool) {
			for k := range pages {
				if !yield(k) {
					return
				}
			}
		}) {
			before := len(consoleErrors())
			start := time.Now()
			load(t, ctx, ts.URL+pages[name])
			shoot(t, ctx, shots, name)
			t.Logf("%s: loaded and shot in %v", name, time.Since(start).Round(time.Millisecond))
			// 404 and 400 pages are logged by Chromium as failed loads:
			// those are expected; anything else is not.
			time.Sleep(50 * time.Millisecond)
			for _, e := range consoleErrors()[before:] {
				if name == "not-found" && strings.Contains(e, "404") || name == "bad-query" && strings.Contains(e, "400") {
					continue
				}
				t.Errorf("%s: console: %s", name, e)
			}
		}
	})

	t.Run("planted script does not run", func(t *testing.T) {
		for _, p := range []string{"/run/" + runfixture.Planted, "/?q=Planted"} {
			load(t, ctx, ts.URL+p)
			if got := eval[string](t, ctx, `typeof window.pwned`); got != "undefined" {
				t.Errorf("%s: window.pwned is %s: planted script ran", p, got)
			}
			if n := eval[int](t, ctx, `document.querySelectorAll("script:not([src='/static/app.js']), img[src='x'], a[href^='javascript:']").length`); n != 0 {
				t.Errorf("%s: %d planted elements became markup", p, n)
			}
		}
		// Clicking the planted text does nothing either.
		load(t, ctx, ts.URL+"/run/"+runfixture.Planted)
		_ = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".finding h4")))
		if got := eval[string](t, ctx, `typeof window.pwned`); got != "undefined" {
			t.Errorf("after a click: window.pwned is %s", got)
		}
	})

	t.Run("filter by status", func(t *testing.T) {
		load(t, ctx, ts.URL+"/")
		if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`select[name=status]`), "failed")); err != nil {
			t.Fatal(err)
		}
		clickAndWait(t, ctx, `form.filters button[type=submit]`)
		if got := eval[[]string](t, ctx, rowDirs); !slices.Equal(got, []string{runfixture.Failed}) {
			t.Errorf("status=failed shows %v", got)
		}
	})

	t.Run("search", func(t *testing.T) {
		load(t, ctx, ts.URL+"/")
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("search"), "tinynotes")); err != nil {
			t.Fatal(err)
		}
		clickAndWait(t, ctx, `form.filters button[type=submit]`)
		if got := eval[[]string](t, ctx, rowDirs); !slices.Equal(got, []string{runfixture.Workspace}) {
			t.Errorf("search tinynotes shows %v", got)
		}
		// "/" focuses the search box (the viewer's one script).
		load(t, ctx, ts.URL+"/")
		if err := chromedp.Do(ctx, chromedp.KeyEvent("/")); err != nil {
			t.Fatal(err)
		}
		if id := eval[string](t, ctx, `document.activeElement.id`); id != "search" {
			t.Errorf(`after "/" the focus is on %q, want the search box`, id)
		}
	})

	t.Run("sort by a column header", func(t *testing.T) {
		load(t, ctx, ts.URL+"/")
		clickAndWait(t, ctx, `th a[href*="sort=shadow"]`)
		loc := eval[string](t, ctx, `location.search`)
		if !strings.Contains(loc, "sort=shadow") {
			t.Fatalf("the header link went to %s", loc)
		}
		// Measured medians first, then the runs without one.
		cells := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("table.runs tbody tr td:nth-child(6)")).map(td => td.textContent.trim())`)
		seenAbsent := false
		for _, c := range cells {
			if c == "–" {
				seenAbsent = true
			} else if seenAbsent {
				t.Errorf("a measured median after an absent one: %v", cells)
			}
		}
		if !seenAbsent || cells[0] == "–" {
			t.Errorf("shadow column %v", cells)
		}
	})

	t.Run("pages", func(t *testing.T) {
		load(t, ctx, ts.URL+"/?limit=2")
		var seen []string
		for page := 1; ; page++ {
			seen = append(seen, eval[[]string](t, ctx, rowDirs)...)
			if eval[int](t, ctx, `document.querySelectorAll("#next").length`) == 0 {
				if page != 3 {
					t.Errorf("ended on page %d, want 3 pages of 2", page)
				}
				break
			}
			clickAndWait(t, ctx, "#next")
			if page > 5 {
				t.Fatal("paging does not end")
			}
		}
		slices.Sort(seen)
		if len(slices.Compact(seen)) != 6 {
			t.Errorf("pages showed %v, want the 6 runs once each", seen)
		}
	})

	t.Run("a finding card shows its code", func(t *testing.T) {
		load(t, ctx, ts.URL+"/run/"+runfixture.Workspace)
		code := eval[string](t, ctx, `document.querySelector(".finding figure.state-verified pre.code code").textContent`)
		ref := eval[string](t, ctx, `document.querySelector(".finding figure.state-verified figcaption code").textContent`)
		visible := eval[bool](t, ctx, `(() => { const r = document.querySelector(".finding pre.code").getBoundingClientRect(); return r.width > 0 && r.height > 0 })()`)
		if strings.TrimSpace(code) == "" || !strings.Contains(ref, ":") || !visible {
			t.Errorf("finding card: ref %q, code %q, visible %v", ref, code, visible)
		}
	})

	t.Run("Tab reaches the controls", func(t *testing.T) {
		load(t, ctx, ts.URL+"/")
		reached := map[string]bool{}
		for range 40 {
			if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
				t.Fatal(err)
			}
			el := eval[string](t, ctx, `(e => e.name || e.id || e.className || e.tagName)(document.activeElement)`)
			reached[el] = true
		}
		for _, want := range []string{"mission", "model", "status", "since", "until", "q", "sort", "order", "run-link"} {
			if !reached[want] {
				t.Errorf("Tab never reached %q (reached %v)", want, reached)
			}
		}
		if !reached["BUTTON"] && !reached[""] {
			// the Apply button has no name: it shows as its tag
			t.Errorf("Tab never reached the Apply button (reached %v)", reached)
		}
	})

	t.Run("Tab reaches the run page's controls", func(t *testing.T) {
		load(t, ctx, ts.URL+"/run/"+runfixture.Planted)
		reached := map[string]bool{}
		for range 80 {
			if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
				t.Fatal(err)
			}
			el := eval[string](t, ctx, `(e => e.tagName === "A" ? "A " + e.getAttribute("href").split("/").slice(0, 2).join("/").replace(/^#.*/, "#anchor") : e.tagName)(document.activeElement)`)
			reached[el] = true
		}
		for _, want := range []string{"A /", "A #anchor", "SUMMARY", "A /raw"} {
			if !reached[want] {
				t.Errorf("Tab never reached %q (reached %v)", want, reached)
			}
		}
	})
}

// ext is the screenshot's file extension: CaptureScreenshot writes PNG,
// FullScreenshot JPEG.
func ext(name string) string {
	if name == "run-workspace" {
		return ".jpeg"
	}
	return ".png"
}
