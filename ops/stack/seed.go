package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/orders"
	"oficina/tenant"
)

// demoSettings marks the demo company so later seeds find it again.
const demoSettings = `{"demo": true}`

// seed creates the demo company (plan Supra) with an owner, a technician and
// service order types the first time; every time it issues a fresh owner key
// with every permission (revoking the previous demo key) and prints it once.
func seed(ctx context.Context, db *bun.DB, bus *tenant.Bus, dataDir string, out io.Writer) error {
	now := time.Now()
	// The demo company's id is remembered in <data-dir>: finding it in the
	// database would need a way around row-level security.
	idFile := filepath.Join(dataDir, "demo-company")
	companyID := ""
	if b, err := os.ReadFile(idFile); err == nil {
		companyID = strings.TrimSpace(string(b))
	}
	exists := companyID != "" && tenant.Tx(ctx, db, companyID, func(ctx context.Context, tx bun.Tx) error {
		_, err := tenant.GetCompany(ctx, tx, companyID)
		return err
	}) == nil
	if !exists {
		var err error
		if companyID, err = createDemo(ctx, db, now); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
		if err := os.WriteFile(idFile, []byte(companyID), 0o600); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	var key *tenant.NewKey
	err := tenant.Tx(ctx, db, companyID, func(ctx context.Context, tx bun.Tx) error {
		var owner tenant.Member
		if err := tx.NewSelect().Model(&owner).Where("role = 'OWNER'").Order("id").Limit(1).Scan(ctx); err != nil {
			return err
		}
		keys, err := tenant.ListKeys(ctx, tx)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if k.Name == "demo" && k.RevokedAt == nil {
				if _, err := tenant.RevokeKey(ctx, tx, k.ID, tenant.RevokedManually, now); err != nil {
					return err
				}
			}
		}
		key, err = tenant.CreateKey(ctx, tx, companyID, tenant.KeyInput{
			MemberID: owner.ID, Name: "demo", Permissions: tenant.AllPermissions(),
		}, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("seed: key: %w", err)
	}
	if err := bus.Changed(ctx, companyID); err != nil {
		return err
	}
	fmt.Fprintf(out, "\ndemo company %s (plan supra)\nAPI key (shown once): %s\n  curl -H 'Authorization: Bearer %s' http://localhost:8080/public/v1/me\n\n", companyID, key.Secret, key.Secret)
	return nil
}

func createDemo(ctx context.Context, db *bun.DB, now time.Time) (string, error) {
	name, plan, settings := "Oficina Demo", tenant.PlanSupra, json.RawMessage(demoSettings)
	c, err := tenant.CreateCompany(ctx, db, tenant.CompanyInput{Name: &name, Plan: &plan, Settings: &settings}, now)
	if err != nil {
		return "", err
	}
	err = tenant.Tx(ctx, db, c.ID, func(ctx context.Context, tx bun.Tx) error {
		for _, m := range []tenant.MemberInput{
			{Name: new("Dona Demo"), Email: new("owner@demo.invalid"), Role: new(tenant.RoleOwner)},
			{Name: new("Técnico Demo"), Role: new(tenant.RoleMember), Type: new(tenant.TypeTechnician),
				Permissions: &tenant.MemberPermissions{"service_orders": {"read", "update"}}},
		} {
			if _, err := tenant.CreateMember(ctx, tx, c.ID, m, now); err != nil {
				return err
			}
		}
		for _, t := range []string{"Instalação", "Manutenção"} {
			if _, err := orders.CreateType(ctx, tx, c.ID, orders.ServiceOrderTypeCreate{Name: new(t)}, now); err != nil {
				return err
			}
		}
		return nil
	})
	return c.ID, err
}
