package mail_test

import (
	"context"
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
