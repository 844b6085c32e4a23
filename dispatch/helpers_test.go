package dispatch_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"

	"oficina/dispatch"
	"oficina/ops/natsembed"
	"oficina/ops/testkit"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/streams/envelope"
	"oficina/streams/jsconfig"
	"oficina/tenant"
)

const testPartitions = 4

// env is an embedded JetStream with Oficina's streams.
type env struct {
	ns *natsembed.Server
	js jetstream.JetStream // the producer's connection
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{ns: testkit.NATS(t)}
	e.js = e.connect(t)
	if err := jsconfig.Ensure(context.Background(), e.js, jsconfig.Config{Partitions: testPartitions}); err != nil {
		t.Fatal(err)
	}
	return e
}

// connect opens a connection of its own (one per dispatcher, so a test
// can cut one dispatcher off like a crash).
func (e *env) connect(t *testing.T) jetstream.JetStream {
	t.Helper()
	nc, err := e.connectNC(t)
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func (e *env) connectNC(t *testing.T) (*nats.Conn, error) {
	nc, err := e.ns.Connect()
	if err == nil {
		t.Cleanup(nc.Close)
	}
	return nc, err
}

// received is one request a receiver got.
type received = testkit.Received

// receiver is the test kit's TLS receiver answering with answer.
func receiver(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, chan received) {
	t.Helper()
	return testkit.Receiver(t, answer)
}

func status(code int) func(http.ResponseWriter, *http.Request) { return testkit.Status(code) }

// guardClient is the destination guard's client allowing loopback and
// trusting the httptest certificate, as DESIGN.md's test settings say.
func guardClient(t *testing.T, srv *httptest.Server, trust bool) *http.Client {
	t.Helper()
	return testkit.GuardClient(t, srv, trust)
}

// start runs a dispatcher with test timings until the test ends.
func (e *env) start(t *testing.T, cfg dispatch.Config) (*dispatch.Dispatcher, context.CancelFunc) {
	t.Helper()
	if cfg.JS == nil {
		cfg.JS = e.connect(t)
	}
	cfg.Partitions = testPartitions
	return testkit.Dispatcher(t, cfg)
}

// newEndpoint registers an endpoint to url for sub, subscribed to "*".
func newEndpoint(t *testing.T, co *testkit.Company, url string, sub webhooks.Subscriber) *webhooks.Row {
	t.Helper()
	var e *webhooks.Row
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		e, err = webhooks.Create(ctx, tx, co.Company.ID, webhooks.WebhookEndpointCreate{URL: url, Events: []webhooks.EventName{"*"}}, sub,
			func([]string) error { return nil }, testkit.AnyURL{}, testkit.Keyring(t), time.Now())
		return err
	})
	return e
}

// enqueue records an event of eventType with one delivery to ep and
// publishes it on DELIVERIES, as the API does after commit.
func (e *env) enqueue(t *testing.T, co *testkit.Company, ep *webhooks.Row, eventType string) streams.DeliveryMessage {
	t.Helper()
	dm := recordDelivery(t, co, ep, eventType)
	e.publish(t, dm)
	return dm
}

// recordDelivery stores an event and its delivery to ep (the write's
// transaction), without publishing.
func recordDelivery(t *testing.T, co *testkit.Company, ep *webhooks.Row, eventType string) streams.DeliveryMessage {
	t.Helper()
	obj, _ := json.Marshal(map[string]string{"object": "sale", "id": "sale_test"})
	ev, body, err := envelope.Build(envelope.Params{Type: eventType, OrganizationID: co.Company.ID, OccurredAt: time.Now(), Object: obj})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	dm := streams.DeliveryMessage{DeliveryID: streams.NewDeliveryID(time.Now()), EndpointID: ep.ID, CompanyID: co.Company.ID,
		EventID: ev.ID, EventType: eventType, Kind: streams.KindEvent, Body: body}
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		row := &streams.OutboxEvent{ID: ev.ID, CompanyID: co.Company.ID, Type: eventType, Body: body, OccurredAt: now,
			HasDeliveries: true, CreatedAt: now}
		if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
			return err
		}
		d := &streams.Delivery{ID: dm.DeliveryID, CompanyID: co.Company.ID, EndpointID: ep.ID, EventID: ev.ID,
			EventType: eventType, Kind: streams.KindEvent, Status: streams.StatusPending,
			CreatedAt: now, UpdatedAt: now}
		_, err := tx.NewInsert().Model(d).Exec(ctx)
		return err
	})
	return dm
}

// publish puts dm on DELIVERIES.
func (e *env) publish(t *testing.T, dm streams.DeliveryMessage) {
	t.Helper()
	m, err := dm.Msg()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}

func delivery(t *testing.T, co *testkit.Company, id string) streams.Delivery {
	t.Helper()
	var d streams.Delivery
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model(&d).Where("id = ?", id).Scan(ctx)
	})
	return d
}

func attempts(t *testing.T, co *testkit.Company, id string) []streams.Attempt {
	t.Helper()
	var as []streams.Attempt
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model(&as).Where("delivery_id = ?", id).Order("started_at", "created_at").Scan(ctx)
	})
	return as
}

func endpointRow(t *testing.T, co *testkit.Company, id string) webhooks.Row {
	t.Helper()
	var e webhooks.Row
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model(&e).Where("id = ?", id).Scan(ctx)
	})
	return e
}

// waitStatus waits until the delivery leaves pending (or reaches want) and
// returns it. The dispatcher records after the receiver answered, so the
// receiver's signal alone does not mean the row is written.
func waitStatus(t *testing.T, co *testkit.Company, id, want string) streams.Delivery {
	t.Helper()
	return waitFor(t, co, id, func(d streams.Delivery) bool { return d.Status == want })
}

func waitFor(t *testing.T, co *testkit.Company, id string, ok func(streams.Delivery) bool) streams.Delivery {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		d := delivery(t, co, id)
		if ok(d) {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery %s: still %s after %d attempts (error %v, code %v)", id, d.Status, d.AttemptCount, ptrStr(d.Error), d.ResponseStatusCode)
		}
		<-tick.C
	}
}

func ptrStr(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// next waits for the receiver's next request.
func next(t *testing.T, got chan received) received {
	t.Helper()
	select {
	case r := <-got:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("receiver got nothing")
		return received{}
	}
}

// company is a test company with a manager that has an e-mail address.
func company(t *testing.T, plan tenant.Plan) *testkit.Company {
	t.Helper()
	co := testkit.NewCompany(t, tenant.CompanyInput{Plan: testkit.Ptr(plan)})
	co.Member(t, tenant.MemberInput{Name: testkit.Ptr("Admin"), Email: testkit.Ptr("admin@example.com"), Role: testkit.Ptr(tenant.RoleAdmin)})
	return co
}
