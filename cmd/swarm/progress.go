package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/workspace"
)

// progressView shows a run's progress: on a terminal a live block redrawn in
// place (phase, a bar per commander, calls and cost so far); in a pipe or CI
// plain lines, one per phase and per finished commander.
type progressView struct {
	w     io.Writer
	tty   bool
	plan  nexus.Plan
	mu    sync.Mutex
	phase events.Phase
	calls int
	cost  float64
	// unpriced: some call had no known price, so cost is a lower bound.
	unpriced bool
	tools    int // read-tool calls
	denied   int // of them, refused
	// refusals are the refused tool calls not yet shown, per domain (""
	// for agents outside one) and kind; in a pipe they are shown grouped,
	// on the commander's line when it finishes and for the rest when the
	// phase ends, never one line per call. refusedByKind counts every
	// refusal of the run for the live view.
	refusals      map[string]*refusalGroup
	refusedByKind map[string]int
	perCmd        map[string]*cmdProgress
	// Provider breakers not closed (model and layer) and the calls a
	// fallback answered; swapSeen: the role/model pairs already shown.
	breakersOpen map[string]bool
	swaps        int
	swapSeen     map[string]bool
	wave         string // the wave launched last: "wave 2/4: 6 commanders"; "" without waves
	// limits are the adaptive concurrency limits that changed: per model,
	// the current limit and its ceiling.
	limits map[string][2]int
	lines  int
	last   time.Time
	start  time.Time
}

// refusalGroup counts refused tool calls by kind, with the first of each
// kind as an example.
type refusalGroup struct {
	n       map[string]int
	example map[string]string
}

