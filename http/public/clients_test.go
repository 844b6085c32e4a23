package public_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/clients"
	"oficina/tenant"
)

// Part 1: an id that belongs to another company behaves as nonexistent.
func TestGetClientAndOtherCompaniesIDs(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	a := testkit.NewCompany(t, tenant.CompanyInput{})
	b := testkit.NewCompany(t, tenant.CompanyInput{})
	var cl *clients.Row
	a.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		cl, err = clients.Create(ctx, tx, a.Company.ID, clients.ClientCreate{Name: "Maria", Email: testkit.Ptr("Maria@Example.com"), Phone: testkit.Ptr("(11) 98765-4321")}, time.Now())
		return err
	})
	r := api.Do(t, httpkit.Req{Method: "GET", Path: "/clients/" + cl.ID, Key: a.OwnerKey(t, "clients:read")})
	if r.Status != 200 || r.Body["object"] != "client" || r.Body["name"] != "Maria" || r.Body["email"] != "Maria@Example.com" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	for name, path := range map[string]string{"other company": "/clients/" + cl.ID, "malformed": "/clients/nope", "unknown": "/clients/cli_00000000000000000000000000"} {
		r := api.Do(t, httpkit.Req{Method: "GET", Path: path, Key: b.OwnerKey(t, "clients:read")})
		if r.Status != 404 || r.ErrorCode() != "resource_not_found" {
			t.Errorf("%s: %d %s", name, r.Status, r.Raw)
		}
	}
}

func TestPhoneAndEmailNormalisation(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"(11) 98765-4321": "+5511987654321", "011 98765-4321": "+5511987654321", "+55 11 98765-4321": "+5511987654321",
		"+1 (415) 555-0100": "+14155550100", "0044 20 7946 0958": "+442079460958",
	} {
		if got, ok := clients.NormalizePhone(in); !ok || got != want {
			t.Errorf("NormalizePhone(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"abc", "12", "+1234567890123456", "11 9876x4321"} {
		if _, ok := clients.NormalizePhone(bad); ok {
			t.Errorf("NormalizePhone(%q) accepted", bad)
		}
	}
	if got, ok := clients.NormalizeEmail("Ana.Silva@Example.COM"); !ok || got != "ana.silva@example.com" {
		t.Errorf("email: %q %v", got, ok)
	}
	if _, ok := clients.NormalizeEmail("Ana <ana@x.com>"); ok {
		t.Error("display-name form accepted")
	}
}
