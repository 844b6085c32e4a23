package tenant

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/db"
	"oficina/schema/ids"
)

// KeyInput creates a key (dashboard action, admin API).
type KeyInput struct {
	MemberID     string     `json:"member_id"`  // the member the key acts as
	CreatedBy    string     `json:"created_by"` // the member creating it; defaults to MemberID
	Name         string     `json:"name"`
	Permissions  []string   `json:"permissions"`
	AllowedCIDRs []string   `json:"allowed_cidrs"`
	ExpiresAt    *time.Time `json:"expires_at"`
}

// NewKey is a created key with its secret, shown once.
type NewKey struct {
	APIKey
	Secret string `json:"secret"`
}

// Key revocation reasons.
const (
	RevokedManually = "revoked"
	RevokedRotated  = "rotated"
	RevokedExposed  = "exposed"
)

// CreateKey creates a key in the transaction's company. The company row is
// locked so concurrent creations cannot both pass the plan's active-key limit.
func CreateKey(ctx context.Context, tx bun.IDB, companyID string, in KeyInput, now time.Time) (*NewKey, error) {
	var f apierr.Fields
	if in.CreatedBy == "" {
		in.CreatedBy = in.MemberID
	}
	if in.MemberID == "" {
		f.Add("member_id", apierr.Required)
	}
	if len(in.Permissions) == 0 {
		f.Add("permissions", apierr.Required)
	}
	perms := make([]string, 0, len(in.Permissions))
	for _, p := range in.Permissions {
		if !Permission(p).Valid() {
			f.Add("permissions", apierr.InvalidPermission)
			break
		}
		if !slices.Contains(perms, p) {
			perms = append(perms, p)
		}
	}
	cidrs := parseCIDRs(in.AllowedCIDRs, &f)
	if in.ExpiresAt != nil && !in.ExpiresAt.After(now) {
		f.Add("expires_at", apierr.OutOfRange)
	}
	if len(in.Name) > 200 {
		f.Add("name", apierr.TooLong)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	company, err := db.ByID[Company](ctx, tx, "co", companyID, true)
	if err != nil {
		return nil, err
	}
	member, err := GetMember(ctx, tx, in.MemberID)
	if err != nil {
		return nil, err
	}
	creator, err := GetMember(ctx, tx, in.CreatedBy)
	if err != nil {
		return nil, err
	}
	if member.Status != "active" || creator.Status != "active" {
		return nil, apierr.Invalid("member_id", apierr.InvalidValue)
	}
	// Part 5 item 4: a key never acts as a member above its creator's role.
	if member.Role.Above(creator.Role) {
		return nil, apierr.New(apierr.MemberPermissionDenied)
	}
	active, err := CountActiveKeys(ctx, tx, now)
	if err != nil {
		return nil, err
	}
	if active >= company.Plan.Limits().ActiveKeys {
		return nil, apierr.New(apierr.PlanLimitReached)
	}
	k := &APIKey{
		CompanyID: companyID, MemberID: member.ID, CreatedBy: creator.ID, Name: in.Name,
		Permissions: perms, AllowedCIDRs: cidrs, ExpiresAt: in.ExpiresAt, CreatedAt: now,
	}
	return insertKey(ctx, tx, k)
}

func insertKey(ctx context.Context, tx bun.IDB, k *APIKey) (*NewKey, error) {
	secret := NewKeySecret()
	k.ID = ids.New("key")
	k.SecretHash = HashKey(secret)
	k.DisplayPrefix = DisplayPrefix(secret)
	if k.AllowedCIDRs == nil {
		k.AllowedCIDRs = []string{}
	}
	if _, err := tx.NewInsert().Model(k).Exec(ctx); err != nil {
		return nil, fmt.Errorf("tenant: insert key: %w", err)
	}
	return &NewKey{APIKey: *k, Secret: secret}, nil
}

// CountActiveKeys counts keys that are neither revoked nor expired; keys in
// a rotation grace period count (part 8).
func CountActiveKeys(ctx context.Context, tx bun.IDB, now time.Time) (int, error) {
	n, err := tx.NewSelect().Model((*APIKey)(nil)).
		Where("revoked_at IS NULL").
		Where("expires_at IS NULL OR expires_at > ?", now).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("tenant: count keys: %w", err)
	}
	return int(n), nil
}

