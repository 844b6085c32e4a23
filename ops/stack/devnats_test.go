package stack_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"oficina/ops/config"
	"oficina/ops/natsauth"
	"oficina/ops/natsconn"
	"oficina/ops/stack"
	"oficina/ops/testkit"
)

// Issue 15 item 5: `oficina dev` protects its embedded NATS. Nobody
// connects without a key; the users' seeds are in <data-dir>/nats-auth,
// readable by the owner only; the process itself runs as its users (the
// API as api, the dispatcher as dispatch, which heartbeats its lease); and
// the start-up lines say how to use the seeds with nats and events tail.
func TestDevProtectsItsEmbeddedNATSWithGeneratedUsers(t *testing.T) {
	t.Parallel()
	testkit.DB(t)
	cfg := config.Default()
	cfg.DatabaseURL = testkit.OwnerURL()
	cfg.HTTPAddr, cfg.AdminAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.NATSPort = -1
	cfg.DataDir = t.TempDir()
	var out testkit.SyncBuffer
	ready := make(chan stack.Addrs, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- stack.Run(ctx, stack.Options{Config: cfg, Embedded: true, Migrate: true, Out: &out, Only: []string{"co_none"},
			Ready: func(a stack.Addrs) { ready <- a }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("dev: %v", err)
		}
	})
	var addrs stack.Addrs
	select {
	case addrs = <-ready:
	case err := <-done:
		t.Fatalf("dev stopped: %v\n%s", err, out.String())
	case <-time.After(60 * time.Second):
		t.Fatal("dev not ready")
	}

	if nc, err := nats.Connect(addrs.NATS); err == nil {
		nc.Close()
		t.Fatal("an anonymous client connected to dev's NATS")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("anonymous connect: %v, want an authorization violation", err)
	}

	dir := stack.NATSAuthDir(cfg.DataDir)
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("%s: %v %v", dir, fi.Mode(), err)
	}
	for _, r := range natsauth.Roles() {
		if fi, err := os.Stat(natsauth.SeedFile(dir, r.Name)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("seed of %s: %v %v", r.Name, fi.Mode(), err)
		}
	}
	printed := out.String()
	for _, want := range []string{"--nkey " + natsauth.SeedFile(dir, natsauth.Consumer), "--inbox-prefix _INBOX.consumer",
		"oficina events tail --company", "--nkey " + natsauth.SeedFile(dir, natsauth.Admin)} {
		if !strings.Contains(printed, want) {
			t.Errorf("start-up lines lack %q:\n%s", want, printed)
		}
	}

	admin, err := natsconn.Connect(addrs.NATS, config.NATS{NKeyFile: natsauth.SeedFile(dir, natsauth.Admin)}, natsauth.Admin, nil)
	if err != nil {
		t.Fatalf("admin seed: %v", err)
	}
	defer admin.Close()
	// The dispatcher's heartbeat (a write to its lease bucket, allowed to
	// the dispatch user only besides admin) shows it runs as its user.
	beat, err := admin.SubscribeSync("$KV.OFICINA_DISPATCH.m.>")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := beat.NextMsg(30 * time.Second); err != nil {
		t.Fatalf("no dispatcher heartbeat: %v", err)
	}
	if ci := admin.ConnectedServerName(); ci == "" {
		t.Fatal("admin not connected")
	}
}
