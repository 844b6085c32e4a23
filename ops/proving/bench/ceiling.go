package bench

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"oficina/schema/db"
)

// The machine's own ceilings, so our figures can be read as ratios: times
// differ between machines, ratios travel. They are measured first, before
// the API and the dispatcher start, so nothing else of ours runs on the
// machine meanwhile.

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// PGBenchConfig sizes the pgbench ceilings.
type PGBenchConfig struct {
	OwnerURL string        // a database URL on the server to measure, as its owner
	Database string        // scratch database, dropped and recreated
	Clients  int           // connections (default 32, the scenarios' clients)
	Duration time.Duration // of each run (whole seconds, at least 1)
	Runs     int           // figures are medians (default 3)
}

// PGBench initialises a scale-10 pgbench database and runs pgbench -N
// (simple writes) and -S (selects) cfg.Runs times each: pgbench_n_tps and
// pgbench_s_tps, the medians, and their _spread. logf gets every run.
func PGBench(ctx context.Context, cfg PGBenchConfig, logf func(string, ...any)) ([]Figure, error) {
	if cfg.Clients <= 0 {
		cfg.Clients = 32
	}
	if cfg.Runs <= 0 {
		cfg.Runs = 3
	}
	dbURL, err := db.Recreate(ctx, cfg.OwnerURL, cfg.Database)
	if err != nil {
		return nil, fmt.Errorf("bench: pgbench database: %w", err)
	}
	if out, err := exec.CommandContext(ctx, "pgbench", "-q", "-i", "-s", "10", dbURL).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("bench: pgbench init: %w: %s", err, out)
	}
	// The initial load's dirty pages would otherwise be written out by a
	// checkpoint in the middle of the first run (needs superuser or
	// pg_checkpoint; without it the first run pays for them).
	_ = exec.CommandContext(ctx, "psql", dbURL, "-qc", "CHECKPOINT").Run()
	secs := strconv.Itoa(max(1, int(cfg.Duration.Round(time.Second).Seconds())))
	var figs []Figure
	for _, mode := range []string{"-N", "-S"} {
		name := "pgbench_" + strings.ToLower(strings.TrimPrefix(mode, "-")) + "_tps"
		var tps []float64
		for range cfg.Runs {
			out, err := exec.CommandContext(ctx, "pgbench", mode, "-c", strconv.Itoa(cfg.Clients), "-j", "2", "-T", secs, dbURL).CombinedOutput()
			if err != nil {
				return nil, fmt.Errorf("bench: pgbench %s: %w: %s", mode, err, out)
			}
			m := tpsLine.FindSubmatch(out)
			if m == nil {
				return nil, fmt.Errorf("bench: pgbench %s: no tps in output: %s", mode, out)
			}
			v, _ := strconv.ParseFloat(string(m[1]), 64)
			logf("bench: pgbench %s run %d: %.0f tx/s", mode, len(tps)+1, v)
			tps = append(tps, v)
		}
		figs = append(figs, Figure{name, median(tps), "tx/s"}, Figure{name + "_spread", spread(tps), "fraction"})
	}
	return figs, nil
}

// NATSPublishRuns is NATSPublish runs times: nats_pub_per_s, the median,
// and its _spread.
func NATSPublishRuns(ctx context.Context, nc *nats.Conn, d time.Duration, runs int, logf func(string, ...any)) ([]Figure, error) {
	var rates []float64
	for i := range max(1, runs) {
		f, err := NATSPublish(ctx, nc, d)
		if err != nil {
			return nil, err
		}
		logf("bench: NATS publish run %d: %.0f msg/s", i+1, f.Value)
		rates = append(rates, f.Value)
	}
	return []Figure{{"nats_pub_per_s", median(rates), "msg/s"}, {"nats_pub_per_s_spread", spread(rates), "fraction"}}, nil
}

// NATSPublish measures acknowledged JetStream publishes per second of 1 KB
// messages (async, windows of 256) to a scratch file stream over nc.
func NATSPublish(ctx context.Context, nc *nats.Conn, d time.Duration) (Figure, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return Figure{}, err
	}
	name := fmt.Sprintf("BENCH_%d", time.Now().UnixNano())
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{"bench." + name}, Storage: jetstream.FileStorage}); err != nil {
		return Figure{}, err
	}
	defer js.DeleteStream(context.WithoutCancel(ctx), name) //nolint:errcheck
	body := make([]byte, 1024)
	deadline := time.Now().Add(d)
	n := 0
	start := time.Now()
	for time.Now().Before(deadline) {
		for i := 0; i < 256; i++ {
			if _, err := js.PublishAsync("bench."+name, body); err != nil {
				return Figure{}, err
			}
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-ctx.Done():
			return Figure{}, ctx.Err()
		}
		n += 256
	}
	return Figure{"nats_pub_per_s", float64(n) / time.Since(start).Seconds(), "msg/s"}, nil
}
