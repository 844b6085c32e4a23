package products_test

import (
	"testing"

	"oficina/ops/testkit"
	"oficina/schema/products"
)

// Issue 28 item 2: Lookup reads the picked variations as JSON rows
// (json_agg(x) in sql/oficina_product_lookup.sql) into VariationRow, so its
// JSON names must be the table's columns: one named otherwise would read
// as its zero value, silently.
func TestLookupsVariationsNameEachColumnAsItsTableDoes(t *testing.T) {
	t.Parallel()
	testkit.JSONNamesAreColumns(t, testkit.RowAsJSON{Table: "product_variations", Model: products.VariationRow{}})
}
