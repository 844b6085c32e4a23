package public_test

import (
	"slices"
	"testing"
)

// The dashboard's order settings, checklists and connected calendars (admin
// API) validate what they store: 422 naming the field, 404 for ids of
// another company.
func TestAdminOrderSettingsChecklistsAndCalendarsValidate(t *testing.T) {
	t.Parallel()
	e := newOrderEnv(t, orderPerms...)
	other := newOrderEnv(t, orderPerms...)
	foreignType := other.Admin(t, "POST", "/service_order_types", map[string]any{"name": "T"}).Body["id"]
	base := "/companies/" + e.Co.Company.ID
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		want               []string
	}{
		{"unknown completion order", "PATCH", "/service_order_settings", map[string]any{"technician_completion_order": "lead_first"}, 422,
			[]string{"technician_completion_order:invalid_value"}},
		{"negative quota", "PATCH", "/service_order_settings", map[string]any{"monthly_order_quota": -1}, 422, []string{"monthly_order_quota:out_of_range"}},
		{"checklist without name", "POST", "/service_order_checklists", map[string]any{"items": []map[string]any{{"description": ""}}}, 422,
			[]string{"items[0].description:invalid_value", "name:invalid_value"}},
		{"checklist of another company's type", "POST", "/service_order_checklists", map[string]any{"name": "X", "type_id": foreignType}, 404, nil},
		{"calendar provider", "POST", "/connected_calendars", map[string]any{"member_id": e.Co.Owner.ID, "provider": "icloud",
			"external_calendar_id": "x"}, 422, []string{"provider:invalid_value"}},
		{"calendar of another company's member", "POST", "/connected_calendars", map[string]any{"member_id": other.Co.Owner.ID,
			"provider": "google", "external_calendar_id": "x"}, 404, nil},
		{"unknown order", "POST", "/service_orders/so_00000000000000000000000000/technician_completions",
			map[string]any{"technician_id": e.Co.Owner.ID, "done": true}, 404, nil},
	} {
		r := e.API.Admin(t, tc.method, base+tc.path, tc.body)
		if r.Status != tc.status || (tc.want != nil && !slices.Equal(soFieldErrors(r), tc.want)) {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
		}
	}
	s := e.Admin(t, "PATCH", "/service_order_settings", map[string]any{"required_fields": []string{"items", "items"},
		"technician_completion_order": "any"}).Body
	if !slices.Equal(soStrings(s["required_fields"]), []string{"items"}) || s["technician_completion_order"] != "any" {
		t.Errorf("settings %v", s)
	}
	s = e.Admin(t, "PATCH", "/service_order_settings", map[string]any{"monthly_order_quota": 5}).Body
	if !slices.Equal(soStrings(s["required_fields"]), []string{"items"}) || s["effective_monthly_order_quota"] != 5.0 {
		t.Errorf("omitted fields kept: %v", s)
	}
}

func soStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
