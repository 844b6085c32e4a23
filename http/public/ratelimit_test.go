package public_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/service"
	"oficina/streams/jsconfig"
	"oficina/tenant"
	"oficina/tenant/ratelimit"
)

// rlEnv is an API with the company rate limit on an in-memory store and a
// test clock.
type rlEnv struct {
	api   *httpkit.API
	clock *testkit.Clock
}

func newRLEnv(t *testing.T) *rlEnv {
	t.Helper()
	clk := testkit.NowClock()
	lim := ratelimit.New(ratelimit.NewMemory(), ratelimit.Config{Base: service.Base{Now: clk.Now}})
	return &rlEnv{api: httpkit.NewAPI(t, httpkit.APIOptions{Now: clk.Now, Limiter: lim}), clock: clk}
}

// limited creates a company whose ceiling is override requests a minute.
func limited(t *testing.T, api *httpkit.API, override int) *testkit.Company {
	t.Helper()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	api.Admin(t, "PATCH", "/companies/"+co.Company.ID, map[string]any{"rate_limit_override": override})
	return co
}

// want checks a response's status, code and rate-limit headers ("" = absent).
func want(t *testing.T, label string, r *httpkit.Response, status int, limit, remaining, reset, retryAfter string) {
	t.Helper()
	got := [4]string{r.Header.Get("RateLimit-Limit"), r.Header.Get("RateLimit-Remaining"), r.Header.Get("RateLimit-Reset"), r.Header.Get("Retry-After")}
	if r.Status != status || got != [4]string{limit, remaining, reset, retryAfter} {
		t.Fatalf("%s: %d %v (limit, remaining, reset, retry-after), want %d %v\n%s", label, r.Status, got, status,
			[4]string{limit, remaining, reset, retryAfter}, r.Raw)
	}
	if status == 429 && r.ErrorCode() != "rate_limit_exceeded" {
		t.Fatalf("%s: code %s", label, r.ErrorCode())
	}
}

// Part 8: sliding window over the last 60 s, headers on every response
// through the counter, exact edge: request L+1 inside 60 s is refused with
// Retry-After; it is allowed again when the oldest request leaves.
func TestRateLimitWindowEdgeAndHeaders(t *testing.T) {
	t.Parallel()
	e := newRLEnv(t)
	co := limited(t, e.api, 3)
	key := co.OwnerKey(t, "team:read")
	me := func() *httpkit.Response { return e.api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: key}) }
	want(t, "1st", me(), 200, "3", "2", "60", "")
	e.clock.Advance(10 * time.Second)
	want(t, "2nd", me(), 200, "3", "1", "50", "")
	e.clock.Advance(10 * time.Second)
	want(t, "3rd", me(), 200, "3", "0", "40", "")
	e.clock.Advance(10 * time.Second)
	want(t, "4th inside the window", me(), 429, "3", "0", "30", "30")
	e.clock.Advance(29*time.Second + 500*time.Millisecond)
	want(t, "half a second before the oldest leaves", me(), 429, "3", "0", "1", "1")
	e.clock.Advance(500 * time.Millisecond)
	want(t, "the oldest left", me(), 200, "3", "0", "10", "")
}

// Part 8: two `oficina serve` processes sharing one NATS together allow
// exactly the ceiling in any 60 s window.
func TestRateLimitIsSharedByTwoAPIProcesses(t *testing.T) {
	t.Parallel()
	ns := testkit.NATS(t)
	clk := testkit.NowClock()
	process := func() *httpkit.API {
		nc, err := nats.Connect(ns.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		kv, err := jsconfig.EnsureRateLimit(context.Background(), js, jsconfig.Config{})
		if err != nil {
			t.Fatal(err)
		}
		lim := ratelimit.New(ratelimit.NewKV(kv), ratelimit.Config{Base: service.Base{Now: clk.Now}})
		return httpkit.NewAPI(t, httpkit.APIOptions{Now: clk.Now, Limiter: lim})
	}
	a, b := process(), process()
	co := limited(t, a, 4)
	key := co.OwnerKey(t, "team:read")
	for i, api := range []*httpkit.API{a, b, b, a} {
		r := api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: key})
		want(t, "request "+strconv.Itoa(i+1), r, 200, "4", strconv.Itoa(3-i), "60", "")
	}
	for _, api := range []*httpkit.API{a, b} {
		want(t, "5th", api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: key}), 429, "4", "0", "60", "60")
	}
	clk.Advance(time.Minute)
	want(t, "a minute later", b.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: key}), 200, "4", "3", "60", "")
}

