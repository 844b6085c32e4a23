// Package httpkit is the test kit's HTTP layer: the public, admin and
// portal servers of one test on real HTTP over the test database, every
// answer checked against the OpenAPI document. The layer below
// (ops/testkit) knows no HTTP server, so tests of tenant, streams or the
// dispatcher do not compile them.
package httpkit

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"

	"oficina/http/admin"
	"oficina/http/portal"
	"oficina/http/public"
	"oficina/ops/testkit"
	"oficina/schema/secretbox"
	"oficina/schema/service"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
	"oficina/tenant/ratelimit"
)

// API is a public and admin API on real HTTP over the test database.
type API struct {
	URL, AdminURL string
	AdminToken    string
	Auth          *tenant.Authenticator
	Bus           *tenant.Bus
	Public        *public.Server
	client        *http.Client
	contract      *contractCheck // nil: answers not checked (benchmarks)
}

// APIOptions tune NewAPI.
type APIOptions struct {
	Now   func() time.Time
	Guard public.Guard
	// Publisher publishes events after commit (nil: nothing is published).
	Publisher streams.AfterCommitter
	// Destinations checks webhook URLs (nil: the production guard).
	Destinations webhooks.URLChecker
	// Limiter is the company rate limit (nil: none, so tests may send any
	// number of requests).
	Limiter *ratelimit.Limiter
	// TrustedProxies: X-Forwarded-For is read from these peers only (the
	// test client connects from loopback).
	TrustedProxies []netip.Prefix
	// Secrets seals webhook secrets (nil: Keyring, the tests' ring).
	Secrets *secretbox.Keyring
	// DB is the pool both APIs use (nil: the shared test database; see
	// testkit.ProxiedDB for one a test can take away).
	DB *bun.DB
	// FrameAncestors are the origins allowed to embed the portal.
	FrameAncestors []string
	// Idempotency is told each replay and refusal over an
	// Idempotency-Key (public.Deps.Idempotency).
	Idempotency func(result string)
	// Events is JetStream for GET /events/stream (nil: it answers 503).
	Events jetstream.JetStream
}

// NewAPI starts both listeners for one test.
func NewAPI(t testing.TB, o APIOptions) *API {
	t.Helper()
	d := o.DB
	if d == nil {
		d = testkit.DB(t)
	}
	auth := tenant.NewAuthenticator(d, tenant.AuthConfig{Base: service.Base{Now: o.Now}})
	bus, err := tenant.NewBus(auth, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.Secrets == nil {
		o.Secrets = testkit.Keyring(t)
	}
	pub, err := public.New(public.Deps{Base: service.Base{Now: o.Now}, DB: d, Auth: auth, Guard: o.Guard,
		Publisher: o.Publisher, Destinations: o.Destinations, Limiter: o.Limiter, TrustedProxies: o.TrustedProxies,
		Secrets: o.Secrets, Idempotency: o.Idempotency, Events: o.Events})
	if err != nil {
		t.Fatal(err)
	}
	a := &API{AdminToken: "test-admin-token-0123456789abcdef0123", Auth: auth, Bus: bus, Public: pub}
	// Before the servers' cleanups, so that its own runs after they close.
	a.contract = newContractCheck(t, pub)
	var portalPub streams.AfterCommitter
	if o.Publisher != nil {
		portalPub = o.Publisher
	}
	po, err := portal.New(portal.Deps{Base: service.Base{Now: o.Now}, DB: d, Secrets: o.Secrets, Destinations: o.Destinations, Publisher: portalPub,
		OpenAPI: pub.OpenAPI(), FrameAncestors: o.FrameAncestors, TrustedProxies: o.TrustedProxies})
	if err != nil {
		t.Fatal(err)
	}
	// The portal is served beside the API on the public listener, and the
	// API gets its paths as sent (no ServeMux in front to clean them), as
	// in production (ops/stack).
	api := a.contract.wrap(pub)
	outside := http.NewServeMux()
	outside.Handle(portal.Prefix, po)
	ps := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, portal.Prefix) {
			outside.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	}))
	as := httptest.NewServer(admin.New(admin.Deps{Base: service.Base{Now: o.Now}, DB: d, Workers: testkit.WorkerDB(t), Token: a.AdminToken, Bus: bus, Destinations: o.Destinations,
		Publisher: o.Publisher, Secrets: o.Secrets, PortalURL: func() string { return ps.URL + portal.Prefix }}))
	t.Cleanup(ps.Close)
	t.Cleanup(pub.Close) // first: open event streams end, so ps.Close does not wait for them
	t.Cleanup(as.Close)
	a.URL, a.AdminURL, a.client = ps.URL, as.URL, ps.Client()
	return a
}

// Response is a decoded answer.
type Response struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// ErrorCode is error.code of an envelope ("" when absent).
func (r *Response) ErrorCode() string {
	e, _ := r.Body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// Req describes a request.
type Req struct {
	Method, Path, Key string
	Body              any // string/[]byte sent as is; anything else JSON-encoded
	Header            map[string]string
}

// Do sends a public API request (Path relative to /public/v1). The answer
// is checked against the OpenAPI document (see contract.go).
func (a *API) Do(t testing.TB, r Req) *Response {
	t.Helper()
	h := map[string]string{}
	if r.Key != "" {
		h["Authorization"] = "Bearer " + r.Key
	}
	for k, v := range r.Header {
		h[k] = v
	}
	out := a.send(t, r.Method, a.URL+public.Prefix+r.Path, r.Body, h)
	a.contract.claim(t, out.Header.Get("Request-Id"))
	return out
}

// Admin sends an admin API request (Path relative to /admin/v1).
func (a *API) Admin(t testing.TB, method, path string, body any) *Response {
	t.Helper()
	return a.send(t, method, a.AdminURL+admin.Prefix+path, body, map[string]string{"Authorization": "Bearer " + a.AdminToken})
}

func (a *API) send(t testing.TB, method, url string, body any, h map[string]string) *Response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := &Response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &out.Body)
	}
	return out
}
