package streams_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

func allow([]string) error { return nil }

// endpoint registers an endpoint subscribed to events (disabled when asked).
func endpoint(t testing.TB, co *testkit.Company, enabled bool, events ...string) *webhooks.Row {
	t.Helper()
	var e *webhooks.Row
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		e, err = webhooks.Create(ctx, tx, co.Company.ID, webhooks.WebhookEndpointCreate{URL: "https://hooks.example.com/in", Events: toNames(events)},
			webhooks.Subscriber{MemberID: co.Owner.ID}, allow, testkit.AnyURL{}, testkit.Keyring(t), time.Now())
		if err == nil && !enabled {
			// As the dashboard leaves it, without its event: these tests
			// count the events of their own writes.
			e.Status = webhooks.StatusDisabled
			_, err = tx.NewUpdate().Model(e).Column("status").WherePK().Exec(ctx)
		}
		return err
	})
	return e
}

// write is a write of co now by kind, in no transaction yet (record
// gives it one).
func write(co *testkit.Company, kind streams.ActorKind) *streams.Write {
	return writeIn(bun.Tx{}, co, kind)
}

// writeIn is a write of co now by kind in tx.
func writeIn(tx bun.Tx, co *testkit.Company, kind streams.ActorKind) *streams.Write {
	return &streams.Write{Tx: tx, CompanyID: co.Company.ID, Actor: streams.Actor{Kind: kind}, At: time.Now()}
}

// record runs streams.Record in its own company transaction.
func record(t testing.TB, co *testkit.Company, w *streams.Write, changes ...streams.Change) []streams.Recorded {
	t.Helper()
	var out []streams.Recorded
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		w.Tx = tx
		out, err = streams.Record(ctx, w, changes...)
		return err
	})
	return out
}

// running starts pub's heartbeat for the test and waits until it vouches
// for writes.
func running(t testing.TB, pub *streams.Publisher) *streams.Publisher {
	t.Helper()
	testkit.Background(t, "publisher", pub.Run)
	testkit.Eventually(t, "the publisher to vouch for writes", pub.Vouching)
	return pub
}

// tracked records changes in an API write unit of co that pub publishes
// after commit.
func tracked(t testing.TB, co *testkit.Company, pub streams.AfterCommitter, changes ...streams.Change) []streams.Recorded {
	t.Helper()
	var out []streams.Recorded
	wr := streams.Writer{DB: co.DB, Publisher: pub}
	err := wr.Run(context.Background(), streams.Unit{CompanyID: co.Company.ID, Actor: streams.Actor{Kind: streams.ActorAPI}},
		func(ctx context.Context, w *streams.Write) error {
			var err error
			out, err = streams.Record(ctx, w, changes...)
			return err
		})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// outbox is the company's event_outbox, oldest first.
func outbox(t testing.TB, co *testkit.Company) []streams.OutboxEvent {
	t.Helper()
	var evs []streams.OutboxEvent
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model(&evs).Order("created_at", "id").Scan(ctx)
	})
	return evs
}

// deliveries are the company's delivery rows.
func deliveries(t testing.TB, co *testkit.Company) []streams.Delivery {
	t.Helper()
	var ds []streams.Delivery
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model(&ds).Order("id").Scan(ctx)
	})
	return ds
}

// body decodes an envelope.
func body(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("envelope: %v: %s", err, raw)
	}
	return m
}

// stored counts the messages a stream holds per subject under filter.
func stored(t testing.TB, js jetstream.JetStream, stream, filter string) map[string]uint64 {
	t.Helper()
	s, err := js.Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background(), jetstream.WithSubjectFilter(filter))
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Subjects == nil {
		return map[string]uint64{}
	}
	return info.State.Subjects
}

func newCompany(t testing.TB) *testkit.Company {
	t.Helper()
	return testkit.NewCompany(t, tenant.CompanyInput{})
}

// sale is a GET-shaped object.
type sale struct {
	Object    string `json:"object"`
	ID        string `json:"id"`
	Status    string `json:"status"`
	Notes     string `json:"notes"`
	Total     int64  `json:"total_cents"`
	UpdatedAt string `json:"updated_at"`
}

func newSale(id string) sale {
	return sale{Object: "sale", ID: id, Status: "pending", Notes: "", Total: 1000, UpdatedAt: "2026-01-01T00:00:00Z"}
}

func toNames(ns []string) []webhooks.EventName {
	out := make([]webhooks.EventName, len(ns))
	for i, n := range ns {
		out[i] = webhooks.EventName(n)
	}
	return out
}
