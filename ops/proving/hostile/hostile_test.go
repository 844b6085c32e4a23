package hostile_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"oficina/ops/config"
	"oficina/ops/proving/hostile"
	"oficina/ops/stack"
	"oficina/ops/testkit"
	"oficina/tenant"
)

// Issue 9, hostile input: the whole case set against the dev stack (the
// API, relay and dispatcher in one process, as `oficina dev` runs them):
// no 5xx, every error in the envelope, nothing written by a refused
// request, no id of the other company shown, and the server still
// answering afterwards.
func TestHostileInputLeavesTheDevStackStanding(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for about 40 s")
	}
	var cos [2]hostile.Company
	for i := range cos {
		co := testkit.NewCompany(t, tenant.CompanyInput{RateLimitUnlimited: testkit.Ptr(true)})
		cos[i] = hostile.Company{ID: co.Company.ID, Key: co.OwnerKey(t, tenant.AllPermissions()...)}
	}
	logs := &lines{}
	public, admin := startDev(t, []string{cos[0].ID, cos[1].ID}, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})))

	rep, err := hostile.Run(t.Context(), hostile.Target{URL: public, AdminURL: admin, AdminToken: adminToken, Companies: cos,
		SpeedWindow: time.Second, SlowHeaders: 16, SlowBodies: 4, SlowLimit: 36 * time.Second, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep.WriteText(&out)
	t.Logf("\n%s", out.String())
	if !rep.OK() {
		t.Errorf("%d of %d hostile cases failed (see the report above); server warnings:\n%s", len(rep.Failures), rep.Cases, logs)
	}
	if rep.MeAfter == 0 || rep.MeErrors > 0 {
		t.Errorf("GET /me after the run: %.0f/s, %d errors", rep.MeAfter, rep.MeErrors)
	}
}

const adminToken = "hostile-admin-token-0123456789abcdef"

// startDev runs stack.Run as `oficina dev` does (embedded NATS, the relay
// and dispatcher in process), confined to the test's companies, and stops
// it when the test ends.
func startDev(t *testing.T, only []string, log *slog.Logger) (public, admin string) {
	t.Helper()
	testkit.DB(t) // the migrated test database
	cfg := config.Default()
	cfg.DatabaseURL = testkit.OwnerURL()
	cfg.HTTPAddr, cfg.AdminAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminToken = adminToken
	cfg.NATSPort = -1
	cfg.DataDir = t.TempDir()
	cfg.DBMaxConns = 16
	cfg.AllowPrivateDestinations = "127.0.0.1/32" // the endpoints' URL, https://127.0.0.1:9/…
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan stack.Addrs, 1)
	done := make(chan error, 1)
	go func() {
		done <- stack.Run(ctx, stack.Options{Config: cfg, Embedded: true, Logger: log, Only: only,
			Ready: func(a stack.Addrs) { ready <- a }})
	}()
	select {
	case a := <-ready:
		t.Cleanup(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("stack: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("stack did not shut down")
			}
		})
		return "http://" + a.Public, "http://" + a.Admin
	case err := <-done:
		cancel()
		t.Fatalf("stack did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("stack not ready after 60 s")
	}
	return "", ""
}

// lines collects the stack's log.
type lines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	if len(s) > 20_000 {
		s = "…" + s[len(s)-20_000:]
	}
	return s
}
