package scaleout_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"oficina/dispatch"
	"oficina/ops/natsembed"
	"oficina/ops/testkit"
	"oficina/ops/testkit/hooks"
	"oficina/streams"
	"oficina/streams/jsconfig"
	"oficina/tenant"
)

// startNATS is the one NATS server two API processes and two dispatchers
// share.
func startNATS(t *testing.T) *natsembed.Server {
	t.Helper()
	ns, err := natsembed.Start(t.Context(), natsembed.Config{Port: -1, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	return ns
}

// Spec part 8 with two API processes on one PostgreSQL and one NATS: a
// company's budget is its plan's requests per minute across both — a
// burst of GET /me split between them, sent concurrently, gets exactly
// `limit` answers 200, each with its own RateLimit-Remaining, and every
// other request 429 rate_limit_exceeded in the error envelope with
// RateLimit-* and Retry-After.
func TestRateLimitExactAcrossTwoAPIProcesses(t *testing.T) {
	t.Parallel()
	ns := startNATS(t)
	co := newCompany(t, tenant.CompanyInput{Plan: testkit.Ptr(tenant.PlanStart)})
	limit := *co.tk.Company.RequestsPerMinute() // Start: 60
	o := apiOptions{natsURL: ns.ClientURL(), replicas: 1, only: []string{co.id}, log: newLogger(t)}
	apis := [2]*apiProc{startAPI(t, o), startAPI(t, o)}

	const workers = 8
	total := limit * 5 / 2
	results := make([]response, total)
	errs := make([]error, total)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				results[i], errs[i] = apis[i%2].do(t.Context(), "GET", "/me", co.key, nil)
			}
		})
	}
	wg.Wait()
	if took := time.Since(start); took > 50*time.Second {
		// Not a failure of the rule: the first requests may have left the
		// 60 s window, so the count proves nothing either way.
		t.Skipf("the burst took %v; the window could not be judged", took)
	}

	var allowed, refused [2]int
	remaining := map[string]int{}
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("request %d: %v", i, errs[i])
		}
		label := fmt.Sprintf("request %d (API %d)", i, i%2)
		switch r.status {
		case http.StatusOK:
			allowed[i%2]++
			remaining[r.header.Get("RateLimit-Remaining")]++
			if r.header.Get("RateLimit-Limit") != strconv.Itoa(limit) || r.header.Get("Retry-After") != "" {
				t.Errorf("%s: 200 with RateLimit-Limit %q, Retry-After %q", label, r.header.Get("RateLimit-Limit"), r.header.Get("Retry-After"))
			}
		case http.StatusTooManyRequests:
			refused[i%2]++
			checkRefusal(t, label, r, limit)
		default:
			t.Errorf("%s: %d %s", label, r.status, r.raw)
		}
	}
	t.Logf("%d requests of a company limited to %d/min over two APIs in %v: allowed %v, refused %v (API 0, API 1)",
		total, limit, time.Since(start).Round(time.Millisecond), allowed, refused)
	if got := allowed[0] + allowed[1]; got != limit {
		t.Errorf("%d requests allowed across both APIs, want exactly %d", got, limit)
	}
	if got := refused[0] + refused[1]; got != total-limit {
		t.Errorf("%d requests refused, want %d", got, total-limit)
	}
	if allowed[0] == 0 || allowed[1] == 0 {
		t.Errorf("allowed per API %v: the burst did not go through both", allowed)
	}
	// Each counted request saw its own place in the window: Remaining takes
	// every value from limit-1 down to 0 exactly once.
	for n := range limit {
		if c := remaining[strconv.Itoa(n)]; c != 1 {
			t.Errorf("RateLimit-Remaining %d seen on %d answers 200, want 1", n, c)
		}
	}
}

// checkRefusal checks a 429 against spec part 7 (the envelope) and part 8
// (the headers).
func checkRefusal(t *testing.T, label string, r response, limit int) {
	t.Helper()
	h := r.header
	reset, err := strconv.Atoi(h.Get("RateLimit-Reset"))
	switch {
	case r.errorField("type") != "rate_limit_error" || r.errorField("code") != "rate_limit_exceeded":
		t.Errorf("%s: 429 type %q code %q", label, r.errorField("type"), r.errorField("code"))
	case r.errorField("message") == "" || r.errorField("doc_url") == "":
		t.Errorf("%s: 429 without message or doc_url: %s", label, r.raw)
	case r.errorField("request_id") == "" || r.errorField("request_id") != h.Get("Request-Id"):
		t.Errorf("%s: request_id %q, Request-Id header %q", label, r.errorField("request_id"), h.Get("Request-Id"))
	case h.Get("RateLimit-Limit") != strconv.Itoa(limit) || h.Get("RateLimit-Remaining") != "0":
		t.Errorf("%s: RateLimit-Limit %q, RateLimit-Remaining %q", label, h.Get("RateLimit-Limit"), h.Get("RateLimit-Remaining"))
	case err != nil || reset < 1 || reset > 60 || h.Get("Retry-After") != h.Get("RateLimit-Reset"):
		t.Errorf("%s: RateLimit-Reset %q, Retry-After %q", label, h.Get("RateLimit-Reset"), h.Get("Retry-After"))
	}
}

