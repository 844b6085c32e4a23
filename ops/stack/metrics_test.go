package stack_test

import (
	"context"
	"encoding/pem"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/config"
	"oficina/ops/stack"
	"oficina/ops/testkit"
	"oficina/streams"
	"oficina/tenant"
)

// The series each process exposes (docs/operating.md, "Metrics"); dev
// exposes all of them.
var (
	apiSeries = []string{"oficina_http_requests_total", "oficina_http_request_duration_seconds",
		"oficina_ratelimit_processes", "oficina_ratelimit_local", "oficina_ratelimit_fallbacks_total",
		"oficina_idempotency_replays_total", "oficina_idempotency_conflicts_total", "oficina_publish_after_commit_failures_total"}
	relaySeries = []string{"oficina_relay_runs_total", "oficina_relay_published_total", "oficina_outbox_unpublished",
		"oficina_outbox_oldest_unpublished_age_seconds", "oficina_mail_backlog"}
	dispatchSeries = []string{"oficina_webhook_attempts_total", "oficina_webhook_attempt_duration_seconds",
		"oficina_webhook_delivery_latency_seconds", "oficina_webhook_deliveries_given_up_total",
		"oficina_webhook_endpoints_disabled_total", "oficina_dispatch_parked_total", "oficina_dispatch_partitions",
		"oficina_dispatch_partitions_owned", "oficina_dispatch_pending_messages", "oficina_dispatch_ack_pending_messages",
		"oficina_webhook_retries_past_due", "oficina_webhook_retries_oldest_past_due_seconds"}
	everyProcess = []string{"oficina_metrics_read_errors_total", "go_sql_open_connections", "go_sql_in_use_connections",
		"go_sql_idle_connections", "go_sql_wait_count_total", "go_sql_wait_duration_seconds_total",
		"process_resident_memory_bytes", "go_goroutines"}
)

// hasSeries fails the test for each name the scrape lacks, and for each
// of others (another process's) it has.
func hasSeries(t *testing.T, what string, s testkit.Scrape, names []string, others ...[]string) {
	t.Helper()
	for _, n := range names {
		if s.Families[n] == nil {
			t.Errorf("%s: no %s", what, n)
		}
	}
	for _, o := range others {
		for _, n := range o {
			if s.Families[n] != nil {
				t.Errorf("%s: has %s, another process's", what, n)
			}
		}
	}
}

// process runs one process of a test until the test ends and returns its
// addresses once it is ready.
func process(t *testing.T, name string, run func(ctx context.Context, ready func(stack.Addrs)) error) stack.Addrs {
	t.Helper()
	ready := make(chan stack.Addrs, 1)
	done := testkit.Background(t, name, func(ctx context.Context) error {
		return run(ctx, func(a stack.Addrs) { ready <- a })
	})
	select {
	case a := <-ready:
		return a
	case err := <-done:
		t.Fatalf("%s stopped: %v", name, err)
	case <-time.After(60 * time.Second):
		t.Fatalf("%s not ready", name)
	}
	return stack.Addrs{}
}

