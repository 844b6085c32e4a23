package dispatch_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/dispatch"
	"oficina/ops/testkit"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/streams/jsconfig"
	"oficina/tenant"
)

// meter counts requests in flight per path and in total, keeping maxima.
type meter struct {
	mu       sync.Mutex
	inflight map[string]int
	total    int
	maxPath  map[string]int
	maxTotal int
}

func newMeter() *meter { return &meter{inflight: map[string]int{}, maxPath: map[string]int{}} }

func (m *meter) enter(path string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inflight[path]++
	m.total++
	m.maxPath[path] = max(m.maxPath[path], m.inflight[path])
	m.maxTotal = max(m.maxTotal, m.total)
	return m.total
}

func (m *meter) leave(path string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inflight[path]--
	m.total--
}

// Design "Delivery": at most 5 deliveries in flight per endpoint and 10
// per company, observed at the receiver. Requests are held until the
// company has 10 in flight, so the caps are reached, then flow.
func TestCapsPerEndpointAndCompanyAtReceiver(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := newMeter()
	release := make(chan struct{})
	var once sync.Once
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		if m.enter(r.URL.Path) >= 10 {
			once.Do(func() { close(release) })
		}
		select {
		case <-release:
		case <-time.After(3 * time.Second): // the cap was not reached: the assertion below fails
		}
		m.leave(r.URL.Path)
		w.WriteHeader(http.StatusOK)
	})
	co := company(t, tenant.PlanSupra)
	var eps []*webhooks.Row
	for i := range 3 {
		eps = append(eps, newEndpoint(t, co, fmt.Sprintf("%s/e%d", srv.URL, i), webhooks.Subscriber{MemberID: co.Owner.ID}))
	}
	e.start(t, dispatch.Config{Client: guardClient(t, srv, true)})
	var ids []string
	for range 10 {
		for _, ep := range eps {
			ids = append(ids, e.enqueue(t, co, ep, "sale.paid").DeliveryID)
		}
	}
	for _, id := range ids {
		waitStatus(t, co, id, streams.StatusSucceeded)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.maxTotal != 10 {
		t.Errorf("company max in flight = %d, want 10", m.maxTotal)
	}
	for p, n := range m.maxPath {
		if n > 5 {
			t.Errorf("endpoint %s max in flight = %d, want ≤ 5", p, n)
		}
	}
}

// Design "Delivery": while an endpoint is failing it gets one delivery in
// flight at a time (its backlog is parked, not attempted in parallel),
// until a delivery succeeds.
func TestFailingEndpointOneInFlight(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := newMeter()
	var mu sync.Mutex
	answer := http.StatusInternalServerError
	srv, got := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		m.enter("/")
		time.Sleep(50 * time.Millisecond) // hold the slot so overlaps would show
		m.leave("/")
		mu.Lock()
		code := answer
		mu.Unlock()
		w.WriteHeader(code)
	})
	co := company(t, tenant.PlanSupra)
	ep := newEndpoint(t, co, srv.URL, webhooks.Subscriber{MemberID: co.Owner.ID})
	sched := slices.Repeat([]time.Duration{time.Second}, 20)
	e.start(t, dispatch.Config{Client: guardClient(t, srv, true), Schedule: sched})
	first := e.enqueue(t, co, ep, "sale.paid")
	next(t, got)
	next(t, got) // the retry: the endpoint is known to be failing
	m.mu.Lock()
	m.maxTotal = m.total
	m.mu.Unlock()
	var ids []string
	for range 5 {
		ids = append(ids, e.enqueue(t, co, ep, "sale.paid").DeliveryID)
	}
	for _, id := range ids {
		waitFor(t, co, id, func(d streams.Delivery) bool { return d.AttemptCount >= 1 })
	}
	m.mu.Lock()
	if m.maxTotal != 1 {
		t.Errorf("max in flight while failing = %d, want 1", m.maxTotal)
	}
	m.mu.Unlock()
	mu.Lock()
	answer = http.StatusOK
	mu.Unlock()
	for _, id := range append(ids, first.DeliveryID) {
		waitStatus(t, co, id, streams.StatusSucceeded)
	}
}

