package bench

import (
	"context"
	"fmt"
	"net/url"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The machine's own ceilings, measured in the same run so our figures can be
// read as ratios: times differ between machines, ratios travel.

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// PGBench runs pgbench -N (simple writes) and -S (selects) with clients
// connections against a scratch database on the server of ownerURL.
func PGBench(ctx context.Context, ownerURL string, clients int, d time.Duration) ([]Figure, error) {
	u, err := url.Parse(ownerURL)
	if err != nil {
		return nil, err
	}
	u.Path = "/oficina_pgbench"
	u.RawQuery = ""
	dbURL := u.String()
	admin := *u
	admin.Path = "/postgres"
	_ = exec.CommandContext(ctx, "psql", admin.String(), "-qc", "CREATE DATABASE oficina_pgbench").Run() // exists is fine
	if out, err := exec.CommandContext(ctx, "pgbench", "-q", "-i", "-s", "10", dbURL).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("bench: pgbench init: %w: %s", err, out)
	}
	var figs []Figure
	for _, mode := range []string{"-N", "-S"} {
		out, err := exec.CommandContext(ctx, "pgbench", mode, "-c", strconv.Itoa(clients), "-j", "2",
			"-T", strconv.Itoa(int(d.Seconds())), dbURL).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("bench: pgbench %s: %w: %s", mode, err, out)
		}
		m := tpsLine.FindSubmatch(out)
		if m == nil {
			return nil, fmt.Errorf("bench: pgbench %s: no tps in output: %s", mode, out)
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		figs = append(figs, Figure{"pgbench_" + strings.ToLower(strings.TrimPrefix(mode, "-")) + "_tps", v, "tx/s"})
	}
	return figs, nil
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