// kindsInOrder is the kinds of n that were counted, in a report's order
// (workspace.CompareRefusalKinds).
func kindsInOrder(n map[string]int) []string {
	var out []string
	for k, c := range n {
		if c > 0 {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, workspace.CompareRefusalKinds)
	return out
}

// String is "escape 12 (e.g. worker-x read_file ../../etc/passwd), denied 3 (e.g. ...)".
func (g *refusalGroup) String() string {
	var parts []string
	for _, k := range kindsInOrder(g.n) {
		parts = append(parts, fmt.Sprintf("%s %d (e.g. %s)", k, g.n[k], g.example[k]))
	}
	return strings.Join(parts, ", ")
}

func (g *refusalGroup) total() int {
	n := 0
	for _, c := range g.n {
		n += c
	}
	return n
}

type cmdProgress struct {
	total, done, failed int
	status              string
}

func newProgressView(w io.Writer, p nexus.Plan, tty bool) *progressView {
	v := &progressView{w: w, tty: tty, plan: p, perCmd: map[string]*cmdProgress{}, start: time.Now(), breakersOpen: map[string]bool{}, swapSeen: map[string]bool{},
		refusals: map[string]*refusalGroup{}, refusedByKind: map[string]int{}}
	per := p.Workers / max(1, p.Commanders)
	for _, d := range p.Domains {
		v.perCmd[d] = &cmdProgress{total: per + p.SquadLeads/max(1, p.Commanders), status: "waiting"}
	}
	return v
}

// Observe implements events.Observer.
func (v *progressView) Observe(e events.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch e.Kind {
	case events.PhaseStart:
		v.flushRefusals(false)
		v.phase = e.Phase
		if !v.tty {
			v.printf("[%6.1fs] phase %-3s %s\n", time.Since(v.start).Seconds(), e.Phase, e.Message)
		}
	case events.LLMCall:
		v.calls++
		if c, ok := e.Data.(events.CallData); ok {
			if c.CostUSD != nil {
				v.cost += *c.CostUSD
			}
			v.unpriced = v.unpriced || c.Unpriced
		}
	case events.ToolCall:
		v.tools++
		if c, ok := e.Data.(events.ToolCallData); ok && !c.OK {
			v.denied++
			kind := c.Refusal
			if kind == "" {
				kind = "refused"
			}
			v.refusedByKind[kind]++
			d, _ := v.plan.DomainOf(e.AgentID)
			g := v.refusals[d]
			if g == nil {
				g = &refusalGroup{n: map[string]int{}, example: map[string]string{}}
				v.refusals[d] = g
			}
			g.n[kind]++
			if _, ok := g.example[kind]; !ok {
				g.example[kind] = textsafe.Printable(strings.TrimSpace(e.AgentID + " " + c.Tool + " " + c.Path + c.Pattern))
			}
		}
	case events.AgentStart:
		if d, ok := v.plan.DomainOf(e.AgentID); ok && e.Role == "commander" {
			if c := v.perCmd[d]; c != nil {
				c.status = "running"
			}
		}
	case events.AgentFinish:
		d, _ := v.plan.DomainOf(e.AgentID)
		c := v.perCmd[d]
		if c == nil {
			break
		}
		var status string
		if f, ok := e.Data.(events.AgentFinishData); ok {
			status = f.Status
		}
		if e.Role == "commander" {
			c.status = status
			if !v.tty {
				refused := ""
				if g := v.refusals[d]; g != nil {
					refused = fmt.Sprintf("; %s refused: %s", count(g.total(), "tool call"), g)
					delete(v.refusals, d)
				}
				v.printf("[%6.1fs]   commander %-15s %s (%d/%d children done, %d failed%s)\n", time.Since(v.start).Seconds(), d, status, c.done, c.total, c.failed, refused)
			}
		} else {
			c.done++
			if status == "failed" {
				c.failed++
			}
		}
	case events.Breaker:
		d, ok := e.Data.(events.BreakerData)
		if !ok {
			break
		}
		k := d.Model + " " + d.Layer
		if d.To == "closed" {
			delete(v.breakersOpen, k)
		} else {
			v.breakersOpen[k] = true
		}
		if !v.tty {
			v.printf("[%6.1fs]   breaker %s (%s) %s → %s\n", time.Since(v.start).Seconds(), textsafe.Printable(d.Model), d.Layer, d.From, d.To)
		}
	case events.ModelSwap:
		d, ok := e.Data.(events.ModelSwapData)
		if !ok {
			break
		}
		v.swaps++
		// One line per role and pair of models: every call routed is an
		// event, not a line.
		if k := d.Role + " " + d.From + " " + d.To; !v.swapSeen[k] && !v.tty {
			v.swapSeen[k] = true
			v.printf("[%6.1fs]   swap %s: %s → %s (%s)\n", time.Since(v.start).Seconds(), d.Role, textsafe.Printable(d.From), textsafe.Printable(d.To), d.Reason)
		}
	case events.Wave:
		if d, ok := e.Data.(events.WaveData); ok {
			what := "commanders"
			if d.Size == 1 {
				what = "commander"
			}
			if d.Wave == 0 {
				what = "canary " + what
			}
			v.wave = fmt.Sprintf("wave %d/%d: %d %s", d.Wave, d.Planned, d.Size, what)
			if !v.tty {
				v.printf("[%6.1fs]   %s (%s)\n", time.Since(v.start).Seconds(), v.wave, d.Reason)
			}
		}
	case events.Concurrency:
		d, ok := e.Data.(events.ConcurrencyData)
		if !ok {
			break
		}
		if v.limits == nil {
			v.limits = map[string][2]int{}
		}
		v.limits[d.Model] = [2]int{d.To, d.Max}
		// In a pipe, the slow-downs: every step back up is not a line.
		if !v.tty && d.To < d.From {
			v.printf("[%6.1fs]   concurrency limit %s %d → %d of %d (%s)\n", time.Since(v.start).Seconds(), textsafe.Printable(d.Model), d.From, d.To, d.Max, d.Reason)
		}
	case events.Canary:
		if !v.tty {
			v.printf("[%6.1fs]   %s\n", time.Since(v.start).Seconds(), textsafe.Printable(e.Message))
		}
	case events.Gate, events.CostWarning, events.CostStop, events.BreakerTrip, events.WorkspaceWarning:
		if !v.tty {
			v.printf("[%6.1fs]   %s %s\n", time.Since(v.start).Seconds(), e.Kind, describe(e))
		}
	}
	if v.tty && time.Since(v.last) > 100*time.Millisecond {
		v.redraw()
	}
}

// flushRefusals shows the refused tool calls not yet shown (in a pipe),
// one line per domain, grouped by kind, and forgets them. A domain whose
// commander is still at work keeps its count for the commander's line
// unless all (the run's end).
func (v *progressView) flushRefusals(all bool) {
	for _, d := range slices.Sorted(maps.Keys(v.refusals)) {
		if c := v.perCmd[d]; !all && c != nil && (c.status == "waiting" || c.status == "running") {
			continue
		}
		g := v.refusals[d]
		delete(v.refusals, d)
		if v.tty {
			continue
		}
		who := ""
		if d != "" {
			who = " in " + d
		}
		v.printf("[%6.1fs]   %s refused%s: %s\n", time.Since(v.start).Seconds(), count(g.total(), "tool call"), who, g)
	}
}

// printf prints one line of the view in a pipe (no escape sequences of
// ours): domain names, models' messages and payloads are not ours, so the
// line goes through textsafe.PrintableLines.
func (v *progressView) printf(format string, args ...any) {
	fmt.Fprint(v.w, textsafe.PrintableLines(fmt.Sprintf(format, args...)))
}

func describe(e events.Event) string {
	if e.Message != "" {
		return e.Message
	}
	// The payload's fields as events.jsonl writes them, key=value.
	b, err := json.Marshal(e.Data)
	var fields map[string]any
	if err != nil || json.Unmarshal(b, &fields) != nil {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, fields[k]))
	}
	return strings.Join(parts, " ")
}

