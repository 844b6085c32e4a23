package bench

import (
	"context"

	"oficina/tenant"
)

// Scenarios lists the request scenarios in run order: reads first, then
// the writes, each of which leaves rows (and webhook deliveries) behind.
func Scenarios() []Scenario {
	hot := ordersCreate(HotTenant, 1)
	hot.Ceiling = "" // read against the spread figure: hot_tenant_ratio
	return []Scenario{meGet(), meGetLimited(), salesGet(),
		ordersCreate(HotTenantSpread, 32), hot, leadsCreate(), salesCreate()}
}

// meGet: GET /me with authentication and permission layers (issue 2).
func meGet() Scenario {
	return Scenario{Name: "me_get", Ceiling: "pgbench_s_tps", Prepare: func(ctx context.Context, env *Env) (Op, error) {
		t, err := env.NewTenant(ctx, "bench me", tenant.AllPermissions())
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, _, _ int) error {
			return env.Public(ctx, "GET", "/me", t.Key, nil, nil, 200)
		}, nil
	}}
}
