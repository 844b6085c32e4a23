package tenant_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"oficina/ops/testkit"
	"oficina/tenant"
)

// Issue 15 item 6: a dashboard change made while NATS is down does not wait
// on NATS nor fail after its commit: it applies here at once and elsewhere
// when cached principals expire.
func TestAccessChangeWhileNATSIsDownDoesNotWait(t *testing.T) {
	t.Parallel()
	ns := testkit.NATS(t)
	nc, err := nats.Connect(ns.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	bus, err := tenant.NewBus(tenant.NewAuthenticator(testkit.DB(t), tenant.AuthConfig{}), nc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.Close)
	ns.Shutdown()
	testkit.Eventually(t, "the client to see NATS gone", func() bool { return !nc.IsConnected() })
	// No deadline: a flush through the reconnect buffer would wait for
	// NATS to come back (5 s), then fail the request.
	if err := bus.Changed(context.Background(), "co_anything"); err != nil {
		t.Fatalf("change while NATS is down: %v", err)
	}
}
