package webhooks

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/db"
	"oficina/schema/field"
	"oficina/schema/ids"
	"oficina/schema/secretbox"
	"oficina/schema/signing"
	"oficina/streams"
	"oficina/tenant"
)

// Access authorizes the caller to subscribe to events: it runs the
// permission layers for `<module>:read` of every module of the events
// (spec 5.4) and the owner/admin rule of 4.6. The HTTP handlers build it
// from the principal; the dashboard from the acting member.
type Access func(events []string) error

// WebhookEndpointCreate is the body of POST /webhook_endpoints.
type WebhookEndpointCreate struct {
	URL               string                         `json:"url" api:"required" minLength:"1" maxLength:"2048" pattern:"nonblank" doc:"An https URL on a public host; no user or password (spec 6.5)."`
	Description       *string                        `json:"description" maxLength:"10000" doc:"Free text, up to 10,000 characters."`
	Events            []EventName                    `json:"events" api:"required" minItems:"1" alone:"*" doc:"Event names, family wildcards such as sale.*, or [\"*\"] alone."`
	Payload           *WebhookPayload                `json:"payload" doc:"full (the default): the whole envelope; thin: data.object is only {object, id}, with changed_fields on .updated events."`
	Ordering          *WebhookOrdering               `json:"ordering" doc:"none (the default): deliveries in parallel under the caps; object: the events of one object in the order they were recorded, the next once the one before it has succeeded or been given up (objects still in parallel)."`
	OAuth2            *WebhookOAuth2Input            `json:"oauth2" doc:"OAuth2 client credentials: every delivery carries a bearer token from token_url (client credentials grant), kept until it expires and asked again once on a 401."`
	ClientCertificate *WebhookClientCertificateInput `json:"client_certificate" doc:"A client certificate and key (PEM) presented to a receiver that demands mutual TLS; sealed at rest, the endpoint shows its subject and expiry."`
	Headers           map[string]string              `json:"headers" doc:"Custom headers sent with every delivery (an API gateway's X-Api-Key, an Authorization of its own): up to 10, names HTTP tokens of up to 64 characters other than the ones a delivery sets (webhook-*, content-type, user-agent, host and HTTP's own), values of up to 1,024 visible ASCII characters. The values are sealed at rest and never shown again; the endpoint shows the names."`
}

// WebhookEndpointUpdate is the body of PATCH /webhook_endpoints/{id};
// omitted members stay as they are.
type WebhookEndpointUpdate struct {
	URL               field.Opt[string]                        `json:"url" minLength:"1" maxLength:"2048" pattern:"nonblank" doc:"A new URL; changing it needs the module reads and makes the caller the subscriber."`
	Description       field.Opt[string]                        `json:"description" maxLength:"10000" doc:"A new description; \"\" clears it."`
	Events            field.Opt[[]EventName]                   `json:"events" minItems:"1" alone:"*" doc:"A new subscription; changing it needs the module reads and makes the caller the subscriber."`
	Payload           field.Opt[WebhookPayload]                `json:"payload" doc:"full or thin (what each delivery carries)."`
	Ordering          field.Opt[WebhookOrdering]               `json:"ordering" doc:"none or object (the events of one object in order). Deliveries recorded before a change keep the order they were recorded with; turning it to none releases them at once."`
	ClientCertificate field.Opt[WebhookClientCertificateInput] `json:"client_certificate" api:"nullable" doc:"A new client certificate and key; null removes it."`
	OAuth2            field.Opt[WebhookOAuth2Input]            `json:"oauth2" api:"nullable" doc:"New OAuth2 client credentials (all of them); null removes them."`
	Headers           field.Opt[map[string]string]             `json:"headers" api:"nullable" doc:"Replaces every custom header (same rules as on creation); {} or null removes them all."`
}

// WebhookSecretRotation is the optional body of rotate_secret.
type WebhookSecretRotation struct {
	GracePeriodSeconds *int64 `json:"grace_period_seconds" min:"0" max:"604800" doc:"How long the previous secret keeps signing too, in seconds: 0 to 604800 (7 days), default 86400 (a day)."`
}