// waitOwned polls until ok holds for the dispatchers' partitions.
func waitOwned(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("partitions: %s not reached", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Design "JetStream": dispatchers join without configuration and the
// partitions rebalance (each owned by exactly one); when one leaves, the
// other takes its partitions; deliveries of every company arrive.
func TestTwoDispatchersSharePartitions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv, _ := receiver(t, status(http.StatusOK))
	client := guardClient(t, srv, true)
	a, _ := e.start(t, dispatch.Config{Client: client, ID: "dsp_a"})
	waitOwned(t, "A owns all", func() bool { return len(a.Owned()) == testPartitions })
	b, stopB := e.start(t, dispatch.Config{Client: client, ID: "dsp_b"})
	waitOwned(t, "shared", func() bool {
		oa, ob := a.Owned(), b.Owned()
		all := append(slices.Clone(oa), ob...)
		slices.Sort(all)
		return len(oa) > 0 && len(ob) > 0 && slices.Equal(slices.Compact(all), []int{0, 1, 2, 3}) && len(all) == testPartitions
	})
	deliverAll := func() {
		t.Helper()
		type pending struct {
			co *testkit.Company
			id string
		}
		var ps []pending
		for range 6 {
			co := company(t, tenant.PlanSupra)
			ep := newEndpoint(t, co, srv.URL, webhooks.Subscriber{MemberID: co.Owner.ID})
			ps = append(ps, pending{co, e.enqueue(t, co, ep, "sale.paid").DeliveryID})
		}
		for _, p := range ps {
			waitStatus(t, p.co, p.id, streams.StatusSucceeded)
		}
	}
	deliverAll()
	stopB()
	waitOwned(t, "A owns all after B left", func() bool { return len(a.Owned()) == testPartitions })
	deliverAll()
}

// Design "JetStream": a dispatcher that dies mid-delivery (its connection
// cut: no ack, no lease renewal) loses its partitions to another, and the
// un-acked delivery is redelivered after AckWait and sent again — nothing
// is lost.
func TestDispatcherKilledMidDeliveryNothingLost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	var mu sync.Mutex
	calls := 0
	srv, got := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 { // the first attempt hangs: its dispatcher dies meanwhile
			select {
			case <-hold:
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	client := guardClient(t, srv, true)
	co := company(t, tenant.PlanSupra)
	ep := newEndpoint(t, co, srv.URL, webhooks.Subscriber{MemberID: co.Owner.ID})
	jsA := e.connect(t)
	e.start(t, dispatch.Config{Client: client, JS: jsA, ID: "dsp_dies"})
	dm := e.enqueue(t, co, ep, "sale.paid")
	first := next(t, got)
	jsA.Conn().Close() // the crash
	e.start(t, dispatch.Config{Client: client, ID: "dsp_survives"})
	second := next(t, got)
	if first.Header.Get("webhook-id") != dm.EventID || second.Header.Get("webhook-id") != dm.EventID {
		t.Errorf("redelivery ids %s / %s, want %s", first.Header.Get("webhook-id"), second.Header.Get("webhook-id"), dm.EventID)
	}
	waitStatus(t, co, dm.DeliveryID, streams.StatusSucceeded)
}

// Design "JetStream": one company's hanging endpoint with a backlog does
// not hold its partition: what exceeds its window and bounded queue is
// parked (acked and rescheduled), not kept pending, so another company on
// the same partition is delivered while the first one's sends still hang,
// although the backlog is larger than the partition's MaxAckPending.
func TestSlowBacklogDoesNotBlockOtherCompanies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	slow, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	})
	fast, got := receiver(t, status(http.StatusOK))
	a := company(t, tenant.PlanSupra)
	b := company(t, tenant.PlanSupra)
	for jsconfig.PartitionOf(b.Company.ID, testPartitions) != jsconfig.PartitionOf(a.Company.ID, testPartitions) {
		b = company(t, tenant.PlanSupra)
	}
	epA := newEndpoint(t, a, slow.URL, webhooks.Subscriber{MemberID: a.Owner.ID})
	epB := newEndpoint(t, b, fast.URL, webhooks.Subscriber{MemberID: b.Owner.ID})
	for range 120 {
		e.enqueue(t, a, epA, "sale.paid")
	}
	e.start(t, dispatch.Config{Client: guardClient(t, slow, true), MaxAckPending: 60,
		Schedule: slices.Repeat([]time.Duration{time.Minute}, 10)})
	dm := e.enqueue(t, b, epB, "sale.paid")
	if r := next(t, got); r.Header.Get("webhook-id") != dm.EventID {
		t.Fatalf("company B got %s, want %s", r.Header.Get("webhook-id"), dm.EventID)
	}
	waitStatus(t, b, dm.DeliveryID, streams.StatusSucceeded)
	var n int
	a.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		c, err := tx.NewSelect().Model((*streams.Attempt)(nil)).Count(ctx)
		n = int(c)
		return err
	})
	if n != 0 {
		t.Errorf("company A has %d finished attempts: B should not have waited for A's sends", n)
	}
}

