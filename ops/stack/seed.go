package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/orders"
	"oficina/tenant"
)

// demoSettings marks the demo company so later seeds find it again.
const demoSettings = `{"demo": true}`

// demo is the demo company of `oficina dev --seed` and its key.
type demo struct {
	companyID string
	key       string // the API key's secret
	keyFile   string // where it is kept for the next runs
	kept      bool   // the key of the last run, still active
	replaced  bool   // a previous demo key was revoked for this one
}

// seed creates the demo company (plan Supra) with an owner, a technician and
// service order types the first time. Its owner key with every permission
// is kept in <data-dir>/demo-key, so every run answers to the key the last
// one printed; only when that key is gone (revoked, expired, the file lost)
// is a new one made, revoking the demo keys left active.
func seed(ctx context.Context, db *bun.DB, bus *tenant.Bus, dataDir string) (*demo, error) {
	now := time.Now()
	// The demo company's id is remembered in <data-dir>: finding it in the
	// database would need a way around row-level security.
	idFile := filepath.Join(dataDir, "demo-company")
	companyID := readTrimmed(idFile)
	exists := companyID != "" && tenant.Tx(ctx, db, companyID, func(ctx context.Context, tx bun.Tx) error {
		_, err := tenant.GetCompany(ctx, tx, companyID)
		return err
	}) == nil
	if !exists {
		var err error
		if companyID, err = createDemo(ctx, db, now); err != nil {
			return nil, fmt.Errorf("seed: %w", err)
		}
		if err := writePrivate(idFile, companyID); err != nil {
			return nil, fmt.Errorf("seed: %w", err)
		}
	}
	d := &demo{companyID: companyID, keyFile: filepath.Join(dataDir, "demo-key")}
	saved := readTrimmed(d.keyFile)
	err := tenant.Tx(ctx, db, companyID, func(ctx context.Context, tx bun.Tx) error {
		keys, err := tenant.ListKeys(ctx, tx)
		if err != nil {
			return err
		}
		var active []tenant.APIKey
		for _, k := range keys {
			if k.Name == "demo" && k.Active(now) {
				active = append(active, k)
			}
		}
		if saved != "" && slices.ContainsFunc(active, func(k tenant.APIKey) bool { return bytes.Equal(k.SecretHash, tenant.HashKey(saved)) }) {
			d.key, d.kept = saved, true
			return nil
		}
		for _, k := range active {
			if _, err := tenant.RevokeKey(ctx, tx, k.ID, tenant.RevokedManually, now); err != nil {
				return err
			}
		}
		d.replaced = len(active) > 0
		var owner tenant.Member
		if err := tx.NewSelect().Model(&owner).Where("role = 'OWNER'").Order("id").Limit(1).Scan(ctx); err != nil {
			return err
		}
		key, err := tenant.CreateKey(ctx, tx, companyID, tenant.KeyInput{
			MemberID: owner.ID, Name: "demo", Permissions: tenant.AllPermissions(),
		}, now)
		if err != nil {
			return err
		}
		d.key = key.Secret
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("seed: key: %w", err)
	}
	if d.kept {
		return d, nil
	}
	// Written after the commit: a file naming a key that never was is
	// worse than a key made again on the next run.
	if err := writePrivate(d.keyFile, d.key); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	return d, bus.Changed(ctx, companyID)
}

// print writes the demo company's lines of the start-up banner; public is
// the public API's base URL.
func (d *demo) print(w io.Writer, public string) {
	how := "new, kept in " + d.keyFile + " for the next runs"
	switch {
	case d.kept:
		how = "the same as the last run, kept in " + d.keyFile
	case d.replaced:
		how = "NEW: the demo key of earlier runs was revoked; this one is kept in " + d.keyFile + " for the next runs"
	}
	fmt.Fprintf(w, "\ndemo company %s (plan supra)\nAPI key (%s):\n  %s\n  curl -H 'Authorization: Bearer %s' %s/public/v1/me\n",
		d.companyID, how, d.key, d.key, public)
}

func readTrimmed(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// writePrivate writes a file of local state readable by its owner only.
func writePrivate(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o600)
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
