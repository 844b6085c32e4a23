package dispatch_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"oficina/dispatch"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/streams/jsconfig"
	"oficina/tenant"
)

// perID counts, per webhook-id, the requests a receiver got and the most
// that were in flight at once.
type perID struct {
	mu       sync.Mutex
	got      map[string]int
	inflight map[string]int
	maxIn    map[string]int
}

func newPerID() *perID {
	return &perID{got: map[string]int{}, inflight: map[string]int{}, maxIn: map[string]int{}}
}

func (p *perID) enter(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got[id]++
	p.inflight[id]++
	p.maxIn[id] = max(p.maxIn[id], p.inflight[id])
}

func (p *perID) leave(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight[id]--
}

// Issue 15 item 0, seen from the receiver: deliveries held behind the
// endpoint's cap for several times the consumer's AckWait are each sent
// exactly once, never two at a time, and none is sent again after it
// succeeded. (JetStream redelivers a message un-acked for AckWait: the
// dispatcher must keep the messages it holds alive, and must not send a
// delivery it already has in hand.)
func TestHeldPastAckWaitEachDeliverySentOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	seen := newPerID()
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("webhook-id")
		seen.enter(id)
		time.Sleep(700 * time.Millisecond) // longer than AckWait; 5 in flight: ~7 a second
		seen.leave(id)
		w.WriteHeader(http.StatusOK)
	})
	co := company(t, tenant.PlanSupra)
	ep := newEndpoint(t, co, srv.URL+"/slow", webhooks.Subscriber{MemberID: co.Owner.ID})
	const n, ackWait = 30, 500 * time.Millisecond // the last one waits ~4 s: eight AckWaits
	d, _ := e.start(t, dispatch.Config{Client: guardClient(t, srv, true), AckWait: ackWait})
	var ids []string
	for range n {
		ids = append(ids, e.enqueue(t, co, ep, "sale.paid").DeliveryID)
	}
	for _, id := range ids {
		waitStatus(t, co, id, streams.StatusSucceeded)
	}
	// Nothing left un-acked: a redelivery would have had its chance.
	waitNoPending(t, e, d)
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if len(seen.got) != n {
		t.Errorf("receiver got %d distinct events, want %d", len(seen.got), n)
	}
	for id, c := range seen.got {
		if c != 1 {
			t.Errorf("%s received %d times", id, c)
		}
		if seen.maxIn[id] > 1 {
			t.Errorf("%s was in flight %d times at once", id, seen.maxIn[id])
		}
	}
	for _, id := range ids {
		if as := attempts(t, co, id); len(as) != 1 {
			t.Errorf("delivery %s logged %d attempts, want 1", id, len(as))
		}
	}
}

// waitNoPending waits until no partition consumer has a message pending or
// un-acked.
func waitNoPending(t *testing.T, e *env, d *dispatch.Dispatcher) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pending := uint64(0)
		for p := range testPartitions {
			c, err := e.js.Consumer(context.Background(), jsconfig.DeliveriesStream, dispatch.ConsumerName(p))
			if err != nil {
				continue // never created: nothing pending there
			}
			info, err := c.Info(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			pending += info.NumPending + uint64(info.NumAckPending)
		}
		if pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d messages still pending", pending)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
