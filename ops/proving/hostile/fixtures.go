package hostile

import (
	"context"
	"fmt"
	"time"

	"oficina/tenant"
)

// Company is one tenant of the run.
type Company struct {
	ID  string
	Key string // an API key of the owner holding every permission
}

// Provision creates a company through the admin API: Supra plan without a
// rate ceiling (the run sends thousands of requests), an owner and a key
// with every permission.
func Provision(ctx context.Context, adminURL, adminToken, name string) (Company, error) {
	c, err := newClient(Target{AdminURL: adminURL, AdminToken: adminToken})
	if err != nil {
		return Company{}, err
	}
	defer c.close()
	co, err := c.adminWant(ctx, "POST", "/companies", map[string]any{"name": name, "plan": "supra", "rate_limit_unlimited": true}, 201)
	if err != nil {
		return Company{}, err
	}
	id, _ := co["id"].(string)
	m, err := c.adminWant(ctx, "POST", "/companies/"+id+"/members", map[string]any{"name": "Owner", "role": "OWNER"}, 201)
	if err != nil {
		return Company{}, err
	}
	k, err := c.adminWant(ctx, "POST", "/companies/"+id+"/api_keys",
		map[string]any{"member_id": m["id"], "name": "hostile", "permissions": tenant.AllPermissions()}, 201)
	if err != nil {
		return Company{}, err
	}
	secret, _ := k["secret"].(string)
	return Company{ID: id, Key: secret}, nil
}

// fixtures are the records of one company that cases point at: the ids
// other companies must not reach, and what valid bodies refer to.
type fixtures struct {
	Company
	Label                          string // "A" or "B"
	Owner, Technician, Technician2 string
	Seller                         string
	Client, Type, Account, Product string
	FromQuote, ConvertQuote        string // approved quotes
	Order, Sale, Payment, OpenInst string
	Endpoint, Delivery             string
	RecoverTask, PortalSession     string
	// LookAlike is an address captured as a lead (LookAlikeClient) that
	// the look-alike cases spell otherwise.
	LookAlike, LookAlikeClient string
	// LeadsOnlyKey holds leads:create alone, TwinKey every permission
	// like Key (same member), and TwinRotatedKey is TwinKey rotated with
	// a grace period: the keys that replay another key's request.
	LeadsOnlyKey, TwinKey, TwinRotatedKey string
	saleRemaining                         int64
	hook                                  string // the webhook URL the target accepts
	other                                 *fixtures
}

