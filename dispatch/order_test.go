package dispatch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/uptrace/bun"

	"oficina/dispatch"
	"oficina/ops/testkit"
	"oficina/ops/testkit/hooks"
	"oficina/schema/clients"
	"oficina/schema/field"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// orderLog is what a receiver of an ordered endpoint saw: per object, the
// place of each request in its object's order, and the most requests in
// flight per object, at the endpoint, and in all.
type orderLog struct {
	mu       sync.Mutex
	seen     map[string][]int // object id → the place of each request, in arrival order
	inflight map[string]int
	maxObj   int
	now, max int
}

func (l *orderLog) enter(obj string, place int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen[obj] = append(l.seen[obj], place)
	l.inflight[obj]++
	l.maxObj = max(l.maxObj, l.inflight[obj])
	l.now++
	l.max = max(l.max, l.now)
}

func (l *orderLog) leave(obj string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inflight[obj]--
	l.now--
}

// orderedEndpoint registers an endpoint to url subscribed to "*" with
// ordering "object"; it returns the row and its signing secret.
func orderedEndpoint(t *testing.T, co *testkit.Company, url string) (*webhooks.Row, string) {
	t.Helper()
	ordering := webhooks.WebhookOrdering(webhooks.OrderingObject)
	var e *webhooks.Row
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		e, err = webhooks.Create(ctx, tx, co.Company.ID, webhooks.WebhookEndpointCreate{URL: url, Events: []webhooks.EventName{"*"},
			Ordering: &ordering}, webhooks.Subscriber{MemberID: co.Owner.ID},
			func([]string) error { return nil }, testkit.AnyURL{}, testkit.Keyring(t), time.Now())
		return err
	})
	return e, e.ViewWithSecret().Secret
}

