package sales_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/schema/apierr"
	"oficina/schema/sales"
	"oficina/streams"
	"oficina/tenant"
)

// Spec 5.2 and DESIGN "Tenancy": the one-statement read of a sale renders
// exactly what the read in a company transaction renders, an id of another
// company is 404 like an unknown one, and the read refuses to run inside a
// transaction scoped to another company (it would re-scope it).
func TestSaleReadIsScopedToItsCompany(t *testing.T) {
	t.Parallel()
	a := testkit.NewCompany(t, tenant.CompanyInput{})
	b := testkit.NewCompany(t, tenant.CompanyInput{})
	ctx := context.Background()
	var want *sales.Row
	a.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		w := &streams.Write{Tx: tx, CompanyID: a.Company.ID, Actor: streams.Actor{Kind: streams.ActorAPI}, At: time.Now()}
		s, err := sales.Create(ctx, w, sales.SaleCreate{
			Items:       []sales.SaleItemInput{{Type: sales.ItemCustom, Name: new("x"), UnitPriceCents: new(int64(1000))}},
			PaymentPlan: &sales.PaymentPlanInput{Mode: sales.ModeInstallments, Installments: []sales.PaymentPlanInstallmentInput{{AmountCents: new(int64(1000)), DueDate: day(9)}}},
		}, sales.CreateOptions{})
		if err != nil {
			return err
		}
		want, err = sales.Load(ctx, tx, s.ID, sales.LoadOptions{})
		return err
	})
	got, err := sales.Read(ctx, a.DB, a.Company.ID, want.ID)
	if err != nil {
		t.Fatal(err)
	}
	gj, _ := json.Marshal(got.View(false))
	wj, _ := json.Marshal(want.View(false))
	if string(gj) != string(wj) {
		t.Fatalf("read %s\nwant %s", gj, wj)
	}
	for name, id := range map[string]string{"another company's": b.Company.ID, "empty": ""} {
		if _, err := sales.Read(ctx, a.DB, id, want.ID); err == nil {
			t.Errorf("%s company read the sale", name)
		}
	}
	var e *apierr.Error
	if _, err := sales.Read(ctx, b.DB, b.Company.ID, want.ID); !errors.As(err, &e) || e.Code != apierr.ResourceNotFound {
		t.Errorf("another company's sale: %v", err)
	}
	err = tenant.Tx(ctx, b.DB, b.Company.ID, func(ctx context.Context, tx bun.Tx) error {
		var n int
		return tx.NewRaw("SELECT count(*) FROM oficina_sale_get(?, ?)", a.Company.ID, want.ID).Scan(ctx, &n)
	})
	if err == nil {
		t.Error("the read re-scoped B's transaction to A")
	}
}
