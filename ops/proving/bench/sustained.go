package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"oficina/schema/sales"
	"oficina/streams"
)

// SustainConfig sizes the sustained-delivery scenario.
type SustainConfig struct {
	Rate int           // offered deliveries per second (default 5,000, issue 16's target)
	Hold time.Duration // how long a rate is offered (default 30 s)
	Runs int           // runs at Rate; figures are medians (default 3)
	// Ramp lists lower rates tried, one run each, lowest first, when Rate
	// is not sustained; the ramp stops at the first rate not sustained
	// (default 1,000, 2,000, 3,000).
	Ramp []int
	// MaxP99: a rate is sustained when the receiver gets at least 95 % of
	// it and commit → receiver p99 is at most MaxP99 (default 50 ms).
	MaxP99    time.Duration
	Companies int           // endpoints the load is spread over, one per company (default 50)
	Drain     time.Duration // after the offer, how long to wait for the last deliveries (default 3 min)
	// CPU, when set, reports deliveries_sustained_cpu_ms_<party> per
	// delivery received and deliveries_sustained_machine_busy (cpu.go).
	CPU *CPUMeter
	// Profiler, when set, profiles the processes during the first run's
	// offer.
	Profiler *Profiler
	// Ordering of the endpoints: "" (none) or "object", which reports
	// deliveries_sustained_ordered_* (issue 27 item 4). The events of one
	// write are ten sales, the same ten each time, so each object has a
	// chain of events either way.
	Ordering string
}

// sustainable names the highest rate sustained.
func (c SustainConfig) sustainable() string {
	return strings.Replace(c.name(), "_sustained", "_sustainable", 1) + "_per_s"
}

// name is the figures' prefix.
func (c SustainConfig) name() string {
	if c.Ordering == "object" {
		return "deliveries_sustained_ordered"
	}
	return "deliveries_sustained"
}

func (c SustainConfig) withDefaults() SustainConfig {
	if c.Rate <= 0 {
		c.Rate = 5000
	}
	if c.Hold <= 0 {
		c.Hold = 30 * time.Second
	}
	if c.Runs <= 0 {
		c.Runs = 3
	}
	if c.Ramp == nil {
		c.Ramp = []int{1000, 2000, 3000}
	}
	if c.MaxP99 <= 0 {
		c.MaxP99 = 50 * time.Millisecond
	}
	if c.Companies <= 0 {
		c.Companies = 50
	}
	if c.Drain <= 0 {
		c.Drain = 3 * time.Minute
	}
	return c
}

// sustainRun is one offered rate held for Hold.
type sustainRun struct {
	offered  float64 // deliveries committed and published per second
	achieved float64 // deliveries received per second, first commit to last arrival
	p50, p99 float64 // commit → receiver, ms
	n        int     // deliveries offered
	missing  int     // not received within Drain of the offer's end (counted as Drain in the percentiles)
	parked   uint64  // most scheduled messages seen at once
	backlog  uint64  // most deliveries waiting on the consumers at once
}

// sustained: the receiver got at least 95 % of rate, p99 within maxP99 and
// nothing missing.
func (r sustainRun) sustained(rate int, maxP99 time.Duration) bool {
	return r.missing == 0 && r.achieved >= 0.95*float64(rate) && r.p99 <= ms(maxP99)
}

