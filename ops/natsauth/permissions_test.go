package natsauth_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"oficina/dispatch"
	"oficina/dispatch/lease"
	"oficina/ops/natsauth"
	"oficina/ops/testkit"
	"oficina/streams/jsconfig"
	"oficina/tenant"
)

// The ready configuration in docs/nats/oficina.conf is what ops/natsauth
// renders: change the source (and go generate), never the file alone.
func TestDocumentedConfigurationIsRenderedFromTheSource(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/nats/oficina.conf")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != natsauth.Render(nil) {
		t.Fatal("docs/nats/oficina.conf differs from ops/natsauth: run go generate ./ops/natsauth")
	}
}

// The api user (oficina serve) brings up the streams and its rate-limit
// bucket, publishes events and deliveries, uses the bucket and the
// invalidation subject.
func TestAPIUserPublishesEventsAndDeliveriesAndUsesItsBucket(t *testing.T) {
	t.Parallel()
	ns := testkit.NATSWithUsers(t)
	api := connect(t, ns, natsauth.API)
	setUp(t, api)
	api.publish(t, "oficina.events.co_1.sale.paid", `{}`)
	api.publish(t, "oficina.deliveries.co_1.we_1", `{}`)

	kv, err := jsconfig.EnsureRateLimit(ctx(t), api.js, jsconfig.Config{})
	if err != nil {
		t.Fatalf("rate-limit bucket: %v (%v)", err, drain(api.errs))
	}
	rev, err := kv.Create(ctx(t), "co_1", []byte("1"))
	if err != nil {
		t.Fatalf("create key: %v", err)
	}
	if _, err := kv.Update(ctx(t), "co_1", []byte("2"), rev); err != nil {
		t.Fatalf("update key: %v", err)
	}
	if e, err := kv.Get(ctx(t), "co_1"); err != nil || string(e.Value()) != "2" {
		t.Fatalf("get key: %v %v", e, err)
	}

	got := make(chan string, 1)
	sub, err := api.nc.Subscribe(tenant.ChangedSubject, func(m *nats.Msg) { got <- string(m.Data) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe() //nolint:errcheck
	if err := api.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := api.nc.Publish(tenant.ChangedSubject, []byte("co_1")); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-got:
		if c != "co_1" {
			t.Fatalf("invalidation carried %q", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("invalidation not received")
	}
}

// The api user may not consume DELIVERIES (that is the dispatchers'), nor
// read EVENTS, nor delete or purge anything, nor schedule retries.
func TestAPIUserCannotConsumeDeliveries(t *testing.T) {
	t.Parallel()
	ns := testkit.NATSWithUsers(t)
	api := connect(t, ns, natsauth.API)
	setUp(t, api)
	api.denied(t, "$JS.API.CONSUMER.CREATE.DELIVERIES.dispatch_p0.oficina.dlv.0.>", func(c context.Context) error {
		_, err := api.js.CreateOrUpdateConsumer(c, jsconfig.DeliveriesStream, jetstream.ConsumerConfig{
			Durable: dispatch.ConsumerName(0), FilterSubject: jsconfig.PartitionFilter(0), AckPolicy: jetstream.AckExplicitPolicy})
		return err
	})
	api.denied(t, "$JS.API.CONSUMER.MSG.NEXT.DELIVERIES.dispatch_p0", func(c context.Context) error {
		return api.nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT.DELIVERIES.dispatch_p0", "_INBOX.api.x", []byte(`{"batch":1}`))
	})
	api.denied(t, "$JS.API.STREAM.PURGE.DELIVERIES", func(c context.Context) error {
		return purge(c, api.js, jsconfig.DeliveriesStream)
	})
	api.denied(t, "oficina.dlvsched.co_1.we_1.dl_1", func(c context.Context) error {
		return api.nc.Publish("oficina.dlvsched.co_1.we_1.dl_1", nil)
	})
	api.denied(t, "_INBOX.dispatch.>", func(c context.Context) error {
		_, err := api.nc.SubscribeSync("_INBOX.dispatch.>")
		return err
	})
	api.denied(t, "$JS.API.DIRECT.GET.KV_OFICINA_DISPATCH.$KV.OFICINA_DISPATCH.p.0", func(c context.Context) error {
		return api.nc.PublishRequest("$JS.API.DIRECT.GET.KV_OFICINA_DISPATCH.$KV.OFICINA_DISPATCH.p.0", "_INBOX.api.x", nil)
	})
}

func purge(c context.Context, js jetstream.JetStream, name string) error {
	s, err := js.Stream(c, name)
	if err != nil {
		return err
	}
	return s.Purge(c)
}

// An internal consumer reads every company's events and nothing else: it
// cannot publish into oficina.events.>, delete or purge EVENTS, delete the
// stream, or read another user's replies.
func TestConsumerUserCannotPublishDeleteOrPurgeEvents(t *testing.T) {
	t.Parallel()
	ns := testkit.NATSWithUsers(t)
	api := connect(t, ns, natsauth.API)
	setUp(t, api)
	ack := api.publish(t, "oficina.events.co_1.sale.paid", `{}`)
	api.publish(t, "oficina.events.co_2.sale.paid", `{}`)

	cons := connect(t, ns, natsauth.Consumer)
	if got := cons.read(t, "oficina.events.>", 2); len(got) != 2 {
		t.Fatalf("consumer read %v, want both companies' events", got)
	}
	cons.denied(t, "oficina.events.co_1.sale.paid", func(c context.Context) error {
		_, err := cons.js.Publish(c, "oficina.events.co_1.sale.paid", []byte(`{"forged":true}`))
		return err
	})
	cons.denied(t, "oficina.events.co_2.client.created", func(context.Context) error {
		return cons.nc.Publish("oficina.events.co_2.client.created", []byte(`{"forged":true}`))
	})
	cons.denied(t, "$JS.API.STREAM.MSG.DELETE.EVENTS", func(c context.Context) error {
		return cons.nc.PublishRequest("$JS.API.STREAM.MSG.DELETE.EVENTS", "_INBOX.consumer.x", []byte(`{"seq":1}`))
	})
	cons.denied(t, "$JS.API.STREAM.PURGE.EVENTS", func(c context.Context) error {
		return cons.nc.PublishRequest("$JS.API.STREAM.PURGE.EVENTS", "_INBOX.consumer.x", nil)
	})
	cons.denied(t, "$JS.API.STREAM.DELETE.EVENTS", func(c context.Context) error {
		return cons.js.DeleteStream(c, jsconfig.EventsStream)
	})
	cons.denied(t, "oficina.deliveries.co_1.we_1", func(context.Context) error {
		return cons.nc.Publish("oficina.deliveries.co_1.we_1", nil)
	})
	cons.denied(t, "_INBOX.dispatch.>", func(context.Context) error {
		_, err := cons.nc.SubscribeSync("_INBOX.dispatch.>")
		return err
	})
	if info, err := api.js.Stream(ctx(t), jsconfig.EventsStream); err != nil || info.CachedInfo().State.Msgs != 2 ||
		info.CachedInfo().State.FirstSeq != ack.Sequence {
		t.Fatalf("EVENTS after the attempts: %+v %v", info.CachedInfo().State, err)
	}
}

// A consumer scoped to one company reads that company's events only:
// a consumer or a subscription on another company's subjects is refused.
func TestScopedConsumerReadsOnlyItsCompany(t *testing.T) {
	t.Parallel()
	ns := testkit.NATSWithUsers(t)
	api := connect(t, ns, natsauth.API)
	setUp(t, api)
	api.publish(t, "oficina.events.co_EXAMPLE.sale.paid", `{}`)
	api.publish(t, "oficina.events.co_OTHER.sale.paid", `{}`)

	scoped := connect(t, ns, natsauth.Consumer+"_co_EXAMPLE")
	if got := scoped.read(t, "oficina.events.co_EXAMPLE.>", 1); !slices.Equal(got, []string{"oficina.events.co_EXAMPLE.sale.paid"}) {
		t.Fatalf("scoped consumer read %v", got)
	}
	scoped.denied(t, "$JS.API.CONSUMER.CREATE.EVENTS.peek.oficina.events.co_OTHER.>", func(c context.Context) error {
		_, err := scoped.js.CreateConsumer(c, jsconfig.EventsStream, jetstream.ConsumerConfig{Name: "peek", FilterSubject: "oficina.events.co_OTHER.>"})
		return err
	})
	scoped.denied(t, "$JS.API.CONSUMER.CREATE.EVENTS.peek.oficina.events.>", func(c context.Context) error {
		_, err := scoped.js.CreateConsumer(c, jsconfig.EventsStream, jetstream.ConsumerConfig{Name: "peek", FilterSubject: "oficina.events.>"})
		return err
	})
	scoped.denied(t, "$JS.API.CONSUMER.CREATE.EVENTS.peek", func(c context.Context) error {
		_, err := scoped.js.CreateConsumer(c, jsconfig.EventsStream, jetstream.ConsumerConfig{Name: "peek",
			FilterSubjects: []string{"oficina.events.co_EXAMPLE.>", "oficina.events.co_OTHER.>"}})
		return err
	})
	scoped.denied(t, "oficina.events.co_OTHER.>", func(context.Context) error {
		_, err := scoped.nc.SubscribeSync("oficina.events.co_OTHER.>")
		return err
	})
	scoped.denied(t, "_INBOX.consumer.co_OTHER.>", func(context.Context) error {
		_, err := scoped.nc.SubscribeSync("_INBOX.consumer.co_OTHER.>")
		return err
	})
}

// The dispatch user consumes its partitions, acks, schedules retries and
// shares the leases; it cannot publish events nor change the streams.
func TestDispatchUserConsumesDeliveries(t *testing.T) {
	t.Parallel()
	ns := testkit.NATSWithUsers(t)
	api := connect(t, ns, natsauth.API)
	setUp(t, api)
	api.publish(t, "oficina.deliveries.co_1.we_1", `{"n":1}`)

	d := connect(t, ns, natsauth.Dispatch)
	p := jsconfig.PartitionOf("co_1", 4)
	cons, err := d.js.CreateOrUpdateConsumer(ctx(t), jsconfig.DeliveriesStream, jetstream.ConsumerConfig{
		Durable: dispatch.ConsumerName(p), FilterSubject: jsconfig.PartitionFilter(p), AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatalf("partition consumer: %v", err)
	}
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for m := range batch.Messages() {
		n++
		if err := m.InProgress(); err != nil {
			t.Fatalf("in progress: %v", err)
		}
		retry, err := jsconfig.RetryMsg("co_1", "we_1", "dl_1", time.Now().Add(time.Hour), m.Headers(), m.Data())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.js.PublishMsg(ctx(t), retry); err != nil {
			t.Fatalf("schedule a retry: %v", err)
		}
		if err := m.DoubleAck(ctx(t)); err != nil {
			t.Fatalf("ack: %v", err)
		}
	}
	if n != 1 || batch.Error() != nil {
		t.Fatalf("fetched %d deliveries (%v)", n, batch.Error())
	}

	kv, err := lease.EnsureBucket(ctx(t), d.js, 10*time.Second, 1)
	if err != nil {
		t.Fatalf("lease bucket: %v (%v)", err, drain(d.errs))
	}
	if _, err := kv.Create(ctx(t), "m.dsp_a", []byte("now")); err != nil {
		t.Fatalf("member key: %v", err)
	}
	keys, err := kv.ListKeysFiltered(ctx(t), "m.*")
	if err != nil {
		t.Fatalf("list members: %v", err)
	}
	var members []string
	for k := range keys.Keys() {
		members = append(members, k)
	}
	if !slices.Equal(members, []string{"m.dsp_a"}) {
		t.Fatalf("members %v", members)
	}

	d.denied(t, "oficina.events.co_1.sale.paid", func(c context.Context) error {
		return d.nc.Publish("oficina.events.co_1.sale.paid", nil)
	})
	d.denied(t, "$JS.API.STREAM.UPDATE.EVENTS", func(c context.Context) error {
		return jsconfig.Ensure(c, d.js, jsconfig.Config{Partitions: 4})
	})
	d.denied(t, "$JS.API.STREAM.PURGE.DELIVERIES", func(c context.Context) error {
		return purge(c, d.js, jsconfig.DeliveriesStream)
	})
	// It reads its own bucket only: not the API's rate-limit windows.
	if _, err := jsconfig.EnsureRateLimit(ctx(t), api.js, jsconfig.Config{}); err != nil {
		t.Fatal(err)
	}
	d.denied(t, "$JS.API.DIRECT.GET.KV_OFICINA_RATELIMIT.$KV.OFICINA_RATELIMIT.co_1", func(c context.Context) error {
		return d.nc.PublishRequest("$JS.API.DIRECT.GET.KV_OFICINA_RATELIMIT.$KV.OFICINA_RATELIMIT.co_1", "_INBOX.dispatch.x", nil)
	})
}

// The relay user republishes events and deliveries and does nothing else.
func TestRelayUserOnlyPublishes(t *testing.T) {
	t.Parallel()
	ns := testkit.NATSWithUsers(t)
	api := connect(t, ns, natsauth.API)
	setUp(t, api)
	r := connect(t, ns, natsauth.Relay)
	if err := jsconfig.Await(ctx(t), r.js, nil, jsconfig.EventsStream, jsconfig.DeliveriesStream); err != nil {
		t.Fatalf("relay: streams: %v", err)
	}
	r.publish(t, "oficina.events.co_1.sale.paid", `{}`)
	r.publish(t, "oficina.deliveries.co_1.we_1", `{}`)
	r.denied(t, "$JS.API.CONSUMER.CREATE.EVENTS.peek.oficina.events.>", func(c context.Context) error {
		_, err := r.js.CreateConsumer(c, jsconfig.EventsStream, jetstream.ConsumerConfig{Name: "peek", FilterSubject: "oficina.events.>"})
		return err
	})
	r.denied(t, "oficina.dlvsched.co_1.we_1.dl_1", func(context.Context) error {
		return r.nc.Publish("oficina.dlvsched.co_1.we_1.dl_1", nil)
	})
}

// Issue 23 item 6, docs/events.md's `nats` lines: the read-only consumer
// user reads a durable consumer an operator created as admin (`nats
// consumer next` fetches, acks and reads the consumer's info), and in code
// creates its own (the Go example); it may not read the stream's
// information, which `nats consumer add` and `nats stream view` ask for
// first — a company-scoped user would learn the other companies' subjects
// from it — so with the CLI the admin creates the consumer.
func TestConsumerUserReadsADurableConsumerTheAdminCreated(t *testing.T) {
	t.Parallel()
	ns := testkit.NATSWithUsers(t)
	api := connect(t, ns, natsauth.API)
	setUp(t, api)
	api.publish(t, "oficina.events.co_1.sale.paid", `{"n":1}`)

	admin := connect(t, ns, natsauth.Admin)
	if _, err := admin.js.CreateOrUpdateConsumer(ctx(t), jsconfig.EventsStream, jetstream.ConsumerConfig{Durable: "reports",
		FilterSubject: "oficina.events.*.sale.paid", DeliverPolicy: jetstream.DeliverAllPolicy, AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatalf("admin: consumer add: %v", err)
	}
	cons := connect(t, ns, natsauth.Consumer)
	reports, err := cons.js.Consumer(ctx(t), jsconfig.EventsStream, "reports")
	if err != nil {
		t.Fatalf("consumer: the admin's consumer: %v (%v)", err, drain(cons.errs))
	}
	batch, err := reports.Fetch(1, jetstream.FetchMaxWait(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for m := range batch.Messages() {
		n++
		if err := m.DoubleAck(ctx(t)); err != nil {
			t.Fatalf("consumer: ack: %v", err)
		}
	}
	if n != 1 || batch.Error() != nil {
		t.Fatalf("consumer: fetched %d events (%v; refused %v)", n, batch.Error(), drain(cons.errs))
	}
	if _, err := cons.js.CreateOrUpdateConsumer(ctx(t), jsconfig.EventsStream, jetstream.ConsumerConfig{Durable: "own",
		FilterSubject: "oficina.events.*.sale.paid", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatalf("consumer: its own durable consumer: %v (%v)", err, drain(cons.errs))
	}
	cons.denied(t, "$JS.API.STREAM.INFO.EVENTS", func(c context.Context) error {
		_, err := cons.js.Stream(c, jsconfig.EventsStream)
		return err
	})
}
