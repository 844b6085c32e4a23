package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"oficina/ops/config"
	"oficina/ops/natsconn"
	"oficina/ops/natsembed"
	"oficina/ops/proving/bench"
)

// benchFlags are `oficina bench`'s own settings.
type benchFlags struct {
	duration, late, hold time.Duration
	runs, backlog, rate  int
	only, out, dbName    string
	doc, profile         string
	table, autovacuum    bool
}

// runBench measures Oficina as it is deployed (docs/performance.md, "How
// it is measured"): the machine's ceilings first, on a quiet machine; then
// a fresh database (-database), the API (`oficina serve`) and a dispatcher
// (`oficina dispatch`) as processes of their own, every scenario, and the
// figures printed as `name value unit` lines and written to -out. With
// -table it only writes docs/performance.md's table from -out.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	def, err := benchSeconds(os.Getenv("BENCH_SECONDS"))
	if err != nil {
		return err
	}
	var f benchFlags
	cfg, _, err := config.Parse("bench", args, func(fs *flag.FlagSet) {
		fs.DurationVar(&f.duration, "duration", def, "length of each run (env BENCH_SECONDS, in seconds; default 10)")
		fs.IntVar(&f.runs, "runs", 3, "runs per scenario and per ceiling; figures are medians")
		fs.DurationVar(&f.late, "late", time.Minute, "write runs last this long and are read at 10 s and here (0: no late reading)")
		fs.StringVar(&f.only, "only", "", "regexp selecting what runs: ceiling, scenario names, deliveries_sustained, deliveries_sustained_ordered, isolation, retention")
		fs.StringVar(&f.out, "out", "var/bench/latest.json", "where the figures are written (read, with -table)")
		fs.IntVar(&f.rate, "sustain-rate", 5000, "deliveries per second offered in the sustained-delivery scenario")
		fs.DurationVar(&f.hold, "sustain-hold", 30*time.Second, "how long each sustained rate is offered")
		fs.IntVar(&f.backlog, "isolation-backlog", 100_000, "deliveries queued for the failing endpoint in the isolation scenario")
		fs.StringVar(&f.dbName, "database", "oficina_bench", "scratch database, dropped and recreated on the DATABASE_URL server; pgbench gets <database>_pgbench")
		fs.BoolVar(&f.autovacuum, "autovacuum", true, "turn the server's autovacuum on for the run when it is off (put back after)")
		fs.BoolVar(&f.table, "table", false, "write docs/performance.md's table (and docs/performance.json) from -out, and stop")
		fs.StringVar(&f.doc, "doc", "docs/performance.md", "the page -table writes")
		fs.StringVar(&f.profile, "profile", "", "directory for Go CPU profiles of the API and the dispatcher during each scenario's first run (<scenario>.<process>.pprof)")
	})
	if err != nil {
		return err
	}
	if f.table {
		return writeBenchTable(f.out, f.doc, stdout)
	}
	sel, err := regexp.Compile(f.only)
	if err != nil {
		return fmt.Errorf("-only: %w", err)
	}
	return measure(ctx, cfg, f, sel, stdout, stderr)
}

// benchSeconds reads BENCH_SECONDS (a number of seconds; empty: 10).
func benchSeconds(s string) (time.Duration, error) {
	if s == "" {
		return 10 * time.Second, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("BENCH_SECONDS=%q: want a positive number of seconds", s)
	}
	return time.Duration(v * float64(time.Second)), nil
}