// Part 8: a 403 by permission comes after the counter and spends budget; a
// 401 spends nothing and carries no rate-limit headers.
func TestForbiddenSpendsBudgetUnauthorizedDoesNot(t *testing.T) {
	t.Parallel()
	e := newRLEnv(t)
	co := limited(t, e.api, 3)
	key := co.OwnerKey(t, "team:read")
	revoked := co.Key(t, co.Owner, "team:read")
	e.api.Admin(t, "POST", "/companies/"+co.Company.ID+"/api_keys/"+revoked.ID+"/revoke", map[string]any{})
	r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/service_order_types", Key: key})
	if r.ErrorCode() != "permission_missing" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	want(t, "403", r, 403, "3", "2", "60", "")
	for range 5 {
		r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: revoked.Secret})
		want(t, "401 of a revoked key of the company", r, 401, "", "", "", "")
	}
	want(t, "after the 401s", e.api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: key}), 200, "3", "1", "60", "")
	want(t, "403 again", e.api.Do(t, httpkit.Req{Method: "GET", Path: "/service_order_types", Key: key}), 403, "3", "0", "60", "")
	want(t, "spent by 403s", e.api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: key}), 429, "3", "0", "60", "60")
}

// Part 8: a company without a ceiling gets no headers and is never
// refused; a Free company is refused by the plan layer (403), not counted.
func TestNoCeilingMeansNoHeaders(t *testing.T) {
	t.Parallel()
	e := newRLEnv(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	e.api.Admin(t, "PATCH", "/companies/"+co.Company.ID, map[string]any{"rate_limit_unlimited": true})
	key := co.OwnerKey(t, "team:read")
	for range 700 { // above every plan's ceiling
		r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: key})
		want(t, "unlimited", r, 200, "", "", "", "")
	}
	free := testkit.NewCompany(t, tenant.CompanyInput{})
	freeKey := free.OwnerKey(t, "team:read")
	e.api.Admin(t, "PATCH", "/companies/"+free.Company.ID, map[string]any{"plan": "free"})
	r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: freeKey})
	want(t, "free plan", r, 403, "", "", "", "")
	if r.ErrorCode() != "plan_feature_unavailable" {
		t.Fatal(r.ErrorCode())
	}
}

// Part 8: the ceiling is the override or the plan's, and a change applies
// to the very next request (the admin change invalidates the cached
// company at once).
func TestPlanChangeAppliesToTheNextRequest(t *testing.T) {
	t.Parallel()
	e := newRLEnv(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{Plan: testkit.Ptr(tenant.PlanStart)})
	key := co.OwnerKey(t, "team:read")
	me := func() *httpkit.Response { return e.api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: key}) }
	want(t, "start", me(), 200, "60", "59", "60", "")
	e.api.Admin(t, "PATCH", "/companies/"+co.Company.ID, map[string]any{"plan": "pleno"})
	want(t, "pleno", me(), 200, "180", "178", "60", "")
	e.api.Admin(t, "PATCH", "/companies/"+co.Company.ID, map[string]any{"plan": "supra"})
	want(t, "supra", me(), 200, "600", "597", "60", "")
	e.api.Admin(t, "PATCH", "/companies/"+co.Company.ID, map[string]any{"rate_limit_override": 2})
	want(t, "override below what was spent", me(), 429, "2", "0", "60", "60")
}

// Part 5 item 3: repeated authentication failures from one address within
// a minute get 429 with Retry-After before the key is checked (a valid key
// is refused too); they pass once the failures leave the minute. Normal
// use never counts.
func TestAuthFailuresAreThrottledBeforeTheKeyIsChecked(t *testing.T) {
	t.Parallel()
	e := newRLEnv(t)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	e.api.Admin(t, "PATCH", "/companies/"+co.Company.ID, map[string]any{"rate_limit_unlimited": true})
	key := co.OwnerKey(t, "team:read")
	for range 3 * ratelimit.DefaultAuthFailures {
		want(t, "normal use", e.api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: key}), 200, "", "", "", "")
	}
	bad := []map[string]string{{}, {"Authorization": "Bearer nope"}, {"Authorization": "Bearer " + tenant.NewKeySecret()}}
	for i := range ratelimit.DefaultAuthFailures {
		r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Header: bad[i%len(bad)]})
		want(t, "failure "+strconv.Itoa(i+1), r, 401, "", "", "", "")
		e.clock.Advance(time.Second)
	}
	r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: key})
	want(t, "valid key after the ceiling", r, 429, "", "", "", "40")
	e.clock.Advance(40 * time.Second)
	want(t, "the oldest failure left the minute", e.api.Do(t, httpkit.Req{Method: "GET", Path: "/me", Key: key}), 200, "", "", "", "")
}
