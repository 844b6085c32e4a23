package tenant

import (
	"encoding/json"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
)

// Company is a customer of Oficina; everything else belongs to one.
type Company struct {
	bun.BaseModel `bun:"table:companies"`

	ID                 string          `bun:"id,pk" json:"id"`
	Name               string          `bun:"name" json:"name"`
	Plan               Plan            `bun:"plan" json:"plan"`
	SubscriptionStatus string          `bun:"subscription_status" json:"subscription_status"`
	Status             string          `bun:"status" json:"status"`
	APIEnabled         bool            `bun:"api_enabled" json:"api_enabled"`
	Timezone           string          `bun:"timezone" json:"timezone"`
	Currency           string          `bun:"currency" json:"currency"`
	RateLimitOverride  *int            `bun:"rate_limit_override" json:"rate_limit_override"`
	RateLimitUnlimited bool            `bun:"rate_limit_unlimited" json:"rate_limit_unlimited"`
	Settings           json.RawMessage `bun:"settings,type:jsonb" json:"settings"`
	CreatedAt          time.Time       `bun:"created_at" json:"created_at"`
	UpdatedAt          time.Time       `bun:"updated_at" json:"updated_at"`
}

// RequireAPIAccess is the plan and subscription layers of part 5.2: the
// plan includes the API and it is on for the company (else 403
// plan_feature_unavailable), and the subscription is in good standing
// (else 403 subscription_inactive).
func (c *Company) RequireAPIAccess() error {
	if !c.Plan.Limits().API || !c.APIEnabled {
		return apierr.New(apierr.PlanFeatureUnavailable)
	}
	if !c.subscriptionGood() {
		return apierr.New(apierr.SubscriptionInactive)
	}
	return nil
}

// Subscription states in good standing.
func (c *Company) subscriptionGood() bool {
	return c.SubscriptionStatus == "active" || c.SubscriptionStatus == "trialing"
}

// RequestsPerMinute is the effective ceiling; nil when the company has none.
func (c *Company) RequestsPerMinute() *int {
	if c.RateLimitUnlimited {
		return nil
	}
	if c.RateLimitOverride != nil {
		v := *c.RateLimitOverride
		return &v
	}
	v := c.Plan.Limits().RequestsPerMinute
	return &v
}

// Member is a person (or assistant) of a company.
type Member struct {
	bun.BaseModel `bun:"table:members"`

	ID          string            `bun:"id,pk" json:"id"`
	CompanyID   string            `bun:"company_id" json:"company_id"`
	Name        string            `bun:"name" json:"name"`
	Email       string            `bun:"email" json:"email"`
	Role        Role              `bun:"role" json:"role"`
	Type        string            `bun:"type" json:"type"`
	Permissions MemberPermissions `bun:"permissions,type:jsonb" json:"permissions"`
	Status      string            `bun:"status" json:"status"`
	CreatedAt   time.Time         `bun:"created_at" json:"created_at"`
	UpdatedAt   time.Time         `bun:"updated_at" json:"updated_at"`
}

// Member types (2.4).
const (
	TypeOrgMember  = "org_member"
	TypeTechnician = "technician"
	TypeSeller     = "seller"
	TypeAssistant  = "assistant"
)

// APIKey is a stored key: only the SHA-256 of the secret is kept.
type APIKey struct {
	bun.BaseModel `bun:"table:api_keys"`

	ID            string     `bun:"id,pk" json:"id"`
	CompanyID     string     `bun:"company_id" json:"company_id"`
	MemberID      string     `bun:"member_id" json:"member_id"`
	CreatedBy     string     `bun:"created_by" json:"created_by"`
	Name          string     `bun:"name" json:"name"`
	DisplayPrefix string     `bun:"display_prefix" json:"display_prefix"`
	SecretHash    []byte     `bun:"secret_hash" json:"-"`
	Permissions   []string   `bun:"permissions,array" json:"permissions"`
	AllowedCIDRs  []string   `bun:"allowed_cidrs,array" json:"allowed_cidrs"`
	ExpiresAt     *time.Time `bun:"expires_at" json:"expires_at"`
	RevokedAt     *time.Time `bun:"revoked_at" json:"revoked_at"`
	RevokedReason *string    `bun:"revoked_reason" json:"revoked_reason"`
	ReplacedBy    *string    `bun:"replaced_by" json:"replaced_by"`
	CreatedAt     time.Time  `bun:"created_at" json:"created_at"`
}

// Active reports whether the key counts and authenticates at now: not
// revoked and not expired (a key in a rotation grace period is active).
func (k *APIKey) Active(now time.Time) bool {
	return k.RevokedAt == nil && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt))
}
