package ratelimit_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"oficina/ops/testkit"
	"oficina/schema/service"
	"oficina/streams/jsconfig"
	"oficina/tenant/ratelimit"
)

// apiProcess is one API process's limiter on NATS, as ops/stack builds it.
type apiProcess struct {
	nc    *nats.Conn
	store *countingStore
	pres  *ratelimit.Presence
	lim   *ratelimit.Limiter
	// fallbacks counts the requests the limiter said its share decided
	// (Config.Fallback, a metric in production).
	fallbacks *atomic.Int64
}

// countingStore counts the round trips the limiter starts.
type countingStore struct {
	*ratelimit.KV
	calls atomic.Int64
}

func (c *countingStore) Load(ctx context.Context, key string) ([]byte, uint64, error) {
	c.calls.Add(1)
	return c.KV.Load(ctx, key)
}

func (c *countingStore) Swap(ctx context.Context, key string, state []byte, rev uint64) (uint64, error) {
	c.calls.Add(1)
	return c.KV.Swap(ctx, key, state, rev)
}

// newAPIProcess is a process whose store round trips may take timeout
// (0: the default) before the share decides.
func newAPIProcess(t *testing.T, url, id string, clk *testkit.Clock, timeout time.Duration) *apiProcess {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := jsconfig.EnsureRateLimit(context.Background(), js, jsconfig.Config{})
	if err != nil {
		t.Fatal(err)
	}
	store := &countingStore{KV: ratelimit.NewKV(kv)}
	store.Connected = nc.IsConnected
	store.Recreate = func(ctx context.Context) (jetstream.KeyValue, error) {
		return jsconfig.EnsureRateLimit(ctx, js, jsconfig.Config{})
	}
	pres := ratelimit.NewPresence(store, ratelimit.PresenceConfig{ID: id, Base: service.Base{Now: clk.Now}})
	fallbacks := new(atomic.Int64)
	return &apiProcess{nc: nc, store: store, pres: pres, fallbacks: fallbacks,
		lim: ratelimit.New(store, ratelimit.Config{Base: service.Base{Now: clk.Now}, Presence: pres, Timeout: timeout,
			Fallback: func(n int) { fallbacks.Add(int64(n)) }})}
}

