package jsconfig

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"oficina/ops/natsembed"
)

// With R3 streams, losing the DELIVERIES leader neither stops publishes nor
// the partition consumer, and a retry scheduled before the loss still fires
// (the new leader runs the schedule).
func TestR3DeliveriesSurviveNodeLoss(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()

	c, err := natsembed.StartCluster(ctx, 3, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Shutdown)
	nc, err := c.Connect(nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Replicas: 3, Partitions: 4}
	for range 2 { // idempotent in a cluster too
		if err := Ensure(ctx, js, cfg); err != nil {
			t.Fatalf("Ensure R3: %v", err)
		}
	}
	cons := partitionConsumer(t, js, "co_1", cfg.Partitions)

	subj, _ := DeliverySubject("co_1", "ep_1")
	publish := func(id string) {
		t.Helper()
		for { // ride out the leader election after a node stops
			pctx, pcancel := context.WithTimeout(ctx, time.Second)
			_, err := js.Publish(pctx, subj, []byte(id), jetstream.WithMsgID(id))
			pcancel()
			if err == nil {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("publish %s: %v", id, err)
			}
		}
	}
	for i := range 5 {
		publish(fmt.Sprintf("dl_%d", i))
	}
	due := ceilSecond(time.Now().Add(3 * time.Second))
	retry, err := RetryMsg("co_1", "ep_1", "dl_retry", due, nil, []byte("dl_retry"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.PublishMsg(ctx, retry); err != nil {
		t.Fatal(err)
	}

	st, err := js.Stream(ctx, DeliveriesStream)
	if err != nil {
		t.Fatal(err)
	}
	leader := c.NodeIndex(st.CachedInfo().Cluster.Leader)
	if leader < 0 {
		t.Fatalf("unknown leader %q", st.CachedInfo().Cluster.Leader)
	}
	if err := c.Stop(leader); err != nil {
		t.Fatal(err)
	}
	for i := 5; i < 10; i++ {
		publish(fmt.Sprintf("dl_%d", i))
	}

	seen := map[string]bool{}
	deadline := time.Now().Add(15 * time.Second)
	for len(seen) < 11 && time.Now().Before(deadline) {
		batch, err := cons.Fetch(11-len(seen), jetstream.FetchMaxWait(time.Second))
		if err != nil {
			continue // consumer leader may be moving
		}
		for m := range batch.Messages() {
			if err := m.Ack(); err != nil {
				t.Errorf("ack: %v", err)
			}
			seen[string(m.Data())] = true
			if string(m.Data()) == "dl_retry" && time.Now().Before(due) {
				t.Errorf("retry before due time %v", due)
			}
		}
	}
	if len(seen) != 11 || !seen["dl_retry"] {
		t.Fatalf("with node %d down got %d/11 deliveries: %v", leader, len(seen), seen)
	}
}
