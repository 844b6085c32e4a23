package public_test

import (
	"net/netip"
	"strconv"
	"testing"
	"time"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/service"
	"oficina/tenant"
	"oficina/tenant/ratelimit"
)

// behindProxy is an API whose only trusted proxy is the test client
// (loopback): every request arrives as if through a proxy that appended
// the client's address to X-Forwarded-For.
func behindProxy(t *testing.T) *rlEnv {
	t.Helper()
	clk := testkit.NowClock()
	lim := ratelimit.New(ratelimit.NewMemory(), ratelimit.Config{Base: service.Base{Now: clk.Now}})
	api := httpkit.NewAPI(t, httpkit.APIOptions{Now: clk.Now, Limiter: lim,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
	return &rlEnv{api: api, clock: clk}
}

// via is the header a standard proxy sends for a client at addr that
// wrote forged itself ("" = nothing).
func via(forged, addr string) map[string]string {
	if forged == "" {
		return map[string]string{"X-Forwarded-For": addr}
	}
	return map[string]string{"X-Forwarded-For": forged + ", " + addr}
}

// Issue 15 item 1: behind a trusted proxy, a stolen key bound to an allow
// list is refused from outside it even when the client writes an allowed
// address as the first X-Forwarded-For hop.
func TestForgedFirstHopDoesNotPassAnAllowList(t *testing.T) {
	t.Parallel()
	e := behindProxy(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.KeyWith(t, tenant.KeyInput{MemberID: co.Owner.ID, Permissions: []string{"team:read"},
		AllowedCIDRs: []string{"198.51.100.7/32"}})
	for _, tc := range []struct {
		name   string
		header map[string]string
		status int
	}{
		{"the allowed client through the proxy", via("", "198.51.100.7"), 200},
		{"another client forging the allowed address", via("198.51.100.7", "203.0.113.9"), 401},
		{"another client", via("", "203.0.113.9"), 401},
		{"no header: the proxy itself", nil, 401},
	} {
		h := map[string]string{"Authorization": "Bearer " + key.Secret}
		for k, v := range tc.header {
			h[k] = v
		}
		if r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Header: h}); r.Status != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, r.Status, tc.status)
		}
	}
}

// Issue 15 item 1, part 5 item 3: varying the forged first hop does not
// evade the authentication-failure throttle, and a client that forges
// another address as first hop locks out only itself.
func TestForgedFirstHopNeitherEvadesNorMisdirectsTheThrottle(t *testing.T) {
	t.Parallel()
	e := behindProxy(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	e.api.Admin(t, "PATCH", "/companies/"+co.Company.ID, map[string]any{"rate_limit_unlimited": true})
	key := co.OwnerKey(t, "team:read")
	const attacker, victim = "203.0.113.9", "198.51.100.7"
	for i := range ratelimit.DefaultAuthFailures {
		h := via("192.0.2."+strconv.Itoa(i%250), attacker) // a new forged hop each time
		h["Authorization"] = "Bearer " + tenant.NewKeySecret()
		if r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Header: h}); r.Status != 401 {
			t.Fatalf("failure %d: %d %s", i+1, r.Status, r.Raw)
		}
		e.clock.Advance(100 * time.Millisecond)
	}
	h := via(victim, attacker)
	h["Authorization"] = "Bearer " + key
	if r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Header: h}); r.Status != 429 || r.Header.Get("Retry-After") == "" {
		t.Errorf("the attacker's address after the ceiling: %d, want 429 with Retry-After", r.Status)
	}
	h = via("", victim)
	h["Authorization"] = "Bearer " + key
	if r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Header: h}); r.Status != 200 {
		t.Errorf("the victim, whose address the attacker forged: %d, want 200", r.Status)
	}
}

// Issue 15 item 1: a client that forges another address as the first
// X-Forwarded-For hop and fails authentication up to the throttle's
// ceiling cannot lock that address out: the failures count against the
// address the trusted proxy saw (the attacker's, now refused), and the
// victim, arriving through the same proxy, still signs in. With the old
// first-hop rule every failure was charged to the victim.
func TestForgedFirstHopCannotLockOutAnotherAddress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, attacker, victim string }{
		{"IPv4", "203.0.113.9", "198.51.100.7"},
		{"IPv6 victim", "203.0.113.10", "2001:db8::7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := behindProxy(t)
			co := testkit.NewCompany(t, tenant.CompanyInput{})
			e.api.Admin(t, "PATCH", "/companies/"+co.Company.ID, map[string]any{"rate_limit_unlimited": true})
			key := co.OwnerKey(t, "team:read")
			do := func(forged, addr, secret string) *httpkit.Response {
				h := via(forged, addr)
				h["Authorization"] = "Bearer " + secret
				return e.api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Header: h})
			}
			for i := range ratelimit.DefaultAuthFailures {
				if r := do(tc.victim, tc.attacker, tenant.NewKeySecret()); r.Status != 401 {
					t.Fatalf("bad key %d forging the victim: %d %s", i+1, r.Status, r.Raw)
				}
				e.clock.Advance(100 * time.Millisecond)
			}
			if r := do("", tc.victim, key); r.Status != 200 {
				t.Errorf("the victim with a valid key after %d failures forged in its name: %d, want 200",
					ratelimit.DefaultAuthFailures, r.Status)
			}
			if r := do("", tc.attacker, key); r.Status != 429 {
				t.Errorf("the attacker's own address: %d, want 429 (the failures were its own)", r.Status)
			}
		})
	}
}
