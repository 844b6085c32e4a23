package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"oficina/ops/config"
	"oficina/ops/natsauth"
	"oficina/ops/stack"
	"oficina/ops/testkit"
	"oficina/streams"
	"oficina/streams/jsconfig"
)

// lineWriter cancels once a line was written.
type lineWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	cancel context.CancelFunc
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if bytes.Contains(w.buf.Bytes(), []byte("\n")) {
		w.cancel()
	}
	return n, err
}

// `oficina events tail --company <id> --type sale.*` prints the matching
// envelope, one JSON document per line, and stops cleanly with its context.
func TestEventsTailPrintsEnvelopes(t *testing.T) {
	t.Parallel()
	ns := testkit.NATS(t)
	nc, err := ns.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := jsconfig.Ensure(ctx, js, jsconfig.Config{}); err != nil {
		t.Fatal(err)
	}
	for subject, body := range map[string]string{
		"oficina.events.co_1.client.created": `{"type":"client.created"}`,
		"oficina.events.co_2.sale.paid":      `{"type":"sale.paid","organization_id":"co_2"}`,
		"oficina.events.co_1.sale.paid":      `{"type":"sale.paid","organization_id":"co_1"}`,
	} {
		if _, err := js.Publish(ctx, subject, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	out := &lineWriter{cancel: cancel}
	err = tail(ctx, ns.ClientURL(), config.NATS{}, streams.TailOptions{CompanyID: "co_1", Type: "sale.*", Since: time.Hour}, out)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.buf.String()); got != `{"type":"sale.paid","organization_id":"co_1"}` {
		t.Fatalf("printed %q", got)
	}
}

// Issue 15 item 5: events tail runs as an internal consumer scoped to one
// company, on the server configuration of docs/nats/oficina.conf: it
// reads that company's events, with its replies on the company's inbox.
func TestEventsTailRunsAsAConsumerScopedToItsCompany(t *testing.T) {
	t.Parallel()
	ns := testkit.NATSWithUsers(t)
	api, _ := ns.ConnectAs(t, natsauth.API)
	js, _ := jetstream.New(api)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := jsconfig.Ensure(ctx, js, jsconfig.Config{}); err != nil {
		t.Fatal(err)
	}
	for _, subject := range []string{"oficina.events.co_OTHER.sale.paid", "oficina.events.co_EXAMPLE.sale.paid"} {
		if _, err := js.Publish(ctx, subject, []byte(`{"subject":"`+subject+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	id := ns.Identity(natsauth.Consumer + "_co_EXAMPLE")
	id.InboxPrefix = "" // tail's own default: _INBOX.consumer.co_EXAMPLE
	out := &lineWriter{cancel: cancel}
	if err := tail(ctx, ns.ClientURL(), id, streams.TailOptions{CompanyID: "co_EXAMPLE", Since: time.Hour}, out); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.buf.String()); got != `{"subject":"oficina.events.co_EXAMPLE.sale.paid"}` {
		t.Fatalf("printed %q", got)
	}
}

// Against dev's embedded NATS with no identity configured, events tail
// uses the consumer seed dev wrote into its data dir; a configured
// identity or an external NATS_URL is left as it is.
func TestEventsTailFindsDevsConsumerSeed(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	if got := devIdentity(cfg); got.NKeyFile != "" {
		t.Fatalf("no seed written yet, got %+v", got)
	}
	dir := stack.NATSAuthDir(cfg.DataDir)
	if _, err := natsauth.LoadOrGenerate(dir); err != nil {
		t.Fatal(err)
	}
	if got := devIdentity(cfg); got.NKeyFile != natsauth.SeedFile(dir, natsauth.Consumer) {
		t.Fatalf("dev identity %+v", got)
	}
	cfg.NATS.User, cfg.NATS.Password = "me", "secret"
	if got := devIdentity(cfg); got.NKeyFile != "" || got.User != "me" {
		t.Fatalf("configured identity replaced: %+v", got)
	}
}

func TestEventsTailNeedsACompany(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"events", "tail", "--type", "sale.*"}, &out, &out); err == nil {
		t.Fatal("tail without --company accepted")
	}
	if err := run(context.Background(), []string{"events", "follow"}, &out, &out); err == nil {
		t.Fatal("unknown action accepted")
	}
}