func (p *apiProcess) take(t *testing.T, key string, limit int) ratelimit.Decision {
	t.Helper()
	d, err := p.lim.Take(context.Background(), key, limit)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// patient bounds a test process's store round trips: long on a busy
// machine, so that only an outage makes a share decide.
const patient = 10 * time.Second

// twoProcessesSeeingEachOther starts two API processes, a and b, on one
// restartable NATS, whose store round trips are patient, each having seen the other's
// heartbeat (a sees b only at its second).
func twoProcessesSeeingEachOther(t *testing.T, clk *testkit.Clock) (ns *testkit.RestartableNATS, a, b *apiProcess) {
	t.Helper()
	ns = testkit.NewRestartableNATS(t)
	a, b = newAPIProcess(t, ns.URL(), "a", clk, patient), newAPIProcess(t, ns.URL(), "b", clk, patient)
	for _, p := range []*apiProcess{a, b, a} {
		if err := p.pres.Beat(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return ns, a, b
}

// Issue 15 item 6: while NATS is down the company's ceiling still holds
// across API processes: each allows its share (ceiling/N, the remainder to
// the first by id) counting what it allowed before the outage, the answers
// keep their RateLimit values, and the limiter does not even send a request
// to the stopped server. After NATS is back the shares still hold for a
// window, what they allowed is in the shared log (which survived the
// restart), and then the shared budget alone decides.
func TestCeilingHoldsAcrossProcessesWhileNATSIsDown(t *testing.T) {
	t.Parallel()
	clk := newClock()
	ns, a, b := twoProcessesSeeingEachOther(t, clk)
	ctx := context.Background()
	if a.pres.Processes() != 2 || b.pres.Processes() != 2 || a.pres.Share(9) != 5 || b.pres.Share(9) != 4 {
		t.Fatalf("processes %d/%d, shares of 9: %d/%d, want 2/2 and 5/4", a.pres.Processes(), b.pres.Processes(),
			a.pres.Share(9), b.pres.Share(9))
	}
	const ceiling = 9
	for i := range 3 { // before the outage, through the shared budget
		if d := a.take(t, "co_out", ceiling); !d.Allowed || d.Local || d.Remaining != ceiling-1-i {
			t.Fatalf("before the outage, request %d: %+v", i, d)
		}
	}

	ns.Stop()
	testkit.Eventually(t, "both processes to see NATS gone", func() bool { return !a.nc.IsConnected() && !b.nc.IsConnected() })
	if _, _, err := a.store.Load(ctx, "co_out"); !errors.Is(err, ratelimit.ErrUnavailable) {
		t.Fatalf("load during the outage: %v, want ErrUnavailable without a round trip", err)
	}
	allowed := map[*apiProcess]int{}
	for i := range 20 {
		clk.Advance(100 * time.Millisecond)
		p := []*apiProcess{a, b}[i%2]
		d := p.take(t, "co_out", ceiling)
		if !d.Local || d.Limit != ceiling {
			t.Fatalf("during the outage, request %d: %+v, want a local decision with the ceiling as limit", i, d)
		}
		if d.Allowed {
			allowed[p]++
		} else if d.Remaining != 0 || d.ResetSeconds() < 58 || d.ResetSeconds() > 60 {
			t.Fatalf("refusal %d: %+v, want remaining 0 and reset when this process's oldest leaves", i, d)
		}
	}
	if allowed[a] != 2 || allowed[b] != 4 {
		t.Fatalf("allowed during the outage: a %d, b %d; want a 2 (share 5, 3 used before) and b 4: 9 in all",
			allowed[a], allowed[b])
	}
	if fa, fb := a.fallbacks.Load(), b.fallbacks.Load(); fa != 10 || fb != 10 {
		t.Fatalf("fallbacks told: a %d, b %d; want each request of the outage (10 each), none before", fa, fb)
	}

	ns.Start(t)
	testkit.Eventually(t, "both processes to reconnect", func() bool { return a.nc.IsConnected() && b.nc.IsConnected() })
	for _, p := range []*apiProcess{a, b} {
		p.lim.Flush(ctx) // what ops/stack does when the connection is back
		if n := p.lim.Pending(); n != 0 {
			t.Fatalf("%d requests allowed by the share not stored after Flush", n)
		}
	}
	for _, p := range []*apiProcess{a, b} {
		if d := p.take(t, "co_out", ceiling); d.Allowed || d.Local {
			t.Fatalf("just after the outage: %+v, want refused by a stored decision (the share is spent)", d)
		}
	}
	// A process that saw no outage counts by the shared log alone: it
	// holds every request allowed, before the outage (the log survived
	// the restart) and by the shares.
	c := newAPIProcess(t, ns.URL(), "c", clk, patient)
	if d := c.take(t, "co_out", ceiling); d.Allowed || d.Local || d.Remaining != 0 {
		t.Fatalf("a third process just after the outage: %+v, want refused: the log holds the ceiling", d)
	}
	clk.Advance(time.Minute + time.Second)
	if d := a.take(t, "co_out", ceiling); !d.Allowed || d.Local || d.Remaining != ceiling-1 {
		t.Fatalf("a window later: %+v, want the shared budget alone", d)
	}
}

// Issue 15 item 6: a NATS that stops answering without closing the
// connection costs one store deadline, then requests are decided by the
// share without trying the store until the backoff has passed.
func TestHungNATSIsTriedOncePerBackoff(t *testing.T) {
	t.Parallel()
	ns := testkit.NATS(t)
	proxy := testkit.NewProxy(t, strings.TrimPrefix(ns.ClientURL(), "nats://"))
	clk := newClock()
	// A round trip gives up after 2 s (100 ms in production): long
	// enough for a busy machine, short for the test.
	p := newAPIProcess(t, "nats://"+proxy.Addr(), "solo", clk, 2*time.Second)
	if d := p.take(t, "co_hung", 3); !d.Allowed || d.Local {
		t.Fatalf("before: %+v", d)
	}
	proxy.Pause()
	before := p.store.calls.Load()
	if d := p.take(t, "co_hung", 3); !d.Allowed || !d.Local || d.Remaining != 1 {
		t.Fatalf("first request on a hung NATS: %+v, want allowed by the share (alone: the whole ceiling)", d)
	}
	if n := p.store.calls.Load() - before; n != 1 {
		t.Fatalf("%d round trips started, want 1", n)
	}
	for range 3 {
		p.take(t, "co_hung", 3)
	}
	if n := p.store.calls.Load() - before; n != 1 {
		t.Fatalf("%d round trips started within the backoff, want still 1", n)
	}
	clk.Advance(ratelimit.DefaultBackoff)
	proxy.Restore()
	if d := p.take(t, "co_hung", 3); d.Local || d.Allowed {
		t.Fatalf("after the backoff, NATS answering again: %+v, want a stored decision (refused: the share is spent)", d)
	}
	if n := p.store.calls.Load() - before; n < 2 {
		t.Fatalf("%d round trips after the backoff, want the store tried again", n)
	}
}

// Decision 0017: the shares of the processes add up to the ceiling for
// any ceiling; a process that leaves or falls silent stops counting; a
// process that never reached the store counts alone.
func TestPresenceSharesAddUpToTheCeiling(t *testing.T) {
	t.Parallel()
	clk := newClock()
	store := ratelimit.NewMemory()
	ctx := context.Background()
	var ps []*ratelimit.Presence
	for _, id := range []string{"p1", "p2", "p3"} {
		ps = append(ps, ratelimit.NewPresence(store, ratelimit.PresenceConfig{ID: id, Base: service.Base{Now: clk.Now}, Every: time.Second}))
	}
	if got := ps[0].Share(10); got != 10 {
		t.Fatalf("before any heartbeat: share %d, want the whole ceiling", got)
	}
	beat := func(ps ...*ratelimit.Presence) {
		for _, p := range ps {
			if err := p.Beat(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	beat(ps[0], ps[1], ps[2], ps[0], ps[1])
	for ceiling := 1; ceiling <= 20; ceiling++ {
		sum := 0
		for _, p := range ps {
			if p.Processes() != 3 {
				t.Fatalf("%s sees %d processes", p.ID(), p.Processes())
			}
			sum += p.Share(ceiling)
		}
		if sum != ceiling {
			t.Fatalf("shares of %d add up to %d", ceiling, sum)
		}
	}
	if err := ps[2].Leave(ctx); err != nil {
		t.Fatal(err)
	}
	beat(ps[0], ps[1])
	if ps[0].Processes() != 2 || ps[0].Share(10)+ps[1].Share(10) != 10 {
		t.Fatalf("after p3 left: %d processes, shares %d+%d", ps[0].Processes(), ps[0].Share(10), ps[1].Share(10))
	}
	clk.Advance(2 * time.Second)
	beat(ps[0])
	if ps[0].Processes() != 2 {
		t.Fatalf("p2 silent for less than Stale: %d processes, want 2", ps[0].Processes())
	}
	clk.Advance(2 * time.Second)
	beat(ps[0])
	if ps[0].Processes() != 1 || ps[0].Share(10) != 10 {
		t.Fatalf("p2 silent past Stale: %d processes, share %d; want 1 and the whole ceiling", ps[0].Processes(), ps[0].Share(10))
	}
}

// Issue 15 item 6, decision 0018: the ceiling holds through an outage also
// when the balancer sent one process more than its share before it. That
// excess is in the shared log as the other process last saw it, so the
// other's share (counting only its own requests) does not add to it as
// the window slides on; and each process takes only its fair share of the
// room that log left, in case it missed what another allowed last.
func TestCeilingHoldsWhenTheProcessesSharedTheWindowUnevenly(t *testing.T) {
	t.Parallel()
	clk := newClock()
	ns, a, b := twoProcessesSeeingEachOther(t, clk)
	const ceiling = 9 // shares: a 5, b 4
	start := clk.Now()
	for i, p := range []*apiProcess{a, a, a, a, b, b, b, b, b} { // b: one over its share
		clk.Advance(100 * time.Millisecond)
		if d := p.take(t, "co_uneven", ceiling); !d.Allowed || d.Local {
			t.Fatalf("before the outage, request %d: %+v", i, d)
		}
	}
	clk.Advance(100 * time.Millisecond)
	if d := a.take(t, "co_uneven", ceiling); d.Allowed || d.Local { // a now knows the log is full
		t.Fatalf("the tenth request: %+v, want refused by the shared log", d)
	}
	// a's first two requests leave the window: 7 are left in it, b's 5
	// among them.
	clk.Advance(start.Add(time.Minute + 250*time.Millisecond).Sub(clk.Now()))
	ns.Stop()
	testkit.Eventually(t, "both processes to see NATS gone", func() bool { return !a.nc.IsConnected() && !b.nc.IsConnected() })
	allowed := map[string]int{}
	for i := range 8 {
		clk.Advance(5 * time.Millisecond)
		name, p := "a", a
		if i%4 == 3 {
			name, p = "b", b
		}
		if d := p.take(t, "co_uneven", ceiling); d.Allowed {
			allowed[name]++
		}
	}
	if allowed["a"] != 1 || allowed["b"] != 0 {
		t.Fatalf("allowed during the outage: a %d, b %d; want a 1 (its fair share of the 2 the log left: 7 of 9, "+
			"although a's share of 5 has 3 left) and b none (5 of its share of 4 used)", allowed["a"], allowed["b"])
	}
}
