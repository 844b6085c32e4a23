package sales_test

import (
	"testing"

	"oficina/ops/testkit"
	"oficina/schema/sales"
)

// Issue 28 item 2: a sale's children are stored on its row as JSON arrays
// of their rows, which Go writes (encodeChildren) and SQL rebuilds with
// to_jsonb (sql/oficina_sale_refresh_docs.sql); both are read back into the
// row models, so each model's JSON names must be its table's columns. A
// payment carries its allocations beside its columns; an allocation's
// company is left out (it is the sale's).
func TestSaleDocumentsNameEachColumnAsItsTableDoes(t *testing.T) {
	t.Parallel()
	testkit.JSONNamesAreColumns(t,
		testkit.RowAsJSON{Table: "sale_items", Model: sales.ItemRow{}},
		testkit.RowAsJSON{Table: "sale_installments", Model: sales.InstallmentRow{}},
		testkit.RowAsJSON{Table: "sale_payments", Model: sales.PaymentRow{}, Added: []string{"allocations"}},
		testkit.RowAsJSON{Table: "sale_payment_allocations", Model: sales.AllocationRow{}, Dropped: []string{"company_id"}},
	)
}
