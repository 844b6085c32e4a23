package dispatch

import (
	"net/http"
	"testing"
	"time"

	"oficina/streams"
)

// Spec 2.8: about 3 days of retries; DefaultSchedule is documented in
// docs/dispatch.md and must stay near 72 hours.
func TestDefaultScheduleAboutThreeDays(t *testing.T) {
	t.Parallel()
	var total time.Duration
	for _, d := range DefaultSchedule {
		total += d
	}
	if total < 66*time.Hour || total > 78*time.Hour {
		t.Errorf("schedule spans %v, want about 3 days", total)
	}
}

// Spec 2.8: the wait follows the schedule, with jitter inside ±Jitter,
// Retry-After lengthens it up to MaxRetryAfter and never shortens it, and
// there is no retry after the last one.
func TestRetryDelay(t *testing.T) {
	t.Parallel()
	c := Config{Schedule: []time.Duration{10 * time.Second, time.Minute}, Jitter: -1, MaxRetryAfter: time.Hour}
	tests := []struct {
		name       string
		attempt    int
		retryAfter time.Duration
		want       time.Duration
		more       bool
	}{
		{"first failure", 1, 0, 10 * time.Second, true},
		{"second failure", 2, 0, time.Minute, true},
		{"exhausted", 3, 0, 0, false},
		{"Retry-After longer", 1, 30 * time.Second, 30 * time.Second, true},
		{"Retry-After shorter does not shorten", 2, time.Second, time.Minute, true},
		{"Retry-After bounded", 1, 48 * time.Hour, time.Hour, true},
	}
	for _, tt := range tests {
		got, more := c.retryDelay(tt.attempt, tt.retryAfter)
		if got != tt.want || more != tt.more {
			t.Errorf("%s: %v %v, want %v %v", tt.name, got, more, tt.want, tt.more)
		}
	}
	c.Jitter = 0.1
	for range 100 {
		if d, _ := c.retryDelay(2, 0); d < 54*time.Second || d > 66*time.Second {
			t.Fatalf("jittered %v outside ±10%% of 1m", d)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"": 0, "120": 2 * time.Minute, "-3": 0, "soon": 0,
		now.Add(time.Hour).Format(http.TimeFormat):  time.Hour,
		now.Add(-time.Hour).Format(http.TimeFormat): 0,
	} {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("Retry-After %q = %v, want %v", v, got, want)
		}
	}
}

// Design "Delivery": the gate starts at most 5 per endpoint and 10 per
// company, holds a healthy endpoint's backlog (JetStream's MaxAckPending
// bounds it), parks a failing endpoint's, trims a company to its share of
// a full partition, and hands freed slots round robin.
func TestGateCaps(t *testing.T) {
	t.Parallel()
	g := newGate(Config{EndpointCap: 5, CompanyCap: 10, CompanyShare: 14})
	j := func(ep string) job { return job{dm: streams.DeliveryMessage{CompanyID: "co", EndpointID: ep}} }
	count := func(ep string, n int) (started, queued, parked int) {
		for range n {
			s, p := g.admit(j(ep))
			switch {
			case s:
				started++
			case p:
				parked++
			default:
				queued++
			}
		}
		return
	}
	if s, q, p := count("a", 8); s != 5 || q != 3 || p != 0 {
		t.Fatalf("endpoint a: started %d queued %d parked %d, want 5 3 0", s, q, p)
	}
	if s, q, p := count("b", 7); s != 5 || q != 2 || p != 0 {
		t.Fatalf("endpoint b: started %d queued %d parked %d, want 5 2 0 (company cap 10)", s, q, p)
	}
	// Held 15, share 14: a full partition parks the newest of the longest queue.
	park, delays := g.evict()
	if len(park) != 1 || len(delays) != 1 || park[0].dm.EndpointID != "a" {
		t.Fatalf("evicted %v, want one job of a", park)
	}
	if park, _ := g.evict(); len(park) != 0 {
		t.Fatalf("evicted %d more within the share, want 0", len(park))
	}
	start, park := g.done(j("a"), true, true, false)
	if len(start) != 1 || len(park) != 0 {
		t.Fatalf("after a success: start %d park %d, want 1 0", len(start), len(park))
	}
	// a fails: its queue is parked, and it gets one slot at a time.
	_, park = g.done(j("a"), true, false, true)
	if len(park) != 1 {
		t.Fatalf("parked on failure = %d, want the 1 queued", len(park))
	}
	if s, p := g.admit(j("a")); s || !p {
		t.Fatal("a failing endpoint with deliveries in flight must park, not start or hold, another")
	}
}

