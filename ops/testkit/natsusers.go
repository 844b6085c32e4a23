package testkit

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"

	"oficina/ops/config"
	"oficina/ops/natsauth"
	"oficina/ops/natsconn"
	"oficina/ops/natsembed"
)

// SecureNATS is an embedded JetStream server running the users and
// permissions of docs/nats/oficina.conf (ops/natsauth), with a fresh NKey
// seed per user.
type SecureNATS struct {
	*natsembed.Server
	dir string
}

// NATSWithUsers starts a SecureNATS for one test.
func NATSWithUsers(t testing.TB) *SecureNATS {
	t.Helper()
	dir := t.TempDir()
	ids, err := natsauth.Generate()
	if err != nil {
		t.Fatal(err)
	}
	if err := ids.Write(dir); err != nil {
		t.Fatal(err)
	}
	s, err := natsembed.Start(context.Background(), natsembed.Config{Port: -1, StoreDir: t.TempDir(), ConfigFile: natsauth.ConfigFile(dir)})
	if err != nil {
		t.Fatalf("testkit: nats with users: %v", err)
	}
	t.Cleanup(s.Shutdown)
	return &SecureNATS{Server: s, dir: dir}
}

// Identity is the client setting of role's user (its NKey seed file), as
// an operator gives it to the process in OFICINA_NATS_NKEY.
func (s *SecureNATS) Identity(role string) config.NATS {
	r, _ := natsauth.Find(role)
	return config.NATS{NKeyFile: natsauth.SeedFile(s.dir, role), InboxPrefix: r.Inbox}
}

// ConnectAs connects as role's user, with the role's inbox prefix, and
// reports every asynchronous error (permission violations) on errs.
func (s *SecureNATS) ConnectAs(t testing.TB, role string) (nc *nats.Conn, errs <-chan error) {
	t.Helper()
	ch := make(chan error, 64)
	nc, err := natsconn.Connect(s.ClientURL(), s.Identity(role), role, nil, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case ch <- err:
		default:
		}
	}))
	if err != nil {
		t.Fatalf("testkit: connect as %s: %v", role, err)
	}
	t.Cleanup(nc.Close)
	return nc, ch
}
