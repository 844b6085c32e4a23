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
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"oficina/ops/bench"
	"oficina/ops/config"
	"oficina/ops/stack"
)

// runBench starts the whole stack in this process against its own database
// (oficina_bench on the DATABASE_URL server), runs every scenario and prints
// one `name value unit` line per figure, then writes them as JSON.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		duration time.Duration
		runs     int
		only     string
		out      string
	)
	cfg, _, err := config.Parse("bench", args, func(fs *flag.FlagSet) {
		fs.DurationVar(&duration, "duration", 5*time.Second, "length of each measured run")
		fs.IntVar(&runs, "runs", 3, "runs per scenario; figures are medians")
		fs.StringVar(&only, "only", "", "regexp selecting scenarios")
		fs.StringVar(&out, "out", "var/bench/latest.json", "where to write the figures as JSON")
	})
	if err != nil {
		return err
	}
	sel, err := regexp.Compile(only)
	if err != nil {
		return fmt.Errorf("-only: %w", err)
	}
	u, err := url.Parse(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	u.Path = "/oficina_bench"
	cfg.DatabaseURL = u.String()
	cfg.HTTPAddr, cfg.AdminAddr, cfg.NATSPort = "127.0.0.1:0", "127.0.0.1:0", -1
	if cfg.DataDir, err = os.MkdirTemp("", "oficina-bench-"); err != nil {
		return err
	}
	defer os.RemoveAll(cfg.DataDir)
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	cfg.AdminToken = hex.EncodeToString(raw[:])
	// A local HTTPS receiver for the companies' webhook endpoints, trusted
	// and allowed only for this run.
	hook := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hook.Close()
	caFile := filepath.Join(cfg.DataDir, "receiver-ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hook.Certificate().Raw}), 0o600); err != nil {
		return err
	}
	cfg.AllowPrivateDestinations, cfg.ExtraCAFile = "127.0.0.1/32", caFile
	// Request logs off: the figures measure the API, not stderr.
	log := newLogger(stderr, "warn")
	slog.SetDefault(log)

	ready := make(chan stack.Addrs, 1)
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() {
		done <- stack.Run(sctx, stack.Options{Config: cfg, Embedded: true, Migrate: true, Logger: log,
			Ready: func(a stack.Addrs) { ready <- a }})
	}()
	var addrs stack.Addrs
	select {
	case addrs = <-ready:
	case err := <-done:
		return fmt.Errorf("bench: stack: %w", err)
	}
	env := &bench.Env{BaseURL: "http://" + addrs.Public, AdminURL: "http://" + addrs.Admin, AdminToken: cfg.AdminToken,
		Client:  &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}},
		HookURL: hook.URL + "/hook"}
	var figures []bench.Figure
	for _, sc := range bench.Scenarios() {
		if !sel.MatchString(sc.Name) {
			continue
		}
		fs, err := bench.Measure(ctx, env, sc, bench.Config{Duration: duration, Runs: runs})
		if err != nil {
			return err
		}
		for _, f := range fs {
			fmt.Fprintf(stdout, "%s %.2f %s\n", f.Name, f.Value, f.Unit)
		}
		figures = append(figures, fs...)
	}
	for _, f := range bench.Derived(figures) {
		fmt.Fprintf(stdout, "%s %.3f %s\n", f.Name, f.Value, f.Unit)
		figures = append(figures, f)
	}
	if sel.MatchString("ceiling") {
		ceil, err := ceilings(ctx, cfg.DatabaseURL, addrs.NATS, duration)
		if err != nil {
			return err
		}
		for _, f := range ceil {
			fmt.Fprintf(stdout, "%s %.2f %s\n", f.Name, f.Value, f.Unit)
		}
		ratios := bench.Ratios(figures, ceil)
		for _, f := range ratios {
			fmt.Fprintf(stdout, "%s %.3f %s\n", f.Name, f.Value, f.Unit)
		}
		figures = append(append(figures, ceil...), ratios...)
	}
	stop()
	<-done
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(map[string]any{"taken_at": time.Now().UTC().Format(time.RFC3339), "figures": figures}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}

// ceilings measures pgbench -N/-S at 32 clients and a bare JetStream
// publish rate on the same machine, in the same run.
func ceilings(ctx context.Context, dbURL, natsURL string, d time.Duration) ([]bench.Figure, error) {
	figs, err := bench.PGBench(ctx, dbURL, 32, d)
	if err != nil {
		return nil, err
	}
	if natsURL != "" {
		f, err := bench.NATSPublish(ctx, natsURL, d)
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	return figs, nil
}
