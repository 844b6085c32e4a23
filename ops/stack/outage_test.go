package stack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"oficina/ops/config"
	"oficina/ops/stack"
	"oficina/ops/testkit"
	"oficina/tenant"
)

// serveProcess is one `oficina serve` of a test.
type serveProcess struct {
	pub, adm string // base URLs
	token    string
}

// startServe runs `oficina serve` on dbURL and natsURL until the test
// ends; its background work is confined to only.
func startServe(t *testing.T, dbURL, natsURL string, only ...string) *serveProcess {
	t.Helper()
	cfg := config.Default()
	cfg.DatabaseURL, cfg.NATSURL = dbURL, natsURL
	cfg.AppDBPassword = os.Getenv("OFICINA_APP_DB_PASSWORD")
	cfg.WorkerDBPassword = os.Getenv("OFICINA_WORKER_DB_PASSWORD")
	cfg.SecretKeys = testkit.SecretKeys
	cfg.HTTPAddr, cfg.AdminAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminToken = "outage-test-admin-token-0123456789abcdef"
	cfg.DataDir = t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan stack.Addrs, 1)
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		err = stack.Run(ctx, stack.Options{Config: cfg, Only: only, Logger: slog.New(slog.DiscardHandler),
			Ready: func(a stack.Addrs) { ready <- a }})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})
	select {
	case a := <-ready:
		return &serveProcess{pub: "http://" + a.Public, adm: "http://" + a.Admin, token: cfg.AdminToken}
	case <-done:
		t.Fatalf("serve stopped: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("serve not ready")
	}
	return nil
}

type answer struct {
	status int
	header http.Header
	body   string
}

func call(t *testing.T, method, url, bearer string, body any) answer {
	t.Helper()
	return callWith(t, method, url, bearer, body, nil)
}

// callWith is call with extra request headers.
func callWith(t *testing.T, method, url, bearer string, body any, header map[string]string) answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// healthAnswer is a decoded /healthz or /readyz answer.
type healthAnswer struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
	Error  struct {
		Code string `json:"code"`
	} `json:"error"`
}

func (p *serveProcess) healthOf(t *testing.T, url string) (answer, healthAnswer) {
	t.Helper()
	a := call(t, "GET", url, "", nil)
	var h healthAnswer
	if err := json.Unmarshal([]byte(a.body), &h); err != nil {
		t.Fatalf("%s: %d %s: %v", url, a.status, a.body, err)
	}
	return a, h
}

// health checks /healthz and /readyz on both listeners: their statuses,
// bodies (a 503 also carries the service_unavailable envelope), and that
// no body carries the driver's words.
func (p *serveProcess) health(t *testing.T, readyz int, status, database, nats string) {
	t.Helper()
	for _, base := range []string{p.pub, p.adm} {
		for path, code := range map[string]int{"/readyz": readyz, "/healthz": 200} {
			a, h := p.healthOf(t, base+path)
			wantErr := map[bool]string{true: "service_unavailable", false: ""}[code == 503]
			if a.status != code || h.Status != status || h.Checks["database"] != database || h.Checks["nats"] != nats ||
				len(h.Checks) != 2 || h.Error.Code != wantErr || (code == 503) != (a.header.Get("Retry-After") != "") {
				t.Fatalf("%s%s: %d %s, want %d, status %s, database %s, nats %s", base, path, a.status, a.body, code, status, database, nats)
			}
			for _, leak := range []string{"oficina_app", "oficina_test", "127.0.0.1", "dial", "refused", "failed"} {
				if strings.Contains(a.body, leak) {
					t.Fatalf("%s%s shows %q: %s", base, path, leak, a.body)
				}
			}
		}
	}
}

// healthIs reports whether readyz says status.
func (p *serveProcess) healthIs(t *testing.T, status string) bool {
	_, h := p.healthOf(t, p.adm+"/readyz")
	return h.Status == status
}

