package natsembed

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestClusterR3StreamSurvivesNodeStop(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()

	c, err := StartCluster(ctx, 3, t.TempDir())
	if err != nil {
		t.Fatalf("StartCluster: %v", err)
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
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "R3", Subjects: []string{"r3.>"}, Replicas: 3})
	if err != nil {
		t.Fatalf("create R3 stream: %v", err)
	}
	publish := func(i int) {
		t.Helper()
		// Publishing right after a node stops may hit the election gap;
		// retry until the new leader answers.
		for {
			pctx, pcancel := context.WithTimeout(ctx, time.Second)
			_, err := js.Publish(pctx, "r3.x", fmt.Appendf(nil, "%d", i), jetstream.WithMsgID(fmt.Sprint(i)))
			pcancel()
			if err == nil {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("publish %d: %v", i, err)
			}
		}
	}
	for i := range 5 {
		publish(i)
	}

	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leader := c.NodeIndex(info.Cluster.Leader)
	if leader < 0 {
		t.Fatalf("unknown leader %q", info.Cluster.Leader)
	}
	if err := c.Stop(leader); err != nil {
		t.Fatal(err)
	}
	for i := 5; i < 10; i++ {
		publish(i)
	}

	cons, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "d", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatalf("consumer with node %d down: %v", leader, err)
	}
	got := 0
	for got < 10 {
		batch, err := cons.Fetch(10-got, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			_ = m.Ack()
			got++
		}
		if err := batch.Error(); err != nil || ctx.Err() != nil {
			t.Fatalf("fetched %d/10: %v %v", got, err, ctx.Err())
		}
	}

	if err := c.Restart(ctx, leader); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	// The restarted node catches up as a replica of the stream.
	if err := poll(ctx, func() (bool, error) {
		info, err := st.Info(ctx)
		if err != nil || info.Cluster == nil {
			return false, nil
		}
		current := 0
		for _, r := range info.Cluster.Replicas {
			if r.Current {
				current++
			}
		}
		return len(info.Cluster.Replicas) == 2 && current == 2 && info.State.Msgs == 10, nil
	}); err != nil {
		t.Fatalf("restarted node did not catch up: %v", err)
	}
}
