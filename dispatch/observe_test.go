package dispatch_test

import (
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"oficina/dispatch"
	"oficina/ops/testkit"
	"oficina/schema/service"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// recorder is an Observer that keeps what it is told, and signals each
// change so a test waits for what it asserts instead of for the row: the
// Observer hears an outcome only after its record's commit returns, a
// moment after the row already says so.
type recorder struct {
	mu sync.Mutex
	told
	changed chan struct{} // made by newRecorder; gets a value after each change
	parked  atomic.Int64
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 1)} }

// told is what a recorder was told.
type told struct {
	attempts         []dispatch.Attempt
	closed           []string
	gaveUp, disabled int
}

func (r *recorder) Attempted(a dispatch.Attempt) {
	r.tell(func(t *told) { t.attempts = append(t.attempts, a) })
}
func (r *recorder) Closed(o string)   { r.tell(func(t *told) { t.closed = append(t.closed, o) }) }
func (r *recorder) GaveUp()           { r.tell(func(t *told) { t.gaveUp++ }) }
func (r *recorder) EndpointDisabled() { r.tell(func(t *told) { t.disabled++ }) }
func (r *recorder) Parked()           { r.parked.Add(1) }

func (r *recorder) tell(change func(*told)) {
	r.mu.Lock()
	change(&r.told)
	r.mu.Unlock()
	if r.changed != nil {
		select {
		case r.changed <- struct{}{}:
		default:
		}
	}
}

// waitTold returns what the recorder was told once done holds for it; the
// test fails with what it was told if that does not happen within 30 s (a
// bound against hanging, not a measured time).
func (r *recorder) waitTold(t *testing.T, what string, done func(told) bool) told {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		got := r.snapshot()
		if done(got) {
			return got
		}
		select {
		case <-r.changed:
		case <-deadline:
			t.Fatalf("observer: still waiting for %s; told %d attempts, closed %v, %d given up, %d disabled",
				what, len(got.attempts), got.closed, got.gaveUp, got.disabled)
		}
	}
}

func (r *recorder) snapshot() told {
	r.mu.Lock()
	defer r.mu.Unlock()
	return told{attempts: slices.Clone(r.attempts), closed: slices.Clone(r.closed), gaveUp: r.gaveUp, disabled: r.disabled}
}

// Issue 18 item 4: the dispatcher tells its Observer (metrics) each
// attempt with its outcome, status, duration and, for a success, the time
// since the delivery was recorded; a delivery given up, an endpoint
// disabled, and a delivery closed without an attempt — each once, after
// its record committed.
func TestTheObserverHearsEachOutcomeOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clk := testkit.NowClock()
	ok, _ := receiver(t, status(http.StatusOK))
	failing, _ := receiver(t, func(w http.ResponseWriter, _ *http.Request) {
		clk.Advance(25 * time.Hour) // so the endpoint is disabled after 72 h of failures
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	co := company(t, tenant.PlanSupra)
	good := newEndpoint(t, co, ok.URL, webhooks.Subscriber{MemberID: co.Owner.ID})
	bad := newEndpoint(t, co, failing.URL, webhooks.Subscriber{MemberID: co.Owner.ID})
	obs := newRecorder()
	sched := []time.Duration{time.Second, time.Second, time.Second, time.Second, time.Second, time.Second}
	// httptest's servers share one certificate: trusting one trusts both.
	e.start(t, dispatch.Config{Base: service.Base{Now: clk.Now}, Client: guardClient(t, ok, true), Schedule: sched, Observer: obs})

	dm := e.enqueue(t, co, good, "sale.paid")
	waitStatus(t, co, dm.DeliveryID, streams.StatusSucceeded)
	got := obs.waitTold(t, "the success", func(g told) bool { return len(g.attempts) >= 1 })
	if len(got.attempts) != 1 {
		t.Fatalf("attempts told %+v, want one", got.attempts)
	}
	if a := got.attempts[0]; a.Outcome != dispatch.OutcomeSucceeded || a.Status != 200 || a.Duration <= 0 ||
		a.SinceRecorded < a.Duration || a.SinceRecorded > time.Minute {
		t.Errorf("success told as %+v", a)
	}

	dm = e.enqueue(t, co, bad, "sale.paid")
	waitStatus(t, co, dm.DeliveryID, streams.StatusFailed) // 4 attempts: failing 75 h ≥ 72 h
	got = obs.waitTold(t, "the give-up and the disable", func(g told) bool { return g.gaveUp >= 1 && g.disabled >= 1 })
	var failed int
	for _, a := range got.attempts[1:] {
		if a.Outcome != dispatch.OutcomeFailedStatus || a.Status != 503 || a.SinceRecorded != 0 {
			t.Errorf("failure told as %+v", a)
		}
		failed++
	}
	if failed != 4 || got.gaveUp != 1 || got.disabled != 1 {
		t.Errorf("told %d failed attempts, %d given up, %d disabled; want 4, 1, 1", failed, got.gaveUp, got.disabled)
	}

	dm = e.enqueue(t, co, bad, "sale.paid")
	waitStatus(t, co, dm.DeliveryID, streams.StatusFailed)
	if got = obs.waitTold(t, "the closure", func(g told) bool { return len(g.closed) >= 1 }); !slices.Equal(got.closed, []string{dispatch.OutcomeEndpointDisabled}) || len(got.attempts) != 5 {
		t.Errorf("a delivery to the disabled endpoint: closed %v, %d attempts; want endpoint_disabled and none more", got.closed, len(got.attempts))
	}
	// Nothing is told twice however long one waits.
	time.Sleep(300 * time.Millisecond)
	if again := obs.snapshot(); len(again.attempts) != 5 || again.gaveUp != 1 || again.disabled != 1 || len(again.closed) != 1 {
		t.Errorf("told more later: %+v", again)
	}
}
