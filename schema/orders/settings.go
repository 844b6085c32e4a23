package orders

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/schema/apierr"
	"oficina/schema/field"
	"oficina/schema/numbering"
	"oficina/tenant"
)

// Technician completion orders a company may choose (docs/api.md).
const (
	// CompletionNone: technicians' marks are informational.
	CompletionNone = "none"
	// CompletionAny: every technician on the order marks their part done,
	// in any order, before the order completes.
	CompletionAny = "any"
	// CompletionSupportFirst: every technician marks their part done, and
	// the technician in charge marks last, after the whole support team.
	CompletionSupportFirst = "support_first"
)

// CompletionOrders lists the values of technician_completion_order.
var CompletionOrders = []string{CompletionNone, CompletionAny, CompletionSupportFirst}

// RequirableFields are the order fields a company may require on creation.
var RequirableFields = []string{
	"client_id", "client_phone", "client_description", "service_address", "type_id", "technician_id",
	"support_technician_ids", "scheduled_start", "scheduled_end", "internal_notes", "items",
}

// Settings are a company's order settings (dashboard).
type Settings struct {
	bun.BaseModel `bun:"table:service_order_settings"`

	CompanyID                 string    `bun:"company_id,pk"`
	RequiredFields            []string  `bun:"required_fields,array"`
	TechnicianCompletionOrder string    `bun:"technician_completion_order"`
	MonthlyOrderQuota         *int      `bun:"monthly_order_quota"`
	OrderQuotaUnlimited       bool      `bun:"order_quota_unlimited"`
	CreatedAt                 time.Time `bun:"created_at"`
	UpdatedAt                 time.Time `bun:"updated_at"`
}

// companyContext is what the order rules need of the company, read in one
// query. Technicians and Checklists are filled only for a creation.
type companyContext struct {
	Plan                      tenant.Plan `bun:"plan"`
	Timezone                  string      `bun:"timezone"`
	TypeRequired              bool        `bun:"type_required"`
	RequiredFields            []string    `bun:"required_fields,array"`
	TechnicianCompletionOrder string      `bun:"technician_completion_order"`
	MonthlyOrderQuota         *int        `bun:"monthly_order_quota"`
	OrderQuotaUnlimited       bool        `bun:"order_quota_unlimited"`
	// Technicians counts the named members who may be on an order.
	Technicians int64 `bun:"technicians"`
	// Checklists are the automatic checklists a new order gets.
	Checklists []Checklist `bun:"checklists,type:jsonb"`
}

const contextColumns = `c.plan, c.timezone,
	EXISTS (SELECT 1 FROM service_order_types t WHERE t.company_id = c.id AND t.active AND t.required_on_create) AS type_required,
	COALESCE(s.required_fields, '{}') AS required_fields,
	COALESCE(s.technician_completion_order, 'none') AS technician_completion_order,
	s.monthly_order_quota, COALESCE(s.order_quota_unlimited, false) AS order_quota_unlimited`

const contextFrom = ` FROM companies c LEFT JOIN service_order_settings s ON s.company_id = c.id WHERE c.id = ?`

func loadContext(ctx context.Context, tx bun.IDB, companyID string) (*companyContext, error) {
	c := new(companyContext)
	if err := tx.NewRaw(`SELECT `+contextColumns+contextFrom, companyID).Scan(ctx, c); err != nil {
		return nil, fmt.Errorf("orders: company settings: %w", err)
	}
	return c, nil
}

// loadCreationContext is loadContext plus, in the same round trip, how many
// of techs are active technicians of the company and the automatic
// checklists of typeID (those without a type, and those of typeID). It runs
// on every creation, so its query is a function whose plan PostgreSQL keeps
// (sql/oficina_order_context.sql).
func loadCreationContext(ctx context.Context, tx bun.IDB, companyID string, typeID *string, techs []string) (*companyContext, error) {
	c := new(companyContext)
	err := tx.NewRaw(`SELECT * FROM oficina_order_context(?, ?, ?)`, companyID, pgdialect.Array(techs), typeID).Scan(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("orders: creation context: %w", err)
	}
	return c, nil
}

// quota is the effective monthly quota, nil when unlimited.
func (c *companyContext) quota() *int {
	return c.Plan.EffectiveMonthlyQuota(c.MonthlyOrderQuota, c.OrderQuotaUnlimited)
}

var locations sync.Map // IANA name → *time.Location (LoadLocation reads disk)

// month is the quota period of now: the calendar month in the company's
// time zone, e.g. "2026-11".
func month(tz string, now time.Time) string { return now.In(location(tz)).Format("2006-01") }

// location returns the company's time zone (UTC if unknown, which the
// company settings' validation prevents).
func location(tz string) *time.Location {
	if v, ok := locations.Load(tz); ok {
		return v.(*time.Location)
	}
	l, err := time.LoadLocation(tz)
	if err != nil {
		return time.UTC
	}
	locations.Store(tz, l)
	return l
}

func quotaCounter(tz string, now time.Time) string { return "service_order_quota:" + month(tz, now) }

