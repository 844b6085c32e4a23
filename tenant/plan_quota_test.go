package tenant_test

import (
	"testing"

	"oficina/tenant"
)

// Spec plans: a company's monthly quota of orders or of sales is none when
// it is set unlimited, its own when it set one, else its plan's — one rule
// for both (issue 28 item 2).
func TestTheEffectiveMonthlyQuotaIsUnlimitedOwnOrThePlans(t *testing.T) {
	t.Parallel()
	own := 7
	plan := tenant.PlanStart.MonthlyRecordQuota()
	for _, tc := range []struct {
		name      string
		own       *int
		unlimited bool
		want      *int
	}{
		{"unlimited wins over its own", &own, true, nil},
		{"its own", &own, false, &own},
		{"the plan's", nil, false, plan},
	} {
		got := tenant.PlanStart.EffectiveMonthlyQuota(tc.own, tc.unlimited)
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if !tenant.OwnQuotaInRange(nil) || !tenant.OwnQuotaInRange(&own) || tenant.OwnQuotaInRange(new(-1)) ||
		tenant.OwnQuotaInRange(new(tenant.MaxOwnQuota+1)) {
		t.Error("own quota range: want nil and 0..MaxOwnQuota only")
	}
}
