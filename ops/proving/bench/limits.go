package bench

import (
	"context"
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
