package public_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"oficina/ops/testkit"
	"oficina/tenant"
)

// Parts 1, 2.5, 3.1 and 4.3: an order created through the API is created as
// the dashboard does: company number, items' totals stored as sent,
// subtotal and total calculated, automatic checklists applied, status from
// scheduled_start; the creation yields service_order.created with the order
// exactly as GET returns it.
func TestCreateServiceOrderAsTheDashboardDoes(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	kind := e.Admin(t, "POST", "/service_order_types", map[string]any{"name": "Instalação"}).Body["id"].(string)
	other := e.Admin(t, "POST", "/service_order_types", map[string]any{"name": "Reparo"}).Body["id"].(string)
	all := e.Admin(t, "POST", "/service_order_checklists", map[string]any{"name": "Segurança",
		"items": []map[string]any{{"description": "EPI", "required": true}, {"description": "Foto", "required": false}}}).Body["id"]
	e.Admin(t, "POST", "/service_order_checklists", map[string]any{"name": "Instalação", "type_id": kind,
		"items": []map[string]any{{"description": "Teste de pressão", "required": true}}})
	e.Admin(t, "POST", "/service_order_checklists", map[string]any{"name": "Reparo", "type_id": other,
		"items": []map[string]any{{"description": "Peça trocada"}}})
	e.Admin(t, "POST", "/service_order_checklists", map[string]any{"name": "Antigo", "active": false,
		"items": []map[string]any{{"description": "Nunca"}}})

	o := e.create(t, map[string]any{
		"client_name": "Maria Souza", "client_phone": "(11) 98765-4321", "type_id": kind, "priority": "high",
		"scheduled_start": "2030-01-10T13:00:00Z", "scheduled_end": "2030-01-10T15:00:00Z",
		"items": []map[string]any{
			{"description": "Mão de obra", "quantity": 2, "unit_price_cents": 10000, "total_cents": 15000},
			{"description": "Cabo", "quantity": 1.5, "unit_price_cents": 333, "total_cents": 500},
		},
		"discount_cents": 1000, "additional_costs_cents": 250,
	})
	if o["object"] != "service_order" || o["status"] != "scheduled" || o["number"] != 1.0 || o["priority"] != "high" {
		t.Fatalf("order: %v", o)
	}
	items := o["items"].([]any)
	if items[0].(map[string]any)["total_cents"] != 15000.0 || items[1].(map[string]any)["quantity"] != 1.5 {
		t.Errorf("items not stored as sent: %v", items)
	}
	if o["subtotal_cents"] != 15500.0 || o["total_cents"] != 14750.0 {
		t.Errorf("subtotal %v total %v", o["subtotal_cents"], o["total_cents"])
	}
	var got []string
	for _, it := range o["checklist"].([]any) {
		m := it.(map[string]any)
		got = append(got, fmt.Sprintf("%s/%v/%v", m["description"], m["required"], m["done"]))
		if m["description"] == "EPI" && m["checklist_id"] != all {
			t.Errorf("checklist_id %v", m["checklist_id"])
		}
	}
	slices.Sort(got)
	if want := []string{"EPI/true/false", "Foto/false/false", "Teste de pressão/true/false"}; !slices.Equal(got, want) {
		t.Errorf("checklist %v, want %v", got, want)
	}

	evs := e.log.Next(t)
	if len(evs) != 1 || evs[0].Type != "service_order.created" {
		t.Fatalf("events %v", testkit.Types(evs))
	}
	r := e.Do(t, "GET", "/service_orders/"+o["id"].(string), nil)
	if r.Status != 200 || !soSameJSON(t, r.Body, o) || !soSameJSON(t, evs[0].Data.Object, r.Body) {
		t.Errorf("GET %s\nevent %v", r.Raw, evs[0].Data.Object)
	}

	p := e.create(t, map[string]any{"client_name": "João"})
	if p["status"] != "pending" || p["number"] != 2.0 || p["priority"] != "medium" || p["total_cents"] != 0.0 ||
		len(p["checklist"].([]any)) != 2 || p["technician_id"] != nil || p["appointment_id"] != nil {
		t.Errorf("second order: %v", p)
	}
}

// Part 1: the company's order number has no gaps and no duplicates, also
// under concurrent creation; each company counts on its own.
func TestOrderNumbersHaveNoGapsOrDuplicatesUnderConcurrency(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	const n = 24
	var mu sync.Mutex
	var numbers []int
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.Do(t, "POST", "/service_orders", map[string]any{"client_name": fmt.Sprintf("Cliente %d", i)})
			if r.Status != 201 {
				t.Errorf("create %d: %d %s", i, r.Status, r.Raw)
				return
			}
			mu.Lock()
			numbers = append(numbers, int(r.Body["number"].(float64)))
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(numbers)
	for i, got := range numbers {
		if got != i+1 {
			t.Fatalf("numbers %v", numbers)
		}
	}
	other := newOrderEnv(t, orderPerms...)
	if o := other.create(t, map[string]any{"client_name": "X"}); o["number"] != 1.0 {
		t.Errorf("other company starts at %v", o["number"])
	}
}

