package stack

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/tenant"
)

// Issue 23 item 3: `make run` again answers to the key it printed before
// (kept in <data-dir>/demo-key); only when that key is gone does it make
// a new one, revoke the demo keys left, and say so loudly.
func TestDevKeepsItsDemoKeyAcrossRestarts(t *testing.T) {
	t.Parallel()
	db, dir := testkit.DB(t), t.TempDir()
	bus, err := tenant.NewBus(tenant.NewAuthenticator(db, tenant.AuthConfig{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.Close)
	run := func() (*demo, string) {
		t.Helper()
		d, err := seed(context.Background(), db, bus, dir)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		d.print(&out, "http://localhost:8080")
		return d, out.String()
	}
	first, printed := run()
	if first.kept || first.replaced || !strings.Contains(printed, first.key) || !strings.Contains(printed, "new, kept in "+filepath.Join(dir, "demo-key")) {
		t.Fatalf("first run: %+v\n%s", first, printed)
	}
	again, printed := run()
	if !again.kept || again.key != first.key || again.companyID != first.companyID || !strings.Contains(printed, "the same as the last run") {
		t.Fatalf("second run: %+v, want the first run's key\n%s", again, printed)
	}
	if active := demoKeys(t, db, first.companyID); active != 1 {
		t.Fatalf("%d active demo keys, want 1", active)
	}

	// The file lost: a new key, the old one revoked, and the banner says so.
	if err := os.Remove(filepath.Join(dir, "demo-key")); err != nil {
		t.Fatal(err)
	}
	replaced, printed := run()
	if replaced.kept || !replaced.replaced || replaced.key == first.key || !strings.Contains(printed, "NEW: the demo key of earlier runs was revoked") {
		t.Fatalf("after losing the key file: %+v\n%s", replaced, printed)
	}
	if active := demoKeys(t, db, first.companyID); active != 1 {
		t.Fatalf("%d active demo keys after the replacement, want 1", active)
	}
}

// demoKeys counts the company's demo keys not revoked.
func demoKeys(t *testing.T, db *bun.DB, company string) int {
	t.Helper()
	n := 0
	err := tenant.Tx(context.Background(), db, company, func(ctx context.Context, tx bun.Tx) error {
		keys, err := tenant.ListKeys(ctx, tx)
		for _, k := range keys {
			if k.Name == "demo" && k.RevokedAt == nil {
				n++
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Issue 23 item 3: the banner gives the listeners' real addresses (not
// localhost:8080 whatever the port) and puts the demo company's id in the
// commands it suggests.
func TestBannerGivesTheRealAddressAndTheDemoCompanyInItsCommands(t *testing.T) {
	t.Parallel()
	s := &Stack{demo: &demo{companyID: "co_demo", key: "ofk_k", keyFile: "var/demo-key", kept: true},
		embedded: &embeddedNATS{url: "nats://127.0.0.1:14222", store: "var/nats", seeds: "var/nats-auth"}}
	var out strings.Builder
	s.banner(&out, &net.TCPAddr{IP: net.IPv6unspecified, Port: 18080}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 18081})
	got := out.String()
	for _, want := range []string{"curl -H 'Authorization: Bearer ofk_k' http://localhost:18080/public/v1/me",
		"oficina events tail --company co_demo ", "sub 'oficina.events.co_demo.>'", "public API  http://localhost:18080/public/v1",
		"admin API   http://127.0.0.1:18081/admin/v1"} {
		if !strings.Contains(got, want) {
			t.Errorf("the banner lacks %q:\n%s", want, got)
		}
	}
	for _, wrong := range []string{":8080/", "<id>", "<company id>"} {
		if strings.Contains(got, wrong) {
			t.Errorf("the banner says %q:\n%s", wrong, got)
		}
	}
}