// ids are every id of the company, for the leak check.
func (f *fixtures) ids() []string {
	var out []string
	for _, s := range []string{f.ID, f.Owner, f.Technician, f.Technician2, f.Seller, f.Client, f.Type, f.Account, f.Product,
		f.FromQuote, f.ConvertQuote, f.Order, f.Sale, f.Payment, f.OpenInst, f.Endpoint, f.Delivery, f.RecoverTask, f.PortalSession,
		f.LookAlikeClient} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// pathID is the id of f for the path parameter after segment (the
// collection name): "sales" → the sale.
func (f *fixtures) pathID(collection string) (string, bool) {
	switch collection {
	case "clients":
		return f.Client, true
	case "sales":
		return f.Sale, true
	case "service_orders":
		return f.Order, true
	case "webhook_endpoints":
		return f.Endpoint, f.Endpoint != ""
	case "quotes":
		return f.ConvertQuote, true
	case "payments":
		return f.Payment, true
	case "deliveries":
		return f.Delivery, f.Delivery != ""
	case "recover_tasks":
		return f.RecoverTask, f.RecoverTask != ""
	case "portal_sessions":
		return f.PortalSession, f.PortalSession != ""
	}
	return "", false
}

// bodyID is the id of f a body field named name refers to.
func (f *fixtures) bodyID(name string) (string, bool) {
	switch name {
	case "client_id":
		return f.Client, true
	case "technician_id", "assignee_id":
		return f.Technician, true
	case "support_technician_ids":
		return f.Technician2, true
	case "seller_id":
		return f.Seller, true
	case "type_id":
		return f.Type, true
	case "account_id":
		return f.Account, true
	case "quote_id":
		return f.FromQuote, true
	case "product_id":
		return f.Product, true
	case "installment_id":
		return f.OpenInst, true
	}
	return "", false
}

// bases are valid bodies per route: a case changes one thing in them, so
// the answer is about that thing (a numeric field is judged by its rules,
// not refused for a missing name). Routes without one get {} and only the
// cases that do not need a valid rest.
var bases = map[string]func(f *fixtures) map[string]any{
	"POST /service_orders": func(f *fixtures) map[string]any {
		return map[string]any{"client_id": f.Client, "client_name": "Cliente Hostil", "client_phone": "+55 11 99999-0000",
			"client_description": "Barulho no motor", "service_address": "Rua A, 1", "technician_id": f.Technician,
			"support_technician_ids": []any{f.Technician2}, "type_id": f.Type, "priority": "high", "internal_notes": "hostile",
			"scheduled_start": "2030-01-01T10:00:00Z", "scheduled_end": "2030-01-01T12:00:00Z", "discount_cents": 100,
			"additional_costs_cents": 50, "items": []any{map[string]any{"description": "Visita", "quantity": 1,
				"unit_price_cents": 15000, "total_cents": 15000}}}
	},
	"PATCH /service_orders/{id}": func(f *fixtures) map[string]any {
		return map[string]any{"client_name": "Cliente Hostil", "priority": "low", "internal_notes": "hostile", "discount_cents": 0,
			"additional_costs_cents": 0, "service_address": "Rua B, 2", "technician_id": f.Technician,
			"scheduled_start": "2030-01-02T10:00:00Z", "scheduled_end": "2030-01-02T12:00:00Z",
			"items": []any{map[string]any{"description": "Visita", "quantity": 1, "unit_price_cents": 15000, "total_cents": 15000}}}
	},
	"POST /service_orders/{id}/status":   func(*fixtures) map[string]any { return map[string]any{"status": "scheduled"} },
	"POST /service_orders/{id}/complete": func(*fixtures) map[string]any { return map[string]any{"link_financial_transaction": false} },
	"POST /service_orders/from_quote": func(f *fixtures) map[string]any {
		return map[string]any{"quote_id": f.FromQuote, "priority": "high", "service_address": "Rua C, 3", "technician_id": f.Technician,
			"client_phone": "+55 11 99999-0001", "internal_notes": "hostile"}
	},
	"POST /sales": func(f *fixtures) map[string]any { return saleBody(f) },
	"PATCH /sales/{id}": func(*fixtures) map[string]any {
		return map[string]any{"notes": "hostile", "production_notes": "hostile"}
	},
	"POST /sales/{id}/cancel": func(*fixtures) map[string]any { return map[string]any{"reason": "hostile"} },
	"PATCH /sales/{id}/installments": func(f *fixtures) map[string]any {
		return map[string]any{"installments": []any{map[string]any{"amount_cents": f.saleRemaining, "due_date": "2099-05-01"}}}
	},
	"POST /sales/{id}/payments": func(f *fixtures) map[string]any {
		return map[string]any{"amount_cents": 1, "paid_at": "2026-01-03", "account_id": f.Account}
	},
	"POST /sales/{id}/payments/{payment_id}/cancel": func(*fixtures) map[string]any { return map[string]any{"reason": "hostile"} },
	"POST /sales/{id}/versions": func(f *fixtures) map[string]any {
		return map[string]any{"reason": "hostile", "seller_id": f.Seller}
	},
	"POST /quotes/{id}/convert_to_sale": func(f *fixtures) map[string]any {
		return map[string]any{"notes": "hostile", "sale_date": "2026-01-01", "shipping_cents": 0, "seller_id": f.Seller}
	},
	"POST /webhook_endpoints/{id}/recover": func(*fixtures) map[string]any { return pastWindow() },
	"POST /portal_sessions": func(*fixtures) map[string]any {
		return map[string]any{"capabilities": []any{"read_only"}, "ttl_seconds": 3600}
	},
	"POST /leads": func(*fixtures) map[string]any {
		return map[string]any{"name": "Lead Hostil", "email": "lead@hostile.test", "phone": "+55 11 98888-0000", "source": "hostile",
			"notes": "hostile", "task": map[string]any{"title": "Ligar", "due_in_hours": 24, "priority": "high"}}
	},
	"POST /webhook_endpoints": func(f *fixtures) map[string]any {
		return map[string]any{"url": f.hook, "description": "hostile", "events": []any{"product.deleted"}}
	},
	"PATCH /webhook_endpoints/{id}":              func(*fixtures) map[string]any { return map[string]any{"description": "hostile"} },
	"POST /webhook_endpoints/{id}/rotate_secret": func(*fixtures) map[string]any { return map[string]any{"grace_period_seconds": 60} },
}

func saleBody(f *fixtures) map[string]any {
	return map[string]any{"client_id": f.Client, "seller_id": f.Seller, "sale_date": "2026-01-01", "notes": "hostile",
		"items":          []any{map[string]any{"type": "catalog", "product_id": f.Product, "quantity": 1}},
		"discount_cents": 0, "shipping_cents": 100, "additional_costs_cents": 0,
		"payment_plan": map[string]any{"mode": "installments", "account_id": f.Account, "installments": []any{
			map[string]any{"amount_cents": 550, "due_date": "2099-01-10"}, map[string]any{"amount_cents": 550, "due_date": "2099-02-10"}}}}
}

// setUp creates the records of f through the admin and public APIs.
func (r *run) setUp(ctx context.Context, f *fixtures) error {
	co := "/companies/" + f.ID
	admin := func(path string, body map[string]any) (string, error) {
		m, err := r.c.adminWant(ctx, "POST", co+path, body, 201)
		if err != nil {
			return "", err
		}
		id, _ := m["id"].(string)
		return id, nil
	}
	public := func(path string, body any, want int) (map[string]any, error) {
		return r.c.publicWant(ctx, "POST", path, f.Key, body, want)
	}
	me, err := r.c.publicWant(ctx, "GET", "/me", f.Key, nil, 200)
	if err != nil {
		return err
	}
	if org, _ := me["organization"].(map[string]any); org["id"] != f.ID {
		return fmt.Errorf("hostile: the key of company %s belongs to %v", f.ID, org["id"])
	}
	steps := []struct {
		dst  *string
		path string
		body map[string]any
	}{
		{&f.Technician, "/members", map[string]any{"name": "Técnico", "role": "MEMBER", "type": "technician"}},
		{&f.Technician2, "/members", map[string]any{"name": "Auxiliar", "role": "MEMBER", "type": "technician"}},
		{&f.Seller, "/members", map[string]any{"name": "Vendedor", "role": "MEMBER", "type": "seller"}},
		{&f.Type, "/service_order_types", map[string]any{"name": "Instalação"}},
		{&f.Client, "/clients", map[string]any{"name": "Cliente Hostil " + f.Label}},
		{&f.Account, "/finance_accounts", map[string]any{"name": "Banco", "is_default": true}},
		{&f.Product, "/products", map[string]any{"name": "Cadeira", "price_cents": 1000, "stock_quantity": 1_000_000}},
	}
	for _, s := range steps {
		if *s.dst, err = admin(s.path, s.body); err != nil {
			return err
		}
	}
	quote := map[string]any{"client_id": f.Client, "client_name": "Cliente Hostil", "status": "approved",
		"items": []any{map[string]any{"description": "Instalação", "quantity": 1, "unit_price_cents": 5000, "total_cents": 5000}}}
	if f.FromQuote, err = admin("/quotes", quote); err != nil {
		return err
	}
	if f.ConvertQuote, err = admin("/quotes", quote); err != nil {
		return err
	}
	o, err := public("/service_orders", bases["POST /service_orders"](f), 201)
	if err != nil {
		return err
	}
	f.Order, _ = o["id"].(string)
	s, err := public("/sales", saleBody(f), 201)
	if err != nil {
		return err
	}
	f.Sale, _ = s["id"].(string)
	s, err = public("/sales/"+f.Sale+"/payments", map[string]any{"amount_cents": 550, "paid_at": "2026-01-02"}, 200)
	if err != nil {
		return err
	}
	if ps, _ := s["payments"].([]any); len(ps) > 0 {
		p, _ := ps[0].(map[string]any)
		f.Payment, _ = p["id"].(string)
	}
	for _, it := range asList(s["installments"]) {
		if it["status"] != "paid" && f.OpenInst == "" {
			f.OpenInst, _ = it["id"].(string)
		}
	}
	rem, _ := s["remaining_cents"].(float64)
	f.saleRemaining = int64(rem)
	if f.Payment == "" || f.OpenInst == "" {
		return fmt.Errorf("hostile: sale without payment or open installment: %v", s)
	}
	ps, err := r.c.publicWant(ctx, "POST", "/portal_sessions", f.Key, map[string]any{}, 201)
	if err != nil {
		return err
	}
	f.PortalSession, _ = ps["id"].(string)
	if err := r.lookAlikeFixtures(ctx, f); err != nil {
		return err
	}
	if err := r.keyFixtures(ctx, f); err != nil {
		return err
	}
	e, err := r.c.publicWant(ctx, "POST", "/webhook_endpoints", f.Key,
		map[string]any{"url": r.t.HookURL, "description": "hostile", "events": []any{"product.deleted"}}, 201)
	if err != nil {
		// The target's destination guard decides; the routes are still
		// covered with unknown ids.
		r.note("company %s: no webhook endpoint fixture (%v); endpoint routes run with unknown ids only", f.Label, err)
		return nil
	}
	f.Endpoint, _ = e["id"].(string)
	// A recovery of a window with nothing to resend: done at once, so the
	// endpoint has no running task that would refuse the cases' recoveries.
	t, err := r.c.publicWant(ctx, "POST", "/webhook_endpoints/"+f.Endpoint+"/recover", f.Key, pastWindow(), 202)
	if err != nil {
		return err
	}
	f.RecoverTask, _ = t["id"].(string)
	if _, err := public("/webhook_endpoints/"+f.Endpoint+"/ping", nil, 202); err != nil {
		return err
	}
	deadline := time.Now().Add(15 * time.Second)
	for f.Delivery == "" && time.Now().Before(deadline) {
		l, err := r.c.publicWant(ctx, "GET", "/webhook_endpoints/"+f.Endpoint+"/deliveries", f.Key, nil, 200)
		if err != nil {
			return err
		}
		if ds := asList(l["data"]); len(ds) > 0 {
			f.Delivery, _ = ds[0]["id"].(string)
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if f.Delivery == "" {
		r.note("company %s: the ping left no delivery within 15 s; resend runs with unknown ids only", f.Label)
	}
	return nil
}

func asList(v any) []map[string]any {
	raw, _ := v.([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, x := range raw {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// pastWindow is a recovery window long before any fixture.
func pastWindow() map[string]any {
	return map[string]any{"since": "2020-01-01T00:00:00Z", "until": "2020-01-02T00:00:00Z"}
}

// lookAlikeFixtures captures the lead whose address the look-alike cases
// spell otherwise (composed, so its NFD spelling differs in bytes).
func (r *run) lookAlikeFixtures(ctx context.Context, f *fixtures) error {
	f.LookAlike = "jos\u00e9." + f.ID + "@hostile.test"
	l, err := r.c.publicWant(ctx, "POST", "/leads", f.Key, map[string]any{"name": "Parecido", "email": f.LookAlike, "task": nil}, 201)
	if err != nil {
		return err
	}
	lead, _ := l["lead"].(map[string]any)
	f.LookAlikeClient, _ = lead["id"].(string)
	if f.LookAlikeClient == "" {
		return fmt.Errorf("hostile: the look-alike lead has no id: %v", l)
	}
	return nil
}

// keyFixtures creates f's other keys through the admin API, acting as the
// member of f.Key.
func (r *run) keyFixtures(ctx context.Context, f *fixtures) error {
	co := "/companies/" + f.ID
	list, err := r.c.adminWant(ctx, "GET", co+"/api_keys", nil, 200)
	if err != nil {
		return err
	}
	var member string
	for _, k := range asList(list["data"]) {
		if k["display_prefix"] == tenant.DisplayPrefix(f.Key) {
			member, _ = k["member_id"].(string)
		}
	}
	if member == "" {
		return fmt.Errorf("hostile: the key of company %s is not in its key list", f.ID)
	}
	create := func(name string, perms []string) (id, secret string, err error) {
		k, err := r.c.adminWant(ctx, "POST", co+"/api_keys", map[string]any{"member_id": member, "name": name, "permissions": perms}, 201)
		id, _ = k["id"].(string)
		secret, _ = k["secret"].(string)
		return id, secret, err
	}
	if _, f.LeadsOnlyKey, err = create("hostile leads only", []string{"leads:create"}); err != nil {
		return err
	}
	twin, secret, err := create("hostile twin", tenant.AllPermissions())
	if err != nil {
		return err
	}
	f.TwinKey = secret
	rot, err := r.c.adminWant(ctx, "POST", co+"/api_keys/"+twin+"/rotate", map[string]any{"grace_period_seconds": 3600}, 200)
	if err != nil {
		return err
	}
	nk, _ := rot["new_key"].(map[string]any)
	f.TwinRotatedKey, _ = nk["secret"].(string)
	if f.LeadsOnlyKey == "" || f.TwinKey == "" || f.TwinRotatedKey == "" {
		return fmt.Errorf("hostile: keys without a secret: %v", rot)
	}
	return nil
}
