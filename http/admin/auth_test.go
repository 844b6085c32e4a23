package admin_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"oficina/http/admin"
	"oficina/ops/testkit"
	"oficina/schema/service"
	"oficina/tenant/ratelimit"
)

func adminGet(t *testing.T, url, token, xff string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", url+admin.Prefix+"/nope", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// Issue 15 item 7: an operator token shorter than 32 bytes is never
// accepted, not even when it matches.
func TestShortOperatorTokenIsRefused(t *testing.T) {
	t.Parallel()
	short := strings.Repeat("x", admin.MinTokenLen-1)
	srv := httptest.NewServer(admin.New(admin.Deps{DB: testkit.DB(t), Token: short}))
	t.Cleanup(srv.Close)
	if r := adminGet(t, srv.URL, short, ""); r.StatusCode != 401 {
		t.Errorf("a %d-byte token: %d, want 401", len(short), r.StatusCode)
	}
}

// Issue 15 item 7: operator token failures are throttled per client
// address like the public API's key failures: past the ceiling the address
// gets 429 with Retry-After, the right token included, and another address
// is not affected.
func TestOperatorTokenFailuresAreThrottledPerAddress(t *testing.T) {
	t.Parallel()
	now := time.Now()
	clock := func() time.Time { return now }
	token := strings.Repeat("t", admin.MinTokenLen)
	srv := httptest.NewServer(admin.New(admin.Deps{Base: service.Base{Now: clock}, DB: testkit.DB(t), Token: token,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}))
	t.Cleanup(srv.Close)
	const attacker, other = "203.0.113.9", "198.51.100.7"
	for i := range ratelimit.DefaultAuthFailures {
		if r := adminGet(t, srv.URL, "wrong-token-"+strings.Repeat("w", 40), attacker); r.StatusCode != 401 {
			t.Fatalf("failure %d: %d", i+1, r.StatusCode)
		}
	}
	r := adminGet(t, srv.URL, token, attacker)
	if r.StatusCode != 429 || r.Header.Get("Retry-After") == "" {
		t.Errorf("the right token from the throttled address: %d (Retry-After %q), want 429", r.StatusCode, r.Header.Get("Retry-After"))
	}
	if r := adminGet(t, srv.URL, token, other); r.StatusCode != 404 {
		t.Errorf("another address with the right token: %d, want 404 (route_not_found: authenticated)", r.StatusCode)
	}
}