func measure(ctx context.Context, cfg config.Config, f benchFlags, sel *regexp.Regexp, stdout, stderr io.Writer) error {
	start := time.Now()
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	mcfg := bench.Config{Duration: f.duration, Runs: f.runs, Late: f.late}
	meta := map[string]any{"runs": f.runs, "run_seconds": f.duration.Seconds(), "early_seconds": 10, "late_seconds": f.late.Seconds(),
		"cpus": runtime.NumCPU(), "loadavg_start": loadavg(), "database": f.dbName, "only": f.only, "profile": f.profile != ""}
	var figures bench.Figures
	report := func(fs ...bench.Figure) {
		for _, fig := range fs {
			fmt.Fprintf(stdout, "%s %.3f %s\n", fig.Name, fig.Value, fig.Unit)
		}
		figures = append(figures, fs...)
	}

	av, restore, err := bench.Autovacuum(ctx, cfg.DatabaseURL, f.autovacuum)
	if err != nil {
		return err
	}
	defer restore()
	meta["autovacuum"] = av
	logf("bench: autovacuum %s", av)

	dataDir, err := os.MkdirTemp("", "oficina-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dataDir)
	natsURL, identity := cfg.NATSURL, cfg.NATS // an external NATS: a user with admin's rights (scratch streams)
	if natsURL == "" {
		ns, err := natsembed.Start(ctx, natsembed.Config{Port: -1, StoreDir: filepath.Join(dataDir, "nats")})
		if err != nil {
			return err
		}
		defer ns.Shutdown()
		natsURL = ns.ClientURL()
	}

	// The ceilings, first: nothing of ours runs yet, no backlog exists.
	if sel.MatchString("ceiling") {
		ceil, err := ceilings(ctx, cfg.DatabaseURL, f, natsURL, identity, logf)
		if err != nil {
			return err
		}
		report(ceil...)
	}

	r, err := startBenchRig(ctx, cfg, f.dbName, natsURL, identity, dataDir, f.profile != "", stderr)
	if err != nil {
		return err
	}
	defer r.close()
	meter := &bench.CPUMeter{Procs: []*bench.Proc{r.api, r.dispatch}}
	mcfg.CPU = meter
	var prof *bench.Profiler
	if f.profile != "" {
		if err := os.MkdirAll(f.profile, 0o755); err != nil {
			return err
		}
		prof = &bench.Profiler{Dir: f.profile, Addrs: r.pprof, Token: r.env.AdminToken, DB: r.feed.DB, Log: logf}
		mcfg.Profiler = prof
	}
	quiesce := func(before string) error {
		waited, empty, err := r.feed.Quiesce(ctx, 3*time.Minute)
		if err != nil {
			return err
		}
		if !empty {
			logf("bench: DELIVERIES still not empty after %v before %s; measuring anyway", waited.Round(time.Second), before)
		} else if waited > time.Second {
			logf("bench: waited %v for DELIVERIES to empty before %s", waited.Round(time.Second), before)
		}
		return nil
	}
	scenarios := bench.Scenarios()
	for _, sc := range scenarios {
		if !sel.MatchString(sc.Name) {
			continue
		}
		if err := quiesce(sc.Name); err != nil {
			return err
		}
		logf("bench: %s", sc.Name)
		fs, err := bench.Measure(ctx, r.env, sc, mcfg)
		if err != nil {
			return err
		}
		report(fs...)
	}
	report(bench.Derived(figures, scenarios, mcfg.GrowthName())...)
	one := func(fig bench.Figure) { report(fig) }
	if sel.MatchString("deliveries_sustained") {
		if err := quiesce("deliveries_sustained"); err != nil {
			return err
		}
		logf("bench: deliveries_sustained")
		err := bench.Sustained(ctx, r.env, r.feed, bench.SustainConfig{Rate: f.rate, Hold: f.hold, Runs: f.runs, CPU: meter, Profiler: prof}, one)
		if err != nil {
			return err
		}
		if err := bench.LogBytesPerDelivery(ctx, r.feed, one); err != nil {
			return err
		}
	}
	if sel.MatchString("deliveries_sustained_ordered") {
		if err := quiesce("deliveries_sustained_ordered"); err != nil {
			return err
		}
		logf("bench: deliveries_sustained_ordered")
		err := bench.Sustained(ctx, r.env, r.feed, bench.SustainConfig{Rate: f.rate, Hold: f.hold, Runs: f.runs, CPU: meter,
			Ordering: "object"}, one)
		if err != nil {
			return err
		}
	}
	if sel.MatchString("retention") {
		logf("bench: retention")
		if err := bench.Retention(ctx, r.env, r.feed, logf, one); err != nil {
			return err
		}
	}
	if sel.MatchString("isolation") {
		logf("bench: isolation")
		err := bench.Isolation(ctx, r.env, r.feed, bench.IsolationConfig{Runs: f.runs, Duration: f.duration, Backlog: f.backlog}, one)
		if err != nil {
			return err
		}
	}
	prof.Heap(ctx)
	for _, p := range []*bench.Proc{r.api, r.dispatch} {
		mb, err := p.PeakRSSMB()
		if err != nil {
			return err
		}
		report(bench.Figure{Name: p.Name + "_rss_mb", Value: mb, Unit: "MiB"})
	}
	report(bench.Ratios(figures, scenarios)...)

	meta["loadavg_end"] = loadavg()
	meta["total_seconds"] = time.Since(start).Round(time.Second).Seconds()
	rep := bench.Report{TakenAt: start, Meta: meta, Figures: figures}
	if missing := rep.Missing(); len(missing) > 0 {
		logf("bench: not measured in this run: %s", strings.Join(missing, ", "))
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f.out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(f.out, append(b, '\n'), 0o644)
}

// ceilings measures, each f.runs times for f.duration: pgbench -N and -S
// at 32 clients in <database>_pgbench, and acknowledged JetStream
// publishes per second.
func ceilings(ctx context.Context, ownerURL string, f benchFlags, natsURL string, id config.NATS, logf func(string, ...any)) ([]bench.Figure, error) {
	figs, err := bench.PGBench(ctx, bench.PGBenchConfig{OwnerURL: ownerURL, Database: f.dbName + "_pgbench", Duration: f.duration, Runs: f.runs}, logf)
	if err != nil {
		return nil, err
	}
	nc, err := natsconn.Connect(natsURL, id, "bench", nil)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	nf, err := bench.NATSPublishRuns(ctx, nc, f.duration, f.runs, logf)
	if err != nil {
		return nil, err
	}
	return append(figs, nf...), nil
}

// loadavg is the machine's 1-minute load average, or -1: a busy machine
// shows here.
func loadavg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	v, err := strconv.ParseFloat(strings.Fields(string(b) + " x")[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// writeBenchTable writes the table of doc from the report at in, and
// copies the report beside doc (doc with .json) so the two are committed
// together.
func writeBenchTable(in, doc string, stdout io.Writer) error {
	b, err := os.ReadFile(in)
	if err != nil {
		return fmt.Errorf("bench: %w (run make bench first)", err)
	}
	var rep bench.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("bench: %s: %w", in, err)
	}
	if missing := rep.Missing(); len(missing) > 0 {
		return fmt.Errorf("bench: %s lacks %s: the table comes from a full make bench", in, strings.Join(missing, ", "))
	}
	page, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	out, err := bench.ReplaceTable(string(page), bench.RenderTable(&rep))
	if err != nil {
		return errors.Join(fmt.Errorf("bench: %s", doc), err)
	}
	if err := os.WriteFile(strings.TrimSuffix(doc, ".md")+".json", b, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(doc, []byte(out), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: table written from %s (taken %s)\n", doc, in, rep.TakenAt.Format(time.RFC3339))
	return nil
}