// Design "Isolation": parked backlog comes back spread out — a failing
// endpoint's over the whole spread, a healthy endpoint's over a time that
// grows with what it has parked, so a deep burst is not re-parked every
// ParkDelay.
func TestParkDelayGrowsWithBacklog(t *testing.T) {
	t.Parallel()
	g := newGate(Config{EndpointCap: 5, CompanyCap: 10, CompanyShare: 10,
		ParkDelay: time.Second, FailingParkSpread: time.Minute})
	tests := []struct {
		name     string
		parked   int
		failing  bool
		min, max time.Duration
	}{
		{"nothing parked yet: ParkDelay", 0, false, time.Second, time.Second},
		{"a share's worth parked: up to twice ParkDelay", 10, false, time.Second, 2 * time.Second},
		{"a deep backlog: up to the whole spread", 100_000, false, time.Second, time.Second + time.Minute},
		{"failing: over the whole spread", 0, true, time.Second, time.Second + time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := &endpointState{parked: tt.parked, failing: tt.failing}
			var longest time.Duration
			for range 200 {
				d := g.parkFor(ep)
				if d < tt.min || d > tt.max {
					t.Fatalf("parkFor = %v, want within [%v, %v]", d, tt.min, tt.max)
				}
				longest = max(longest, d)
			}
			if tt.max > tt.min && longest < tt.min+(tt.max-tt.min)/2 {
				t.Fatalf("longest of 200 = %v: not spread over [%v, %v]", longest, tt.min, tt.max)
			}
		})
	}
}

// Issue 5 "1 while the endpoint is failing": a failing endpoint is probed
// one delivery at a time and at most once per FailingProbeInterval; what
// arrives in between is parked, no attempt spent — except a delivery's
// scheduled retry, which is due (it waited its schedule), still one at a
// time.
func TestFailingEndpointProbedOncePerInterval(t *testing.T) {
	t.Parallel()
	g := newGate(Config{EndpointCap: 5, CompanyCap: 10, CompanyShare: 10,
		ParkDelay: time.Second, FailingParkSpread: time.Minute, FailingProbeInterval: time.Hour})
	j := job{dm: streams.DeliveryMessage{CompanyID: "co", EndpointID: "ep"}}
	if s, _ := g.admit(j); !s {
		t.Fatal("first delivery must start")
	}
	g.done(j, true, false, true) // failed: the endpoint is failing now
	if s, p := g.admit(j); s || !p {
		t.Fatalf("admit within the probe interval: start %v park %v, want parked", s, p)
	}
	retry := j
	retry.retry = true
	if s, _ := g.admit(retry); !s {
		t.Fatal("a scheduled retry due within the probe interval must start: it waited its schedule")
	}
	if s, p := g.admit(retry); s || !p {
		t.Fatal("a second retry while the first is in flight must be parked: one at a time")
	}
	g.done(retry, true, false, true)
	g.companies["co"].endpoints["ep"].probeAfter = time.Now().Add(-time.Second)
	if s, _ := g.admit(j); !s {
		t.Fatal("after the probe interval one delivery must start")
	}
	if s, p := g.admit(j); s || !p {
		t.Fatal("a second delivery while the probe is in flight must be parked")
	}
}
