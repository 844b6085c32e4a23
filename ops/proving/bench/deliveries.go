package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"

	"oficina/ops/testkit/hooks"
	"oficina/streams"
	"oficina/streams/envelope"
	"oficina/tenant"
)

// Feed offers the dispatcher deliveries the way a write does — event and
// delivery rows committed in the company's transaction, then published on
// DELIVERIES — but in bulk, so the delivery scenarios are limited by the
// dispatcher, not by how fast the API can write.
type Feed struct {
	DB   *bun.DB // the database's owner
	JS   jetstream.JetStream
	Recv *hooks.Receiver
}

// target is one company's endpoint at the receiver.
type target struct{ company, endpoint string }

// targets creates n companies, each with one endpoint at the receiver's
// path, subscribed to sale.paid (what the feed records), with ordering
// ("" for the default).
func (e *Env) targets(ctx context.Context, f *Feed, label string, n int, path, ordering string) ([]target, error) {
	ts, err := e.tenants(ctx, label, n, []string{"webhooks:create", "webhooks:delete", "sales:read"})
	if err != nil {
		return nil, err
	}
	out := make([]target, len(ts))
	for i, t := range ts {
		var ep struct{ ID string }
		body := map[string]any{"url": f.Recv.URL() + path, "events": []string{"sale.paid"}}
		if ordering != "" {
			body["ordering"] = ordering
		}
		if err := e.Public(ctx, "POST", "/webhook_endpoints", t.Key, body, &ep, 201); err != nil {
			return nil, err
		}
		out[i] = target{t.CompanyID, ep.ID}
	}
	return out, nil
}

// record commits n deliveries spread round robin over ts, without
// publishing them; rows of one company go in chunks of one transaction.
func (f *Feed) record(ctx context.Context, ts []target, n int) ([]streams.DeliveryMessage, error) {
	obj, _ := json.Marshal(map[string]any{"object": "sale", "id": "sale_bench", "status": "paid", "total_cents": 15000})
	per := map[target][]streams.DeliveryMessage{}
	for i := range n {
		t := ts[i%len(ts)]
		ev, body, err := envelope.Build(envelope.Params{Type: "sale.paid", OrganizationID: t.company, OccurredAt: time.Now(), Object: obj})
		if err != nil {
			return nil, err
		}
		per[t] = append(per[t], streams.DeliveryMessage{DeliveryID: streams.NewDeliveryID(time.Now()), EndpointID: t.endpoint,
			CompanyID: t.company, EventID: ev.ID, EventType: ev.Type, Kind: streams.KindEvent, Body: body})
	}
	var all []streams.DeliveryMessage
	for _, t := range ts {
		for chunk := range slices.Chunk(per[t], 1000) {
			if err := f.insert(ctx, t.company, chunk); err != nil {
				return nil, err
			}
		}
		all = append(all, per[t]...)
	}
	return all, nil
}

func (f *Feed) insert(ctx context.Context, company string, dms []streams.DeliveryMessage) error {
	now := time.Now()
	evs := make([]streams.OutboxEvent, len(dms))
	dls := make([]streams.Delivery, len(dms))
	for i, dm := range dms {
		// Not in the backlog: the scenario publishes them itself.
		evs[i] = streams.OutboxEvent{ID: dm.EventID, CompanyID: company, Type: dm.EventType, Body: dm.Body,
			OccurredAt: now, HasDeliveries: true, CreatedAt: now}
		dls[i] = streams.Delivery{ID: dm.DeliveryID, CompanyID: company, EndpointID: dm.EndpointID, EventID: dm.EventID,
			EventType: dm.EventType, Kind: dm.Kind, Status: streams.StatusPending, CreatedAt: now, UpdatedAt: now}
	}
	return tenant.Tx(ctx, f.DB, company, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(&evs).Exec(ctx); err != nil {
			return fmt.Errorf("bench: insert events: %w", err)
		}
		if _, err := tx.NewInsert().Model(&dls).Exec(ctx); err != nil {
			return fmt.Errorf("bench: insert deliveries: %w", err)
		}
		return nil
	})
}

// publish puts dms on DELIVERIES, asynchronously in windows, and waits for
// the acks.
func (f *Feed) publish(ctx context.Context, dms []streams.DeliveryMessage) error {
	for window := range slices.Chunk(dms, 2000) {
		for _, dm := range window {
			m, err := dm.Msg()
			if err != nil {
				return err
			}
			if _, err := f.JS.PublishMsgAsync(m); err != nil {
				return fmt.Errorf("bench: publish: %w", err)
			}
		}
		select {
		case <-f.JS.PublishAsyncComplete():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// waitCount waits until the receiver has n distinct deliveries or limit
// has passed, and returns how many it has.
func (f *Feed) waitCount(ctx context.Context, n int, limit time.Duration) (int, error) {
	deadline := time.Now().Add(limit)
	for {
		c := f.Recv.Count()
		if c >= n || time.Now().After(deadline) {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// latencies offers single deliveries over ts at rate per second for d and
// returns commit → receiver times: from just after the commit of the rows
// (the publish follows, as after an API write) to the receiver's arrival.
func (f *Feed) latencies(ctx context.Context, ts []target, rate int, d time.Duration) ([]time.Duration, error) {
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	end := time.After(d)
	var (
		mu   sync.Mutex
		lat  []time.Duration
		errs []error
		wg   sync.WaitGroup
	)
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-end:
			wg.Wait()
			if len(errs) > 0 {
				return nil, errs[0]
			}
			return lat, nil
		case <-tick.C:
		}
		t := ts[i%len(ts)]
		wg.Go(func() {
			dms, err := f.record(ctx, []target{t}, 1)
			var l time.Duration
			if err == nil {
				committed := time.Now()
				arrived := f.Recv.Expect(dms[0].EventID)
				if err = f.publishOne(ctx, dms[0]); err == nil {
					select {
					case at := <-arrived:
						l = at.Sub(committed)
					case <-time.After(30 * time.Second):
						err = fmt.Errorf("bench: delivery %s not received in 30 s", dms[0].DeliveryID)
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			lat = append(lat, l)
		})
	}
}

func (f *Feed) publishOne(ctx context.Context, dm streams.DeliveryMessage) error {
	m, err := dm.Msg()
	if err != nil {
		return err
	}
	_, err = f.JS.PublishMsg(ctx, m)
	return err
}
