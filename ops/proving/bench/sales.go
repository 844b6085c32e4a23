package bench

import (
	"context"
	"fmt"
)

// saleCompany prepares a company for sales: an account, two catalog
// products (one with a variation) and the create body (two catalog items,
// three installments), as the figure asks.
func (e *Env) saleCompany(ctx context.Context, t *Tenant) (string, error) {
	var acc, p1, p2 map[string]any
	if err := e.Admin(ctx, "POST", "/companies/"+t.CompanyID+"/finance_accounts", map[string]any{"name": "Banco"}, &acc, 201); err != nil {
		return "", err
	}
	if err := e.Admin(ctx, "POST", "/companies/"+t.CompanyID+"/products", map[string]any{"name": "Cadeira", "price_cents": 20000,
		"promotional_price_cents": 18000, "stock_quantity": 100_000_000}, &p1, 201); err != nil {
		return "", err
	}
	if err := e.Admin(ctx, "POST", "/companies/"+t.CompanyID+"/products", map[string]any{"name": "Camisa", "price_cents": 5000,
		"variations": []map[string]any{{"name": "M", "stock_quantity": 100_000_000}}}, &p2, 201); err != nil {
		return "", err
	}
	vars, _ := p2["variations"].([]any)
	if len(vars) == 0 {
		return "", fmt.Errorf("bench: product without variation: %v", p2)
	}
	v, _ := vars[0].(map[string]any)
	return fmt.Sprintf(`{"items":[{"type":"catalog","product_id":%q,"quantity":2},`+
		`{"type":"catalog","product_id":%q,"variation_id":%q}],"shipping_cents":1000,`+
		`"payment_plan":{"mode":"installments","payment_method":"boleto","installments":[`+
		`{"amount_cents":14000,"due_date":"2099-01-10"},{"amount_cents":14000,"due_date":"2099-02-10"},`+
		`{"amount_cents":14000,"due_date":"2099-03-10"}]}}`, p1["id"], p2["id"], v["id"]), nil
}

// salesCreate: POST /sales with an Idempotency-Key, two catalog items and
// installments (issue 7).
func salesCreate() Scenario {
	return Scenario{Name: "sales_create", Ceiling: "pgbench_n_tps", Write: true, Prepare: func(ctx context.Context, env *Env) (Op, error) {
		ts, err := env.tenants(ctx, "sales", 32, []string{"sales:create", "sales:read", "webhooks:create"})
		if err != nil {
			return nil, err
		}
		bodies := make([]RawJSON, len(ts))
		for i, t := range ts {
			b, err := env.saleCompany(ctx, t)
			if err != nil {
				return nil, err
			}
			bodies[i] = RawJSON(b)
			if err := env.Subscribe(ctx, t, "sale.*"); err != nil {
				return nil, err
			}
		}
		return func(ctx context.Context, w, _ int) error {
			i := w % len(ts)
			return env.Create(ctx, "/sales", ts[i].Key, bodies[i], nil)
		}, nil
	}}
}

// salesGet: GET /sales/{id} (issue 7).
func salesGet() Scenario {
	return Scenario{Name: "sales_get", Ceiling: "pgbench_s_tps", Prepare: func(ctx context.Context, env *Env) (Op, error) {
		ts, err := env.tenants(ctx, "sales get", 4, []string{"sales:create", "sales:read"})
		if err != nil {
			return nil, err
		}
		var ids []string
		keys := map[string]string{}
		for _, t := range ts {
			body, err := env.saleCompany(ctx, t)
			if err != nil {
				return nil, err
			}
			for j := 0; j < 8; j++ {
				var s struct{ ID string }
				if err := env.Public(ctx, "POST", "/sales", t.Key, RawJSON(body), &s, 201); err != nil {
					return nil, err
				}
				ids = append(ids, s.ID)
				keys[s.ID] = t.Key
			}
		}
		return func(ctx context.Context, w, i int) error {
			id := ids[(w+i)%len(ids)]
			return env.Public(ctx, "GET", "/sales/"+id, keys[id], nil, nil, 200)
		}, nil
	}}
}
