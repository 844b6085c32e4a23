package stack_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"oficina/ops/config"
	"oficina/ops/stack"
	"oficina/ops/testkit"
)

// The README's promise: `oficina dev --seed` prints a key, and curl with it
// gets GET /me; health, readiness and metrics answer; shutdown is clean.
func TestDevStackServesTheSeededKey(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	// A database of its own: this stack relays, dispatches and sweeps over
	// every company, and on the shared test database its relay would take
	// the other packages' backlogs (a crash's leftovers a test ages on
	// purpose) to a NATS their dispatchers never read.
	cfg.DatabaseURL = testkit.ScratchDB(t, "devstack")
	cfg.HTTPAddr, cfg.AdminAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.NATSPort = -1
	cfg.DataDir = t.TempDir()
	var out testkit.SyncBuffer
	ready := make(chan [2]string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- stack.Run(ctx, stack.Options{Config: cfg, Embedded: true, Migrate: true, Seed: true, Out: &out,
			Ready: func(a stack.Addrs) { ready <- [2]string{a.Public, a.Admin} }})
	}()
	var addrs [2]string
	select {
	case addrs = <-ready:
	case err := <-done:
		t.Fatalf("stack stopped: %v\n%s", err, out.String())
	case <-time.After(30 * time.Second):
		t.Fatal("stack not ready")
	}
	key := regexp.MustCompile(`ofk_[0-9A-Za-z]+`).FindString(out.String())
	if key == "" {
		t.Fatalf("no key printed:\n%s", out.String())
	}
	get := func(url, auth string) (int, string) {
		req, _ := http.NewRequest("GET", url, nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	pub, adm := "http://"+addrs[0], "http://"+addrs[1]
	if st, body := get(pub+"/public/v1/me", key); st != 200 || !strings.Contains(body, `"organization"`) {
		t.Fatalf("GET /me: %d %s", st, body)
	}
	if st, _ := get(pub+"/healthz", ""); st != 200 {
		t.Fatalf("healthz %d", st)
	}
	if st, body := get(pub+"/readyz", ""); st != 200 {
		t.Fatalf("readyz %d %s", st, body)
	}
	if st, body := get(pub+"/openapi.json", ""); st != 200 || !strings.Contains(body, "/public/v1/me") {
		t.Fatalf("openapi %d", st)
	}
	if st, body := get(pub+"/favicon.ico", ""); st != 200 || !strings.HasPrefix(body, "\x00\x00\x01\x00") {
		t.Fatalf("favicon %d", st)
	}
	if st, body := get(pub+"/elsewhere", ""); st != 404 || strings.Contains(body, "request_id") {
		t.Fatalf("outside the prefix: %d %s", st, body)
	}
	if st, body := get(adm+"/metrics", ""); st != 200 || !strings.Contains(body, `oficina_http_requests_total{method="GET",route="GET /public/v1/me",status="200"}`) {
		t.Fatalf("metrics %d %s", st, body)
	}
	// dev is every process in one: all their series on one /metrics.
	ms := testkit.ScrapeMetrics(t, adm+"/metrics", "")
	testkit.LintMetrics(t, "dev", ms.Text)
	hasSeries(t, "dev", ms, slices.Concat(apiSeries, relaySeries, dispatchSeries, everyProcess))
	if st, _ := get(adm+"/admin/v1/companies/x", "wrong"); st != 401 {
		t.Fatalf("admin without token: %d", st)
	}
	// The webhook portal beside the API: a key mints a one-time link to it
	// on this listener, and its login page answers.
	req, _ := http.NewRequest("POST", pub+"/public/v1/portal_sessions", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var session struct {
		URL string `json:"url"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&session)
	resp.Body.Close()
	if resp.StatusCode != 201 || !strings.HasPrefix(session.URL, pub+"/portal/login?token=opl_") {
		t.Fatalf("portal session: %d %q", resp.StatusCode, session.URL)
	}
	if st, body := get(session.URL, ""); st != 200 || !strings.Contains(body, `action="/portal/login"`) {
		t.Fatalf("portal login page: %d %s", st, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no graceful shutdown")
	}
}
