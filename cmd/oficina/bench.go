package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"oficina/ops/bench"
	"oficina/ops/config"
	"oficina/ops/natsconn"
	"oficina/ops/natsembed"
	"oficina/schema/db"
	"oficina/schema/secretbox"
)

// runBench measures Oficina as it is deployed: it prepares a fresh
// database (oficina_bench on the DATABASE_URL server), a NATS (embedded, or
// NATS_URL) and a local HTTPS webhook receiver, starts the API (`oficina
// serve`) and a dispatcher (`oficina dispatch`) as processes of their own,
// runs every scenario and prints one `name value unit` line per figure,
// then writes them as JSON.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		duration time.Duration
		runs     int
		only     string
		out      string
		backlog  int
		dbName   string
	)
	cfg, _, err := config.Parse("bench", args, func(fs *flag.FlagSet) {
		fs.DurationVar(&duration, "duration", 5*time.Second, "length of each measured run")
		fs.IntVar(&runs, "runs", 3, "runs per scenario; figures are medians")
		fs.StringVar(&only, "only", "", "regexp selecting scenarios (deliveries: the delivery scenarios; ceiling: the machine's)")
		fs.StringVar(&out, "out", "var/bench/latest.json", "where to write the figures as JSON")
		fs.IntVar(&backlog, "isolation-backlog", 100_000, "deliveries queued for the failing endpoint in the isolation scenario")
		fs.StringVar(&dbName, "database", "oficina_bench", "scratch database, dropped and recreated on the DATABASE_URL server")
	})
	if err != nil {
		return err
	}
	sel, err := regexp.Compile(only)
	if err != nil {
		return fmt.Errorf("-only: %w", err)
	}
	r, err := startBenchRig(ctx, cfg, dbName, stderr)
	if err != nil {
		return err
	}
	defer r.close()

	var figures []bench.Figure
	report := func(fs ...bench.Figure) {
		for _, f := range fs {
			fmt.Fprintf(stdout, "%s %.3f %s\n", f.Name, f.Value, f.Unit)
		}
		figures = append(figures, fs...)
	}
	for _, sc := range bench.Scenarios() {
		if !sel.MatchString(sc.Name) {
			continue
		}
		fs, err := bench.Measure(ctx, r.env, sc, bench.Config{Duration: duration, Runs: runs})
		if err != nil {
			return err
		}
		report(fs...)
	}
	report(bench.Derived(figures)...)
	if sel.MatchString("deliveries") {
		err := bench.Deliveries(ctx, r.env, r.feed, bench.DeliveryConfig{Runs: runs, Duration: duration, Isolation: backlog},
			func(f bench.Figure) { report(f) })
		if err != nil {
			return err
		}
	}
	for _, p := range []*bench.Proc{r.api, r.dispatch} {
		mb, err := p.PeakRSSMB()
		if err != nil {
			return err
		}
		report(bench.Figure{Name: p.Name + "_rss_mb", Value: mb, Unit: "MiB"})
	}
	if sel.MatchString("ceiling") {
		ceil, err := ceilings(ctx, cfg.DatabaseURL, r.natsURL, r.identity, duration)
		if err != nil {
			return err
		}
		report(ceil...)
		report(bench.Ratios(figures, ceil)...)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(map[string]any{"taken_at": time.Now().UTC().Format(time.RFC3339), "figures": figures}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}

// benchRig is what a run stands on.
type benchRig struct {
	env      *bench.Env
	feed     *bench.Feed
	api      *bench.Proc
	dispatch *bench.Proc
	natsURL  string
	identity config.NATS // of an external NATS; the embedded one has no users
	closers  []func()
}

func (r *benchRig) close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

func startBenchRig(ctx context.Context, cfg config.Config, dbName string, stderr io.Writer) (_ *benchRig, err error) {
	r := &benchRig{}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	dataDir, err := os.MkdirTemp("", "oficina-bench-")
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, func() { os.RemoveAll(dataDir) })
	dbURL, err := db.Recreate(ctx, cfg.DatabaseURL, dbName)
	if err != nil {
		return nil, err
	}
	if _, err := db.Migrate(ctx, dbURL); err != nil {
		return nil, err
	}
	r.natsURL, r.identity = cfg.NATSURL, cfg.NATS // an external NATS: a user with admin's rights (scratch streams)
	if r.natsURL == "" {
		ns, err := natsembed.Start(ctx, natsembed.Config{Port: -1, StoreDir: filepath.Join(dataDir, "nats")})
		if err != nil {
			return nil, err
		}
		r.closers = append(r.closers, ns.Shutdown)
		r.natsURL = ns.ClientURL()
	}
	recv := bench.NewReceiver()
	r.closers = append(r.closers, recv.Close)
	caFile := filepath.Join(dataDir, "receiver-ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: recv.Server().Certificate().Raw}), 0o600); err != nil {
		return nil, err
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	token := hex.EncodeToString(raw[:])
	secretKey, err := secretbox.NewKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	public, err := bench.FreeAddr()
	if err != nil {
		return nil, err
	}
	admin, err := bench.FreeAddr()
	if err != nil {
		return nil, err
	}
	// The receiver is trusted and allowed for this run only.
	env := []string{"DATABASE_URL=" + dbURL, "NATS_URL=" + r.natsURL, "OFICINA_DATA_DIR=" + dataDir,
		"OFICINA_HTTP_ADDR=" + public, "OFICINA_ADMIN_ADDR=" + admin, "OFICINA_ADMIN_TOKEN=" + token,
		"OFICINA_SECRET_KEYS=bench:" + secretKey,
		"OFICINA_ALLOW_PRIVATE_DESTINATIONS=127.0.0.1/32", "OFICINA_EXTRA_CA_FILE=" + caFile,
		"OFICINA_LOG_LEVEL=warn"} // request logs off: the figures measure the API, not stderr
	bin, err := os.Executable()
	if err != nil {
		return nil, err
	}
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if r.api, err = bench.StartProc("api", bin, []string{"serve"}, env, stderr); err != nil {
		return nil, err
	}
	r.closers = append(r.closers, func() { r.api.Stop(10 * time.Second) })
	if err := r.api.WaitReady(wait, "http://"+admin+"/readyz"); err != nil {
		return nil, err
	}
	if r.dispatch, err = bench.StartProc("dispatch", bin, []string{"dispatch"}, env, stderr); err != nil {
		return nil, err
	}
	r.closers = append(r.closers, func() { r.dispatch.Stop(10 * time.Second) })

	owner, err := db.Open(ctx, dbURL, db.Options{})
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, func() { owner.Close() })
	nc, err := natsconn.Connect(r.natsURL, r.identity, "bench", nil)
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	r.feed = &bench.Feed{DB: owner, JS: js, Recv: recv}
	r.env = &bench.Env{BaseURL: "http://" + public, AdminURL: "http://" + admin, AdminToken: token,
		Client:  &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}},
		HookURL: recv.URL() + "/hook"}
	return r, nil
}

// ceilings measures pgbench -N/-S at 32 clients and a bare JetStream
// publish rate on the same machine, in the same run.
func ceilings(ctx context.Context, dbURL, natsURL string, id config.NATS, d time.Duration) ([]bench.Figure, error) {
	figs, err := bench.PGBench(ctx, dbURL, 32, d)
	if err != nil {
		return nil, err
	}
	nc, err := natsconn.Connect(natsURL, id, "bench", nil)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	f, err := bench.NATSPublish(ctx, nc, d)
	if err != nil {
		return nil, err
	}
	return append(figs, f), nil
}
