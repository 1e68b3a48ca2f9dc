package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/history"
	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/view"
)

// ViewOptions are the arguments and flags of `swarm view`.
type ViewOptions struct {
	RunsDir     string
	Addr        string
	Open        bool
	AllowRemote bool
	// listening is told the address once the viewer listens (tests).
	listening func(addr string)
	// openURL launches the browser (nil: the system's opener).
	openURL func(ctx context.Context, url string) error
}

// newViewCmd builds `swarm view`; runF runs the parsed options (nil:
// runView).
func newViewCmd(app *App, runF func(context.Context, *ViewOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(ctx context.Context, o *ViewOptions) error { return runView(ctx, app, *o) }
	}
	var o ViewOptions
	cmd := &cobra.Command{
		Use:   "view [RUNS_DIR] [--addr HOST:PORT] [--open] [--allow-remote]",
		Short: "Browse the runs in a local, read-only web viewer",
		Long: `Serve a local web viewer of the runs in RUNS_DIR (default: the configuration's
run.out_dir, runs) and print its URL. The index (RUNS_DIR/index.db) is brought
up to date first (built when missing). Pages:

  /            the runs: started, mission, scale, models, status and why, Shadow
               median, evidence, recall, cost, duration; filters by mission,
               model, status and date, text search, sort, pages
  /run/DIR     one run: briefing and status, bundles with gates and scores,
               finding cards with their cited lines (as the run recorded and
               checked them), the sealed criteria revealed as a criterion ×
               bundle pass/fail matrix with failure messages, reviewer
               dissent, tokens and cost per role and model, every raw file

The viewer listens on 127.0.0.1 on a free port unless --addr says otherwise; a
non-loopback --addr needs --allow-remote (everyone who can reach it can read
your runs: transcripts, findings, criteria). It is read-only (GET and HEAD),
serves files only from inside RUNS_DIR, embeds all its assets (no network),
and sends a strict Content-Security-Policy. Stop it with Ctrl-C.

Not built yet: the timeline, tool calls, sandbox charts, the compare and diff
pages, live updates and OpenTelemetry traces (see docs/view.md).`,
		Example: `  swarm view
  swarm view runs --open
  swarm view /tmp/myruns --addr 127.0.0.1:8080
  swarm view --addr 0.0.0.0:8080 --allow-remote   # serve your network: read the warning`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.RunsDir = args[0]
			}
			return runF(cmd.Context(), &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Addr, "addr", "127.0.0.1:0", "address to listen on (port 0: a free port)")
	f.BoolVar(&o.Open, "open", false, "open the viewer in the browser")
	f.BoolVar(&o.AllowRemote, "allow-remote", false, "allow a non-loopback --addr (anyone who reaches it can read your runs)")
	return cmd
}

// viewSyncEvery is how stale the runs list may be: runs that end while
// the viewer is up appear within it.
const viewSyncEvery = 10 * time.Second

// runView indexes the runs directory and serves the viewer until ctx ends.
func runView(ctx context.Context, app *App, o ViewOptions) error {
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return usageError(fmt.Errorf("--addr %q: want HOST:PORT (127.0.0.1:8080, or port 0 for a free one)", o.Addr))
	}
	loopback := isLoopback(host)
	if !loopback && !o.AllowRemote {
		return usageError(fmt.Errorf("--addr %q is not a loopback address: anyone who reaches it could read your runs; add --allow-remote if you mean it", o.Addr))
	}
	dir, err := runsDir(app, RunsOptions{RunsDir: o.RunsDir})
	if err != nil {
		return err
	}
	ix, err := history.Open(ctx, dir)
	if err != nil {
		return usageError(err)
	}
	defer ix.Close()
	st, err := ix.Sync(ctx)
	if err != nil {
		return fmt.Errorf("indexing %s: %w", dir, err)
	}
	srv, err := view.New(view.Options{RunsDir: dir, Index: ix, LoopbackOnly: !o.AllowRemote, Logger: app.Logger, SyncEvery: viewSyncEvery})
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", o.Addr)
	if err != nil {
		return usageError(fmt.Errorf("--addr %s: %w", o.Addr, err))
	}
	url := "http://" + ln.Addr().String() + "/"
	if !loopback {
		fmt.Fprintf(app.Err, "warning: the viewer listens on %s, beyond this machine: anyone who reaches it can read every run in %s (transcripts, findings, criteria); there is no login\n",
			textsafe.Printable(ln.Addr().String()), textsafe.Printable(dir))
	}
	fmt.Fprintf(app.Err, "indexed %s: %s (%d read now, %d with errors)\n", textsafe.Printable(dir), runCount(st.Total), st.Indexed, st.Errors)
	fmt.Fprintf(app.Out, "swarm view: %s  (Ctrl-C to stop)\n", url)
	if o.listening != nil {
		o.listening(ln.Addr().String())
	}
	if o.Open {
		opener := o.openURL
		if opener == nil {
			opener = openBrowser
		}
		if err := opener(ctx, url); err != nil {
			fmt.Fprintf(app.Err, "warning: --open: %s; open %s yourself\n", textsafe.Printable(err.Error()), url)
		}
	}
	if err := view.Serve(ctx, ln, srv); err != nil {
		return err
	}
	return nil
}

// isLoopback reports whether a --addr host is a loopback name or address
// ("" listens everywhere: not loopback).
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// openBrowser opens url with the system's opener (xdg-open, open, or
// rundll32 on Windows), without waiting for the browser.
func openBrowser(ctx context.Context, url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.CommandContext(ctx, "open", url)
	case "windows":
		cmd = exec.CommandContext(ctx, "rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.CommandContext(ctx, "xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	if cmd.Process == nil {
		return errors.New("no browser started")
	}
	return nil
}