// Sustained offers deliveries at a fixed rate (open loop: each batch is
// due at its time whatever became of the ones before) and reports
// deliveries_sustained_*: the offered and achieved rates, commit → receiver
// p50/p99, the most deliveries parked and waiting at once, and what never
// arrived; each the median of cfg.Runs. When the rate is not sustained it
// ramps up from cfg.Ramp and reports deliveries_sustainable_per_s, the
// highest rate that was.
func Sustained(ctx context.Context, env *Env, f *Feed, cfg SustainConfig, report func(Figure)) error {
	cfg = cfg.withDefaults()
	ts, err := env.targets(ctx, f, strings.TrimPrefix(cfg.name(), "deliveries_"), cfg.Companies, "/hook", cfg.Ordering)
	if err != nil {
		return err
	}
	var runs []sustainRun
	var cpu []Figure
	for range cfg.Runs {
		if _, _, err := f.Quiesce(ctx, 5*time.Minute); err != nil {
			return err
		}
		span, err := cfg.CPU.start()
		if err != nil {
			return err
		}
		wait := func() {}
		if len(runs) == 0 {
			wait = cfg.Profiler.During(ctx, cfg.name(), cfg.Hold)
		}
		r, err := f.sustain(ctx, ts, cfg.Rate, cfg.Hold, cfg.Drain)
		wait()
		if err != nil {
			return err
		}
		runs = append(runs, r)
		span.add(r.n - r.missing)
		figs, err := span.figures(cfg.name())
		if err != nil {
			return err
		}
		cpu = append(cpu, figs...)
	}
	for _, fig := range medians(cpu) {
		report(fig)
	}
	med := func(v func(sustainRun) float64) float64 {
		var xs []float64
		for _, r := range runs {
			xs = append(xs, v(r))
		}
		return median(xs)
	}
	m := sustainRun{achieved: med(func(r sustainRun) float64 { return r.achieved }), p99: med(func(r sustainRun) float64 { return r.p99 }),
		missing: int(med(func(r sustainRun) float64 { return float64(r.missing) }))}
	for _, fig := range []Figure{
		{cfg.name() + "_target_per_s", float64(cfg.Rate), "deliveries/s"},
		{cfg.name() + "_offered_per_s", med(func(r sustainRun) float64 { return r.offered }), "deliveries/s"},
		{cfg.name() + "_per_s", m.achieved, "deliveries/s"},
		{cfg.name() + "_p50_ms", med(func(r sustainRun) float64 { return r.p50 }), "ms"},
		{cfg.name() + "_p99_ms", m.p99, "ms"},
		{cfg.name() + "_parked", med(func(r sustainRun) float64 { return float64(r.parked) }), "deliveries"},
		{cfg.name() + "_backlog", med(func(r sustainRun) float64 { return float64(r.backlog) }), "deliveries"},
		{cfg.name() + "_missing", float64(m.missing), "deliveries"},
		{cfg.name() + "_samples", med(func(r sustainRun) float64 { return float64(r.n) }), "deliveries"},
	} {
		report(fig)
	}
	if m.sustained(cfg.Rate, cfg.MaxP99) {
		report(Figure{cfg.sustainable(), float64(cfg.Rate), "deliveries/s"})
		return nil
	}
	best := 0
	for _, rate := range cfg.Ramp {
		if rate >= cfg.Rate {
			break
		}
		if _, _, err := f.Quiesce(ctx, 5*time.Minute); err != nil {
			return err
		}
		r, err := f.sustain(ctx, ts, rate, cfg.Hold, cfg.Drain)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("%s_ramp_%d", strings.Replace(cfg.name(), "_sustained", "", 1), rate)
		report(Figure{name + "_per_s", r.achieved, "deliveries/s"})
		report(Figure{name + "_p99_ms", r.p99, "ms"})
		report(Figure{name + "_parked", float64(r.parked), "deliveries"})
		if !r.sustained(rate, cfg.MaxP99) {
			break
		}
		best = rate
	}
	report(Figure{cfg.sustainable(), float64(best), "deliveries/s"})
	return nil
}

