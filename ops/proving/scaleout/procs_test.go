package scaleout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"

	"oficina/dispatch"
	"oficina/dispatch/destguard"
	"oficina/ops/config"
	"oficina/ops/stack"
	"oficina/ops/testkit"
	"oficina/ops/testkit/hooks"
	"oficina/schema/db"
	"oficina/schema/service"
	"oficina/streams"
	"oficina/tenant"
)

// partitions is the DELIVERIES partition count the API processes create
// (jsconfig's default); the dispatchers must agree.
const partitions = 16

// processLog collects the warnings of the in-process API stacks and
// dispatchers; they are printed when the test fails (and, shortened, with
// -v), so a run under faults shows what each part went through.
type processLog struct{ testkit.SyncBuffer }

func (l *processLog) lines() []string {
	s := strings.TrimSpace(l.String())
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// newLogger returns a warn-level logger whose lines are shown at the end
// of the test: all of them on failure, the last few with -v.
func newLogger(t *testing.T) *slog.Logger {
	t.Helper()
	pl := &processLog{}
	t.Cleanup(func() {
		ls := pl.lines()
		if !t.Failed() && len(ls) > 40 {
			ls = append([]string{fmt.Sprintf("… %d earlier lines", len(ls)-40)}, ls[len(ls)-40:]...)
		}
		if len(ls) > 0 && (t.Failed() || testing.Verbose()) {
			t.Logf("process warnings (%d lines):\n%s", len(pl.lines()), strings.Join(ls, "\n"))
		}
	})
	return slog.New(slog.NewTextHandler(pl, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// apiProc is one API process (`oficina serve`) run in the test.
type apiProc struct {
	base   string // http://host:port/public/v1
	admin  string // http://host:port (admin listener)
	client *http.Client
}

type apiOptions struct {
	natsURL  string // comma-separated server URLs
	replicas int
	caFile   string   // the receiver's certificate
	only     []string // the test's companies
	log      *slog.Logger
	nats     config.NATS // the process's NATS identity (none: an open server)
}

// startAPI runs stack.Run as `oficina serve` does (external NATS, no
// embedded dispatcher) and stops it when the test ends.
func startAPI(t *testing.T, o apiOptions) *apiProc {
	t.Helper()
	cfg := processConfig(t, o)
	ctx, cancel := context.WithCancel(context.Background())

	ready := make(chan stack.Addrs, 1)
	done := make(chan error, 1)
	go func() {
		done <- stack.Run(ctx, stack.Options{Config: cfg, Logger: o.log, Only: o.only,
			Ready: func(a stack.Addrs) { ready <- a }})
	}()
	stopped := false
	t.Cleanup(func() {
		cancel()
		if stopped {
			return
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("API process: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("API process did not shut down")
		}
	})
	select {
	case a := <-ready:
		return &apiProc{base: "http://" + a.Public + "/public/v1", admin: "http://" + a.Admin,
			client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	case err := <-done:
		stopped = true
		t.Fatalf("API process did not start: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("API process not ready after 60 s")
	}
	return nil
}

// processConfig is the configuration of a process of the test (serve,
// dispatch, relay) on the migrated test database.
func processConfig(t *testing.T, o apiOptions) config.Config {
	t.Helper()
	testkit.DB(t) // the migrated test database
	cfg := config.Default()
	cfg.DatabaseURL = testkit.OwnerURL()
	cfg.AppDBPassword = os.Getenv("OFICINA_APP_DB_PASSWORD")
	cfg.HTTPAddr, cfg.AdminAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminToken = "scaleout-admin-token-0123456789abcdef"
	cfg.SecretKeys = testkit.SecretKeys
	cfg.DataDir = t.TempDir()
	cfg.DBMaxConns = 8
	cfg.NATSURL = o.natsURL
	cfg.StreamReplicas = o.replicas
	cfg.AllowPrivateDestinations = "127.0.0.1/32"
	cfg.ExtraCAFile = o.caFile
	cfg.NATS = o.nats
	// These processes prove exact limits and deliveries, not outages: a
	// busy machine must not push the budget's round trips past the
	// fallback's bound.
	cfg.RateLimitTimeout = 5 * time.Second
	return cfg
}

// response is one answer of the public API.
type response struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (r response) errorField(name string) string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e[name].(string)
	return s
}

// do sends a public API request; it returns an error instead of failing
// the test, so load goroutines may call it.
func (a *apiProc) do(ctx context.Context, method, path, key string, body any) (response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return response{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return response{}, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	out := response{status: resp.StatusCode, header: resp.Header, raw: raw}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &out.body)
	}
	return out, nil
}

// newEndpoint registers a webhook endpoint through the API and returns
// its id.
func (a *apiProc) newEndpoint(t *testing.T, key, url string, events ...string) string {
	t.Helper()
	r, err := a.do(t.Context(), "POST", "/webhook_endpoints", key, map[string]any{"url": url, "events": events})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := r.body["id"].(string)
	if r.status != 201 || id == "" {
		t.Fatalf("create endpoint %s: %d %s", url, r.status, r.raw)
	}
	return id
}

// captureLead is one POST /leads without a task: exactly one event,
// client.created, so one delivery per endpoint subscribed to it.
func (a *apiProc) captureLead(ctx context.Context, key, label string) (response, error) {
	return a.do(ctx, "POST", "/leads", key, map[string]any{
		"name": "Lead " + label, "email": "lead-" + label + "@example.com", "task": nil})
}

// company is a test company with an owner key able to capture leads and
// subscribe to their events.
type company struct {
	tk  *testkit.Company
	id  string
	key string
}

func newCompany(t *testing.T, in tenant.CompanyInput) company {
	t.Helper()
	co := testkit.NewCompany(t, in)
	return company{tk: co, id: co.Company.ID, key: co.OwnerKey(t, "leads:create", "clients:read", "tasks:read",
		"webhooks:create", "webhooks:read", "webhooks:update")}
}

// deliveries are the company's delivery rows, as PostgreSQL has them.
func (c company) deliveries(t *testing.T) []streams.Delivery {
	t.Helper()
	var ds []streams.Delivery
	c.tk.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model(&ds).Order("created_at").Scan(ctx)
	})
	return ds
}

// logOf is the company's deliveries and their attempts, one line each, for
// a failure message: statuses, answers and errors, not pointers.
func (c company) logOf(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, d := range c.deliveries(t) {
		fmt.Fprintf(&b, "\n  %s %s %s attempts=%d next=%v error=%s", d.ID, d.EventID, d.Status, d.AttemptCount,
			d.NextAttemptAt, deref(d.Error))
	}
	var as []struct {
		DeliveryID string    `bun:"delivery_id"`
		StartedAt  time.Time `bun:"started_at"`
		Code       *int      `bun:"response_status_code"`
		Error      *string   `bun:"error"`
	}
	c.tk.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Table("webhook_attempts").Column("delivery_id", "started_at", "response_status_code", "error").
			Order("started_at").Scan(ctx, &as)
	})
	for _, a := range as {
		fmt.Fprintf(&b, "\n  attempt %s at %s status=%s error=%s", a.DeliveryID, a.StartedAt.Format(time.RFC3339Nano), deref(a.Code), deref(a.Error))
	}
	return b.String()
}

// deref is *p as text, "" for nil.
func deref[T any](p *T) string {
	if p == nil {
		return ""
	}
	return fmt.Sprint(*p)
}

// connectNATS connects as the processes do: every server listed, never
// giving up on reconnecting.
func connectNATS(t *testing.T, url, name string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.Name(name), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// tagged marks each request with the dispatcher that sent it, so the
// receiver can tell the dispatchers apart.
type tagged struct {
	id   string
	base http.RoundTripper
}

const dispatcherHeader = "X-Test-Dispatcher"

func (t tagged) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(dispatcherHeader, t.id)
	return t.base.RoundTrip(r)
}

// startDispatcher runs one dispatcher as `oficina dispatch` does (its own
// NATS connection and database pool, the destination guard's client, which
// here allows loopback and trusts the receiver's certificate) with test
// timings, until the test ends.
func startDispatcher(t *testing.T, natsURL, id string, recv *hooks.Receiver, log *slog.Logger, tweak func(*dispatch.Config)) *dispatch.Dispatcher {
	t.Helper()
	nc := connectNATS(t, natsURL, "oficina-dispatch-"+id)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	workerURL, err := db.WorkerURL(testkit.OwnerURL(), os.Getenv("OFICINA_WORKER_DB_PASSWORD"))
	if err != nil {
		t.Fatal(err)
	}
	pool, err := db.Open(t.Context(), workerURL, db.Options{MaxOpenConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	g, err := destguard.New(destguard.Config{AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		ExtraCAPEM: recv.CAPEM()})
	if err != nil {
		t.Fatal(err)
	}
	client := g.Client()
	client.Transport = tagged{id: id, base: client.Transport}
	cfg := dispatch.Config{Base: service.Base{Log: log.With("dispatcher", id)}, DB: pool, JS: js, Client: client, Secrets: testkit.Keyring(t), ID: id,
		Partitions: partitions, Jitter: -1, LeaseTTL: 3 * time.Second, AckWait: 5 * time.Second,
		ParkDelay: 500 * time.Millisecond, FailingParkSpread: time.Second,
		Schedule: []time.Duration{time.Second, time.Second, time.Second, time.Second, time.Second,
			time.Second, time.Second, time.Second, time.Second, time.Second}}
	if tweak != nil {
		tweak(&cfg)
	}
	d, err := dispatch.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Background(t, "dispatcher "+id, d.Run)
	return d
}

// eventually polls cond every 50 ms until it holds or timeout passes.
func eventually(timeout time.Duration, cond func() bool) bool {
	return testkit.Poll(timeout, 50*time.Millisecond, cond)
}

// writeCA stores the receiver's certificate as OFICINA_EXTRA_CA_FILE would
// name it.
func writeCA(t *testing.T, recv *hooks.Receiver) string {
	t.Helper()
	path := t.TempDir() + "/receiver-ca.pem"
	if err := os.WriteFile(path, recv.CAPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
