package ratelimit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"oficina/ops/testkit"
	"oficina/schema/service"
	"oficina/streams/jsconfig"
	"oficina/tenant/ratelimit"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// newClock is a test clock that only moves when told.
func newClock() *testkit.Clock {
	return testkit.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
}

// bucket returns the rate-limit bucket on a fresh embedded JetStream.
func bucket(t testing.TB) jetstream.KeyValue {
	t.Helper()
	ns := testkit.NATS(t)
	nc, err := nats.Connect(ns.ClientURL())
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
	return kv
}

type step struct {
	at        time.Duration // since t0
	allowed   bool
	remaining int
	reset     int // seconds
}

func run(t *testing.T, lims []*ratelimit.Limiter, clk *testkit.Clock, limit int, steps []step) {
	t.Helper()
	t0 := clk.Now()
	for i, s := range steps {
		clk.Set(t0.Add(s.at))
		d, err := lims[i%len(lims)].Take(context.Background(), "co_test", limit)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if d.Allowed != s.allowed || d.Remaining != s.remaining || d.ResetSeconds() != s.reset || d.Limit != limit {
			t.Fatalf("step %d at +%v: got allowed=%v remaining=%d reset=%d limit=%d, want %v %d %d",
				i, s.at, d.Allowed, d.Remaining, d.ResetSeconds(), d.Limit, s.allowed, s.remaining, s.reset)
		}
	}
}

// edgeSteps: a ceiling of 3 in a 60 s window. Request 4 inside the window is
// refused with Retry-After = until the oldest leaves; at exactly 60 s after
// the oldest it is allowed again; Reset is exact to the second (rounded up).
var edgeSteps = []step{
	{0, true, 2, 60},
	{10 * time.Second, true, 1, 50},
	{20 * time.Second, true, 0, 40},
	{30 * time.Second, false, 0, 30},
	{59*time.Second + 999*time.Millisecond, false, 0, 1},
	{60 * time.Second, true, 0, 10}, // the first left; the second leaves at 70 s
	{61 * time.Second, false, 0, 9},
	{70 * time.Second, true, 0, 10},
	{200 * time.Second, true, 2, 60}, // everything left
}

// Part 8: sliding window over the last 60 s, exact at the edge, with the
// header values it implies (one process, in-memory store).
func TestSlidingWindowEdgeIsExact(t *testing.T) {
	t.Parallel()
	clk := newClock()
	lim := ratelimit.New(ratelimit.NewMemory(), ratelimit.Config{Base: service.Base{Now: clk.Now}})
	run(t, []*ratelimit.Limiter{lim}, clk, 3, edgeSteps)
}

// Part 8: the window is exact across processes sharing one NATS: two
// limiters (two API processes) on the same JetStream bucket take turns and
// together allow exactly the ceiling.
func TestTwoProcessesShareOneBudget(t *testing.T) {
	t.Parallel()
	kv := bucket(t)
	clk := newClock()
	a := ratelimit.New(ratelimit.NewKV(kv), ratelimit.Config{Base: service.Base{Now: clk.Now}})
	b := ratelimit.New(ratelimit.NewKV(kv), ratelimit.Config{Base: service.Base{Now: clk.Now}})
	run(t, []*ratelimit.Limiter{a, b}, clk, 3, edgeSteps)
}

// Part 8: many requests at once from two processes: exactly the ceiling is
// allowed, whatever the interleaving.
func TestConcurrentRequestsAcrossProcessesAllowExactlyTheCeiling(t *testing.T) {
	t.Parallel()
	kv := bucket(t)
	clk := newClock()
	lims := []*ratelimit.Limiter{
		ratelimit.New(ratelimit.NewKV(kv), ratelimit.Config{Base: service.Base{Now: clk.Now}}),
		ratelimit.New(ratelimit.NewKV(kv), ratelimit.Config{Base: service.Base{Now: clk.Now}}),
	}
	const limit, requests = 60, 200
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() {
			d, err := lims[i%2].Take(context.Background(), "co_burst", limit)
			if err != nil {
				t.Error(err)
				return
			}
			if d.Allowed {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if n := allowed.Load(); n != limit {
		t.Fatalf("allowed %d of %d, want exactly %d", n, requests, limit)
	}
}

// Part 8: a ceiling change applies to the very next request; budgets are
// per key (company).
func TestCeilingChangeAppliesAtOnceAndBudgetsArePerCompany(t *testing.T) {
	t.Parallel()
	clk := newClock()
	lim := ratelimit.New(ratelimit.NewMemory(), ratelimit.Config{Base: service.Base{Now: clk.Now}})
	ctx := context.Background()
	for range 5 {
		if d, _ := lim.Take(ctx, "co_a", 5); !d.Allowed {
			t.Fatal("refused under the ceiling")
		}
	}
	if d, _ := lim.Take(ctx, "co_a", 5); d.Allowed {
		t.Fatal("allowed above the ceiling")
	}
	if d, _ := lim.Take(ctx, "co_b", 5); !d.Allowed || d.Remaining != 4 {
		t.Fatalf("another company's budget was spent: %+v", d)
	}
	if d, _ := lim.Take(ctx, "co_a", 6); !d.Allowed || d.Remaining != 0 || d.Limit != 6 {
		t.Fatalf("raised ceiling: %+v", d)
	}
	if d, _ := lim.Take(ctx, "co_a", 2); d.Allowed || d.Remaining != 0 || d.ResetSeconds() != 60 {
		t.Fatalf("lowered ceiling: %+v", d)
	}
}

// Budgets above the exact range stay small in the store and still count
// exactly how many requests a window holds.
func TestLargeCeilingStaysCompact(t *testing.T) {
	t.Parallel()
	clk := newClock()
	mem := ratelimit.NewMemory()
	lim := ratelimit.New(mem, ratelimit.Config{Base: service.Base{Now: clk.Now}})
	const limit = 100_000
	for i := range 20_000 {
		clk.Advance(2 * time.Millisecond)
		d, err := lim.Take(context.Background(), "co_big", limit)
		if err != nil || !d.Allowed || d.Remaining != limit-i-1 {
			t.Fatalf("request %d: %+v %v", i, d, err)
		}
	}
	state, _, _ := mem.Load(context.Background(), "co_big")
	if len(state) > 8<<10 {
		t.Fatalf("state of %d bytes", len(state))
	}
}
