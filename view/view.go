package view

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/swarm-dev/swarm/history"
	"github.com/swarm-dev/swarm/internal/safeio"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// CSP is the Content-Security-Policy of every answer: nothing but the
// viewer's own scripts, styles and images, no inline script or style, no
// frames, no plugins, forms only to itself.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Options configure a Server.
type Options struct {
	// RunsDir is the runs directory; Index its index (history.Open).
	RunsDir string
	Index   *history.Index
	// LoopbackOnly refuses requests whose Host header is not a loopback
	// name or address (localhost, 127.0.0.0/8, ::1): the default, so that
	// a web page cannot reach a viewer on 127.0.0.1 through DNS rebinding.
	// `swarm view --allow-remote` turns it off.
	LoopbackOnly bool
	// Logger logs requests that failed; nil logs nothing.
	Logger *slog.Logger
	// Now is the clock of the list's date filters (time.Now when nil).
	Now func() time.Time
	// SyncEvery, when positive, brings the index up to date
	// (history.Index.Sync) before a runs list is shown if the last sync is
	// older than that: runs that ended while the viewer was up appear
	// without a restart. 0 never syncs (the caller synced at start).
	SyncEvery time.Duration
}

// Server is the viewer's HTTP handler.
type Server struct {
	o    Options
	root *os.Root
	tmpl map[string]*template.Template
	mux  *http.ServeMux

	// syncing is held while a request syncs the index (others do not
	// wait: they show the index as it is); lastSync is when it last did.
	syncing  sync.Mutex
	lastSync time.Time
}

// New builds the viewer of o.RunsDir. Close releases the runs directory.
func New(o Options) (*Server, error) {
	if o.Index == nil {
		return nil, errors.New("view: no index")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	root, err := os.OpenRoot(o.RunsDir)
	if err != nil {
		return nil, fmt.Errorf("view: runs directory: %w", err)
	}
	s := &Server{o: o, root: root, tmpl: map[string]*template.Template{}, mux: http.NewServeMux()}
	for _, page := range []string{"list", "run", "error"} {
		t, err := template.New(page).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+page+".html")
		if err != nil {
			root.Close()
			return nil, fmt.Errorf("view: template %s: %w", page, err)
		}
		s.tmpl[page] = t
	}
	static, _ := fs.Sub(staticFS, "static")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	// Browsers ask for /favicon.ico on pages without an icon link (the
	// raw files): the embedded icon, not a 404 in their console.
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, static, "favicon.svg")
	})
	s.mux.HandleFunc("GET /{$}", s.list)
	s.mux.HandleFunc("GET /run/{dir...}", s.run)
	s.mux.HandleFunc("GET /raw/{path...}", s.raw)
	s.mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusNotFound, "no such page")
	})
	return s, nil
}

// maybeSync syncs the index when SyncEvery says it is due and no other
// request is syncing it.
func (s *Server) maybeSync(r *http.Request) {
	if s.o.SyncEvery <= 0 || !s.syncing.TryLock() {
		return
	}
	defer s.syncing.Unlock()
	if now := s.o.Now(); now.Sub(s.lastSync) >= s.o.SyncEvery {
		s.lastSync = now
		if _, err := s.o.Index.Sync(r.Context()); err != nil {
			s.o.Logger.Warn("view: index sync", "err", err)
		}
	}
}

// Close releases the runs directory.
func (s *Server) Close() error { return s.root.Close() }

// ServeHTTP answers GET and HEAD with the security headers; anything else
// is 405.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "the viewer is read-only: GET and HEAD only", http.StatusMethodNotAllowed)
		return
	}
	if s.o.LoopbackOnly && !loopbackHost(r.Host) {
		http.Error(w, "the viewer answers loopback names only (localhost, 127.0.0.1, [::1]); start it with --allow-remote to serve others", http.StatusMisdirectedRequest)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// loopbackHost reports whether a Host header names this machine's
// loopback: localhost or a loopback address, with or without a port.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// render executes a page into a buffer first, so that a template error is
// a clean 500 and never half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, page string, data any) {
	var buf bytes.Buffer
	if err := s.tmpl[page].ExecuteTemplate(&buf, "layout", data); err != nil {
		s.o.Logger.Error("view: render", "page", page, "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

type errorPage struct {
	Title   string
	Status  int
	Message string
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.render(w, r, status, "error", errorPage{Title: http.StatusText(status), Status: status, Message: msg})
}

// raw serves one file of the runs directory, as plain text (or JSON),
// never as HTML: a run directory holds what models wrote.
func (s *Server) raw(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("path")
	if name == "" || !fs.ValidPath(name) {
		s.fail(w, r, http.StatusNotFound, "no such file")
		return
	}
	f, fi, err := safeio.OpenRoot(s.root, name)
	if err != nil {
		s.fail(w, r, http.StatusNotFound, "no such file inside the runs directory")
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", contentType(name))
	w.Header().Set("Cache-Control", "no-store")
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

// contentType is a raw file's type: JSON as JSON, the run's text files as
// text, anything else as bytes. Never HTML.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".json":
		return "application/json; charset=utf-8"
	case ".md", ".jsonl", ".yml", ".yaml", ".csv", ".sarif", ".txt", ".log", ".lock", ".html", ".go", ".diff", ".patch":
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

// hrefPath escapes each segment of a slash-separated path for a URL.
func hrefPath(prefix, p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return prefix + strings.Join(segs, "/")
}

var funcs = template.FuncMap{
	"runHref": func(dir string) string { return hrefPath("/run/", dir) },
	"rawHref": func(dir, file string) string { return hrefPath("/raw/", dir+"/"+file) },
	"pct": func(f *float64) string {
		if f == nil {
			return history.NotMeasured
		}
		return strconv.FormatFloat(*f, 'f', 1, 64) + "%"
	},
	// usd is a cost in dollars; an absent one (a nil *float64: no price)
	// is a dash, never $0.
	"usd": func(v any) string {
		switch f := v.(type) {
		case float64:
			return "$" + strconv.FormatFloat(f, 'f', 4, 64)
		case *float64:
			if f != nil {
				return "$" + strconv.FormatFloat(*f, 'f', 4, 64)
			}
		}
		return history.NotMeasured
	},
	"size": func(n int64) string {
		switch {
		case n < 1<<10:
			return strconv.FormatInt(n, 10) + " B"
		case n < 1<<20:
			return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
		default:
			return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
		}
	},
	"f1":    func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
	"f2":    func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) },
	"round": func(f float64) int { return int(math.Round(f)) },
}

// Serve serves h on ln until ctx ends, then shuts down (waiting up to 5 s
// for requests in flight).
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			return err
		}
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