// Create registers an endpoint for sub after access allows its events.
// Order: the body's own rules (422), access (403), the destination check
// (422, it resolves the host), the plan quota (403 plan_limit_reached).
// The owners and admins are mailed in the same transaction. The new secret
// is stored sealed under ring and shown by the row's ViewWithSecret only.
func Create(ctx context.Context, tx bun.IDB, companyID string, in WebhookEndpointCreate, sub Subscriber, access Access, guard URLChecker, ring *secretbox.Keyring, now time.Time) (*Row, error) {
	var f apierr.Fields
	events, err := NormalizeEvents(eventNames(in.Events))
	addField(&f, err)
	switch {
	case in.URL == "":
		f.Add("url", apierr.Required)
	case len(in.URL) > MaxURLLength:
		f.Add("url", apierr.TooLong)
	}
	desc := ""
	if in.Description != nil {
		desc = *in.Description
		addField(&f, checkDescription(desc))
	}
	payload, ordering := PayloadFull, OrderingNone
	if in.Payload != nil {
		payload = string(*in.Payload)
		checkEnum(&f, "payload", WebhookPayload("").Values(), payload)
	}
	if in.Ordering != nil {
		ordering = string(*in.Ordering)
		checkEnum(&f, "ordering", WebhookOrdering("").Values(), ordering)
	}
	headerNames := checkHeaders(&f, in.Headers)
	var cert *ClientCertificate
	var leaf *x509.Certificate
	if in.ClientCertificate != nil {
		cert, leaf = checkClientCertificate(&f, in.ClientCertificate, now)
	}
	if in.OAuth2 != nil {
		checkOAuth2(&f, in.OAuth2)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	if err := access(events); err != nil {
		return nil, err
	}
	if err := checkURL(ctx, guard, in.URL); err != nil {
		return nil, err
	}
	var oauth2Secret string
	if in.OAuth2 != nil {
		if err := checkTokenURL(ctx, guard, in.OAuth2.TokenURL); err != nil {
			return nil, err
		}
		oauth2Secret = in.OAuth2.ClientSecret
	}
	company, err := db.ByID[tenant.Company](ctx, tx, "co", companyID, true)
	if err != nil {
		return nil, err
	}
	n, err := Count(ctx, tx)
	if err != nil {
		return nil, err
	}
	if n >= company.Plan.Limits().WebhookEndpoints {
		return nil, apierr.New(apierr.PlanLimitReached)
	}
	secret, err := signing.NewSecret(rand.Reader)
	if err != nil {
		return nil, err
	}
	e := &Row{ID: ids.New(IDPrefix), CompanyID: companyID, URL: in.URL, Description: desc, Events: events,
		Status: StatusEnabled, Payload: payload, Ordering: ordering, HeaderNames: headerNames, SubscriberMemberID: sub.MemberID, SubscriberKeyID: sub.keyID(),
		CreatedAt: now, UpdatedAt: now, shown: secret}
	e.setClientCertificate(leaf)
	e.setOAuth2(in.OAuth2)
	if e.SealedSecrets, err = SealSecrets(ring, companyID, e.ID, Secrets{Current: secret, Headers: canonical(in.Headers),
		ClientCertificate: cert, OAuth2ClientSecret: oauth2Secret}); err != nil {
		return nil, err
	}
	if _, err := tx.NewInsert().Model(e).Exec(ctx); err != nil {
		return nil, fmt.Errorf("webhooks: create: %w", err)
	}
	if err := mailCreated(ctx, tx, e, sub, now); err != nil {
		return nil, err
	}
	return e, nil
}

// checkEnum adds a field error on name unless v is one of values.
func checkEnum(f *apierr.Fields, name string, values []string, v string) {
	if !slices.Contains(values, v) {
		f.Add(name, apierr.InvalidValue)
	}
}

// setEnum applies a PATCH member of an enum type to *dst: absent keeps it,
// null is refused (it has no empty value), anything else must be one of
// values.
func setEnum[T ~string](f *apierr.Fields, name string, values []string, p field.Opt[T], dst *string) {
	switch {
	case !p.Set:
	case p.Null:
		f.Add(name, apierr.InvalidType)
	default:
		*dst = string(p.Value)
		checkEnum(f, name, values, *dst)
	}
}

// addField appends the field errors of a validation error to f.
func addField(f *apierr.Fields, err error) {
	if e := apierr.As(err); err != nil && e.Code == apierr.ValidationFailed {
		*f = append(*f, e.Fields...)
	}
}

// Update applies p. Changing the URL or the events needs access to the
// resulting events and makes the editor the subscriber (spec 6.6); a
// description change alone does neither. New custom headers are sealed
// under ring with the secrets.
func Update(ctx context.Context, tx bun.IDB, id string, p WebhookEndpointUpdate, editor Subscriber, access Access, guard URLChecker, ring *secretbox.Keyring, now time.Time) (*Row, error) {
	e, err := getForUpdate(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	var f apierr.Fields
	url, events := e.URL, e.Events
	if p.URL.Set {
		switch {
		case p.URL.Null:
			f.Add("url", apierr.InvalidType)
		case p.URL.Value == "":
			f.Add("url", apierr.Required)
		case len(p.URL.Value) > MaxURLLength:
			f.Add("url", apierr.TooLong)
		default:
			url = p.URL.Value
		}
	}
	if p.Events.Set {
		if p.Events.Null {
			f.Add("events", apierr.InvalidType)
		} else if ev, err := NormalizeEvents(eventNames(p.Events.Value)); err != nil {
			addField(&f, err)
		} else {
			events = ev
		}
	}
	if p.Description.Set {
		e.Description = p.Description.Value // null clears it
		addField(&f, checkDescription(e.Description))
	}
	setEnum(&f, "payload", WebhookPayload("").Values(), p.Payload, &e.Payload)
	setEnum(&f, "ordering", WebhookOrdering("").Values(), p.Ordering, &e.Ordering)
	var headerNames []string
	if p.Headers.Set {
		headerNames = checkHeaders(&f, p.Headers.Value) // null: none
	}
	var cert *ClientCertificate
	var leaf *x509.Certificate
	if p.ClientCertificate.Set && !p.ClientCertificate.Null {
		cert, leaf = checkClientCertificate(&f, &p.ClientCertificate.Value, now)
	}
	if p.OAuth2.Set && !p.OAuth2.Null {
		checkOAuth2(&f, &p.OAuth2.Value)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	urlChanged, eventsChanged := url != e.URL, !slices.Equal(events, e.Events)
	if urlChanged || eventsChanged {
		if err := access(events); err != nil {
			return nil, err
		}
		if urlChanged {
			if err := checkURL(ctx, guard, url); err != nil {
				return nil, err
			}
		}
		e.URL, e.Events = url, events
		e.SubscriberMemberID, e.SubscriberKeyID = editor.MemberID, editor.keyID()
	}
	if p.OAuth2.Set && !p.OAuth2.Null {
		if err := checkTokenURL(ctx, guard, p.OAuth2.Value.TokenURL); err != nil {
			return nil, err
		}
	}
	if p.Headers.Set || p.ClientCertificate.Set || p.OAuth2.Set {
		s, err := e.SealedSecrets.Open(ring, e.CompanyID, e.ID)
		if err != nil {
			return nil, err
		}
		if p.Headers.Set {
			s.Headers, e.HeaderNames = canonical(p.Headers.Value), headerNames
			if e.HeaderNames == nil {
				e.HeaderNames = []string{}
			}
		}
		if p.ClientCertificate.Set {
			s.ClientCertificate = cert // null: removed
			e.setClientCertificate(leaf)
		}
		if p.OAuth2.Set {
			in := &p.OAuth2.Value
			if p.OAuth2.Null {
				in = nil
			}
			e.setOAuth2(in)
			s.OAuth2ClientSecret = ""
			if in != nil {
				s.OAuth2ClientSecret = in.ClientSecret
			}
		}
		if e.SealedSecrets, err = SealSecrets(ring, e.CompanyID, e.ID, s); err != nil {
			return nil, err
		}
	}
	e.UpdatedAt = now
	return e, save(ctx, tx, e)
}

func save(ctx context.Context, tx bun.IDB, e *Row) error {
	_, err := tx.NewUpdate().Model(e).Column("url", "description", "events", "payload", "ordering", "status", "disabled_reason",
		"secret_key_id", "sealed_secret", "sealed_previous_secret", "sealed_headers", "header_names", "sealed_client_certificate",
		"client_certificate_subject", "client_certificate_expires_at", "client_certificate_warned_at", "sealed_oauth2_secret", "oauth2_token_url", "oauth2_client_id",
		"oauth2_scope", "previous_secret_expires_at",
		"subscriber_member_id", "subscriber_key_id", "updated_at").WherePK().Exec(ctx)
	if err != nil {
		return fmt.Errorf("webhooks: save %s: %w", e.ID, err)
	}
	return nil
}

// WebhookEndpointDeleted is the answer of a delete.
type WebhookEndpointDeleted struct {
	Object  string `json:"object" const:"webhook_endpoint"`
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// Delete removes an endpoint with its delivery log (the log has no
// foreign keys to cascade: decision 0032). Deliveries already on
// DELIVERIES find no row and are dropped by the dispatcher; one a write
// recorded concurrently, having read the endpoint before this commits, is
// dropped so too and leaves with its partition.
func Delete(ctx context.Context, tx bun.IDB, id string) (WebhookEndpointDeleted, error) {
	e, err := getForUpdate(ctx, tx, id)
	if err != nil {
		return WebhookEndpointDeleted{}, err
	}
	for _, log := range []string{"webhook_attempts", "webhook_deliveries"} {
		if _, err := tx.NewDelete().TableExpr(log).Where("company_id = ? AND endpoint_id = ?", e.CompanyID, e.ID).Exec(ctx); err != nil {
			return WebhookEndpointDeleted{}, fmt.Errorf("webhooks: delete the log of %s: %w", id, err)
		}
	}
	if _, err := tx.NewDelete().Model(e).WherePK().Exec(ctx); err != nil {
		return WebhookEndpointDeleted{}, fmt.Errorf("webhooks: delete %s: %w", id, err)
	}
	return WebhookEndpointDeleted{Object: "webhook_endpoint", ID: id, Deleted: true}, nil
}

// Enable re-enables an endpoint (spec 3.3): it needs access to every
// subscribed event, and the editor becomes the subscriber. Enabling an
// enabled endpoint changes nothing; enabling a disabled one records
// webhook_endpoint.enabled.
func Enable(ctx context.Context, w *streams.Write, id string, editor Subscriber, access Access) (*Row, error) {
	e, err := getForUpdate(ctx, w.Tx, id)
	if err != nil {
		return nil, err
	}
	if err := access(e.Events); err != nil {
		return nil, err
	}
	if e.Status == StatusEnabled {
		return e, nil
	}
	e.Status, e.DisabledReason = StatusEnabled, nil
	e.SubscriberMemberID, e.SubscriberKeyID = editor.MemberID, editor.keyID()
	e.UpdatedAt = w.At
	if err := save(ctx, w.Tx, e); err != nil {
		return nil, err
	}
	return e, recordEndpoint(ctx, w, EventEndpointEnabled, e)
}

// Disable stops deliveries to an endpoint (disabled_reason manual) and
// records webhook_endpoint.disabled. Disabling a disabled endpoint changes
// nothing.
func Disable(ctx context.Context, w *streams.Write, id string) (*Row, error) {
	e, err := getForUpdate(ctx, w.Tx, id)
	if err != nil {
		return nil, err
	}
	if e.Status == StatusDisabled {
		return e, nil
	}
	reason := ReasonManual
	e.Status, e.DisabledReason, e.UpdatedAt = StatusDisabled, &reason, w.At
	if err := save(ctx, w.Tx, e); err != nil {
		return nil, err
	}
	return e, recordEndpoint(ctx, w, EventEndpointDisabled, e)
}

// Secret rotation limits.
const (
	DefaultSecretGrace = 24 * time.Hour
	MaxSecretGrace     = 7 * 24 * time.Hour
)

// SecretGrace is a rotation's grace period given in seconds (the API's
// grace_period_seconds, the portal's form): 0 to MaxSecretGrace, else 422
// out_of_range. The bound is checked on the seconds, before they become a
// Duration, so that a huge number cannot wrap around into a short one.
func SecretGrace(seconds int64) (time.Duration, error) {
	if seconds < 0 || seconds > int64(MaxSecretGrace/time.Second) {
		return 0, apierr.Invalid("grace_period_seconds", apierr.OutOfRange)
	}
	return time.Duration(seconds) * time.Second, nil
}

// RotateSecret gives the endpoint a new secret. With grace > 0 the previous
// secret keeps signing too (a second v1 signature, which Standard Webhooks
// receivers accept) until now+grace, so receivers can switch without
// losing deliveries; grace 0 drops it at once. Both are sealed again under
// the ring's first key; the new one is shown by ViewWithSecret only.
func RotateSecret(ctx context.Context, tx bun.IDB, id string, grace time.Duration, access Access, ring *secretbox.Keyring, now time.Time) (*Row, error) {
	if grace < 0 || grace > MaxSecretGrace {
		return nil, apierr.Invalid("grace_period_seconds", apierr.OutOfRange)
	}
	e, err := getForUpdate(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if err := access(e.Events); err != nil {
		return nil, err
	}
	secret, err := signing.NewSecret(rand.Reader)
	if err != nil {
		return nil, err
	}
	// The old secrets are opened only when something of them stays: the
	// previous secret during a grace, the custom headers. Without either,
	// a rotation also mends an endpoint whose secret no longer opens.
	var old Secrets
	if grace > 0 || e.SealedHeaders != nil || e.SealedClientCertificate != nil || e.SealedOAuth2Secret != nil {
		if old, err = e.SealedSecrets.Open(ring, e.CompanyID, e.ID); err != nil {
			return nil, err
		}
	}
	next := Secrets{Current: secret, Headers: old.Headers, ClientCertificate: old.ClientCertificate, OAuth2ClientSecret: old.OAuth2ClientSecret}
	e.PreviousSecretExpiresAt = nil
	if grace > 0 {
		until := now.Add(grace)
		next.Previous, e.PreviousSecretExpiresAt = old.Current, &until
	}
	if e.SealedSecrets, err = SealSecrets(ring, e.CompanyID, e.ID, next); err != nil {
		return nil, err
	}
	e.shown, e.UpdatedAt = secret, now
	return e, save(ctx, tx, e)
}
