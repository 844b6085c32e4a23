package metrics_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"oficina/dispatch"
	"oficina/ops/metrics"
	"oficina/ops/testkit"
	"oficina/schema/idempotency"
	"oficina/streams"
	"oficina/tenant/ratelimit"
)

// fakeDispatcher owns partitions 1 and 3 of 4.
type fakeDispatcher struct{ err error }

func (fakeDispatcher) Partitions() int { return 4 }
func (fakeDispatcher) Owned() []int    { return []int{1, 3} }
func (f fakeDispatcher) Backlog(context.Context) ([]dispatch.PartitionBacklog, error) {
	if f.err != nil {
		return nil, f.err
	}
	return []dispatch.PartitionBacklog{{Partition: 1, Pending: 7, AckPending: 2}, {Partition: 3}}, nil
}

// every registers every part on a fresh registry (as dev does) and feeds
// its hooks a little work.
func every(t *testing.T, d metrics.Dispatcher) *metrics.Metrics {
	t.Helper()
	m := metrics.New()
	workers := testkit.WorkerDB(t)
	m.WatchPool("app", testkit.DB(t).DB)
	m.WatchPool("worker", workers.DB)
	m.WatchPool("worker", workers.DB) // once only
	obs := m.Dispatch()
	if m.Dispatch() != obs {
		t.Fatal("a second Dispatch is another observer")
	}
	m.WatchDispatcher(d, workers)
	m.WatchOutbox(workers)
	m.WatchOutbox(workers)
	m.WatchMail(workers)
	m.WatchRateLimit(ratelimit.New(ratelimit.NewMemory(), ratelimit.Config{}))
	obs.Attempted(dispatch.Attempt{Outcome: dispatch.OutcomeSucceeded, Status: 204, Duration: 30 * time.Millisecond, SinceRecorded: 2 * time.Second})
	obs.Attempted(dispatch.Attempt{Outcome: dispatch.OutcomeFailedStatus, Status: 503, Duration: 10 * time.Millisecond})
	obs.Attempted(dispatch.Attempt{Outcome: dispatch.OutcomeTimeout, Duration: 10 * time.Second})
	obs.Closed(dispatch.OutcomePlanWithoutAPI)
	obs.GaveUp()
	obs.EndpointDisabled()
	obs.Parked()
	m.RelayRan()(3, nil)
	m.RelayRan()(0, errors.New("nats down"))
	m.PublishFailed()(streams.PublishDisconnected)
	m.RateLimitFallback()(5)
	m.Idempotency()(idempotency.Replayed)
	m.Idempotency()(idempotency.KeyReused)
	m.ObserveRequest("GET /public/v1/me", "GET", 200, time.Millisecond)
	return m
}

func scrape(t *testing.T, m *metrics.Metrics) testkit.Scrape {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	return testkit.ScrapeMetrics(t, srv.URL, "")
}