// Issue 15 item 6, with two `oficina serve` processes as deployed:
//   - NATS down: writes answer at once (201, their events left to the
//     relay) and a company's ceiling still holds — each process allows
//     exactly its share (ceiling/2), with RateLimit headers on every answer;
//     readiness says degraded, naming NATS, and stays 200;
//   - PostgreSQL down: requests answer 503 with Retry-After, readiness 503
//     naming the database; no health body carries the driver's message.
func TestOutagesAsTwoServeProcessesSeeThem(t *testing.T) {
	t.Parallel()
	dbURL, pg := testkit.ProxiedURL(t)
	ns := testkit.NewRestartableNATS(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	a := startServe(t, dbURL, ns.URL(), co.Company.ID)
	b := startServe(t, dbURL, ns.URL(), co.Company.ID)
	const ceiling = 4
	if r := call(t, "PATCH", a.adm+"/admin/v1/companies/"+co.Company.ID, a.token, map[string]any{"rate_limit_override": ceiling}); r.status != 200 {
		t.Fatalf("ceiling: %d %s", r.status, r.body)
	}
	key := co.OwnerKey(t, "leads:create")
	lead := map[string]any{"name": "Ana", "email": "ana@example.com", "task": nil}
	for _, p := range []*serveProcess{a, b} {
		testkit.Eventually(t, "each process to see the other", func() bool {
			return strings.Contains(call(t, "GET", p.adm+"/metrics", p.token, nil).body, "oficina_ratelimit_processes 2")
		})
	}
	a.health(t, 200, "ok", "up", "up")

	ns.Stop()
	for _, p := range []*serveProcess{a, b} {
		testkit.Eventually(t, "readiness to name NATS", func() bool { return p.healthIs(t, "degraded") })
		p.health(t, 200, "degraded", "up", "down")
	}
	for _, p := range []*serveProcess{a, b} {
		var got []int
		for range ceiling {
			r := call(t, "POST", p.pub+"/public/v1/leads", key, lead)
			got = append(got, r.status)
			if r.header.Get("RateLimit-Limit") != "4" || r.header.Get("RateLimit-Remaining") == "" || r.header.Get("RateLimit-Reset") == "" {
				t.Fatalf("answer %d without its RateLimit headers during the outage: %v", r.status, r.header)
			}
			if r.status == 429 && r.header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
		}
		if want := []int{201, 201, 429, 429}; !slices.Equal(got, want) {
			t.Fatalf("writes to one process while NATS is down: %v, want %v (its share of 4 is 2)", got, want)
		}
	}
	if !strings.Contains(call(t, "GET", a.adm+"/metrics", a.token, nil).body, "oficina_ratelimit_local 1") {
		t.Fatal("metrics do not say the limits are counted in process")
	}

	ns.Start(t)
	for _, p := range []*serveProcess{a, b} {
		testkit.Eventually(t, "readiness after NATS is back", func() bool { return p.healthIs(t, "ok") })
	}

	other := testkit.NewCompany(t, tenant.CompanyInput{})
	otherKey := other.OwnerKey(t, "leads:create")
	if r := call(t, "GET", a.pub+"/public/v1/me", otherKey, nil); r.status != 200 { // its key is cached now
		t.Fatalf("GET /me: %d %s", r.status, r.body)
	}
	pg.Cut()
	a.health(t, 503, "unavailable", "down", "up")
	for _, k := range []string{otherKey, other.OwnerKey(t, "leads:create")} { // the write fails, then the key lookup
		r := call(t, "POST", a.pub+"/public/v1/leads", k, lead)
		if r.status != 503 || !strings.Contains(r.body, `"service_unavailable"`) || r.header.Get("Retry-After") == "" {
			t.Fatalf("write while PostgreSQL is down: %d %v %s", r.status, r.header, r.body)
		}
	}
	if r := call(t, "GET", a.adm+"/admin/v1/companies/"+co.Company.ID, a.token, nil); r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Fatalf("admin while PostgreSQL is down: %d %s", r.status, r.body)
	}
	if err := pg.Restore(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "readiness after PostgreSQL is back", func() bool { return a.healthIs(t, "ok") })
}
