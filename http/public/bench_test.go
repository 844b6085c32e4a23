package public_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"oficina/http/public"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/streams/jsconfig"
	"oficina/tenant"
	"oficina/tenant/ratelimit"
)

// paired runs without and with a pipeline step in alternation, so the
// machine's noise falls on both alike, and reports each one's median
// latency and the difference (added-p50-ns): the step's added latency.
func paired(b *testing.B, without, with func(i int)) {
	b.Helper()
	var a, c []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		without(i)
		a = append(a, time.Since(start))
		start = time.Now()
		with(i)
		c = append(c, time.Since(start))
		i++
	}
	if len(a) == 0 {
		return
	}
	slices.Sort(a)
	slices.Sort(c)
	pa, pc := a[len(a)/2], c[len(c)/2]
	b.ReportMetric(float64(pa.Nanoseconds()), "without-p50-ns")
	b.ReportMetric(float64(pc.Nanoseconds()), "with-p50-ns")
	b.ReportMetric(float64((pc - pa).Nanoseconds()), "added-p50-ns")
}

// kvLimiter is a limiter on a fresh embedded JetStream, as `oficina serve`
// builds it.
func kvLimiter(b *testing.B) *ratelimit.Limiter {
	b.Helper()
	nc, err := nats.Connect(testkit.NATS(b).ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	kv, err := jsconfig.EnsureRateLimit(context.Background(), js, jsconfig.Config{})
	if err != nil {
		b.Fatal(err)
	}
	return ratelimit.New(ratelimit.NewKV(kv), ratelimit.Config{})
}

// BenchmarkLimiterOnMe: GET /me of a company without a ceiling (not
// counted) and of one whose ceiling is high enough that every request is
// counted and allowed, on the JetStream bucket.
func BenchmarkLimiterOnMe(b *testing.B) {
	api := httpkit.NewAPI(b, httpkit.APIOptions{Limiter: kvLimiter(b)})
	me := func(override map[string]any) func(int) {
		co := testkit.NewCompany(b, tenant.CompanyInput{})
		api.Admin(b, "PATCH", "/companies/"+co.Company.ID, override)
		key := co.OwnerKey(b, "team:read")
		return func(int) {
			if r := api.Do(b, httpkit.Req{Method: "GET", Path: "/me", Key: key}); r.Status != 200 {
				b.Fatalf("%d %s", r.Status, r.Raw)
			}
		}
	}
	paired(b, me(map[string]any{"rate_limit_unlimited": true}), me(map[string]any{"rate_limit_override": 1_000_000_000}))
}

// BenchmarkIdempotencyOnWrite: the same write (a client record and its
// event) without a key and with a fresh key each time.
func BenchmarkIdempotencyOnWrite(b *testing.B) {
	api := httpkit.NewAPI(b, httpkit.APIOptions{})
	public.RegisterTestWrites(api.Public)
	co := testkit.NewCompany(b, tenant.CompanyInput{})
	key := co.OwnerKey(b, "clients:create")
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	post := func(h map[string]string) {
		r := api.Do(b, httpkit.Req{Method: "POST", Path: "/test_writes", Key: key, Header: h, Body: map[string]any{"name": "Bench Ltd"}})
		if r.Status != 201 {
			b.Fatalf("%d %s", r.Status, r.Raw)
		}
	}
	paired(b, func(int) { post(nil) }, func(i int) {
		post(map[string]string{public.IdempotencyHeader: run + "-" + strconv.Itoa(i)})
	})
}