// ListKeys lists the company's keys, newest first.
func ListKeys(ctx context.Context, tx bun.IDB) ([]APIKey, error) {
	var ks []APIKey
	if err := tx.NewSelect().Model(&ks).Order("id DESC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("tenant: list keys: %w", err)
	}
	return ks, nil
}

// Rotation is the outcome of RotateKey, for callers that move webhook
// subscriptions (grace period) or disable endpoints (stop now).
type Rotation struct {
	Old     APIKey `json:"old_key"`
	New     NewKey `json:"new_key"`
	StopNow bool   `json:"stop_now"`
}

// RotateKey replaces a key with a new secret of the same member, permissions
// (part 5 item 5: never changed), allow list and expiry. With grace > 0 the
// old key keeps working until then; with 0 it stops now. Rotation never hits
// the active-key limit.
func RotateKey(ctx context.Context, tx bun.IDB, id string, grace time.Duration, now time.Time) (*Rotation, error) {
	old, err := db.ByID[APIKey](ctx, tx, "key", id, true)
	if err != nil {
		return nil, err
	}
	if grace < 0 {
		return nil, apierr.Invalid("grace_period_seconds", apierr.OutOfRange)
	}
	if !old.Active(now) {
		return nil, apierr.New(apierr.Conflict)
	}
	nk := &APIKey{
		CompanyID: old.CompanyID, MemberID: old.MemberID, CreatedBy: old.CreatedBy, Name: old.Name,
		Permissions: old.Permissions, AllowedCIDRs: old.AllowedCIDRs, ExpiresAt: old.ExpiresAt, CreatedAt: now,
	}
	created, err := insertKey(ctx, tx, nk)
	if err != nil {
		return nil, err
	}
	old.ReplacedBy = &created.ID
	if grace > 0 {
		until := now.Add(grace)
		if old.ExpiresAt == nil || until.Before(*old.ExpiresAt) {
			old.ExpiresAt = &until
		}
	} else {
		reason := RevokedRotated
		old.RevokedAt, old.RevokedReason = &now, &reason
	}
	if _, err := tx.NewUpdate().Model(old).Column("expires_at", "revoked_at", "revoked_reason", "replaced_by").WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("tenant: rotate key: %w", err)
	}
	return &Rotation{Old: *old, New: *created, StopNow: grace == 0}, nil
}

// maxRotations bounds the rotations SameCredential follows: far more than
// a key sees while anything it did is remembered (an idempotent answer
// lives 24 hours).
const maxRotations = 32

// SameCredential reports whether API keys a and b of the transaction's
// company are one credential: the same key, or one a rotation (through any
// number of rotations, up to maxRotations) of the other. A rotation keeps
// the member, permissions, allow list and expiry (part 5 item 5): only the
// secret is new.
func SameCredential(ctx context.Context, tx bun.IDB, a, b string) (bool, error) {
	if a == "" || b == "" {
		return false, nil
	}
	if a == b {
		return true, nil
	}
	var same bool
	err := tx.NewRaw(`WITH RECURSIVE chain (start, id, depth) AS (
			SELECT id, replaced_by, 1 FROM api_keys WHERE id IN (?0, ?1)
			UNION ALL
			SELECT c.start, k.replaced_by, c.depth + 1 FROM chain c JOIN api_keys k ON k.id = c.id WHERE c.depth < ?2)
		SELECT EXISTS (SELECT 1 FROM chain WHERE (start = ?0 AND id = ?1) OR (start = ?1 AND id = ?0))`,
		a, b, maxRotations).Scan(ctx, &same)
	if err != nil {
		return false, fmt.Errorf("tenant: same credential: %w", err)
	}
	return same, nil
}

// RevokeKey revokes a key now. reason is RevokedManually or RevokedExposed
// (reported as publicly exposed).
func RevokeKey(ctx context.Context, tx bun.IDB, id, reason string, now time.Time) (*APIKey, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		reason = RevokedManually
	}
	if reason != RevokedManually && reason != RevokedExposed {
		return nil, apierr.Invalid("reason", apierr.InvalidValue)
	}
	k, err := db.ByID[APIKey](ctx, tx, "key", id, true)
	if err != nil {
		return nil, err
	}
	if k.RevokedAt != nil {
		return k, nil
	}
	k.RevokedAt, k.RevokedReason = &now, &reason
	if _, err := tx.NewUpdate().Model(k).Column("revoked_at", "revoked_reason").WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("tenant: revoke key: %w", err)
	}
	return k, nil
}
