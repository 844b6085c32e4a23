package bench

import (
	"context"

	"oficina/tenant"
)

// Scenarios lists the scenarios in run order; modules append theirs.
func Scenarios() []Scenario {
	return []Scenario{meGet(), meGetLimited(), ordersCreate(), salesCreate(), salesGet(), leadsCreate(), leadsCreateIdempotent()}
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
