package bench

import (
	"context"
	"fmt"
	"sync/atomic"
)

// meGetLimited: GET /me for a company with a (very high) ceiling, so every
// request goes through the shared JetStream limiter; compare with me_get
// (issue 3: throughput with the limiter on vs off, and its added latency).
func meGetLimited() Scenario {
	return Scenario{Name: "me_get_limited", Ceiling: "pgbench_s_tps", Prepare: func(ctx context.Context, env *Env) (Op, error) {
		t, err := env.NewTenant(ctx, "bench me limited", []string{"team:read"})
		if err != nil {
			return nil, err
		}
		if err := env.Admin(ctx, "PATCH", "/companies/"+t.CompanyID, map[string]any{"rate_limit_unlimited": false, "rate_limit_override": 1_000_000_000}, nil, 200); err != nil {
			return nil, err
		}
		return func(ctx context.Context, _, _ int) error {
			return env.Public(ctx, "GET", "/me", t.Key, nil, nil, 200)
		}, nil
	}}
}

// leadsCreateIdempotent: leads_create with a fresh Idempotency-Key on every
// request (issue 3: the cost of storing the answer with the write).
func leadsCreateIdempotent() Scenario {
	var seq atomic.Int64
	return Scenario{Name: "leads_create_idem", Ceiling: "pgbench_n_tps", Prepare: func(ctx context.Context, env *Env) (Op, error) {
		ts, err := env.tenants(ctx, "leads idem", 32, []string{"leads:create", "tasks:create", "leads:read"})
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, w, _ int) error {
			n := seq.Add(1)
			return env.CallWith(ctx, "POST", env.BaseURL+"/public/v1/leads", ts[w%len(ts)].Key, map[string]string{"Idempotency-Key": fmt.Sprintf("bench-%d", n)},
				map[string]any{"name": fmt.Sprintf("Idem %d", n), "email": fmt.Sprintf("idem%d@example.com", n)}, nil, 201)
		}, nil
	}}
}

// Derived figures that compare two scenarios of the same run.
func Derived(figs []Figure) []Figure {
	v := map[string]float64{}
	for _, f := range figs {
		v[f.Name] = f.Value
	}
	var out []Figure
	if on, off := v["me_get_limited_rps"], v["me_get_rps"]; on > 0 && off > 0 {
		out = append(out, Figure{"limiter_throughput_ratio", on / off, "ratio"},
			Figure{"limiter_added_p50_ms", v["me_get_limited_p50_ms"] - v["me_get_p50_ms"], "ms"})
	}
	if on, off := v["leads_create_idem_p50_ms"], v["leads_create_p50_ms"]; on > 0 && off > 0 {
		out = append(out, Figure{"idempotency_added_p50_ms", on - off, "ms"})
	}
	return out
}