// recordObjects records, through the clients' own rules, n clients and
// then rounds-1 updates of each (one write per round, every client in
// it): each client's events carry their place in its order in the notes
// ("0" on creation). It returns the delivery messages of ep, shuffled.
func recordObjects(t *testing.T, co *testkit.Company, ep string, n, rounds int) []streams.DeliveryMessage {
	t.Helper()
	var ids []string
	var dms []streams.DeliveryMessage
	write := func(fn func(ctx context.Context, w *streams.Write) error) {
		co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
			w := &streams.Write{Tx: tx, CompanyID: co.Company.ID, Actor: streams.Actor{Kind: streams.ActorAPI, MemberID: co.Owner.ID}, At: time.Now()}
			if err := fn(ctx, w); err != nil {
				return err
			}
			for _, r := range w.Events() {
				for _, d := range r.Deliveries {
					if d.EndpointID == ep {
						dms = append(dms, streams.DeliveryMessage{DeliveryID: d.ID, EndpointID: ep, CompanyID: co.Company.ID,
							EventID: r.ID, EventType: r.Type, Kind: streams.KindEvent, Body: r.Body, OrderKey: d.OrderKey, OrderSeq: d.OrderSeq})
					}
				}
			}
			return nil
		})
	}
	write(func(ctx context.Context, w *streams.Write) error {
		for i := range n {
			c, err := clients.CreateRecorded(ctx, w, clients.ClientCreate{Name: fmt.Sprintf("Client %d", i), Notes: testkit.Ptr("0")})
			if err != nil {
				return err
			}
			ids = append(ids, c.ID)
		}
		return nil
	})
	for k := 1; k < rounds; k++ {
		write(func(ctx context.Context, w *streams.Write) error {
			for _, id := range ids {
				if _, err := clients.Update(ctx, w, id, clients.ClientUpdate{Notes: field.Opt[string]{Set: true, Value: strconv.Itoa(k)}}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if len(dms) != n*rounds {
		t.Fatalf("recorded %d deliveries, want %d", len(dms), n*rounds)
	}
	rand.Shuffle(len(dms), func(i, j int) { dms[i], dms[j] = dms[j], dms[i] })
	return dms
}

// waitAllFinal waits until no delivery of ep is pending.
func waitAllFinal(t *testing.T, co *testkit.Company, ep string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var pending int64
		co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
			var err error
			pending, err = tx.NewSelect().Model((*streams.Delivery)(nil)).Where("endpoint_id = ? AND status = ?", ep, streams.StatusPending).Count(ctx)
			return err
		})
		if pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries still pending after %v", pending, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Issue 27 item 4: to an endpoint with ordering "object", the events of
// one object arrive in the order they were recorded — the next only once
// the one before it succeeded or was given up, never two of one object in
// flight — while different objects go in parallel under the caps (5 per
// endpoint, 10 per company). 50 objects × 20 events, published in random
// order, to a receiver that fails one request in twenty; every body verified
// with the Standard Webhooks library.
func TestOrderedEndpointDeliversEachObjectInOrder(t *testing.T) {
	t.Parallel()
	const objects, events = 50, 20
	e := newEnv(t)
	log := &orderLog{seen: map[string][]int{}, inflight: map[string]int{}}
	var verify func(body []byte, h http.Header) error
	var bad []string
	var badMu sync.Mutex
	var objectOf sync.Map // webhook-id → object id
	srv := testkit.NewReceiver(t, hooks.Options{OnArrival: func(a hooks.Arrival) {
		var env struct {
			Data struct {
				Object struct {
					ID    string `json:"id"`
					Notes string `json:"notes"`
				} `json:"object"`
			} `json:"data"`
		}
		if err := verify(a.Body, a.Header); err != nil || json.Unmarshal(a.Body, &env) != nil {
			badMu.Lock()
			bad = append(bad, fmt.Sprintf("%v: %s", err, a.Body))
			badMu.Unlock()
		}
		place, _ := strconv.Atoi(env.Data.Object.Notes)
		objectOf.Store(a.WebhookID, env.Data.Object.ID)
		log.enter(env.Data.Object.ID, place)
	}, Answer: func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(rand.IntN(5)) * time.Millisecond) // overlaps would show
		obj, _ := objectOf.Load(r.Header.Get("webhook-id"))
		log.leave(obj.(string))
		if rand.IntN(20) == 0 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}}).Server()
	co := company(t, tenant.PlanSupra)
	ep, secret := orderedEndpoint(t, co, srv.URL)
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	verify = func(body []byte, h http.Header) error { return wh.Verify(body, h) }
	dms := recordObjects(t, co, ep.ID, objects, events)
	schedule := slices.Repeat([]time.Duration{50 * time.Millisecond}, 8)
	e.start(t, dispatch.Config{Client: guardClient(t, srv, true), Schedule: schedule,
		ParkDelay: 50 * time.Millisecond, FailingParkSpread: 100 * time.Millisecond, FailingProbeInterval: 5 * time.Millisecond})
	for _, dm := range dms {
		e.publish(t, dm)
	}
	waitAllFinal(t, co, ep.ID, 2*time.Minute)

	log.mu.Lock()
	defer log.mu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("%d bodies failed verification, first: %s", len(bad), bad[0])
	}
	if len(log.seen) != objects {
		t.Fatalf("requests for %d objects, want %d", len(log.seen), objects)
	}
	for obj, places := range log.seen {
		if !slices.IsSorted(places) {
			t.Errorf("object %s: its events arrived out of order: %v", obj, places)
		}
		if got := slices.Compact(slices.Clone(places)); len(got) != events {
			t.Errorf("object %s: %d of its %d events arrived: %v", obj, len(got), events, places)
		}
	}
	if log.maxObj != 1 {
		t.Errorf("most requests of one object in flight = %d, want 1", log.maxObj)
	}
	if log.max > dispatch.DefaultEndpointCap {
		t.Errorf("most requests in flight at the endpoint = %d, want ≤ %d", log.max, dispatch.DefaultEndpointCap)
	}
	if log.max < 2 {
		t.Errorf("most requests in flight at the endpoint = %d: the objects did not go in parallel", log.max)
	}
	var failed []streams.Delivery
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model(&failed).Where("endpoint_id = ? AND status = ?", ep.ID, streams.StatusFailed).Scan(ctx)
	})
	for _, d := range failed { // given up: every attempt of the schedule spent
		if d.AttemptCount != len(schedule)+1 {
			t.Errorf("delivery %s failed after %d attempts (error %v), want %d", d.ID, d.AttemptCount, ptrStr(d.Error), len(schedule)+1)
		}
	}
}
