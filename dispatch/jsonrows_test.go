package dispatch_test

import (
	"reflect"
	"testing"

	"oficina/dispatch"
	"oficina/ops/testkit"
	"oficina/schema/webhooks"
	"oficina/tenant"
)

// Issue 28 item 2: the dispatcher reads rows as JSON (to_jsonb in
// oficina_dispatch_views) into the records' own models, so each model's
// JSON names must be its table's columns: a field named otherwise would
// read as its zero value, silently. Every list of rows in the view is
// checked; the deliveries and the company are built key by key in the SQL
// (jsonb_build_object), and the company's model is held to its columns all
// the same, since those keys are column names.
func TestRowsReadAsJSONNameEachColumnAsItsTableDoes(t *testing.T) {
	t.Parallel()
	rows := map[string]testkit.RowAsJSON{
		"Endpoints": {Table: "webhook_endpoints", Model: webhooks.Row{}},
		"Company":   {Table: "companies", Model: tenant.Company{}},
		"Keys":      {Table: "api_keys", Model: tenant.APIKey{}, Dropped: []string{"secret_hash"}},
		"Members":   {Table: "members", Model: tenant.Member{}},
	}
	view := reflect.TypeFor[dispatch.CompanyView]()
	var check []testkit.RowAsJSON
	for i := range view.NumField() {
		name := view.Field(i).Name
		if name == "Deliveries" {
			continue
		}
		r, ok := rows[name]
		if !ok {
			t.Errorf("the view's %s: say which table's rows it reads", name)
			continue
		}
		check = append(check, r)
	}
	testkit.JSONNamesAreColumns(t, check...)
}
