package tenant

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/db"
	"oficina/schema/field"
	"oficina/schema/ids"
)

// CompanyInput creates or changes a company (admin API). Nil fields keep
// their value on update and take the default on create.
type CompanyInput struct {
	Name               *string          `json:"name"`
	Plan               *Plan            `json:"plan"`
	SubscriptionStatus *string          `json:"subscription_status"`
	Status             *string          `json:"status"`
	APIEnabled         *bool            `json:"api_enabled"`
	Timezone           *string          `json:"timezone"`
	Currency           *string          `json:"currency"`
	RateLimitOverride  field.Opt[int]   `json:"rate_limit_override" api:"nullable"`
	RateLimitUnlimited *bool            `json:"rate_limit_unlimited"`
	Settings           *json.RawMessage `json:"settings"`
}

var subscriptionStates = []string{"active", "trialing", "past_due", "unpaid", "canceled"}

func (in *CompanyInput) apply(c *Company) error {
	var f apierr.Fields
	if in.Name != nil {
		c.Name = strings.TrimSpace(*in.Name)
	}
	if c.Name == "" || utf8.RuneCountInString(c.Name) > 200 {
		f.Add("name", apierr.Required)
	}
	if in.Plan != nil {
		if !in.Plan.Valid() {
			f.Add("plan", apierr.InvalidValue)
		}
		c.Plan = *in.Plan
	}
	if in.SubscriptionStatus != nil {
		if !slices.Contains(subscriptionStates, *in.SubscriptionStatus) {
			f.Add("subscription_status", apierr.InvalidValue)
		}
		c.SubscriptionStatus = *in.SubscriptionStatus
	}
	if in.Status != nil {
		if *in.Status != "active" && *in.Status != "suspended" {
			f.Add("status", apierr.InvalidValue)
		}
		c.Status = *in.Status
	}
	if in.APIEnabled != nil {
		c.APIEnabled = *in.APIEnabled
	}
	if in.Timezone != nil {
		if _, err := time.LoadLocation(*in.Timezone); err != nil || *in.Timezone == "" || *in.Timezone == "Local" {
			f.Add("timezone", apierr.InvalidValue)
		}
		c.Timezone = *in.Timezone
	}
	if in.Currency != nil {
		if len(*in.Currency) != 3 || strings.ToUpper(*in.Currency) != *in.Currency {
			f.Add("currency", apierr.InvalidValue)
		}
		c.Currency = *in.Currency
	}
	if in.RateLimitOverride.Set {
		c.RateLimitOverride = in.RateLimitOverride.Ptr()
		if c.RateLimitOverride != nil && *c.RateLimitOverride <= 0 {
			f.Add("rate_limit_override", apierr.OutOfRange)
		}
	}
	if in.RateLimitUnlimited != nil {
		c.RateLimitUnlimited = *in.RateLimitUnlimited
	}
	if in.Settings != nil {
		var obj map[string]any
		if json.Unmarshal(*in.Settings, &obj) != nil || obj == nil {
			f.Add("settings", apierr.InvalidType)
		}
		c.Settings = *in.Settings
	}
	return f.Err()
}

// CreateCompany creates a company with defaults for what in leaves out.
func CreateCompany(ctx context.Context, db bun.IDB, in CompanyInput, now time.Time) (*Company, error) {
	c := &Company{
		ID: ids.New("co"), Plan: PlanStart, SubscriptionStatus: "active", Status: "active",
		APIEnabled: true, Timezone: "America/Sao_Paulo", Currency: "BRL",
		Settings: json.RawMessage(`{}`), CreatedAt: now, UpdatedAt: now,
	}
	if err := in.apply(c); err != nil {
		return nil, err
	}
	err := Tx(ctx, db, c.ID, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewInsert().Model(c).Exec(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("tenant: create company: %w", err)
	}
	return c, nil
}

// GetCompany reads a company inside its transaction.
func GetCompany(ctx context.Context, tx bun.IDB, id string) (*Company, error) {
	return db.ByID[Company](ctx, tx, "co", id, false)
}

// UpdateCompany changes a company.
func UpdateCompany(ctx context.Context, tx bun.IDB, id string, in CompanyInput, now time.Time) (*Company, error) {
	c, err := db.ByID[Company](ctx, tx, "co", id, true)
	if err != nil {
		return nil, err
	}
	if err := in.apply(c); err != nil {
		return nil, err
	}
	c.UpdatedAt = now
	if _, err := tx.NewUpdate().Model(c).WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("tenant: update company: %w", err)
	}
	return c, nil
}

