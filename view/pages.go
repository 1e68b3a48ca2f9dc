package view

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"

	"github.com/swarm-dev/swarm/history"
	"github.com/swarm-dev/swarm/shadow"
)

// listPage is the runs list's data.
type listPage struct {
	Title    string
	RunsDir  string
	Page     history.Page
	Form     url.Values
	Statuses []string
	Models   []string
	Sorts    []string
	Headers  []header
	Prev     string
	Next     string
	First    string
	Last     string
	Error    string
}

// header is a sortable column of the runs list.
type header struct {
	Label, Href, Aria string
	Sorted            bool
}

// listQuery reads the list's query string.
func (s *Server) listQuery(v url.Values) (history.Query, error) {
	q := history.Query{Mission: v.Get("mission"), Model: v.Get("model"), Status: v.Get("status"),
		Search: v.Get("q"), Sort: v.Get("sort"), Asc: v.Get("order") == "asc"}
	var err error
	if since := v.Get("since"); since != "" {
		if q.Since, err = history.ParseTime(since, s.o.Now()); err != nil {
			return q, fmt.Errorf("%w: since: %w", history.ErrBadQuery, err)
		}
	}
	if until := v.Get("until"); until != "" {
		if q.Until, err = history.ParseTime(until, s.o.Now()); err != nil {
			return q, fmt.Errorf("%w: until: %w", history.ErrBadQuery, err)
		}
	}
	for name, dst := range map[string]*int{"page": &q.Page, "limit": &q.Limit} {
		if raw := v.Get(name); raw != "" {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 1 {
				return q, fmt.Errorf("%w: %s: want a whole number, 1 or more", history.ErrBadQuery, name)
			}
			*dst = n
		}
	}
	return q, nil
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	s.maybeSync(r)
	v := r.URL.Query()
	d := listPage{Title: "Runs", RunsDir: s.o.RunsDir, Form: v, Sorts: history.SortKeys()}
	status := http.StatusOK
	q, err := s.listQuery(v)
	if err == nil {
		d.Page, err = s.o.Index.List(r.Context(), q)
	}
	if err != nil {
		if !errors.Is(err, history.ErrBadQuery) {
			s.o.Logger.Error("view: list", "err", err)
			s.fail(w, r, http.StatusInternalServerError, "the index could not be read")
			return
		}
		d.Error, status = err.Error(), http.StatusBadRequest
	}
	d.Statuses, _ = s.o.Index.Statuses(r.Context())
	d.Models, _ = s.o.Index.Models(r.Context())
	with := func(set map[string]string) string {
		u := url.Values{}
		for k, vs := range v {
			if len(vs) > 0 && vs[0] != "" {
				u.Set(k, vs[0])
			}
		}
		for k, x := range set {
			if x == "" {
				u.Del(k)
			} else {
				u.Set(k, x)
			}
		}
		return "/?" + u.Encode()
	}
	sortKey := v.Get("sort")
	if sortKey == "" {
		sortKey = "started"
	}
	for _, h := range []struct{ key, label string }{
		{"started", "Started (UTC)"}, {"mission", "Mission"}, {"", "Scale"}, {"", "Models"}, {"status", "Status"},
		{"shadow", "Shadow median"}, {"verified", "Evidence"}, {"recall", "Recall"}, {"cost", "Cost"}, {"duration", "Duration"},
	} {
		hd := header{Label: h.label}
		if h.key != "" {
			order := "desc"
			if h.key == sortKey && v.Get("order") != "asc" {
				order = "asc"
			}
			hd.Href = with(map[string]string{"sort": h.key, "order": order, "page": ""})
			if h.key == sortKey {
				hd.Sorted = true
				hd.Aria = "descending"
				if v.Get("order") == "asc" {
					hd.Aria = "ascending"
				}
			}
		}
		d.Headers = append(d.Headers, hd)
	}
	if p := d.Page; p.Page > 1 {
		d.Prev = with(map[string]string{"page": strconv.Itoa(p.Page - 1)})
		d.First = with(map[string]string{"page": ""})
	}
	if p := d.Page; p.Page < p.Pages {
		d.Next = with(map[string]string{"page": strconv.Itoa(p.Page + 1)})
		d.Last = with(map[string]string{"page": strconv.Itoa(p.Pages)})
	}
	s.render(w, r, status, "list", d)
}

// runPage is a run page's data.
type runPage struct {
	Title  string
	Detail *history.Detail
	Dir    string
	// Matrix is the sealed criteria × bundles: one row per criterion.
	Matrix   []matrixRow
	Failures []failure
	// Velocity is the Shadow Score velocity across the indexed runs of
	// this mission (task hash) and models.
	Velocity history.Velocity
}

type matrixRow struct {
	Criterion shadow.Criterion
	Cells     []cell
}

type cell struct {
	Bundle, Status, Message string
	// Hardened: the bundle failed this criterion at first and passed after
	// hardening.
	Hardened bool
}

type failure struct {
	Bundle, Criterion, Message string
}

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	dir := r.PathValue("dir")
	run, err := s.o.Index.Get(r.Context(), dir)
	if errors.Is(err, history.ErrNotFound) {
		s.fail(w, r, http.StatusNotFound, "no run "+dir+" in the index (run `swarm runs reindex` if it is new)")
		return
	}
	if err != nil {
		s.o.Logger.Error("view: run", "dir", dir, "err", err)
		s.fail(w, r, http.StatusInternalServerError, "the index could not be read")
		return
	}
	d, err := history.ReadDetail(s.o.RunsDir, run.Dir)
	if errors.Is(err, os.ErrNotExist) {
		s.fail(w, r, http.StatusNotFound, "the run directory "+run.Dir+" is gone (run `swarm runs gc`)")
		return
	}
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, "the run directory could not be read")
		return
	}
	vel, err := s.o.Index.Velocity(r.Context(), run)
	if err != nil {
		s.o.Logger.Error("view: velocity", "dir", dir, "err", err)
		vel.Absent = "the index could not be read"
	}
	p := runPage{Title: d.Run.Mission, Detail: d, Dir: run.Dir, Velocity: vel}
	if p.Title == "" {
		p.Title = d.Run.ID
	}
	for _, c := range d.Criteria {
		row := matrixRow{Criterion: c}
		for _, b := range d.Bundles {
			ce := cell{Bundle: b.ID, Status: "none"}
			if v, ok := b.Verdict(c.ID); ok {
				ce.Status, ce.Message = v.Status, v.Message
				if v.Status == "pass" && b.Initial != nil {
					for _, iv := range b.Initial.Verdicts {
						if iv.ID == c.ID && iv.Status == "fail" {
							ce.Hardened = true
						}
					}
				}
				if v.Status != "pass" {
					p.Failures = append(p.Failures, failure{Bundle: b.ID, Criterion: c.ID, Message: v.Message})
				}
			}
			row.Cells = append(row.Cells, ce)
		}
		p.Matrix = append(p.Matrix, row)
	}
	s.render(w, r, http.StatusOK, "run", p)
}
