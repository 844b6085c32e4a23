package hostile

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Target is the running Oficina to attack.
type Target struct {
	URL        string // public listener: http://127.0.0.1:8080
	AdminURL   string // admin listener, to set up records and read them back
	AdminToken string
	// Companies are the two tenants of the run; a zero one is created
	// through the admin API (Provision).
	Companies [2]Company
	// HookURL is the URL of the webhook endpoint each company registers;
	// the target's destination guard must accept it (default
	// https://127.0.0.1:9/hostile, accepted when the target runs with
	// OFICINA_ALLOW_PRIVATE_DESTINATIONS=127.0.0.1/32). Refused: the
	// endpoint routes run with unknown ids only.
	HookURL string
	// Concurrency is how many groups of cases run at once (default 4).
	Concurrency int
	// SpeedWindow is how long GET /me is measured before and after the
	// run (default 2 s), with SpeedWorkers clients (default 8).
	SpeedWindow  time.Duration
	SpeedWorkers int
	// SlowHeaders and SlowBodies are the slow clients kept open during the
	// run (default 32 and 8); SlowLimit is the longest the server may keep
	// one (default 45 s; the public listener's read timeout is 30 s).
	SlowHeaders, SlowBodies int
	SlowLimit               time.Duration
	// Log receives progress lines (nil: none).
	Log func(format string, args ...any)
}

func (t Target) withDefaults() Target {
	if t.HookURL == "" {
		t.HookURL = "https://127.0.0.1:9/hostile"
	}
	if t.Concurrency <= 0 {
		t.Concurrency = 4
	}
	if t.SpeedWindow <= 0 {
		t.SpeedWindow = 2 * time.Second
	}
	if t.SpeedWorkers <= 0 {
		t.SpeedWorkers = 8
	}
	if t.SlowHeaders == 0 {
		t.SlowHeaders = 32
	}
	if t.SlowBodies == 0 {
		t.SlowBodies = 8
	}
	if t.SlowLimit <= 0 {
		t.SlowLimit = 45 * time.Second
	}
	if t.Log == nil {
		t.Log = func(string, ...any) {}
	}
	return t
}

// Report is the outcome of a run.
type Report struct {
	Cases      int
	Categories []Category
	// Failures broke the bar: a 5xx, an error outside the envelope, a
	// write by a refused request, an id of the other company shown, a slow
	// client never cut off, the server not answering afterwards.
	Failures []Failure
	// Mismatches got another status or code than the contract says, within
	// the bar (a 404 where 405 was due, a case-variant name accepted).
	Mismatches []Failure
	// Accepted lists hostile requests answered 2xx where a refusal was
	// not required (a NUL inside a note, a negative boundary number): not
	// failures, listed for review.
	Accepted []string
	Notes    []string
	// Replays counts the cases sent a second time with their
	// Idempotency-Key (every public write carries a valid one).
	Replays int
	// MeBefore and MeAfter are GET /me answers per second before and after
	// the run; MeErrors counts failed requests of the "after" window.
	MeBefore, MeAfter float64
	MeErrors          int
	Duration          time.Duration
}

// Category counts the cases of one kind of hostile input.
type Category struct {
	Name       string
	Cases      int
	Failures   int
	Mismatches int
	Statuses   map[int]int
}

// Failure is a case that broke the bar or its expectation.
type Failure struct {
	Category, Case string
	Request        string
	Status         int
	Problems       []string
	Body           string
}

// OK reports whether the run held the bar (mismatches aside).
func (r *Report) OK() bool { return len(r.Failures) == 0 }

// WriteText prints the report for people.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "hostile input: %d cases in %s, %d failures of the bar, %d mismatches\n\n", r.Cases,
		r.Duration.Round(time.Second), len(r.Failures), len(r.Mismatches))
	fmt.Fprintf(w, "%-22s %6s %8s %10s  %s\n", "category", "cases", "failures", "mismatches", "statuses")
	for _, c := range r.Categories {
		var st []string
		for _, s := range sortedKeys(c.Statuses) {
			st = append(st, fmt.Sprintf("%d×%d", s, c.Statuses[s]))
		}
		fmt.Fprintf(w, "%-22s %6d %8d %10d  %s\n", c.Name, c.Cases, c.Failures, c.Mismatches, strings.Join(st, " "))
	}
	fmt.Fprintf(w, "\n%d writes sent with a valid Idempotency-Key were retried with it\n", r.Replays)
	fmt.Fprintf(w, "GET /me: %.0f/s before, %.0f/s after (%.0f%%), %d errors after\n", r.MeBefore, r.MeAfter, 100*r.MeAfter/max(r.MeBefore, 1), r.MeErrors)
	if len(r.Notes) > 0 {
		fmt.Fprintln(w, "\nnotes:")
		for _, n := range r.Notes {
			fmt.Fprintln(w, "  - "+n)
		}
	}
	if len(r.Accepted) > 0 {
		fmt.Fprintf(w, "\naccepted (2xx where refusal was not required): %d\n", len(r.Accepted))
		for _, a := range r.Accepted[:min(len(r.Accepted), 40)] {
			fmt.Fprintln(w, "  - "+a)
		}
		if len(r.Accepted) > 40 {
			fmt.Fprintf(w, "  … %d more\n", len(r.Accepted)-40)
		}
	}
	for _, l := range []struct {
		title string
		fs    []Failure
	}{{"mismatches (within the bar)", r.Mismatches}, {"FAILURES OF THE BAR", r.Failures}} {
		if len(l.fs) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s: %d\n", l.title, len(l.fs))
		for _, f := range l.fs {
			fmt.Fprintf(w, "  - [%s] %s\n    %s → %d: %s\n", f.Category, f.Case, f.Request, f.Status, strings.Join(f.Problems, "; "))
			if f.Body != "" {
				fmt.Fprintf(w, "    body: %s\n", f.Body)
			}
		}
	}
}