// MemberInput creates or changes a member.
type MemberInput struct {
	Name        *string            `json:"name"`
	Email       *string            `json:"email"`
	Role        *Role              `json:"role"`
	Type        *string            `json:"type"`
	Permissions *MemberPermissions `json:"permissions"`
	Status      *string            `json:"status"`
}

var memberTypes = []string{TypeOrgMember, TypeTechnician, TypeSeller, TypeAssistant}

func (in *MemberInput) apply(m *Member) error {
	var f apierr.Fields
	if in.Name != nil {
		m.Name = strings.TrimSpace(*in.Name)
	}
	if m.Name == "" || utf8.RuneCountInString(m.Name) > 200 {
		f.Add("name", apierr.Required)
	}
	if in.Email != nil {
		m.Email = strings.TrimSpace(*in.Email)
	}
	if in.Role != nil {
		if !in.Role.Valid() {
			f.Add("role", apierr.InvalidValue)
		}
		m.Role = *in.Role
	}
	if in.Type != nil {
		if !slices.Contains(memberTypes, *in.Type) {
			f.Add("type", apierr.InvalidValue)
		}
		m.Type = *in.Type
	}
	if in.Permissions != nil {
		modules := MemberModules()
		for mod, actions := range *in.Permissions {
			if !slices.Contains(modules, mod) {
				f.Add("permissions."+mod, apierr.InvalidPermission)
				continue
			}
			for _, a := range actions {
				if a != Read && a != Create && a != Update && a != Delete {
					f.Add("permissions."+mod, apierr.InvalidPermission)
				}
			}
		}
		m.Permissions = *in.Permissions
	}
	if in.Status != nil {
		if !slices.Contains([]string{"active", "suspended", "removed"}, *in.Status) {
			f.Add("status", apierr.InvalidValue)
		}
		m.Status = *in.Status
	}
	return f.Err()
}

// CreateMember adds a member to the transaction's company.
func CreateMember(ctx context.Context, tx bun.IDB, companyID string, in MemberInput, now time.Time) (*Member, error) {
	m := &Member{ID: ids.New("mem"), CompanyID: companyID, Role: RoleMember, Type: TypeOrgMember,
		Permissions: MemberPermissions{}, Status: "active", CreatedAt: now, UpdatedAt: now}
	if err := in.apply(m); err != nil {
		return nil, err
	}
	if _, err := tx.NewInsert().Model(m).Exec(ctx); err != nil {
		return nil, fmt.Errorf("tenant: create member: %w", err)
	}
	return m, nil
}

// UpdateMember changes a member.
func UpdateMember(ctx context.Context, tx bun.IDB, id string, in MemberInput, now time.Time) (*Member, error) {
	m, err := db.ByID[Member](ctx, tx, "mem", id, true)
	if err != nil {
		return nil, err
	}
	if err := in.apply(m); err != nil {
		return nil, err
	}
	m.UpdatedAt = now
	if _, err := tx.NewUpdate().Model(m).WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("tenant: update member: %w", err)
	}
	return m, nil
}

// GetMember reads one member.
func GetMember(ctx context.Context, tx bun.IDB, id string) (*Member, error) {
	return db.ByID[Member](ctx, tx, "mem", id, false)
}

// ListMembers lists the company's members, oldest first.
func ListMembers(ctx context.Context, tx bun.IDB) ([]Member, error) {
	var ms []Member
	if err := tx.NewSelect().Model(&ms).Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("tenant: list members: %w", err)
	}
	return ms, nil
}

func parseCIDRs(in []string, f *apierr.Fields) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			if a, aerr := netip.ParseAddr(s); aerr == nil {
				p = netip.PrefixFrom(a, a.BitLen())
			} else {
				f.Add("allowed_cidrs", apierr.InvalidCIDR)
				continue
			}
		}
		out = append(out, p.Masked().String())
	}
	return out
}
