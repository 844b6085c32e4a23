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
	// Ceiling names the quiet machine figure this scenario's rate is
	// divided by (pgbench_s_tps for reads, pgbench_n_tps for writes); empty:
	// no ratio.
	Ceiling string
	// Write marks a write scenario: its runs last Config.Late and its rate
	// and p99 are also read at Config.Early and at Config.Late into each
	// run, to see whether a write slows as the tables grow.
	Write   bool
	Prepare func(ctx context.Context, env *Env) (Op, error)
}

// Figure is one printed number.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// Config tunes a scenario's runs.
type Config struct {
	// Duration is the length of each run (BENCH_SECONDS); a scenario's
	// headline figures are read over the first Duration of each run.
	Duration time.Duration
	Runs     int           // figures are the median of Runs (default 3)
	Warmup   time.Duration // before the first run (default 1 s)
	// Early and Late are when a write scenario is read again (default 10 s
	// and none): its runs last max(Duration, Late), and the rate and p99 of
	// the Window before each of the two instants are figures of their own.
	// Late 0: no late reading.
	Early, Late, Window time.Duration
	// CPU, when set, reads where the CPU of a scenario's runs went
	// (cpu.go): <name>_cpu_ms_<party> per successful request and
	// <name>_machine_busy.
	CPU *CPUMeter
	// Profiler, when set, profiles the processes during each scenario's
	// first run.
	Profiler *Profiler
}

func (c Config) withDefaults() Config {
	if c.Duration <= 0 {
		c.Duration = 10 * time.Second
	}
	if c.Runs <= 0 {
		c.Runs = 3
	}
	if c.Warmup <= 0 {
		c.Warmup = time.Second
	}
	if c.Early <= 0 {
		c.Early = 10 * time.Second
	}
	if c.Window <= 0 {
		c.Window = 5 * time.Second
	}
	c.Window = min(c.Window, c.Early)
	return c
}

// growth reports whether write runs are read early and late.
func (c Config) growth() bool { return c.Late > c.withDefaults().Early }

// Suffix names a reading at d into a run, e.g. "10s".
func Suffix(d time.Duration) string { return fmt.Sprintf("%ds", int(d.Round(time.Second).Seconds())) }

// GrowthName is the name of the slow-down figure of the late reading
// against the early one, e.g. "growth_60s_vs_10s".
func (c Config) GrowthName() string {
	return "growth_" + Suffix(c.Late) + "_vs_" + Suffix(c.withDefaults().Early)
}

// Measure runs sc and returns its figures, each the median of the runs:
// <name>_rps, _p50_ms, _p99_ms and _errors over the first Duration of each
// run, and _rps_spread ((max − min) / median of the runs' rates). A write
// scenario adds _rps_<early>, _p99_ms_<early>, _rps_<late>, _p99_ms_<late>
// and <name>_<GrowthName>: (early rate − late rate) / early rate.
func Measure(ctx context.Context, env *Env, sc Scenario, cfg Config) ([]Figure, error) {
	cfg = cfg.withDefaults()
	if sc.Clients == 0 {
		sc.Clients = 32
	}
	op, err := sc.Prepare(ctx, env)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: prepare: %w", sc.Name, err)
	}
	load(ctx, op, sc.Clients, cfg.Warmup, 0)
	length := cfg.Duration
	late := sc.Write && cfg.growth()
	if late {
		length = max(length, cfg.Late)
	}
	var rps, p50, p99, errs, eRPS, eP99, lRPS, lP99 []float64
	cpu, err := cfg.CPU.start()
	if err != nil {
		return nil, err
	}
	for i := 0; i < cfg.Runs; i++ {
		wait := func() {}
		if i == 0 {
			wait = cfg.Profiler.During(ctx, sc.Name, cfg.Duration)
		}
		samples := load(ctx, op, sc.Clients, length, (i+1)*10_000_000)
		wait()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cpu.count(samples)
		head := summarize(samples, 0, cfg.Duration)
		rps, p50, p99 = append(rps, head.rps), append(p50, head.p50), append(p99, head.p99)
		errs = append(errs, float64(head.errors))
		if late {
			e := summarize(samples, cfg.Early-cfg.Window, cfg.Early)
			l := summarize(samples, cfg.Late-cfg.Window, cfg.Late)
			eRPS, eP99 = append(eRPS, e.rps), append(eP99, e.p99)
			lRPS, lP99 = append(lRPS, l.rps), append(lP99, l.p99)
		}
	}
	figs := []Figure{
		{sc.Name + "_rps", median(rps), "req/s"},
		{sc.Name + "_p50_ms", median(p50), "ms"},
		{sc.Name + "_p99_ms", median(p99), "ms"},
		{sc.Name + "_errors", median(errs), "count"},
		{sc.Name + "_rps_spread", spread(rps), "fraction"},
	}
	cfs, err := cpu.figures(sc.Name)
	if err != nil {
		return nil, err
	}
	figs = append(figs, cfs...)
	if late {
		early, lateRate := median(eRPS), median(lRPS)
		figs = append(figs,
			Figure{sc.Name + "_rps_" + Suffix(cfg.Early), early, "req/s"},
			Figure{sc.Name + "_p99_ms_" + Suffix(cfg.Early), median(eP99), "ms"},
			Figure{sc.Name + "_rps_" + Suffix(cfg.Late), lateRate, "req/s"},
			Figure{sc.Name + "_p99_ms_" + Suffix(cfg.Late), median(lP99), "ms"})
		if early > 0 {
			figs = append(figs, Figure{sc.Name + "_" + cfg.GrowthName(), (early - lateRate) / early, "fraction"})
		}
	}
	return figs, nil
}

// load runs op from clients goroutines for d and returns every finished
// request. No request starts after d; those in flight then finish
// (cutting them would make the API roll back and log half-done writes at
// every run's end) and are samples past d, outside every reading.
func load(ctx context.Context, op Op, clients int, d time.Duration, iterBase int) []sample {
	per := make([][]sample, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := iterBase; ctx.Err() == nil && time.Since(start) < d; i++ {
				t := time.Now()
				err := op(ctx, w, i)
				now := time.Now()
				per[w] = append(per[w], sample{at: now.Sub(start), lat: now.Sub(t), err: err != nil})
			}
		}(w)
	}
	wg.Wait()
	return slices.Concat(per...)
}