// takeNumber counts one more order in this month's quota (403
// plan_limit_reached when used up) and returns the order's number.
func takeNumber(ctx context.Context, tx bun.IDB, companyID string, c *companyContext, now time.Time) (int64, error) {
	return numbering.NextWithin(ctx, tx, companyID, NumberSequence, c.quota(), quotaCounter(c.Timezone, now))
}

// SettingsView is the admin API's order settings.
type SettingsView struct {
	Object                    string   `json:"object" const:"service_order_settings"`
	RequiredFields            []string `json:"required_fields"`
	TechnicianCompletionOrder string   `json:"technician_completion_order"`
	// MonthlyOrderQuota is the company's own quota; null uses the plan's.
	MonthlyOrderQuota   *int `json:"monthly_order_quota"`
	OrderQuotaUnlimited bool `json:"order_quota_unlimited"`
	// EffectiveMonthlyQuota is what applies now (null: no quota).
	EffectiveMonthlyQuota *int   `json:"effective_monthly_order_quota"`
	OrdersThisMonth       int64  `json:"orders_this_month"`
	Month                 string `json:"month"`
}

// SettingsInput changes the settings; omitted fields keep their value.
type SettingsInput struct {
	RequiredFields            *[]string      `json:"required_fields"`
	TechnicianCompletionOrder *string        `json:"technician_completion_order"`
	MonthlyOrderQuota         field.Opt[int] `json:"monthly_order_quota" api:"nullable"`
	OrderQuotaUnlimited       *bool          `json:"order_quota_unlimited"`
}

// GetSettings returns the company's order settings and this month's usage.
func GetSettings(ctx context.Context, tx bun.IDB, companyID string, now time.Time) (SettingsView, error) {
	c, err := loadContext(ctx, tx, companyID)
	if err != nil {
		return SettingsView{}, err
	}
	var used int64
	err = tx.NewSelect().Table("company_counters").Column("value").Where("company_id = ?", companyID).
		Where("name = ?", quotaCounter(c.Timezone, now)).Scan(ctx, &used)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return SettingsView{}, fmt.Errorf("orders: quota usage: %w", err)
	}
	rf := c.RequiredFields
	if rf == nil {
		rf = []string{}
	}
	return SettingsView{Object: "service_order_settings", RequiredFields: rf,
		TechnicianCompletionOrder: c.TechnicianCompletionOrder, MonthlyOrderQuota: c.MonthlyOrderQuota,
		OrderQuotaUnlimited: c.OrderQuotaUnlimited, EffectiveMonthlyQuota: c.quota(), OrdersThisMonth: used,
		Month: month(c.Timezone, now)}, nil
}

// UpdateSettings changes the company's order settings.
func UpdateSettings(ctx context.Context, tx bun.IDB, companyID string, in SettingsInput, now time.Time) (SettingsView, error) {
	c, err := loadContext(ctx, tx, companyID)
	if err != nil {
		return SettingsView{}, err
	}
	s := Settings{CompanyID: companyID, RequiredFields: c.RequiredFields,
		TechnicianCompletionOrder: c.TechnicianCompletionOrder, MonthlyOrderQuota: c.MonthlyOrderQuota,
		OrderQuotaUnlimited: c.OrderQuotaUnlimited, CreatedAt: now, UpdatedAt: now}
	var f apierr.Fields
	if in.RequiredFields != nil {
		s.RequiredFields = []string{}
		for i, name := range *in.RequiredFields {
			if !slices.Contains(RequirableFields, name) {
				f.Add(fmt.Sprintf("required_fields[%d]", i), apierr.InvalidValue)
			} else if !slices.Contains(s.RequiredFields, name) {
				s.RequiredFields = append(s.RequiredFields, name)
			}
		}
	}
	if in.TechnicianCompletionOrder != nil {
		if !slices.Contains(CompletionOrders, *in.TechnicianCompletionOrder) {
			f.Add("technician_completion_order", apierr.InvalidValue)
		}
		s.TechnicianCompletionOrder = *in.TechnicianCompletionOrder
	}
	if in.MonthlyOrderQuota.Set {
		s.MonthlyOrderQuota = in.MonthlyOrderQuota.Ptr()
		if !tenant.OwnQuotaInRange(s.MonthlyOrderQuota) {
			f.Add("monthly_order_quota", apierr.OutOfRange)
		}
	}
	if in.OrderQuotaUnlimited != nil {
		s.OrderQuotaUnlimited = *in.OrderQuotaUnlimited
	}
	if err := f.Err(); err != nil {
		return SettingsView{}, err
	}
	if s.RequiredFields == nil {
		s.RequiredFields = []string{}
	}
	_, err = tx.NewInsert().Model(&s).On("CONFLICT (company_id) DO UPDATE").
		Set("required_fields = EXCLUDED.required_fields").
		Set("technician_completion_order = EXCLUDED.technician_completion_order").
		Set("monthly_order_quota = EXCLUDED.monthly_order_quota").
		Set("order_quota_unlimited = EXCLUDED.order_quota_unlimited").
		Set("updated_at = EXCLUDED.updated_at").Exec(ctx)
	if err != nil {
		return SettingsView{}, fmt.Errorf("orders: save settings: %w", err)
	}
	return GetSettings(ctx, tx, companyID, now)
}