// Parts 1, 5.2 and 8: the monthly order quota (the company's own, else the
// plan's) gives 403 plan_limit_reached and saves nothing; a refused
// creation leaves no gap in the numbers.
func TestOrderQuotaGivesPlanLimitReached(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	s := e.Admin(t, "GET", "/service_order_settings", nil).Body
	if s["effective_monthly_order_quota"] != nil || s["monthly_order_quota"] != nil {
		t.Fatalf("supra has no default quota: %v", s)
	}
	e.Admin(t, "PATCH", "/service_order_settings", map[string]any{"monthly_order_quota": 2})
	e.create(t, map[string]any{"client_name": "A"})
	e.create(t, map[string]any{"client_name": "B"})
	e.log.Next(t)
	r := e.Do(t, "POST", "/service_orders", map[string]any{"client_name": "C"})
	if r.Status != 403 || r.ErrorCode() != "plan_limit_reached" {
		t.Fatalf("over quota: %d %s", r.Status, r.Raw)
	}
	if n := e.count(t, "service_orders"); n != 2 {
		t.Errorf("%d orders saved", n)
	}
	if evs := e.log.Next(t); len(evs) != 0 {
		t.Errorf("refused creation yielded %v", testkit.Types(evs))
	}
	if s := e.Admin(t, "GET", "/service_order_settings", nil).Body; s["orders_this_month"] != 2.0 || s["effective_monthly_order_quota"] != 2.0 {
		t.Errorf("settings %v", s)
	}
	e.Admin(t, "PATCH", "/service_order_settings", map[string]any{"monthly_order_quota": 3})
	if o := e.create(t, map[string]any{"client_name": "C"}); o["number"] != 3.0 {
		t.Errorf("number after refusal %v", o["number"])
	}
	e.Admin(t, "PATCH", "/service_order_settings", map[string]any{"order_quota_unlimited": true})
	e.create(t, map[string]any{"client_name": "D"})

	start := testkit.NewCompany(t, tenant.CompanyInput{Plan: testkit.Ptr(tenant.PlanStart)})
	if s := e.API.Admin(t, "GET", "/companies/"+start.Company.ID+"/service_order_settings", nil).Body; s["effective_monthly_order_quota"] != 300.0 {
		t.Errorf("start plan default: %v", s)
	}
}

// Parts 2.5 and 7: invalid bodies are 422 listing every field (client_name
// is required even with client_id) and save nothing.
func TestCreateServiceOrderValidation(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	long := make([]byte, 201)
	for i := range long {
		long[i] = 'a'
	}
	for _, tc := range []struct {
		name string
		body any
		want []string
	}{
		{"client_name required even with client_id", map[string]any{"client_id": "cli_00000000000000000000000000"}, []string{"client_name:required"}},
		{"blank client_name", map[string]any{"client_name": "   "}, []string{"client_name:required"}},
		{"client_name too long", map[string]any{"client_name": string(long)}, []string{"client_name:too_long"}},
		{"priority outside the list", map[string]any{"client_name": "A", "priority": "highest"}, []string{"priority:invalid_value"}},
		{"item fields required", map[string]any{"client_name": "A", "items": []map[string]any{{}}},
			[]string{"items[0].description:required", "items[0].quantity:required", "items[0].total_cents:required", "items[0].unit_price_cents:required"}},
		{"quantity above zero, amounts not negative", map[string]any{"client_name": "A", "items": []map[string]any{
			{"description": "x", "quantity": 0, "unit_price_cents": -1, "total_cents": 1}}},
			[]string{"items[0].quantity:out_of_range", "items[0].unit_price_cents:out_of_range"}},
		{"discount above subtotal plus costs", map[string]any{"client_name": "A", "discount_cents": 100}, []string{"discount_cents:out_of_range"}},
		{"end before start", map[string]any{"client_name": "A", "scheduled_start": "2030-01-01T10:00:00Z", "scheduled_end": "2030-01-01T09:00:00Z"},
			[]string{"scheduled_end:out_of_range"}},
		{"timestamp shape", map[string]any{"client_name": "A", "scheduled_start": "2030-01-01T10:00:00-03:00"}, []string{"scheduled_start:invalid_timestamp"}},
		{"calculated totals are not sent", map[string]any{"client_name": "A", "total_cents": 5}, []string{"total_cents:unknown_field"}},
		{"support listed twice", map[string]any{"client_name": "A", "support_technician_ids": []string{"mem_x", "mem_x"}},
			[]string{"support_technician_ids[1]:invalid_value"}},
		{"NUL in text", map[string]any{"client_name": "A\u0000"}, []string{"client_name:invalid_value"}},
		{"wrong type", map[string]any{"client_name": "A", "send_to_technician": "yes"}, []string{"send_to_technician:invalid_type"}},
	} {
		r := e.Do(t, "POST", "/service_orders", tc.body)
		if r.Status != 422 || r.ErrorCode() != "validation_failed" || !slices.Equal(soFieldErrors(r), tc.want) {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
		}
	}
	if r := e.Do(t, "POST", "/service_orders", `{"client_name":`); r.Status != 400 || r.ErrorCode() != "invalid_request" {
		t.Errorf("broken JSON: %d %s", r.Status, r.Raw)
	}
	if n := e.count(t, "service_orders"); n != 0 {
		t.Errorf("%d orders saved", n)
	}
}