// Design "Delivery" with two API processes and two dispatchers on one
// PostgreSQL and one NATS, observed at a slow receiver: one company's
// endpoints never have more than 5 deliveries in flight each nor the
// company more than 10, and its failing endpoint never more than 1 — while
// both dispatchers deliver (each owns half the partitions; another company
// on the other dispatcher's half is delivered at the same time).
func TestCapsHoldAcrossTwoDispatchers(t *testing.T) {
	t.Parallel()
	ns := startNATS(t)
	log := newLogger(t)
	ph := newPhases()
	recv := newReceiver(t)
	// Dispatchers sorted by id take the partitions p with p % 2 == their
	// rank: c goes to dsp_a, d to dsp_b.
	unlimited := tenant.CompanyInput{RateLimitUnlimited: testkit.Ptr(true)}
	c := newCompany(t, unlimited)
	for jsconfig.PartitionOf(c.id, partitions)%2 != 0 {
		c = newCompany(t, unlimited)
	}
	d := newCompany(t, unlimited)
	for jsconfig.PartitionOf(d.id, partitions)%2 != 1 {
		d = newCompany(t, unlimited)
	}
	o := apiOptions{natsURL: ns.ClientURL(), replicas: 1, caFile: writeCA(t, recv), only: []string{c.id, d.id}, log: log}
	apis := [2]*apiProc{startAPI(t, o), startAPI(t, o)}
	// A failing endpoint is retried every second for long enough to still
	// be pending when it recovers. Leases keep the production TTL: a
	// renewal that times out (a busy machine) drops the partition, and the
	// hand-over may briefly exceed the caps (docs/dispatch.md, known limits).
	tweak := func(cfg *dispatch.Config) {
		cfg.Schedule = slices.Repeat([]time.Duration{time.Second}, 60)
		cfg.LeaseTTL = dispatch.DefaultLeaseTTL
	}
	dsps := [2]*dispatch.Dispatcher{startDispatcher(t, ns.ClientURL(), "dsp_a", recv, log, tweak),
		startDispatcher(t, ns.ClientURL(), "dsp_b", recv, log, tweak)}
	ph.mark("NATS, APIs, dispatchers up")
	waitShared(t, dsps)
	ph.mark("partitions shared")
	moved := watchOwnership(t, dsps)
	pc, pd := jsconfig.PartitionOf(c.id, partitions), jsconfig.PartitionOf(d.id, partitions)
	if !slices.Contains(dsps[0].Owned(), pc) || !slices.Contains(dsps[1].Owned(), pd) {
		t.Fatalf("partition %d (company c) and %d (company d) should be dsp_a's and dsp_b's: dsp_a %v, dsp_b %v",
			pc, pd, dsps[0].Owned(), dsps[1].Owned())
	}

	failPath := "/" + c.id + "/fail"
	var failing atomic.Bool
	failing.Store(true)
	// Sends are held until a cap is reached — c's company cap, d's
	// endpoint cap — then flow, so the caps are both reached and held.
	hold := func(key string, limit int) func() {
		release := make(chan struct{})
		var once sync.Once
		return func() {
			if recv.InFlight(key) >= limit {
				once.Do(func() { close(release) })
			}
			select {
			case <-release:
			case <-time.After(3 * time.Second): // the cap was not reached: asserted below
			}
		}
	}
	dPath := "/" + d.id + "/e0"
	holdC, holdD := hold(hooks.Group(failPath), dispatch.DefaultCompanyCap), hold(dPath, dispatch.DefaultEndpointCap)
	recv.SetAnswer(answerWith(func(r *http.Request) int {
		switch {
		case r.URL.Path == failPath:
			time.Sleep(50 * time.Millisecond) // hold the slot so overlaps would show
			if failing.Load() {
				return http.StatusInternalServerError
			}
			return http.StatusNoContent
		case strings.HasPrefix(r.URL.Path, "/"+c.id+"/"):
			holdC()
		case r.URL.Path == dPath:
			holdD()
		}
		return http.StatusNoContent
	}))
	lead := func(api *apiProc, co company, label string) {
		t.Helper()
		r, err := api.captureLead(t.Context(), co.key, label)
		if err != nil || r.status != 201 {
			t.Fatalf("lead %s: %v %d %s", label, err, r.status, r.raw)
		}
	}
	count := func(path string) (n int) {
		for _, a := range recv.Arrivals() {
			if a.Path == path {
				n++
			}
		}
		return n
	}

	// The failing endpoint: once its first failed attempt is recorded
	// (failing_since set) it is known as failing, and from then on has one
	// delivery in flight at most.
	failID := apis[0].newEndpoint(t, c.key, hookURL(recv, c.id, "fail"), "client.created")
	lead(apis[1], c, "first")
	if !eventually(30*time.Second, func() bool {
		ds := c.deliveries(t)
		return len(ds) == 1 && ds[0].AttemptCount >= 1 && recv.InFlight(failPath) == 0
	}) {
		t.Fatalf("the failing endpoint's first attempt was not recorded (%d requests)", count(failPath))
	}
	recv.ResetPeak(failPath)
	probedBefore := count(failPath)
	ph.mark("failing endpoint known")

	for i := range 3 {
		apis[i%2].newEndpoint(t, c.key, hookURL(recv, c.id, "e"+strconv.Itoa(i)), "client.created")
	}
	apis[1].newEndpoint(t, d.key, hookURL(recv, d.id, "e0"), "client.created")
	var wg sync.WaitGroup
	for _, co := range []company{c, d} {
		wg.Go(func() {
			for i := range 10 {
				lead(apis[i%2], co, strconv.Itoa(i))
			}
		})
	}
	wg.Wait()

	// Every delivery to a healthy endpoint succeeds, and the failing one is
	// probed again while its backlog of 11 waits.
	pending := func() (out []string) {
		for _, co := range []company{c, d} {
			for _, dl := range co.deliveries(t) {
				if dl.Status != streams.StatusSucceeded && dl.EndpointID != failID {
					out = append(out, fmt.Sprintf("%s to %s: %s after %d attempts (%s)", dl.ID, dl.EndpointID, dl.Status,
						dl.AttemptCount, deref(dl.Error)))
				}
			}
		}
		return out
	}
	if !eventually(60*time.Second, func() bool { return len(pending()) == 0 && count(failPath) >= probedBefore+1 }) {
		t.Fatalf("deliveries still waiting: %v; failing endpoint probed %d times since it was known failing",
			pending(), count(failPath)-probedBefore)
	}

	ph.mark("deliveries through both dispatchers")
	if n := moved(); n > 0 {
		t.Logf("partition ownership changed %d times during the run (a lease was lost): caps may be exceeded at a hand-over", n)
	}
	peaks := map[string]int{}
	for _, k := range []string{hooks.Group(failPath), failPath, hooks.Group(dPath), dPath} {
		peaks[k] = recv.Peak(k)
	}
	for i := range 3 {
		p := "/" + c.id + "/e" + strconv.Itoa(i)
		peaks[p] = recv.Peak(p)
		if peaks[p] > dispatch.DefaultEndpointCap {
			t.Errorf("endpoint %s: %d in flight at once, cap %d", p, peaks[p], dispatch.DefaultEndpointCap)
		}
	}
	t.Logf("peak in flight at the receiver: %v", peaks)
	if n := peaks[hooks.Group(failPath)]; n != dispatch.DefaultCompanyCap {
		t.Errorf("company c: %d in flight at most, want the cap %d reached and held", n, dispatch.DefaultCompanyCap)
	}
	if n := peaks[failPath]; n > 1 {
		t.Errorf("failing endpoint: %d in flight at once, want 1", n)
	}
	if n := peaks[dPath]; n != dispatch.DefaultEndpointCap {
		t.Errorf("company d's endpoint: %d in flight at most, want the cap %d reached and held", n, dispatch.DefaultEndpointCap)
	}
	if n := peaks[hooks.Group(dPath)]; n > dispatch.DefaultCompanyCap {
		t.Errorf("company d: %d in flight at once, cap %d", n, dispatch.DefaultCompanyCap)
	}
	// Each company was delivered by its partition's owner only, and so by
	// both dispatchers between them.
	by := map[string]map[string]int{}
	for _, a := range recv.Arrivals() {
		co := strings.TrimPrefix(hooks.Group(a.Path), "company:")
		if by[co] == nil {
			by[co] = map[string]int{}
		}
		by[co][dispatcherOf(a)]++
	}
	t.Logf("requests by company and dispatcher: c %v, d %v", by[c.id], by[d.id])
	if len(by[c.id]) != 1 || by[c.id]["dsp_a"] == 0 || len(by[d.id]) != 1 || by[d.id]["dsp_b"] == 0 {
		t.Errorf("company c sent by %v (want dsp_a only), d by %v (want dsp_b only)", by[c.id], by[d.id])
	}

	// The endpoint recovers: its backlog drains.
	failing.Store(false)
	if !eventually(60*time.Second, func() bool {
		for _, dl := range c.deliveries(t) {
			if dl.Status != streams.StatusSucceeded {
				return false
			}
		}
		return true
	}) {
		t.Fatal("the recovered endpoint's deliveries did not all succeed")
	}
	ph.mark("failing endpoint recovered and drained")
	t.Logf("phases: %s", ph)
}

// watchOwnership samples the dispatchers' partitions until the test ends
// and returns how many times they differed from the settled split: a lost
// lease explains a cap exceeded at a hand-over.
func watchOwnership(t *testing.T, ds [2]*dispatch.Dispatcher) (moved func() int) {
	settled := [2][]int{ds[0].Owned(), ds[1].Owned()}
	var n atomic.Int64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		same := true
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			now := slices.Equal(ds[0].Owned(), settled[0]) && slices.Equal(ds[1].Owned(), settled[1])
			if same && !now {
				n.Add(1)
			}
			same = now
		}
	}()
	t.Cleanup(func() { close(done); <-stopped })
	return func() int { return int(n.Load()) }
}
