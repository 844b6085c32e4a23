package migrate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"oficina/ops/migrate"
	"oficina/ops/testkit"
	"oficina/schema/ids"
)

// Issue 25 item 4: the migration to the partitioned log carries a
// populated database over. Rows of every kind — events with and without
// deliveries, published or not; deliveries of each kind and status, a
// resend pointing at its original, a recovery's items; attempts with and
// without details — are all there afterwards, each in its day's partition
// (those of the last weeks; older ones wait in the DEFAULT partition for
// retention), readable through the parents as before.
func TestThePartitionedLogMigrationCarriesEveryRowOver(t *testing.T) {
	t.Parallel()
	const before = "20261128000100"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url, owner := testkit.ScratchDBBefore(t, "log_upgrade", before)

	now := time.Now().UTC()
	days := []time.Duration{0, 3 * 24 * time.Hour, 10 * 24 * time.Hour, 70 * 24 * time.Hour}
	dl := func(age time.Duration, n int) string {
		return ids.NewAt("dlv", now.Add(-age).Add(time.Duration(n)*time.Millisecond))
	}
	seed := []string{
		"INSERT INTO companies (id, name) VALUES ('co_a', 'A')",
		"INSERT INTO members (id, company_id, name, role) VALUES ('mem_a', 'co_a', 'Ana', 'OWNER')",
		`INSERT INTO webhook_endpoints (id, company_id, url, events, sealed_secret, subscriber_member_id)
		 VALUES ('we_a', 'co_a', 'https://hooks.example.com/', '{*}', '\x00', 'mem_a')`,
		`INSERT INTO webhook_recover_tasks (id, company_id, endpoint_id, since, until, counted)
		 VALUES ('wrt_a', 'co_a', 'we_a', now() - interval '80 days', now(), 2)`,
	}
	for i, age := range days {
		at := fmt.Sprintf("'%s'", now.Add(-age).Format(time.RFC3339Nano))
		ev, quiet, orig, resend, ping := fmt.Sprintf("evt_%032x", i+1), fmt.Sprintf("evt_%032x", i+100), dl(age, 0), dl(age, 1), dl(age, 2)
		seed = append(seed,
			// An event with deliveries, published; one nobody subscribed to, not yet published.
			`INSERT INTO event_outbox (id, company_id, type, body, occurred_at, published_at, created_at, has_deliveries)
			 VALUES ('`+ev+`', 'co_a', 'sale.paid', '{"id":"`+ev+`"}', `+at+`, `+at+`, `+at+`, true),
			        ('`+quiet+`', 'co_a', 'client.created', '{}', `+at+`, NULL, `+at+`, false)`,
			// A failed event delivery, its resend (succeeded) and a ping still pending.
			`INSERT INTO webhook_deliveries (id, company_id, endpoint_id, event_id, event_type, kind, resend_of, status,
			   response_status_code, error, attempt_count, last_attempt_at, next_attempt_at, completed_at, published_at, created_at, updated_at)
			 VALUES ('`+orig+`', 'co_a', 'we_a', '`+ev+`', 'sale.paid', 'event', NULL, 'failed', 503, NULL, 2, `+at+`, NULL, `+at+`, `+at+`, `+at+`, `+at+`),
			        ('`+resend+`', 'co_a', 'we_a', '`+ev+`', 'sale.paid', 'resend', '`+orig+`', 'succeeded', 200, NULL, 1, `+at+`, NULL, `+at+`, `+at+`, `+at+`, `+at+`),
			        ('`+ping+`', 'co_a', 'we_a', '`+ev+`', 'ping', 'ping', NULL, 'pending', NULL, 'timeout', 1, `+at+`, `+at+`, NULL, NULL, `+at+`, `+at+`)`,
			// Attempts: two of the original (one with its details), one of the resend.
			`INSERT INTO webhook_attempts (id, company_id, delivery_id, endpoint_id, started_at, finished_at, response_status_code,
			   created_at, request_headers, request_body, response_body, duration_ms, triggered_by)
			 VALUES ('wha_`+orig+`_1', 'co_a', '`+orig+`', 'we_a', `+at+`, `+at+`, 503, `+at+`, NULL, NULL, NULL, NULL, NULL),
			        ('wha_`+orig+`_2', 'co_a', '`+orig+`', 'we_a', `+at+`, `+at+`, 503, `+at+`, '{"webhook-id":["`+ev+`"]}', '{}', 'busy', 12, 'automatic'),
			        ('wha_`+resend+`', 'co_a', '`+resend+`', 'we_a', `+at+`, `+at+`, 200, `+at+`, NULL, NULL, 'ok', 3, 'manual')`,
			`INSERT INTO webhook_recover_items (company_id, task_id, delivery_id, resend_id) VALUES ('co_a', 'wrt_a', '`+orig+`', '`+resend+`')`,
		)
	}
	for _, q := range seed {
		if _, err := owner.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	counts := func() map[string]int {
		out := map[string]int{}
		for _, table := range []string{"event_outbox", "webhook_deliveries", "webhook_attempts", "webhook_recover_items"} {
			var n int
			if err := owner.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
				t.Fatal(err)
			}
			out[table] = n
		}
		return out
	}
	was := counts()

	if _, err := migrate.Run(ctx, url); err != nil {
		t.Fatal(err)
	}
	if got := counts(); fmt.Sprint(got) != fmt.Sprint(was) {
		t.Errorf("rows after the upgrade %v, before %v", got, was)
	}
	for q, want := range map[string]string{
		// Every table is partitioned now, by its day key.
		"SELECT string_agg(relname || ':' || relkind::text, ',' ORDER BY relname) FROM pg_class WHERE relname IN ('event_outbox', 'webhook_deliveries', 'webhook_attempts')": "event_outbox:p,webhook_attempts:p,webhook_deliveries:p",
		// The last weeks' rows are in their days' partitions; the 70-day-old ones wait in the defaults.
		"SELECT count(*)::text FROM event_outbox_default":                                                              "2",
		"SELECT count(*)::text FROM webhook_deliveries_default":                                                        "3",
		"SELECT count(*)::text FROM webhook_attempts_default":                                                          "3",
		fmt.Sprintf("SELECT count(*)::text FROM webhook_deliveries_p%s", now.Add(-10*24*time.Hour).Format("20060102")): "3",
		fmt.Sprintf("SELECT count(*)::text FROM webhook_attempts_p%s", now.Add(-3*24*time.Hour).Format("20060102")):    "3",
		fmt.Sprintf("SELECT count(*)::text FROM event_outbox_p%s", now.Format("20060102")):                             "2",
		// What each row said is kept: a resend still names its original, an attempt its details.
		"SELECT count(*)::text FROM webhook_deliveries r JOIN webhook_deliveries o ON o.id = r.resend_of WHERE r.kind = 'resend' AND o.status = 'failed'":   "4",
		"SELECT count(*)::text FROM webhook_attempts WHERE jsonb_exists(request_headers, 'webhook-id') AND duration_ms = 12 AND triggered_by = 'automatic'": "4",
		// What was not published yet waits in the backlog (decision 0029), and nothing else.
		"SELECT count(*)::text FROM publish_backlog b JOIN event_outbox e ON e.id = b.id WHERE b.kind = 'event' AND NOT e.has_deliveries":          "4",
		"SELECT count(*)::text FROM publish_backlog b JOIN webhook_deliveries d ON d.id = b.id WHERE b.kind = 'delivery' AND d.status = 'pending'": "4",
		"SELECT count(*)::text FROM publish_backlog":                                                           "8",
		"SELECT count(*)::text FROM webhook_recover_items i JOIN webhook_deliveries d ON d.id = i.delivery_id": "4",
		// Row-level security still holds on the parents, owned by the log's own NOLOGIN role.
		"SELECT string_agg(pg_get_userbyid(relowner) || ':' || relforcerowsecurity, ',') FROM pg_class WHERE relname IN ('event_outbox', 'webhook_deliveries', 'webhook_attempts')": "oficina_log_owner:true,oficina_log_owner:true,oficina_log_owner:true",
	} {
		var got string
		if err := owner.QueryRowContext(ctx, q).Scan(&got); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got != want {
			t.Errorf("%s = %s, want %s", q, got, want)
		}
	}
}