func sortStrings(xs []string) []string { sort.Strings(xs); return xs }

func (v *progressView) redraw() {
	v.last = time.Now()
	var b strings.Builder
	if v.lines > 0 {
		fmt.Fprintf(&b, "\033[%dA", v.lines)
	}
	tools := ""
	if v.tools > 0 {
		tools = fmt.Sprintf("  tools %d (%d refused)", v.tools, v.denied)
		if v.denied > 0 {
			var parts []string
			for _, k := range kindsInOrder(v.refusedByKind) {
				parts = append(parts, fmt.Sprintf("%s %d", k, v.refusedByKind[k]))
			}
			tools = fmt.Sprintf("  tools %d (%d refused: %s)", v.tools, v.denied, strings.Join(parts, ", "))
		}
	}
	if len(v.breakersOpen) > 0 || v.swaps > 0 {
		tools += fmt.Sprintf("  breakers open %d  swaps %d", len(v.breakersOpen), v.swaps)
	}
	for _, m := range slices.Sorted(maps.Keys(v.limits)) {
		tools += fmt.Sprintf("  limit %s %d/%d", textsafe.Printable(m), v.limits[m][0], v.limits[m][1])
	}
	wave := ""
	if v.wave != "" {
		wave = "  " + textsafe.Printable(v.wave)
	}
	cost := fmt.Sprintf("$%.4f", v.cost)
	if v.unpriced {
		cost = "≥ " + cost + " (unpriced calls)"
	}
	fmt.Fprintf(&b, "\033[2Kphase %s %-18s  calls %d%s  cost %s  %s%s\n", v.phase, v.phase.Name(), v.calls, tools, cost, time.Since(v.start).Round(100*time.Millisecond), wave)
	n := 1
	for _, d := range v.plan.Domains {
		c := v.perCmd[d]
		const width = 24
		filled := 0
		if c.total > 0 {
			filled = min(width, c.done*width/c.total)
		}
		fmt.Fprintf(&b, "\033[2K  %-15s [%s%s] %3d/%-3d %s\n", textsafe.Printable(d), strings.Repeat("█", filled), strings.Repeat("·", width-filled), c.done, c.total, c.status)
		n++
	}
	v.lines = n
	fmt.Fprint(v.w, b.String())
}

func (v *progressView) finish() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.flushRefusals(true)
	if v.tty {
		v.redraw()
	}
}
