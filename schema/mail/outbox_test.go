package mail_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/schema/mail"
	"oficina/tenant"
)

// An enqueue without recipients stores nothing.
func TestNoRecipientsNoMail(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{}) // the owner has no address
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		m, err := mail.ToManagers(ctx, tx, co.Company.ID, "test", "s", "b", time.Now())
		if m != nil {
			t.Error("stored a mail nobody receives")
		}
		return err
	})
}

// DESIGN Tenancy: the sweeper learns only which companies hold expired
// mail, through a narrow definer function, then purges inside each
// company's transaction.
func TestTheSweeperFindsCompaniesWithExpiredMail(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := mail.Enqueue(ctx, tx, co.Company.ID, "test", []string{"a@example.com"}, "s", "b", time.Now())
		return err
	})
	ctx := context.Background()
	const all = 1 << 30
	later, err := mail.ExpiredCompanies(ctx, testkit.WorkerDB(t), time.Now().Add(time.Minute), all)
	if err != nil {
		t.Fatal(err)
	}
	earlier, err := mail.ExpiredCompanies(ctx, testkit.WorkerDB(t), time.Now().Add(-time.Minute), all)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(later, co.Company.ID) || slices.Contains(earlier, co.Company.ID) {
		t.Errorf("company found %v before its mail existed, or not found after", slices.Contains(earlier, co.Company.ID))
	}
}
