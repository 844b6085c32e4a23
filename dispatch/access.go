package dispatch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/streams"
	"oficina/tenant"
)

// Close reasons written to a delivery's error when it is failed without an
// attempt.
const (
	ErrSubscriberAccessLost = "subscriber_access_lost"
	ErrPlanWithoutAPI       = "plan_without_api"
	ErrEndpointDisabled     = "endpoint_disabled"
)

// ReasonFailing is the disabled_reason of an endpoint disabled by the
// dispatcher after failing for Config.DisableAfter.
const ReasonFailing = "failing"

// endpoint is the dispatcher's view of a webhook_endpoints row, with the
// columns it keeps (failing_since, access_lost_notified_at).
type endpoint struct {
	bun.BaseModel `bun:"table:webhook_endpoints"`

	ID                      string     `bun:"id,pk"`
	CompanyID               string     `bun:"company_id"`
	URL                     string     `bun:"url"`
	Status                  string     `bun:"status"`
	Secret                  string     `bun:"secret"`
	PreviousSecret          *string    `bun:"previous_secret"`
	PreviousSecretExpiresAt *time.Time `bun:"previous_secret_expires_at"`
	SubscriberMemberID      string     `bun:"subscriber_member_id"`
	SubscriberKeyID         *string    `bun:"subscriber_key_id"`
	FailingSince            *time.Time `bun:"failing_since"`
	AccessLostNotifiedAt    *time.Time `bun:"access_lost_notified_at"`
}

// secrets are the secrets an attempt at `at` is signed with: the current
// one, plus the previous one while its rotation grace lasts.
func (e *endpoint) secrets(at time.Time) []string {
	out := []string{e.Secret}
	if e.PreviousSecret != nil && e.PreviousSecretExpiresAt != nil && at.Before(*e.PreviousSecretExpiresAt) {
		out = append(out, *e.PreviousSecret)
	}
	return out
}

// subscriberAllowed reports whether the endpoint's subscriber may still
// receive eventType now: the member is active and its role and permissions
// allow <module>:read; when subscribed through a key, the key is active,
// holds <module>:read and its creator's role (which caps the key) allows it
// too. A ping (no module) needs only active member and key.
func subscriberAllowed(ctx context.Context, tx bun.IDB, e *endpoint, eventType string, now time.Time) (bool, error) {
	m, err := tenant.GetMember(ctx, tx, e.SubscriberMemberID)
	if err != nil {
		return false, notFoundFalse(err)
	}
	p := &tenant.Principal{Member: *m, CreatorRole: m.Role}
	if e.SubscriberKeyID != nil {
		k := new(tenant.APIKey)
		if err := tx.NewSelect().Model(k).Where("id = ?", *e.SubscriberKeyID).Scan(ctx); err != nil {
			return false, notFoundFalse(err)
		}
		if !k.Active(now) {
			return false, nil
		}
		p.Key = *k
		if creator, err := tenant.GetMember(ctx, tx, k.CreatedBy); err == nil {
			p.CreatorRole = creator.Role
		}
	}
	if m.Status != "active" {
		return false, nil
	}
	module := streams.ModuleOf(eventType)
	if eventType == streams.PingType || module == "" {
		return true, nil
	}
	if e.SubscriberKeyID != nil && !p.HasKeyPermission(tenant.Perm(module, tenant.Read)) {
		return false, nil
	}
	return p.MemberAllows(module, tenant.Read), nil
}

// notFoundFalse turns "row gone" into "no access" and keeps other errors.
func notFoundFalse(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if e := apierr.As(err); e != nil && e.Code == apierr.ResourceNotFound {
		return nil
	}
	return fmt.Errorf("dispatch: subscriber: %w", err)
}