// sustain offers rate deliveries per second for hold over ts: every 2 ms
// (or slower, for low rates) a batch of one company's events is recorded by
// the API's own path — one write unit (streams.Writer) whose events and
// deliveries one statement records, published after commit by a publisher
// that vouches for them (no mark, decision 0029); batches are taken round
// robin over ts by 32 recorders. It then waits up to drain for the
// receiver to have them all.
func (f *Feed) sustain(ctx context.Context, ts []target, rate int, hold, drain time.Duration) (sustainRun, error) {
	batch := max(1, rate/500)
	interval := time.Duration(float64(time.Second) * float64(batch) / float64(rate))
	total := int(hold / interval)
	f.Recv.Forget()

	type committed struct {
		id string
		at time.Time
	}
	var (
		mu       sync.Mutex
		recs     = make([]committed, 0, total*batch)
		firstErr error
		lastAt   time.Time
	)
	jobs := make(chan int, total)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	pub := streams.NewPublisher(f.DB, f.JS, nil)
	pubCtx, stopPub := context.WithCancel(context.WithoutCancel(ctx))
	pubDone := make(chan struct{})
	go func() { _ = pub.Run(pubCtx); close(pubDone) }()
	defer func() { stopPub(); <-pubDone }()
	wr := &streams.Writer{DB: f.DB, Publisher: pub}
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for k := range jobs {
				ids, err := f.write(runCtx, wr, ts[k%len(ts)], batch)
				at := time.Now()
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				for _, id := range ids {
					recs = append(recs, committed{id, at})
				}
				if at.After(lastAt) {
					lastAt = at
				}
				mu.Unlock()
			}
		})
	}
	sampleCtx, stopSampling := context.WithCancel(ctx)
	var parked, backlog uint64
	sampled := make(chan struct{})
	go func() {
		parked, backlog = f.sampleParked(sampleCtx, time.Second)
		close(sampled)
	}()
	start := time.Now()
	for k := range total {
		if d := time.Until(start.Add(time.Duration(k) * interval)); d > 0 {
			select {
			case <-runCtx.Done():
			case <-time.After(d):
			}
		}
		if runCtx.Err() != nil {
			break
		}
		jobs <- k
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		stopSampling()
		<-sampled
		return sustainRun{}, firstErr
	}
	got, err := f.waitCount(ctx, len(recs), drain)
	stopSampling()
	<-sampled
	if err != nil {
		return sustainRun{}, err
	}
	r := sustainRun{n: len(recs), missing: len(recs) - got, parked: parked, backlog: backlog}
	r.offered = float64(len(recs)) / max(hold, lastAt.Sub(start)).Seconds()
	lat := make([]time.Duration, 0, len(recs))
	var last time.Time
	for _, c := range recs {
		at, ok := f.Recv.At(c.id)
		if !ok {
			lat = append(lat, drain) // a lower bound: it had at least drain
			continue
		}
		lat = append(lat, at.Sub(c.at))
		if at.After(last) {
			last = at
		}
	}
	if got > 0 {
		r.achieved = float64(got) / last.Sub(start).Seconds()
	}
	r.p50, r.p99 = percentile(lat, 50), percentile(lat, 99)
	return r, nil
}

// write records n sale.paid events of t's company in one write unit, as
// the API does, and returns their ids (the webhook-id the receiver sees).
func (f *Feed) write(ctx context.Context, wr *streams.Writer, t target, n int) ([]string, error) {
	changes := make([]streams.Change, n)
	for i := range changes {
		changes[i] = streams.Change{Type: sales.EventPaid, Object: benchSales[i%len(benchSales)]}
	}
	var rs []streams.Recorded
	err := wr.Run(ctx, streams.Unit{CompanyID: t.company, Actor: streams.Actor{Kind: streams.ActorAPI}},
		func(ctx context.Context, w *streams.Write) error {
			var err error
			rs, err = streams.Record(ctx, w, changes...)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("bench: record: %w", err)
	}
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	return ids, nil
}

// benchSales are the objects of the feed's events: a write's events are
// these ten sales in turn.
var benchSales = func() []map[string]any {
	out := make([]map[string]any, 10)
	for i := range out {
		out[i] = map[string]any{"object": "sale", "id": fmt.Sprintf("sale_bench%d", i), "status": "paid", "total_cents": 15000}
	}
	return out
}()
