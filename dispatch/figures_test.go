package dispatch_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"oficina/dispatch"
	"oficina/ops/testkit"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// TestDispatchFigures prints figures (go test ./dispatch -run
// DispatchFigures -v): deliveries per second draining a backlog over 20
// companies to a fast local HTTPS receiver, and publish → receiver latency
// of single deliveries. Everything is local (PostgreSQL, embedded
// JetStream). It asserts nothing about time; skipped unless -v.
func TestDispatchFigures(t *testing.T) {
	if testing.Short() || !testing.Verbose() {
		t.Skip("figures only: run with -v")
	}
	e := newEnv(t)
	const n = 3000
	var count atomic.Int64
	drained := make(chan struct{})
	var mu sync.Mutex
	sent := map[string]time.Time{}
	var lat []time.Duration
	got := make(chan struct{}, 1)
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if at, ok := sent[r.Header.Get("webhook-id")]; ok {
			lat = append(lat, time.Since(at))
			got <- struct{}{}
		}
		mu.Unlock()
		if count.Add(1) == n {
			close(drained)
		}
		w.WriteHeader(http.StatusOK)
	})
	type target struct {
		co *testkit.Company
		ep *webhooks.Row
	}
	var ts []target
	for i := range 20 {
		co := company(t, tenant.PlanSupra)
		ts = append(ts, target{co, newEndpoint(t, co, fmt.Sprintf("%s/c%d", srv.URL, i), webhooks.Subscriber{MemberID: co.Owner.ID})})
	}
	var dms []streams.DeliveryMessage
	for i := range n {
		dms = append(dms, recordDelivery(t, ts[i%len(ts)].co, ts[i%len(ts)].ep, "sale.paid"))
	}
	for _, dm := range dms {
		e.publish(t, dm)
	}
	d, _ := e.start(t, dispatch.Config{Client: guardClient(t, srv, true)})
	for len(d.Owned()) < testPartitions {
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	<-drained
	el := time.Since(start)
	t.Logf("backlog: %d deliveries in %v = %.0f deliveries/s", n, el.Round(time.Millisecond), float64(n)/el.Seconds())

	for i := range 300 {
		tg := ts[i%len(ts)]
		dm := recordDelivery(t, tg.co, tg.ep, "sale.paid") // committed
		mu.Lock()
		sent[dm.EventID] = time.Now()
		mu.Unlock()
		e.publish(t, dm)
		<-got
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(lat)
	t.Logf("commit → receiver over %d single deliveries: p50 %v, p99 %v", len(lat), lat[len(lat)/2].Round(10*time.Microsecond),
		lat[len(lat)*99/100].Round(10*time.Microsecond))
}