// Parts 1, 4.3 and 5.2: client, type and technicians must belong to the
// company (technicians: members of type technician), else 404.
func TestCreateReferencesMustBelongToTheCompany(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	other := newOrderEnv(t, orderPerms...)
	foreignClient := other.Admin(t, "POST", "/clients", map[string]any{"name": "Foreign"}).Body["id"]
	foreignTech := other.technician(t, "Foreign tech")
	foreignType := other.Admin(t, "POST", "/service_order_types", map[string]any{"name": "T"}).Body["id"]
	seller := e.Co.Member(t, tenant.MemberInput{Type: testkit.Ptr(tenant.TypeSeller)})
	gone := e.Co.Member(t, tenant.MemberInput{Type: testkit.Ptr(tenant.TypeTechnician), Status: testkit.Ptr("removed")})
	tech := e.technician(t, "Tech")
	for name, body := range map[string]map[string]any{
		"client of another company":          {"client_id": foreignClient},
		"unknown client":                     {"client_id": "cli_00000000000000000000000000"},
		"technician of another company":      {"technician_id": foreignTech.ID},
		"technician who is not a technician": {"technician_id": seller.ID},
		"removed technician":                 {"technician_id": gone.ID},
		"support of another company":         {"technician_id": tech.ID, "support_technician_ids": []string{foreignTech.ID}},
		"malformed technician":               {"technician_id": "nope"},
		"type of another company":            {"type_id": foreignType},
	} {
		body["client_name"] = "A"
		r := e.Do(t, "POST", "/service_orders", body)
		if r.Status != 404 || r.ErrorCode() != "resource_not_found" {
			t.Errorf("%s: %d %s", name, r.Status, r.Raw)
		}
	}
	if n := e.count(t, "service_orders"); n != 0 {
		t.Errorf("%d orders saved", n)
	}
	cl := e.Admin(t, "POST", "/clients", map[string]any{"name": "Ana"}).Body["id"]
	o := e.create(t, map[string]any{"client_id": cl, "client_name": "Ana (impresso)", "technician_id": tech.ID})
	if o["client_id"] != cl || o["client_name"] != "Ana (impresso)" || o["technician_id"] != tech.ID {
		t.Errorf("order %v", o)
	}
}

// Parts 2.3 and 4.3: type_id is required while a type is required_on_create
// (422); an inactive type is refused; fields the company requires in its
// settings are listed each in errors.
func TestTypeAndCompanyRequiredFields(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	kind := e.Admin(t, "POST", "/service_order_types", map[string]any{"name": "Instalação", "required_on_create": true}).Body["id"].(string)
	off := e.Admin(t, "POST", "/service_order_types", map[string]any{"name": "Velho", "active": false}).Body["id"].(string)
	r := e.Do(t, "POST", "/service_orders", map[string]any{"client_name": "A"})
	if r.Status != 422 || !slices.Equal(soFieldErrors(r), []string{"type_id:required"}) {
		t.Errorf("type required: %d %s", r.Status, r.Raw)
	}
	if r := e.Do(t, "POST", "/service_orders", map[string]any{"client_name": "A", "type_id": nil}); r.Status != 422 {
		t.Errorf("null type: %d %s", r.Status, r.Raw)
	}
	if r := e.Do(t, "POST", "/service_orders", map[string]any{"client_name": "A", "type_id": off}); r.Status != 422 ||
		!slices.Equal(soFieldErrors(r), []string{"type_id:invalid_value"}) {
		t.Errorf("inactive type: %d %s", r.Status, r.Raw)
	}
	e.create(t, map[string]any{"client_name": "A", "type_id": kind})

	e.Admin(t, "PATCH", "/service_order_settings", map[string]any{"required_fields": []string{"service_address", "technician_id", "items", "client_phone"}})
	r = e.Do(t, "POST", "/service_orders", map[string]any{"client_name": "A", "client_phone": "11 99999-0000"})
	want := []string{"items:required", "service_address:required", "technician_id:required", "type_id:required"}
	if r.Status != 422 || !slices.Equal(soFieldErrors(r), want) {
		t.Errorf("company required fields: %d %s", r.Status, r.Raw)
	}
	if r := e.API.Admin(t, "PATCH", "/companies/"+e.Co.Company.ID+"/service_order_settings",
		map[string]any{"required_fields": []string{"client_name", "nope"}}); r.Status != 422 {
		t.Errorf("unknown required field accepted: %d %s", r.Status, r.Raw)
	}
}