func sortedKeys(m map[int]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// run is one execution.
type run struct {
	t      Target
	c      *client
	a, b   *fixtures
	routes []route
	src    *sources

	mu         sync.Mutex
	cats       map[string]*Category
	failures   []Failure
	mismatches []Failure
	accepted   []string
	notes      []string
	same       map[string]map[string][]string // SameAs group → normalised body → cases
	replays    int
	slowest    map[string]time.Duration // by category
}

func (r *run) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// Run attacks the target and reports; the error is for a run that could
// not be carried out (target down, set-up refused), not for failed cases.
func Run(ctx context.Context, t Target) (*Report, error) {
	t = t.withDefaults()
	start := time.Now()
	c, err := newClient(t)
	if err != nil {
		return nil, err
	}
	defer c.close()
	r := &run{t: t, c: c, cats: map[string]*Category{}, same: map[string]map[string][]string{}, slowest: map[string]time.Duration{}}
	doc, err := c.send(ctx, c.base, request{Method: "GET", Path: "/openapi.json"})
	if err != nil {
		return nil, fmt.Errorf("hostile: GET /openapi.json: %w", err)
	}
	if doc.Status != http.StatusOK {
		return nil, fmt.Errorf("hostile: GET /openapi.json: %d %s", doc.Status, snippet(doc.Raw))
	}
	if r.routes, err = parseOpenAPI(doc.Raw); err != nil {
		return nil, err
	}
	for i, label := range []string{"A", "B"} {
		co := t.Companies[i]
		if co.Key == "" {
			if co, err = Provision(ctx, t.AdminURL, t.AdminToken, "hostile "+label+" "+time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
				return nil, err
			}
		}
		f := &fixtures{Company: co, Label: label, hook: t.HookURL}
		if err := r.setUp(ctx, f); err != nil {
			return nil, err
		}
		if i == 0 {
			r.a = f
		} else {
			r.b = f
		}
	}
	r.a.other, r.b.other = r.b, r.a
	r.src = newSources(ctx, c)
	if !r.src.spread() {
		r.note("cannot send from other loopback addresses: authentication-failure cases are capped at %d so the per-address throttle stays out of the run", authBudget)
	}
	t.Log("hostile: %d routes, companies %s and %s", len(r.routes), r.a.ID, r.b.ID)

	before, _ := r.speed(ctx, t.SpeedWindow)
	t.Log("hostile: GET /me %.0f/s before", before)

	slowCtx, stopSlow := context.WithCancel(ctx)
	defer stopSlow()
	slowDone := make(chan []slowResult, 1)
	go func() { slowDone <- r.slowClients(slowCtx) }()

	cases := r.generate()
	t.Log("hostile: %d cases", len(cases))
	r.execute(ctx, cases)
	if d, ok := r.slowest["huge_numerals"]; ok {
		r.note("huge numerals (bodies of up to 900,000 digits): the slowest answer took %s", d.Round(time.Millisecond))
	}
	r.throttle(ctx)
	r.probeLeads(ctx, cases)
	r.checkSame()

	t.Log("hostile: waiting for the slow clients to be cut off")
	for _, s := range <-slowDone {
		r.record(s.kase, s.answer, s.problems, nil)
	}
	after, errs := r.speed(ctx, t.SpeedWindow)
	t.Log("hostile: GET /me %.0f/s after", after)
	if after == 0 {
		r.fail(&kase{Category: "speed", Name: "GET /me after the run"}, answer{}, []string{"the server no longer answers GET /me"}, true)
	}

	rep := &Report{MeBefore: before, MeAfter: after, MeErrors: errs, Duration: time.Since(start)}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.cats {
		rep.Cases += c.Cases
		rep.Categories = append(rep.Categories, *c)
	}
	sort.Slice(rep.Categories, func(i, j int) bool { return rep.Categories[i].Name < rep.Categories[j].Name })
	rep.Failures, rep.Mismatches, rep.Accepted, rep.Notes, rep.Replays = r.failures, r.mismatches, r.accepted, r.notes, r.replays
	slices.Sort(rep.Accepted)
	return rep, nil
}

// record counts a finished case with its bar problems and mismatches.
func (r *run) record(k *kase, a answer, bar, other []string) {
	r.mu.Lock()
	c := r.cats[k.Category]
	if c == nil {
		c = &Category{Name: k.Category, Statuses: map[int]int{}}
		r.cats[k.Category] = c
	}
	c.Cases++
	c.Statuses[a.Status]++
	r.slowest[k.Category] = max(r.slowest[k.Category], k.took)
	if len(bar) > 0 {
		c.Failures++
	} else if len(other) > 0 {
		c.Mismatches++
	}
	if len(bar)+len(other) == 0 && a.Status >= 200 && a.Status < 300 && !k.Legit {
		r.accepted = append(r.accepted, fmt.Sprintf("[%s] %s: %d", k.Category, k.Name, a.Status))
	}
	r.mu.Unlock()
	switch {
	case len(bar) > 0:
		r.fail(k, a, append(bar, other...), true)
	case len(other) > 0:
		r.fail(k, a, other, false)
	}
}

func (r *run) fail(k *kase, a answer, problems []string, bar bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := Failure{Category: k.Category, Case: k.Name, Request: k.describe(), Status: a.Status, Problems: problems, Body: snippet(a.Raw)}
	if bar {
		r.failures = append(r.failures, f)
	} else {
		r.mismatches = append(r.mismatches, f)
	}
}
