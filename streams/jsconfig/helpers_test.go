package jsconfig

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"oficina/ops/natsembed"
)

// startJS starts a private embedded server and returns a JetStream client
// and a context bounded well under the package's time budget.
func startJS(t *testing.T) (context.Context, jetstream.JetStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	srv, err := natsembed.Start(ctx, natsembed.Config{Port: -1, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatalf("start nats: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	nc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, js
}

// ensured starts a server and runs Ensure with cfg.
func ensured(t *testing.T, cfg Config) (context.Context, jetstream.JetStream) {
	t.Helper()
	ctx, js := startJS(t)
	if err := Ensure(ctx, js, cfg); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	return ctx, js
}

// fetchAll drains up to want messages from cons, acking them, waiting at
// most wait in total.
func fetchAll(t *testing.T, cons jetstream.Consumer, want int, wait time.Duration) []jetstream.Msg {
	t.Helper()
	var got []jetstream.Msg
	deadline := time.Now().Add(wait)
	for len(got) < want {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		batch, err := cons.Fetch(want-len(got), jetstream.FetchMaxWait(left))
		if err != nil {
			t.Fatalf("fetch: %v", err)
		}
		for m := range batch.Messages() {
			if err := m.Ack(); err != nil {
				t.Fatalf("ack: %v", err)
			}
			got = append(got, m)
		}
		if err := batch.Error(); err != nil {
			t.Fatalf("fetch: %v", err)
		}
	}
	return got
}
