package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"oficina/dispatch/lease"
	"oficina/streams/jsconfig"
)

// deliveryRow is what the check needs of a webhook_deliveries row.
type deliveryRow struct {
	id, company, event, status string
	attempts                   int
	err                        string
	published                  bool
	created                    time.Time
	// Its object and place, to an ordered endpoint ("" and 0 otherwise).
	orderKey string
	orderSeq int64
}

// readDeliveries reads every delivery of the run's database as its owner
// (a superuser: row-level security does not hide other companies' rows).
func readDeliveries(ctx context.Context, ownerURL string) ([]deliveryRow, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, ownerURL)
	if err != nil {
		return nil, fmt.Errorf("check: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// published: not waiting in the backlog for the relay (decision 0029).
	rows, err := conn.Query(cctx, `SELECT id, company_id, event_id, status, attempt_count, coalesce(error, ''),
		NOT EXISTS (SELECT 1 FROM publish_backlog b WHERE b.company_id = d.company_id AND b.id = d.id), created_at,
		coalesce(order_key, ''), coalesce(order_seq, 0)
		FROM webhook_deliveries d ORDER BY created_at`)
	if err != nil {
		return nil, fmt.Errorf("check: deliveries: %w", err)
	}
	var out []deliveryRow
	for rows.Next() {
		var d deliveryRow
		if err := rows.Scan(&d.id, &d.company, &d.event, &d.status, &d.attempts, &d.err, &d.published, &d.created, &d.orderKey, &d.orderSeq); err != nil {
			return nil, fmt.Errorf("check: deliveries: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// diagnose describes the JetStream side when deliveries are missing: the
// partition consumers and the dispatchers' lease bucket.
func (r *run) diagnose(ctx context.Context) []string {
	nc, err := nats.Connect(r.nats.url(), nats.Timeout(5*time.Second))
	if err != nil {
		return []string{"diagnose: " + err.Error()}
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return []string{"diagnose: " + err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var out []string
	s, err := js.Stream(ctx, jsconfig.DeliveriesStream)
	if err != nil {
		return []string{"diagnose: stream DELIVERIES: " + err.Error()}
	}
	out = append(out, fmt.Sprintf("DELIVERIES: %d messages", s.CachedInfo().State.Msgs))
	for ci := range s.ListConsumers(ctx).Info() {
		out = append(out, fmt.Sprintf("consumer %s: pending %d, ack pending %d, redelivered %d, waiting pulls %d",
			ci.Name, ci.NumPending, ci.NumAckPending, ci.NumRedelivered, ci.NumWaiting))
	}
	kv, err := js.KeyValue(ctx, lease.Bucket)
	if err != nil {
		return append(out, "lease bucket "+lease.Bucket+": "+err.Error())
	}
	keys, err := kv.Keys(ctx)
	out = append(out, fmt.Sprintf("lease bucket %s keys: %v %v", lease.Bucket, keys, err))
	return out
}
