package bench

import (
	"context"
	"fmt"
	"time"

	"oficina/streams"
)

// RetentionSizes are the days of deliveries whose drop is timed: the
// figure must not grow with the rows (issue 25).
var RetentionSizes = []int{10_000, 1_000_000}

// Retention fills one past day of the log with n deliveries (each with its
// event and one attempt) for each of RetentionSizes, then times the
// sweeper's call that drops it (streams.KeepLog, its retention ending with that day):
// retention_drop_ms for the largest size, retention_drop_ms_<n> for each.
// The rows are written straight into the day's partition as the database
// owner, far quicker than through the API; what is timed is the drop only.
func Retention(ctx context.Context, env *Env, f *Feed, logf func(string, ...any), report func(Figure)) error {
	ts, err := env.targets(ctx, f, "bench retention", 1, "/retention", "")
	if err != nil {
		return err
	}
	t := ts[0]
	for i, n := range RetentionSizes {
		// A past day, a different one per size, its partitions made as the
		// sweeper would have made them then. It is within the stack's
		// retention, so the stack's own sweeper, which runs meanwhile, leaves
		// it to the timed call, whose retention ends right after it (a full
		// run lost the day to the sweeper during the checkpoint).
		day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -20-3*i)
		if _, err := streams.KeepLog(ctx, f.DB, day, 0, 0); err != nil {
			return err
		}
		if err := fillDay(ctx, f, t, day, n); err != nil {
			return err
		}
		// A day past the retention was written a month ago, long since on
		// disk: so is this one before its drop is timed (a superuser's or
		// pg_checkpoint's; without the right the drop also pays the flush).
		if _, err := f.DB.ExecContext(ctx, "CHECKPOINT"); err != nil {
			logf("bench: retention: no checkpoint before the drop: %v", err)
		}
		start := time.Now()
		now := time.Now()
		up, err := streams.KeepLog(ctx, f.DB, now, streams.DefaultPartitionsAhead, now.Sub(day.AddDate(0, 0, 1)))
		if err != nil {
			return err
		}
		ms := float64(time.Since(start).Microseconds()) / 1000
		if up.Dropped == 0 {
			return fmt.Errorf("bench: retention: the day of %d deliveries was not dropped", n)
		}
		report(Figure{Name: fmt.Sprintf("retention_drop_ms_%d", n), Value: ms, Unit: "ms"})
		if i == len(RetentionSizes)-1 {
			report(Figure{Name: "retention_drop_ms", Value: ms, Unit: "ms"})
		}
	}
	return nil
}

// fillDay writes n deliveries of day, each with its event and an attempt,
// in chunks of one statement per table.
func fillDay(ctx context.Context, f *Feed, t target, day time.Time, n int) error {
	const chunk = 100_000
	step := 24 * time.Hour / time.Duration(n) // spread over the day, so every id falls in it
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		// Ids: the prefix and the millisecond digits of the row's time,
		// then its number as the 16 digits of randomness.
		_, err := f.DB.ExecContext(ctx, `
			WITH r AS (
			  SELECT i, ?::timestamptz + i * ?::interval AS at FROM generate_series(?::int, ?::int - 1) AS i
			), e AS (
			  INSERT INTO event_outbox (id, company_id, type, body, occurred_at, created_at, has_deliveries)
			  SELECT 'evt_' || lpad(to_hex(i), 32, '0'), ?, 'sale.paid', '{"object":"event"}', at, at, true FROM r
			), d AS (
			  INSERT INTO webhook_deliveries (id, company_id, endpoint_id, event_id, event_type, status, attempt_count,
			    last_attempt_at, completed_at, created_at, updated_at)
			  SELECT left(oficina_id_floor('dlv', at), 14) || lpad(i::text, 16, '0'), ?, ?, 'evt_' || lpad(to_hex(i), 32, '0'),
			    'sale.paid', 'succeeded', 1, at, at, at, at FROM r
			)
			INSERT INTO webhook_attempts (id, company_id, delivery_id, endpoint_id, started_at, finished_at, response_status_code, created_at)
			SELECT 'wha_' || i, ?, left(oficina_id_floor('dlv', at), 14) || lpad(i::text, 16, '0'), ?, at, at, 200, at FROM r`,
			day, fmt.Sprintf("%d microseconds", step.Microseconds()), lo, hi, t.company, t.company, t.endpoint, t.company, t.endpoint)
		if err != nil {
			return fmt.Errorf("bench: retention: fill %d deliveries: %w", n, err)
		}
	}
	return nil
}

// LogBytesPerDelivery reports log_bytes_per_delivery: the table and index
// bytes of the log (events, deliveries, attempts, every partition) per
// delivery it holds, read after the sustained run.
func LogBytesPerDelivery(ctx context.Context, f *Feed, report func(Figure)) error {
	var bytes, deliveries float64
	err := f.DB.QueryRowContext(ctx, `
		SELECT (SELECT coalesce(sum(pg_total_relation_size(i.inhrelid)), 0) FROM pg_inherits i
		         WHERE i.inhparent IN ('event_outbox'::regclass, 'webhook_deliveries'::regclass, 'webhook_attempts'::regclass)),
		       (SELECT count(*) FROM webhook_deliveries)`).Scan(&bytes, &deliveries)
	if err != nil {
		return fmt.Errorf("bench: log size: %w", err)
	}
	if deliveries > 0 {
		report(Figure{Name: "log_bytes_per_delivery", Value: bytes / deliveries, Unit: "B"})
	}
	return nil
}
