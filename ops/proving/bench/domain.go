package bench

import (
	"context"
	"fmt"
	"sync/atomic"
)

// The hot-tenant comparison: the same write from 32 clients on one company
// (HotTenant) and spread over 32 companies (HotTenantSpread).
const (
	HotTenant       = "orders_hot"
	HotTenantSpread = "orders_create"
)

// tenants creates n benchmark companies; scenarios spread their clients
// over them, as a multi-tenant platform's load is spread (one company's
// gapless numbering serialises its own writes on each commit).
func (e *Env) tenants(ctx context.Context, label string, n int, perms []string) ([]*Tenant, error) {
	out := make([]*Tenant, n)
	for i := range out {
		t, err := e.NewTenant(ctx, fmt.Sprintf("bench %s %d", label, i), perms)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// ordersCreate: POST /service_orders with an Idempotency-Key, one
// subscribed endpoint per company (issue 6), from 32 clients over
// companies companies (32: spread; 1: the hot tenant).
func ordersCreate(name string, companies int) Scenario {
	return Scenario{Name: name, Ceiling: "pgbench_n_tps", Write: true, Prepare: func(ctx context.Context, env *Env) (Op, error) {
		ts, err := env.tenants(ctx, name, companies, []string{"service_orders:create", "webhooks:create", "service_orders:read"})
		if err != nil {
			return nil, err
		}
		techs := make([]string, len(ts))
		for i, t := range ts {
			var m struct{ ID string }
			if err := env.Admin(ctx, "POST", "/companies/"+t.CompanyID+"/members", map[string]any{"name": "Tech", "role": "MEMBER", "type": "technician"}, &m, 201); err != nil {
				return nil, err
			}
			techs[i] = m.ID
			if err := env.Subscribe(ctx, t, "service_order.*"); err != nil {
				return nil, err
			}
		}
		return func(ctx context.Context, w, _ int) error {
			i := w % len(ts)
			return env.Create(ctx, "/service_orders", ts[i].Key, map[string]any{
				"client_name": "Cliente", "technician_id": techs[i], "priority": "high",
				"items": []map[string]any{{"description": "Visita", "quantity": 1, "unit_price_cents": 15000, "total_cents": 15000}},
			}, nil)
		}, nil
	}}
}

// leadsCreate: POST /leads with an Idempotency-Key and the default task
// (issue 8).
func leadsCreate() Scenario {
	var seq atomic.Int64
	return Scenario{Name: "leads_create", Ceiling: "pgbench_n_tps", Write: true, Prepare: func(ctx context.Context, env *Env) (Op, error) {
		ts, err := env.tenants(ctx, "leads", 32, []string{"leads:create", "tasks:create", "leads:read"})
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, w, _ int) error {
			n := seq.Add(1)
			return env.Create(ctx, "/leads", ts[w%len(ts)].Key, map[string]any{
				"name": fmt.Sprintf("Lead %d", n), "email": fmt.Sprintf("lead%d@example.com", n), "source": "bench",
			}, nil)
		}, nil
	}}
}
