package testkit

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// RowAsJSON describes a row model that SQL hands to Go as JSON, built by
// to_jsonb(row): every column under its own name.
type RowAsJSON struct {
	Table string // the table whose rows to_jsonb renders
	Model any    // a value of the struct the JSON is decoded into
	// Dropped are columns the struct does not read (its field is json "-",
	// or the statement removes the key, as `to_jsonb(k) - 'secret_hash'`).
	Dropped []string
	// Added are JSON names the statement adds beside the columns.
	Added []string
}

// JSONNamesAreColumns fails t unless each RowAsJSON's JSON names are
// exactly its table's columns (less Dropped, plus Added), read from the
// migrated test database. A field whose JSON name is not its column's
// would decode as its zero value without an error, and a column with no
// field would be dropped on the way; both are silent, hence the test.
func JSONNamesAreColumns(t *testing.T, rows ...RowAsJSON) {
	t.Helper()
	db := OwnerDB(t)
	for _, r := range rows {
		var columns []string
		err := db.NewRaw(`SELECT column_name::text FROM information_schema.columns
			WHERE table_schema = 'public' AND table_name = ? ORDER BY ordinal_position`, r.Table).
			Scan(context.Background(), &columns)
		if err != nil {
			t.Fatalf("testkit: columns of %s: %v", r.Table, err)
		}
		if len(columns) == 0 {
			t.Errorf("%s: no such table", r.Table)
			continue
		}
		want := append(slices.DeleteFunc(columns, func(c string) bool { return slices.Contains(r.Dropped, c) }), r.Added...)
		got := jsonNames(reflect.TypeOf(r.Model))
		for _, c := range want {
			if !slices.Contains(got, c) {
				t.Errorf("%s: column %q has no field of %T named so in JSON", r.Table, c, r.Model)
			}
		}
		for _, n := range got {
			if !slices.Contains(want, n) {
				t.Errorf("%s: %T reads JSON %q, which is no column", r.Table, r.Model, n)
			}
		}
	}
}

// jsonNames are the object keys encoding/json uses for typ's fields.
func jsonNames(typ reflect.Type) []string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	var out []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
			continue
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			out = append(out, jsonNames(f.Type)...) // its fields are promoted
			continue
		case !f.IsExported():
			continue
		case name == "":
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}
