package dispatch

import (
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/events"
	"oficina/schema/secretbox"
	"oficina/schema/signing"
	"oficina/schema/webhooks"
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
// columns it keeps (failing_since, access_lost_notified_at). The json tags
// are the column names: prepare reads it as JSON (row_to_json).
type endpoint struct {
	bun.BaseModel `bun:"table:webhook_endpoints"`

	ID        string `bun:"id,pk" json:"id"`
	CompanyID string `bun:"company_id" json:"company_id"`
	URL       string `bun:"url" json:"url"`
	Status    string `bun:"status" json:"status"`
	// The secrets as stored, sealed; opened in Go to sign (signingKeys).
	webhooks.SealedSecrets
	PreviousSecretExpiresAt *time.Time `bun:"previous_secret_expires_at" json:"previous_secret_expires_at"`
	SubscriberMemberID      string     `bun:"subscriber_member_id" json:"subscriber_member_id"`
	SubscriberKeyID         *string    `bun:"subscriber_key_id" json:"subscriber_key_id"`
	FailingSince            *time.Time `bun:"failing_since" json:"failing_since"`
	AccessLostNotifiedAt    *time.Time `bun:"access_lost_notified_at" json:"access_lost_notified_at"`
}

// signingKeys are the HMAC keys an attempt at `at` is signed with: the
// current secret's, plus the previous one's while its rotation grace
// lasts. The secrets are opened with ring here, in memory only.
func (e *endpoint) signingKeys(ring *secretbox.Keyring, at time.Time) ([][]byte, error) {
	s, err := e.SealedSecrets.Open(ring, e.CompanyID, e.ID)
	if err != nil {
		return nil, err
	}
	secrets := s.Signing(e.PreviousSecretExpiresAt, at)
	keys := make([][]byte, 0, len(secrets))
	for _, secret := range secrets {
		k, err := signing.ParseSecret(secret)
		if err != nil {
			return nil, fmt.Errorf("dispatch: endpoint %s: %w", e.ID, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// subscriberAllowed reports whether the endpoint's subscriber may still
// receive eventType now: the member m is active and its role and
// permissions allow <module>:read; when subscribed through a key, the key k
// is active, holds <module>:read and its creator's role (which caps the
// key) allows it too. A ping (no module) needs only active member and key.
// A nil member or key (deleted) has no access.
func subscriberAllowed(e *endpoint, m *tenant.Member, k *tenant.APIKey, creator *tenant.Member, eventType string, now time.Time) bool {
	if m == nil {
		return false
	}
	p := &tenant.Principal{Member: *m, CreatorRole: m.Role}
	if e.SubscriberKeyID != nil {
		if k == nil || !k.Active(now) {
			return false
		}
		p.Key = *k
		if creator != nil {
			p.CreatorRole = creator.Role
		}
	}
	if m.Status != "active" {
		return false
	}
	module := events.ModuleOf(eventType)
	if eventType == streams.PingType || module == "" {
		return true
	}
	if e.SubscriberKeyID != nil && !p.HasKeyPermission(tenant.Perm(module, tenant.Read)) {
		return false
	}
	return p.MemberAllows(module, tenant.Read)
}