// Issue 18 items 4 and 5: serve, dispatch and relay, each on its own
// OFICINA_METRICS_ADDR (serve on its admin listener too), expose their
// part of the pipeline after real work — a webhook that arrives, one the
// receiver refuses, a replayed write, an event only the relay publishes —
// with values that say so, and every /metrics passes `promtool check
// metrics`. The dispatcher's listener is behind the operator token.
func TestEachProcessExposesItsPipelineMetrics(t *testing.T) {
	t.Parallel()
	ns := testkit.NATS(t)
	recv, _ := testkit.Receiver(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/refuses") {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	caFile := filepath.Join(t.TempDir(), "receiver-ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: recv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	co := testkit.NewCompany(t, tenant.CompanyInput{RateLimitUnlimited: testkit.Ptr(true)})
	key := co.OwnerKey(t, "leads:create", "clients:read", "tasks:read", "webhooks:create", "webhooks:read")
	const token = "metrics-test-admin-token-0123456789abcdef"
	cfgOf := func() config.Config {
		testkit.DB(t)
		cfg := config.Default()
		cfg.DatabaseURL, cfg.NATSURL = testkit.OwnerURL(), ns.ClientURL()
		cfg.AppDBPassword = os.Getenv("OFICINA_APP_DB_PASSWORD")
		cfg.WorkerDBPassword = os.Getenv("OFICINA_WORKER_DB_PASSWORD")
		cfg.SecretKeys = testkit.SecretKeys
		cfg.HTTPAddr, cfg.AdminAddr, cfg.MetricsAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
		cfg.AdminToken = token
		cfg.DataDir = t.TempDir()
		cfg.DBMaxConns = 8
		cfg.AllowPrivateDestinations = "127.0.0.1/32"
		cfg.ExtraCAFile = caFile
		return cfg
	}
	// Warnings (a relay round's error) reach the test's output.
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// serve relays and mails no company of this test: what the relay
	// publishes for co is the relay process's.
	serve := process(t, "serve", func(ctx context.Context, ready func(stack.Addrs)) error {
		return stack.Run(ctx, stack.Options{Config: cfgOf(), Logger: quiet, Only: []string{"co_of_no_test"}, Ready: ready})
	})
	dsp := process(t, "dispatch", func(ctx context.Context, ready func(stack.Addrs)) error {
		cfg := cfgOf()
		cfg.MetricsRequireToken, cfg.Pprof = true, true
		return stack.RunDispatch(ctx, stack.Options{Config: cfg, Logger: quiet, Ready: ready})
	})
	relay := process(t, "relay", func(ctx context.Context, ready func(stack.Addrs)) error {
		return stack.RunRelay(ctx, stack.Options{Config: cfgOf(), Logger: quiet, Only: []string{co.Company.ID}, Ready: ready})
	})
	for _, a := range []stack.Addrs{serve, dsp, relay} {
		if a.Metrics == "" {
			t.Fatalf("no metrics listener: %+v", a)
		}
	}
	scrapeDispatch := func() testkit.Scrape { return testkit.ScrapeMetrics(t, "http://"+dsp.Metrics+"/metrics", token) }
	if r := call(t, "GET", "http://"+dsp.Metrics+"/metrics", "", nil); r.status != 401 || !strings.Contains(r.body, `"api_key_invalid"`) {
		t.Fatalf("the dispatcher's /metrics without the token: %d %s", r.status, r.body)
	}
	if r := call(t, "GET", "http://"+dsp.Metrics+"/elsewhere", token, nil); r.status != 404 {
		t.Fatalf("the metrics listener serves more than /metrics: %d", r.status)
	}
	// OFICINA_PPROF adds Go's profiles, behind the same token.
	if r := call(t, "GET", "http://"+dsp.Metrics+"/debug/pprof/", "", nil); r.status != 401 {
		t.Fatalf("the dispatcher's profiles without the token: %d", r.status)
	}
	if r := call(t, "GET", "http://"+dsp.Metrics+"/debug/pprof/", token, nil); r.status != 200 || !strings.Contains(r.body, "goroutine") {
		t.Fatalf("the dispatcher's profiles with the token: %d %.200s", r.status, r.body)
	}
	if r := call(t, "GET", "http://"+relay.Metrics+"/debug/pprof/", "", nil); r.status != 404 {
		t.Fatalf("profiles served without OFICINA_PPROF: %d", r.status)
	}

	pub := "http://" + serve.Public + "/public/v1"
	for _, path := range []string{"/arrives", "/refuses"} {
		if r := call(t, "POST", pub+"/webhook_endpoints", key, map[string]any{"url": recv.URL + path, "events": []string{"client.created"}}); r.status != 201 {
			t.Fatalf("endpoint %s: %d %s", path, r.status, r.body)
		}
	}
	lead := map[string]any{"name": "Ana", "email": "ana@example.com", "task": nil}
	for i := range 2 { // the second is a replay
		r := callWith(t, "POST", pub+"/leads", key, lead, map[string]string{"Idempotency-Key": "metrics-lead"})
		if r.status != 201 || (i == 1) != (r.header.Get("Idempotent-Replayed") == "true") {
			t.Fatalf("lead %d: %d %v %s", i, r.status, r.header, r.body)
		}
	}
	testkit.Eventually(t, "an attempt that succeeded and one that failed", func() bool {
		s := scrapeDispatch()
		ok, _ := s.Value("oficina_webhook_attempts_total", "outcome", "succeeded", "status_class", "2xx")
		failed, _ := s.Value("oficina_webhook_attempts_total", "outcome", "failed_status", "status_class", "5xx")
		return ok >= 1 && failed >= 1
	})
	testkit.Eventually(t, "the dispatcher to own every partition", func() bool {
		n, _ := scrapeDispatch().Value("oficina_dispatch_partitions_owned")
		return n == 16
	})

	// An event whose publish never happened (a crash after commit): it
	// waits in the outbox until the relay publishes it.
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := streams.Record(ctx, &streams.Write{Tx: tx, CompanyID: co.Company.ID, Actor: streams.Actor{Kind: streams.ActorAPI}, At: time.Now()},
			streams.Change{Type: "client.created", Object: map[string]any{"object": "client", "id": "cli_unpublished"}})
		return err
	})
	rs := testkit.ScrapeMetrics(t, "http://"+relay.Metrics+"/metrics", "")
	if n, _ := rs.Value("oficina_outbox_unpublished", "kind", "event"); n < 1 {
		t.Errorf("outbox: %v unpublished events, want the one just recorded", n)
	}
	if n, _ := rs.Value("oficina_outbox_unpublished", "kind", "delivery"); n < 2 {
		t.Errorf("outbox: %v unpublished deliveries, want its two", n)
	}
	co.AgeBacklog(t, time.Minute)
	if !testkit.Poll(time.Minute, 10*time.Millisecond, func() bool {
		n, _ := testkit.ScrapeMetrics(t, "http://"+relay.Metrics+"/metrics", "").Value("oficina_relay_published_total")
		return n >= 3
	}) {
		// What the relay had to publish, for whoever reads a failure.
		t.Fatalf("the relay published nothing within a minute; the company's backlog %v at %v", co.Backlog(t), time.Now())
	}

	ds := scrapeDispatch()
	testkit.LintMetrics(t, "dispatch", ds.Text)
	hasSeries(t, "dispatch", ds, slices.Concat(dispatchSeries, everyProcess), apiSeries, relaySeries)
	if n, _ := ds.Value("oficina_webhook_attempt_duration_seconds"); n < 2 {
		t.Errorf("attempt durations: %v, want 2 or more", n)
	}
	if n, _ := ds.Value("oficina_webhook_delivery_latency_seconds"); n < 1 {
		t.Errorf("commit to receiver latencies: %v, want 1 or more", n)
	}
	if n, _ := ds.Value("oficina_dispatch_partitions"); n != 16 {
		t.Errorf("partitions: %v", n)
	}
	for _, series := range []string{"oficina_dispatch_pending_messages", "oficina_dispatch_ack_pending_messages"} {
		if got := len(ds.Families[series].GetMetric()); got != 16 {
			t.Errorf("%s: %d partitions, want the 16 owned", series, got)
		}
	}
	if _, ok := ds.Value("go_sql_open_connections", "db_name", "worker"); !ok {
		t.Error("dispatch: no worker pool statistics")
	}

	rs = testkit.ScrapeMetrics(t, "http://"+relay.Metrics+"/metrics", "")
	testkit.LintMetrics(t, "relay", rs.Text)
	hasSeries(t, "relay", rs, slices.Concat(relaySeries, everyProcess), apiSeries, dispatchSeries)
	if n, _ := rs.Value("oficina_relay_runs_total", "result", "ok"); n < 1 {
		t.Errorf("relay runs: %v", n)
	}

	for _, url := range []string{"http://" + serve.Admin + "/metrics", "http://" + serve.Metrics + "/metrics"} {
		ss := testkit.ScrapeMetrics(t, url, "")
		testkit.LintMetrics(t, "serve "+url, ss.Text)
		hasSeries(t, "serve", ss, slices.Concat(apiSeries, relaySeries, everyProcess), dispatchSeries)
		if n, _ := ss.Value("oficina_idempotency_replays_total"); n != 1 {
			t.Errorf("serve: %v replays, want 1", n)
		}
		if n, _ := ss.Value("oficina_publish_after_commit_failures_total", "reason", "disconnected"); n != 0 {
			t.Errorf("serve: %v publish failures with NATS up", n)
		}
		for _, pool := range []string{"app", "worker"} {
			if _, ok := ss.Value("go_sql_open_connections", "db_name", pool); !ok {
				t.Errorf("serve: no statistics of the %s pool", pool)
			}
		}
	}
}