// Issue 16 item 5 "JetStream holds the backlog": a healthy endpoint's
// backlog, larger than what the partition may hold (MaxAckPending), is
// left to JetStream and delivered as the endpoint's window frees, none of
// it parked, when no other message waits behind it.
func TestHealthyBacklogHeldNotParked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv, _ := receiver(t, status(http.StatusOK))
	co := company(t, tenant.PlanSupra)
	ep := newEndpoint(t, co, srv.URL, webhooks.Subscriber{MemberID: co.Owner.ID})
	const n = 300
	var ids []string
	for range n {
		ids = append(ids, e.enqueue(t, co, ep, "sale.paid").DeliveryID)
	}
	rec := &recorder{}
	e.start(t, dispatch.Config{Client: guardClient(t, srv, true), MaxAckPending: 1000, Observer: rec})
	for _, id := range ids {
		waitStatus(t, co, id, streams.StatusSucceeded)
	}
	if p := rec.parked.Load(); p != 0 {
		t.Errorf("%d messages of a healthy endpoint parked, want 0", p)
	}
}

// Spec 3.3 (a disabled endpoint gets no attempt) with preparing ahead: a
// job that waited in its endpoint's queue while the endpoint was disabled
// is read again when its plan is older than PlanFresh, and closed without
// a send.
func TestAJobPreparedWhileWaitingIsReadAgainWhenStale(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	release := make(chan struct{})
	m := newMeter()
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		m.enter(r.URL.Path)
		<-release
		w.WriteHeader(http.StatusOK)
	})
	co := company(t, tenant.PlanSupra)
	ep := newEndpoint(t, co, srv.URL, webhooks.Subscriber{MemberID: co.Owner.ID})
	const fresh = 50 * time.Millisecond
	e.start(t, dispatch.Config{Client: guardClient(t, srv, true), PlanFresh: fresh})
	var ids []string
	for range dispatch.DefaultEndpointCap + 1 {
		ids = append(ids, e.enqueue(t, co, ep, "sale.paid").DeliveryID)
	}
	testkit.Eventually(t, "the endpoint's slots to be taken", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.total == dispatch.DefaultEndpointCap
	})
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewUpdate().Table("webhook_endpoints").Set("status = ?", webhooks.StatusDisabled).
			Where("id = ?", ep.ID).Exec(ctx)
		return err
	})
	time.Sleep(2 * fresh) // the waiting job's plan, read before the disable, goes stale
	close(release)
	closed := 0
	for _, id := range ids {
		d := waitFor(t, co, id, func(d streams.Delivery) bool { return d.Status != streams.StatusPending })
		if ptrStr(d.Error) == dispatch.ErrEndpointDisabled && d.AttemptCount == 0 {
			closed++
		}
	}
	if closed != 1 || m.maxTotal != dispatch.DefaultEndpointCap {
		t.Fatalf("%d deliveries closed as disabled, %d sent at most at once; want the waiting one closed without a "+
			"send, the %d in flight sent", closed, m.maxTotal, dispatch.DefaultEndpointCap)
	}
}
