package dispatch

import (
	"reflect"
	"strings"
	"testing"
)

// Issue 28 item 2: the dispatcher reads rows as JSON (to_jsonb in
// oficina_dispatch_views) into the records' own models (companyView), so
// each column's field must carry the column's name as its JSON name: a
// field whose names differ would read as its zero value, silently. A column
// the function leaves out of its JSON (an API key's secret_hash) is the one
// field allowed "-".
func TestRowsReadAsJSONNameEachColumnAsItsTableDoes(t *testing.T) {
	t.Parallel()
	leftOut := map[string]bool{"secret_hash": true}
	view := reflect.TypeOf(companyView{})
	for i := range view.NumField() {
		typ := view.Field(i).Type
		for typ.Kind() == reflect.Slice || typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct {
			continue
		}
		var columns int
		checkJSONColumns(t, typ, leftOut, &columns)
		if view.Field(i).Name != "Deliveries" && columns == 0 {
			t.Errorf("%s: no column found: not a row model?", typ)
		}
	}
}

func checkJSONColumns(t *testing.T, typ reflect.Type, leftOut map[string]bool, columns *int) {
	t.Helper()
	for i := range typ.NumField() {
		f := typ.Field(i)
		bunName, _, _ := strings.Cut(f.Tag.Get("bun"), ",")
		if f.Anonymous && f.Type.Kind() == reflect.Struct && bunName == "" {
			checkJSONColumns(t, f.Type, leftOut, columns) // an embedded group of columns (an endpoint's sealed secrets)
			continue
		}
		if bunName == "" || bunName == "-" || strings.HasPrefix(bunName, "table:") {
			continue
		}
		*columns++
		jsonName, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if jsonName == "-" && leftOut[bunName] {
			continue
		}
		if jsonName != bunName {
			t.Errorf("%s.%s: column %q read as JSON %q", typ, f.Name, bunName, jsonName)
		}
	}
}
