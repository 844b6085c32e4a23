package scaleout_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/natsauth"
	"oficina/ops/stack"
	"oficina/ops/testkit"
	"oficina/ops/testkit/hooks"
	"oficina/streams"
	"oficina/tenant"
)

// Issue 15 item 5, the whole system under docs/nats/oficina.conf: serve,
// dispatch and relay each connect as their own NATS user (no other rights)
// and a webhook is delivered end to end — once from the API's publish
// after commit, once from the relay republishing what a crash left
// unpublished — and both deliveries end succeeded in PostgreSQL.
func TestWebhooksDeliveredWithEachProcessAsItsOwnNATSUser(t *testing.T) {
	t.Parallel()
	ns := testkit.NATSWithUsers(t)
	// Every process logs what the server refused it (natsconn's error
	// handler): a missing permission fails the test even where the code
	// would have coped. Info, not Warn: a failed run then shows each
	// webhook attempt's error and the dispatcher's parks and retries.
	warnings := &processLog{}
	log := slog.New(slog.NewTextHandler(warnings, &slog.HandlerOptions{Level: slog.LevelInfo}))
	t.Cleanup(func() {
		for _, l := range warnings.lines() {
			if strings.Contains(l, "ermissions violation") {
				t.Errorf("a process was refused: %s", l)
			}
		}
		if t.Failed() {
			t.Logf("process warnings:\n%s", strings.Join(warnings.lines(), "\n"))
		}
	})
	recv := newReceiver(t)
	co := newCompany(t, tenant.CompanyInput{RateLimitUnlimited: testkit.Ptr(true)})
	base := apiOptions{natsURL: ns.ClientURL(), replicas: 1, caFile: writeCA(t, recv), log: log}

	// serve relays no company of this test: what reaches NATS for co
	// comes from its publish after commit, or from the relay process.
	apiOpts := base
	apiOpts.nats, apiOpts.only = ns.Identity(natsauth.API), []string{"co_of_no_test"}
	api := startAPI(t, apiOpts)

	dspOpts := base
	dspOpts.nats = ns.Identity(natsauth.Dispatch)
	testkit.Background(t, "dispatch", func(ctx context.Context) error {
		return stack.RunDispatch(ctx, stack.Options{Config: processConfig(t, dspOpts), Logger: log})
	})
	relayOpts := base
	relayOpts.nats = ns.Identity(natsauth.Relay)
	testkit.Background(t, "relay", func(ctx context.Context) error {
		return stack.RunRelay(ctx, stack.Options{Config: processConfig(t, relayOpts), Logger: log, Only: []string{co.id}})
	})

	api.newEndpoint(t, co.key, hookURL(recv, co.id, "hook"), "client.created")
	if r, err := api.captureLead(t.Context(), co.key, "users"); err != nil || r.status != 201 {
		t.Fatalf("capture lead: %v %d %s", err, r.status, r.raw)
	}
	if !recv.WaitFor(60*time.Second, func() bool { return recv.Succeeded(time.Time{}, time.Time{}) >= 1 }) {
		t.Fatalf("the API's delivery did not arrive; the log:%s", co.logOf(t))
	}

	// A write whose publish never happened (the process died after
	// commit), a minute old: only the relay can bring it to NATS.
	var recorded []streams.Recorded
	co.tk.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		recorded, err = streams.Record(ctx, &streams.Write{Tx: tx, CompanyID: co.id, Actor: streams.Actor{Kind: streams.ActorAPI}, At: time.Now()},
			streams.Change{Type: "client.created", Object: map[string]any{"object": "client", "id": "cli_relayed"}})
		return err
	})
	if len(recorded) != 1 || len(recorded[0].Deliveries) != 1 {
		t.Fatalf("recorded %+v", recorded)
	}
	co.tk.AgeBacklog(t, time.Minute)
	ids := map[string]bool{recorded[0].ID: true, recorded[0].Deliveries[0].ID: true}
	if !recv.WaitFor(60*time.Second, func() bool {
		return slices.ContainsFunc(recv.Arrivals(), func(a hooks.Arrival) bool { return ids[a.WebhookID] })
	}) {
		t.Fatalf("the relayed delivery did not arrive; the log:%s", co.logOf(t))
	}

	// The result is recorded after the receiver answered.
	if !eventually(30*time.Second, func() bool {
		ds := co.deliveries(t)
		return len(ds) == 2 && !slices.ContainsFunc(ds, func(d streams.Delivery) bool { return d.Status != streams.StatusSucceeded })
	}) {
		t.Fatalf("want 2 deliveries succeeded; the log:%s", co.logOf(t))
	}
}