// Issue 18 item 4: every series follows Prometheus's conventions (what
// `promtool check metrics` checks: 0 problems), and each carries what its
// hook was told, with bounded labels only.
func TestEverySeriesFollowsTheConventionsAndCountsWhatItIsTold(t *testing.T) {
	t.Parallel()
	m := every(t, fakeDispatcher{})
	problems, err := testutil.GatherAndLint(m.Registry)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	s := scrape(t, m)
	testkit.LintMetrics(t, "/metrics", s.Text)

	type series struct {
		name   string
		labels []string
		want   float64 // -1: any value
	}
	for _, tc := range []series{
		{"oficina_webhook_attempts_total", []string{"outcome", "succeeded", "status_class", "2xx"}, 1},
		{"oficina_webhook_attempts_total", []string{"outcome", "failed_status", "status_class", "5xx"}, 1},
		{"oficina_webhook_attempts_total", []string{"outcome", "failed_status", "status_class", "4xx"}, 0},
		{"oficina_webhook_attempts_total", []string{"outcome", "timeout", "status_class", "none"}, 1},
		{"oficina_webhook_attempts_total", []string{"outcome", "plan_without_api", "status_class", "none"}, 1},
		{"oficina_webhook_attempts_total", []string{"outcome", "subscriber_access_lost", "status_class", "none"}, 0},
		{"oficina_webhook_attempt_duration_seconds", nil, 3},
		{"oficina_webhook_delivery_latency_seconds", nil, 1},
		{"oficina_webhook_deliveries_given_up_total", nil, 1},
		{"oficina_webhook_endpoints_disabled_total", nil, 1},
		{"oficina_dispatch_parked_total", nil, 1},
		{"oficina_dispatch_partitions", nil, 4},
		{"oficina_dispatch_partitions_owned", nil, 2},
		{"oficina_dispatch_pending_messages", []string{"partition", "1"}, 7},
		{"oficina_dispatch_ack_pending_messages", []string{"partition", "1"}, 2},
		{"oficina_dispatch_pending_messages", []string{"partition", "3"}, 0},
		{"oficina_webhook_retries_past_due", nil, -1},
		{"oficina_webhook_retries_oldest_past_due_seconds", nil, -1},
		{"oficina_outbox_unpublished", []string{"kind", "event"}, -1},
		{"oficina_outbox_unpublished", []string{"kind", "delivery"}, -1},
		{"oficina_outbox_oldest_unpublished_age_seconds", nil, -1},
		{"oficina_mail_backlog", nil, -1},
		{"oficina_relay_runs_total", []string{"result", "ok"}, 1},
		{"oficina_relay_runs_total", []string{"result", "error"}, 1},
		{"oficina_relay_published_total", nil, 3},
		{"oficina_publish_after_commit_failures_total", []string{"reason", "disconnected"}, 1},
		{"oficina_publish_after_commit_failures_total", []string{"reason", "backpressure"}, 0},
		{"oficina_ratelimit_fallbacks_total", nil, 5},
		{"oficina_ratelimit_processes", nil, 1},
		{"oficina_ratelimit_local", nil, 0},
		{"oficina_idempotency_replays_total", nil, 1},
		{"oficina_idempotency_conflicts_total", []string{"reason", "key_reused"}, 1},
		{"oficina_idempotency_conflicts_total", []string{"reason", "in_progress"}, 0},
		{"oficina_http_requests_total", []string{"route", "GET /public/v1/me", "status", "200"}, 1},
		{"go_sql_open_connections", []string{"db_name", "app"}, -1},
		{"go_sql_in_use_connections", []string{"db_name", "worker"}, -1},
		{"go_sql_idle_connections", []string{"db_name", "worker"}, -1},
		{"go_sql_wait_count_total", []string{"db_name", "worker"}, -1},
		{"go_sql_wait_duration_seconds_total", []string{"db_name", "worker"}, -1},
	} {
		got, ok := s.Value(tc.name, tc.labels...)
		switch {
		case !ok:
			t.Errorf("%s%v missing", tc.name, tc.labels)
		case tc.want >= 0 && got != tc.want:
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		case got < 0:
			t.Errorf("%s%v = %v, negative", tc.name, tc.labels, got)
		}
	}
	// No label names a company, an endpoint or anything else unbounded.
	allowed := []string{"outcome", "status_class", "partition", "kind", "result", "reason", "route", "method", "status", "db_name", "source",
		"version", "quantile"} // the last two: the Go collector's
	for name, f := range s.Families {
		for _, mt := range f.GetMetric() {
			for _, l := range mt.GetLabel() {
				if !slices.Contains(allowed, l.GetName()) {
					t.Errorf("%s has label %s", name, l.GetName())
				}
			}
		}
	}
}

// Issue 18 item 5, "missing data counts as firing": a figure that cannot
// be read at scrape time is left out of the scrape (absent() fires) and
// counted, instead of showing a stale or zero value.
func TestAFigureThatCannotBeReadIsMissingAndCounted(t *testing.T) {
	t.Parallel()
	m := every(t, fakeDispatcher{err: errors.New("jetstream: timeout")})
	for range 2 {
		s := scrape(t, m)
		if _, ok := s.Value("oficina_dispatch_pending_messages"); ok {
			t.Fatal("pending messages shown although JetStream did not answer")
		}
		if _, ok := s.Value("oficina_outbox_unpublished"); !ok {
			t.Fatal("the other figures went missing too")
		}
	}
	s := scrape(t, m)
	// One per scrape; this scrape's own may be counted after the counter
	// was read.
	if n, _ := s.Value("oficina_metrics_read_errors_total", "source", "partitions"); n < 2 || n > 3 {
		t.Errorf("read errors of partitions: %v, want one per scrape", n)
	}
	if n, ok := s.Value("oficina_metrics_read_errors_total", "source", "outbox"); ok && n != 0 {
		t.Errorf("read errors of the outbox: %v", n)
	}
}
