package bench

import (
	"context"
	"time"
)

// IsolationConfig sizes the isolation scenario.
type IsolationConfig struct {
	Runs     int           // latency runs on each side; figures are medians (default 3)
	Rate     int           // single deliveries per second over the other companies (default 200)
	Duration time.Duration // of each latency run (default 10 s)
	Backlog  int           // deliveries queued for the failing endpoint (default 100,000)
	Others   int           // companies delivering meanwhile, one endpoint each (default 20)
}

func (c IsolationConfig) withDefaults() IsolationConfig {
	if c.Runs <= 0 {
		c.Runs = 3
	}
	if c.Rate <= 0 {
		c.Rate = 200
	}
	if c.Duration <= 0 {
		c.Duration = 10 * time.Second
	}
	if c.Backlog <= 0 {
		c.Backlog = 100_000
	}
	if c.Others <= 0 {
		c.Others = 20
	}
	return c
}

// latencyRuns is cfg.Runs latency runs: median p50, p99 and samples per run.
func (f *Feed) latencyRuns(ctx context.Context, ts []target, cfg IsolationConfig) (p50, p99, n float64, err error) {
	var p50s, p99s, ns []float64
	for range cfg.Runs {
		lat, err := f.latencies(ctx, ts, cfg.Rate, cfg.Duration)
		if err != nil {
			return 0, 0, 0, err
		}
		p50s, p99s, ns = append(p50s, percentile(lat, 50)), append(p99s, percentile(lat, 99)), append(ns, float64(len(lat)))
	}
	return median(p50s), median(p99s), median(ns), nil
}

// Isolation measures what one company's failing endpoint with a deep
// backlog costs the others: commit → receiver times of single deliveries
// over cfg.Others companies, first on a quiet dispatcher (e2e_p50_ms,
// e2e_p99_ms), then while a further company's endpoint answers 503 with
// cfg.Backlog deliveries queued — during the burst that queues them
// (e2e_p99_ms_backlog_burst) and once they are parked
// (e2e_p99_ms_failing_backlog). isolation_added_p99_ms is the parked
// figure minus the quiet one; every p99 comes with its samples per run.
// It leaves the failing backlog behind: run it last.
func Isolation(ctx context.Context, env *Env, f *Feed, cfg IsolationConfig, report func(Figure)) error {
	cfg = cfg.withDefaults()
	others, err := env.targets(ctx, f, "others", cfg.Others, "/hook", "")
	if err != nil {
		return err
	}
	if _, _, err := f.Quiesce(ctx, 5*time.Minute); err != nil {
		return err
	}
	p50, base, n, err := f.latencyRuns(ctx, others, cfg)
	if err != nil {
		return err
	}
	report(Figure{"e2e_p50_ms", p50, "ms"})
	report(Figure{"e2e_p99_ms", base, "ms"})
	report(Figure{"isolation_base_samples", n, "deliveries per run"})

	failing, err := env.targets(ctx, f, "failing", 1, "/fail", "")
	if err != nil {
		return err
	}
	dms, err := f.record(ctx, failing, cfg.Backlog)
	if err != nil {
		return err
	}
	if err := f.publish(ctx, dms); err != nil {
		return err
	}
	// The burst: the failing company's partition works through the whole
	// backlog, parking it, while the others deliver.
	lat, err := f.latencies(ctx, others, cfg.Rate, cfg.Duration)
	if err != nil {
		return err
	}
	burst := percentile(lat, 99)
	pending, err := f.waitTaken(ctx, 5*time.Minute)
	if err != nil {
		return err
	}
	// Then the state the figure is about: the endpoint failing with its
	// backlog parked, coming back spread out and probed one at a time.
	_, loaded, ln, err := f.latencyRuns(ctx, others, cfg)
	if err != nil {
		return err
	}
	report(Figure{"e2e_p99_ms_failing_backlog", loaded, "ms"})
	report(Figure{"isolation_loaded_samples", ln, "deliveries per run"})
	report(Figure{"isolation_backlog_pending", float64(pending), "deliveries"})
	report(Figure{"isolation_added_p99_ms", loaded - base, "ms"})
	report(Figure{"e2e_p99_ms_backlog_burst", burst, "ms"})
	report(Figure{"isolation_burst_samples", float64(len(lat)), "deliveries"})
	report(Figure{"isolation_burst_added_p99_ms", burst - base, "ms"})
	if base > 0 {
		report(Figure{"isolation_p99_ratio", loaded / base, "ratio"})
		report(Figure{"isolation_burst_p99_ratio", burst / base, "ratio"})
	}
	return nil
}

// waitTaken waits until the partitions' consumers have taken in what was
// published — less than 1,000 deliveries waiting on them or in hand — or
// limit has passed, and returns how many wait.
func (f *Feed) waitTaken(ctx context.Context, limit time.Duration) (uint64, error) {
	deadline := time.Now().Add(limit)
	for {
		s, err := f.deliveriesState(ctx)
		if err != nil {
			return 0, err
		}
		if s.held < 1000 || time.Now().After(deadline) {
			return s.held, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
