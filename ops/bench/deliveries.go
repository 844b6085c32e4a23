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

	"oficina/dispatch"
	"oficina/streams"
	"oficina/streams/envelope"
	"oficina/streams/jsconfig"
	"oficina/tenant"
)

// Feed offers the dispatcher deliveries the way a write does — event and
// delivery rows committed in the company's transaction, then published on
// DELIVERIES — but in bulk, so the delivery scenarios are limited by the
// dispatcher, not by how fast the API can write.
type Feed struct {
	DB   *bun.DB // the database's owner
	JS   jetstream.JetStream
	Recv *Receiver
}

// target is one company's endpoint at the receiver.
type target struct{ company, endpoint string }

// targets creates n companies, each with one endpoint at the receiver's
// path, subscribed to sale.paid (what the feed records).
func (e *Env) targets(ctx context.Context, f *Feed, label string, n int, path string) ([]target, error) {
	ts, err := e.tenants(ctx, label, n, []string{"webhooks:create", "webhooks:delete", "sales:read"})
	if err != nil {
		return nil, err
	}
	out := make([]target, len(ts))
	for i, t := range ts {
		var ep struct{ ID string }
		if err := e.Public(ctx, "POST", "/webhook_endpoints", t.Key, map[string]any{"url": f.Recv.URL() + path, "events": []string{"sale.paid"}}, &ep, 201); err != nil {
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
		per[t] = append(per[t], streams.DeliveryMessage{DeliveryID: streams.NewDeliveryID(), EndpointID: t.endpoint,
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
		// Marked published: the relay must not race the scenario's own publish.
		evs[i] = streams.OutboxEvent{ID: dm.EventID, CompanyID: company, Type: dm.EventType, Body: dm.Body,
			OccurredAt: now, HasDeliveries: true, PublishedAt: &now, CreatedAt: now}
		dls[i] = streams.Delivery{ID: dm.DeliveryID, CompanyID: company, EndpointID: dm.EndpointID, EventID: dm.EventID,
			EventType: dm.EventType, Kind: dm.Kind, Status: streams.StatusPending, PublishedAt: &now, CreatedAt: now, UpdatedAt: now}
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

// waitCount waits until the receiver has n distinct deliveries.
func (f *Feed) waitCount(ctx context.Context, n int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for f.Recv.Count() < n {
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: receiver has %d of %d deliveries after %v", f.Recv.Count(), n, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	return nil
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

func percentile(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return ms(s[min(len(s)-1, len(s)*p/100)])
}

// DeliveryConfig sizes the delivery scenarios.
type DeliveryConfig struct {
	Runs      int           // figures are medians of Runs
	Backlog   int           // deliveries drained per throughput run (default 10,000)
	Rate      int           // single deliveries per second in the latency runs (default 200)
	Duration  time.Duration // of each latency run (default 5 s)
	Isolation int           // backlog of the failing endpoint (default 100,000)
}

// Deliveries measures the dispatcher: deliveries_per_s draining a backlog
// over 50 companies, e2e_p50_ms/e2e_p99_ms of single deliveries, and
// isolation_p99_ratio: other companies' p99 while one company's failing
// endpoint has a backlog of cfg.Isolation, over their p99 without it.
func Deliveries(ctx context.Context, env *Env, f *Feed, cfg DeliveryConfig, report func(Figure)) error {
	if cfg.Runs == 0 {
		cfg.Runs = 3
	}
	if cfg.Backlog == 0 {
		cfg.Backlog = 10_000
	}
	if cfg.Rate == 0 {
		cfg.Rate = 200
	}
	if cfg.Duration == 0 {
		cfg.Duration = 5 * time.Second
	}
	if cfg.Isolation == 0 {
		cfg.Isolation = 100_000
	}
	fast, err := env.targets(ctx, f, "deliveries", 50, "/hook")
	if err != nil {
		return err
	}
	var rates []float64
	for range cfg.Runs {
		dms, err := f.record(ctx, fast, cfg.Backlog)
		if err != nil {
			return err
		}
		f.Recv.Forget()
		start := time.Now()
		if err := f.publish(ctx, dms); err != nil {
			return err
		}
		if err := f.waitCount(ctx, len(dms), 5*time.Minute); err != nil {
			return err
		}
		rates = append(rates, float64(len(dms))/time.Since(start).Seconds())
	}
	report(Figure{"deliveries_per_s", median(rates), "deliveries/s"})

	others := fast[:20]
	var p50s, p99s []float64
	for range cfg.Runs {
		lat, err := f.latencies(ctx, others, cfg.Rate, cfg.Duration)
		if err != nil {
			return err
		}
		p50s, p99s = append(p50s, percentile(lat, 50)), append(p99s, percentile(lat, 99))
	}
	base := median(p99s)
	report(Figure{"e2e_p50_ms", median(p50s), "ms"})
	report(Figure{"e2e_p99_ms", base, "ms"})

	failing, err := env.targets(ctx, f, "failing", 1, "/fail")
	if err != nil {
		return err
	}
	dms, err := f.record(ctx, failing, cfg.Isolation)
	if err != nil {
		return err
	}
	if err := f.publish(ctx, dms); err != nil {
		return err
	}
	// The burst itself: the backlog's partition works through 100,000
	// messages, parking them, while the others deliver.
	lat, err := f.latencies(ctx, others, cfg.Rate, cfg.Duration)
	if err != nil {
		return err
	}
	burst := percentile(lat, 99)
	if err := f.waitParked(ctx, 5*time.Minute); err != nil {
		return err
	}
	// Then the state the figure is about: the endpoint failing with its
	// backlog parked, coming back spread out and probed one at a time.
	var loaded []float64
	for range cfg.Runs {
		lat, err := f.latencies(ctx, others, cfg.Rate, cfg.Duration)
		if err != nil {
			return err
		}
		loaded = append(loaded, percentile(lat, 99))
	}
	report(Figure{"e2e_p99_ms_failing_backlog", median(loaded), "ms"})
	report(Figure{"e2e_p99_ms_backlog_burst", burst, "ms"})
	if base > 0 {
		report(Figure{"isolation_p99_ratio", median(loaded) / base, "ratio"})
		report(Figure{"isolation_burst_p99_ratio", burst / base, "ratio"})
	}
	return nil
}

// waitParked waits until the partitions' consumers have taken in what was
// published (nothing pending on the stream side beyond a little).
func (f *Feed) waitParked(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		var pending uint64
		for p := range jsconfig.DefaultConfig().Partitions {
			c, err := f.JS.Consumer(ctx, jsconfig.DeliveriesStream, dispatch.ConsumerName(p))
			if err != nil {
				return fmt.Errorf("bench: consumer %d: %w", p, err)
			}
			info, err := c.Info(ctx)
			if err != nil {
				return fmt.Errorf("bench: consumer %d: %w", p, err)
			}
			pending += info.NumPending + uint64(info.NumAckPending)
		}
		if pending < 1000 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %d deliveries still pending after %v", pending, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
