// Package bench is the benchmark harness behind `make bench`: scenarios
// drive real HTTP requests at the running stack from concurrent clients, and
// each figure is the median of several runs, printed as `name value unit`
// and written as JSON. Benchmarks report figures; nothing here asserts on
// time.
package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"
)

// Env is what scenarios talk to.
type Env struct {
	BaseURL    string // public API, e.g. http://127.0.0.1:8080
	AdminURL   string // admin API
	AdminToken string
	Client     *http.Client
	// HookURL is a webhook receiver the stack may deliver to; scenarios
	// subscribe their companies to it. Empty: no endpoints.
	HookURL string
}

// Op is one request of a scenario; worker and iteration let scenarios vary
// their input without shared state.
type Op func(ctx context.Context, worker, iter int) error

// Scenario prepares its data once and returns the operation to measure.
type Scenario struct {
	Name    string // figure prefix, e.g. "me_get"
	Clients int    // concurrent clients (default 32)
	// Ceiling names the machine figure this scenario is compared with
	// (pgbench_s_tps for reads, pgbench_n_tps for writes, nats_pub_per_s).
	Ceiling string
	Prepare func(ctx context.Context, env *Env) (Op, error)
}

// Figure is one printed number.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// Config tunes a run.
type Config struct {
	Duration time.Duration // per run (default 5s)
	Runs     int           // figures are the median of Runs (default 3)
	Warmup   time.Duration // before the first run (default 1s)
}

// Measure runs sc and returns its figures: <name>_rps, _p50_ms, _p99_ms and
// _errors.
func Measure(ctx context.Context, env *Env, sc Scenario, cfg Config) ([]Figure, error) {
	if cfg.Duration == 0 {
		cfg.Duration = 5 * time.Second
	}
	if cfg.Runs == 0 {
		cfg.Runs = 3
	}
	if cfg.Warmup == 0 {
		cfg.Warmup = time.Second
	}
	if sc.Clients == 0 {
		sc.Clients = 32
	}
	op, err := sc.Prepare(ctx, env)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: prepare: %w", sc.Name, err)
	}
	load(ctx, op, sc.Clients, cfg.Warmup, 0)
	var rps, p50, p99, errs []float64
	for i := 0; i < cfg.Runs; i++ {
		r := load(ctx, op, sc.Clients, cfg.Duration, (i+1)*1_000_000)
		rps = append(rps, r.rps)
		p50 = append(p50, r.p50)
		p99 = append(p99, r.p99)
		errs = append(errs, float64(r.errors))
	}
	return []Figure{
		{sc.Name + "_rps", median(rps), "req/s"},
		{sc.Name + "_p50_ms", median(p50), "ms"},
		{sc.Name + "_p99_ms", median(p99), "ms"},
		{sc.Name + "_errors", median(errs), "count"},
	}, nil
}

type result struct {
	rps, p50, p99 float64
	errors        int
}

// load runs op from clients goroutines for d and summarises latencies.
func load(ctx context.Context, op Op, clients int, d time.Duration, iterBase int) result {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	lat := make([][]time.Duration, clients)
	errs := make([]int, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := iterBase; ctx.Err() == nil; i++ {
				t := time.Now()
				err := op(ctx, w, i)
				if ctx.Err() != nil {
					return // a request cut by the deadline is not a sample
				}
				if err != nil {
					errs[w]++
					continue
				}
				lat[w] = append(lat[w], time.Since(t))
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	r := result{}
	for _, e := range errs {
		r.errors += e
	}
	if len(all) == 0 {
		return r
	}
	r.rps = float64(len(all)) / elapsed.Seconds()
	r.p50 = ms(all[len(all)*50/100])
	r.p99 = ms(all[min(len(all)-1, len(all)*99/100)])
	return r
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// Ratios divides each scenario's rate by its ceiling: <figure>_to_ceiling.
// A delivery is a durable write (attempt and status rows), so
// deliveries_per_s is read against pgbench -N.
func Ratios(figures, ceilings []Figure) []Figure {
	ceil := map[string]float64{}
	for _, c := range ceilings {
		ceil[c.Name] = c.Value
	}
	against := map[string]string{"deliveries_per_s": "pgbench_n_tps"}
	for _, sc := range Scenarios() {
		against[sc.Name+"_rps"] = sc.Ceiling
	}
	var out []Figure
	for _, f := range figures {
		if c := ceil[against[f.Name]]; c != 0 {
			out = append(out, Figure{f.Name + "_to_ceiling", f.Value / c, "ratio"})
		}
	}
	return out
}
