package sales

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/field"
	"oficina/schema/numbering"
	"oficina/tenant"
)

// NumberSequence is the numbering sequence of sale numbers.
const NumberSequence = "sale"

// Settings are a company's sales settings (dashboard).
type Settings struct {
	bun.BaseModel `bun:"table:sales_settings"`

	CompanyID          string    `bun:"company_id,pk"`
	TrackInFinance     bool      `bun:"track_in_finance"`
	MonthlySaleQuota   *int      `bun:"monthly_sale_quota"`
	SaleQuotaUnlimited bool      `bun:"sale_quota_unlimited"`
	CreatedAt          time.Time `bun:"created_at"`
	UpdatedAt          time.Time `bun:"updated_at"`
}

// SettingsView is the admin representation of the settings.
type SettingsView struct {
	Object             string `json:"object" const:"sales_settings"`
	TrackInFinance     bool   `json:"track_in_finance"`
	MonthlySaleQuota   *int   `json:"monthly_sale_quota"`
	SaleQuotaUnlimited bool   `json:"sale_quota_unlimited"`
	// EffectiveMonthlyQuota is what applies now (null: no quota).
	EffectiveMonthlyQuota *int `json:"effective_monthly_quota"`
}

// SettingsInput changes the settings (admin API).
type SettingsInput struct {
	TrackInFinance     *bool          `json:"track_in_finance"`
	MonthlySaleQuota   field.Opt[int] `json:"monthly_sale_quota" api:"nullable"` // null: the plan's default
	SaleQuotaUnlimited *bool          `json:"sale_quota_unlimited"`
}

// companyContext is what a sale write needs of its company, in one query.
type companyContext struct {
	Plan               tenant.Plan `bun:"plan"`
	Timezone           string      `bun:"timezone"`
	TrackInFinance     bool        `bun:"track_in_finance"`
	MonthlySaleQuota   *int        `bun:"monthly_sale_quota"`
	SaleQuotaUnlimited bool        `bun:"sale_quota_unlimited"`
	DefaultAccountID   *string     `bun:"default_account_id"`
}

// loadContext reads it; every sale write does, so the query is a function
// whose plan PostgreSQL keeps (sql/oficina_sale_context.sql).
func loadContext(ctx context.Context, tx bun.IDB, companyID string) (*companyContext, error) {
	c := new(companyContext)
	if err := tx.NewRaw(`SELECT * FROM oficina_sale_context(?)`, companyID).Scan(ctx, c); err != nil {
		return nil, fmt.Errorf("sales: company settings: %w", err)
	}
	return c, nil
}

// quota is the effective monthly quota, nil when unlimited.
func (c *companyContext) quota() *int {
	return c.Plan.EffectiveMonthlyQuota(c.MonthlySaleQuota, c.SaleQuotaUnlimited)
}

func (c *companyContext) view() SettingsView {
	return SettingsView{Object: "sales_settings", TrackInFinance: c.TrackInFinance, MonthlySaleQuota: c.MonthlySaleQuota,
		SaleQuotaUnlimited: c.SaleQuotaUnlimited, EffectiveMonthlyQuota: c.quota()}
}

// takeNumber counts the sale in this month's quota (403 plan_limit_reached
// when used up) and returns its number; the counters stay locked until the
// write ends, so callers take them last.
func takeNumber(ctx context.Context, companyID string, c *companyContext, e Env) (int64, error) {
	q := c.quota()
	var counter string
	if q != nil {
		counter = "sale_quota:" + e.Write.At.In(e.Location).Format("2006-01")
	}
	return numbering.NextWithin(ctx, e.Write.Tx, companyID, NumberSequence, q, counter)
}

// GetSettings reads the company's sales settings (defaults without a row).
func GetSettings(ctx context.Context, tx bun.IDB, companyID string) (SettingsView, error) {
	c, err := loadContext(ctx, tx, companyID)
	if err != nil {
		return SettingsView{}, err
	}
	return c.view(), nil
}

// SetSettings changes the company's sales settings (dashboard action; no
// event).
func SetSettings(ctx context.Context, tx bun.IDB, companyID string, in SettingsInput, now time.Time) (SettingsView, error) {
	c, err := loadContext(ctx, tx, companyID)
	if err != nil {
		return SettingsView{}, err
	}
	if in.TrackInFinance != nil {
		c.TrackInFinance = *in.TrackInFinance
	}
	if in.MonthlySaleQuota.Set {
		c.MonthlySaleQuota = in.MonthlySaleQuota.Ptr()
		if !tenant.OwnQuotaInRange(c.MonthlySaleQuota) {
			return SettingsView{}, apierr.Invalid("monthly_sale_quota", apierr.OutOfRange)
		}
	}
	if in.SaleQuotaUnlimited != nil {
		c.SaleQuotaUnlimited = *in.SaleQuotaUnlimited
	}
	row := &Settings{CompanyID: companyID, TrackInFinance: c.TrackInFinance, MonthlySaleQuota: c.MonthlySaleQuota,
		SaleQuotaUnlimited: c.SaleQuotaUnlimited, CreatedAt: now, UpdatedAt: now}
	if _, err := tx.NewInsert().Model(row).On("CONFLICT (company_id) DO UPDATE").
		Set("track_in_finance = EXCLUDED.track_in_finance, monthly_sale_quota = EXCLUDED.monthly_sale_quota").
		Set("sale_quota_unlimited = EXCLUDED.sale_quota_unlimited, updated_at = EXCLUDED.updated_at").Exec(ctx); err != nil {
		return SettingsView{}, fmt.Errorf("sales: save settings: %w", err)
	}
	return c.view(), nil
}
