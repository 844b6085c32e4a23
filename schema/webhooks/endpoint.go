package webhooks

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apitime"
	"oficina/schema/db"
	"oficina/schema/page"
)

// IDPrefix starts every endpoint id.
const IDPrefix = "we"

// Endpoint statuses.
const (
	StatusEnabled  = "enabled"
	StatusDisabled = "disabled"
)

// Reasons in disabled_reason.
const (
	ReasonManual               = "manual"
	ReasonFailing              = "failing" // 3 days of failures (the dispatcher disables)
	ReasonEmergencyKeyRotation = "emergency_key_rotation"
	ReasonReceiverRequested    = "receiver_requested" // the receiver answered webhook-delivery: disable
)

// WebhookPayload is what an endpoint receives of each event: the whole
// envelope, or a thin one whose data.object is only {object, id} (with
// changed_fields on .updated events), to be read in full with GET
// /events/{id} or the record's GET.
type WebhookPayload string

// The payloads.
const (
	PayloadFull = "full"
	PayloadThin = "thin"
)

// Values lists the payloads (an enum of the OpenAPI document).
func (WebhookPayload) Values() []string { return []string{PayloadFull, PayloadThin} }

// WebhookOrdering is how an endpoint's deliveries are ordered: none (in
// parallel, under the caps) or object (decision 0039: the events of one
// object in the order they were recorded, each once the one before it has
// succeeded or been given up; different objects still in parallel).
type WebhookOrdering string

// The orderings.
const (
	OrderingNone   = "none"
	OrderingObject = "object"
)

// Values lists the orderings (an enum of the OpenAPI document).
func (WebhookOrdering) Values() []string { return []string{OrderingNone, OrderingObject} }

// WebhookEndpointStatus is an endpoint's status.
type WebhookEndpointStatus string

// Values are the endpoint statuses.
func (WebhookEndpointStatus) Values() []string { return []string{StatusEnabled, StatusDisabled} }

// WebhookEndpointDisabledReason says why an endpoint is disabled.
type WebhookEndpointDisabledReason string

// Values are the reasons.
func (WebhookEndpointDisabledReason) Values() []string {
	return []string{ReasonManual, ReasonFailing, ReasonEmergencyKeyRotation, ReasonReceiverRequested}
}

// Row is a row of webhook_endpoints.
type Row struct {
	bun.BaseModel `bun:"table:webhook_endpoints"`

	// The json names are the columns': the dispatcher reads rows as JSON
	// (to_jsonb in oficina_dispatch_views).
	ID             string   `bun:"id,pk" json:"id"`
	CompanyID      string   `bun:"company_id" json:"company_id"`
	URL            string   `bun:"url" json:"url"`
	Description    string   `bun:"description" json:"description"`
	Events         []string `bun:"events,array" json:"events"`
	Status         string   `bun:"status" json:"status"`
	DisabledReason *string  `bun:"disabled_reason" json:"disabled_reason"`
	// Payload is what the endpoint receives: PayloadFull or PayloadThin.
	Payload string `bun:"payload" json:"payload"`
	// Ordering is OrderingNone or OrderingObject.
	Ordering string `bun:"ordering" json:"ordering"`
	// HeaderNames are the custom headers' names (their values are sealed
	// with the secrets), sorted.
	HeaderNames []string `bun:"header_names,array" json:"header_names"`
	// The client certificate's subject and expiry (its PEM is sealed).
	ClientCertificateSubject   *string    `bun:"client_certificate_subject" json:"client_certificate_subject"`
	ClientCertificateExpiresAt *time.Time `bun:"client_certificate_expires_at" json:"client_certificate_expires_at"`
	// ClientCertificateWarnedAt is when webhook_endpoint.client_certificate_expiring
	// was sent for the certificate set now (nil: not yet; a new certificate clears it).
	ClientCertificateWarnedAt *time.Time `bun:"client_certificate_warned_at" json:"client_certificate_warned_at"`
	// OAuth2 client credentials in clear (the secret is sealed).
	OAuth2TokenURL *string `bun:"oauth2_token_url" json:"oauth2_token_url"`
	OAuth2ClientID *string `bun:"oauth2_client_id" json:"oauth2_client_id"`
	OAuth2Scope    *string `bun:"oauth2_scope" json:"oauth2_scope"`
	// The signing secrets, sealed (secrets.go); the previous one only
	// during a rotation grace, until PreviousSecretExpiresAt.
	SealedSecrets
	PreviousSecretExpiresAt *time.Time `bun:"previous_secret_expires_at" json:"previous_secret_expires_at"`
	SubscriberMemberID      string     `bun:"subscriber_member_id" json:"subscriber_member_id"`
	SubscriberKeyID         *string    `bun:"subscriber_key_id" json:"subscriber_key_id"`
	// The dispatcher's marks: the first failure of the current run of
	// failures, and when the subscriber's loss of access was mailed; a
	// success clears both.
	FailingSince         *time.Time `bun:"failing_since" json:"failing_since"`
	AccessLostNotifiedAt *time.Time `bun:"access_lost_notified_at" json:"access_lost_notified_at"`
	CreatedAt            time.Time  `bun:"created_at" json:"created_at"`
	UpdatedAt            time.Time  `bun:"updated_at" json:"updated_at"`

	// shown is the new secret in clear, set by Create and RotateSecret for
	// their answer only: it is never stored as it is nor read back.
	shown string
}

// WebhookEndpoint is an endpoint as the API returns it. Secret is present only in
// the answers of creation and rotation.
type WebhookEndpoint struct {
	Object                  string                         `json:"object" const:"webhook_endpoint"`
	ID                      string                         `json:"id"`
	URL                     string                         `json:"url"`
	Description             string                         `json:"description"`
	Events                  []EventName                    `json:"events"`
	Status                  WebhookEndpointStatus          `json:"status"`
	DisabledReason          *WebhookEndpointDisabledReason `json:"disabled_reason"`
	Payload                 WebhookPayload                 `json:"payload"`
	Ordering                WebhookOrdering                `json:"ordering" doc:"none: deliveries go in parallel under the caps; object: the events of one object (a sale, a service order, a client) arrive in the order they were recorded, each once the one before it has succeeded or been given up."`
	Headers                 []string                       `json:"headers" doc:"The names of the custom headers sent with every delivery; their values are sealed at rest and never shown again."`
	ClientCertificate       *WebhookClientCertificate      `json:"client_certificate" doc:"The client certificate presented to a receiver that asks for one (mutual TLS), or null."`
	OAuth2                  *WebhookOAuth2                 `json:"oauth2" doc:"The OAuth2 client credentials whose bearer token every delivery carries, without the secret; or null."`
	Secret                  string                         `json:"secret,omitempty" doc:"The signing secret (whsec_ + base64), shown once: present only in the answers of creation and rotate_secret, absent from every other answer and from their replays with the same Idempotency-Key."`
	PreviousSecretExpiresAt *apitime.Time                  `json:"previous_secret_expires_at"`
	SubscriberMemberID      string                         `json:"subscriber_member_id"`
	SubscriberAPIKeyID      *string                        `json:"subscriber_api_key_id"`
	FailingSince            *apitime.Time                  `json:"failing_since" doc:"When the current run of failed deliveries began, or null: the last attempt succeeded (or none was made). Three days of it disable the endpoint (disabled_reason failing)."`
	CreatedAt               apitime.Time                   `json:"created_at"`
	UpdatedAt               apitime.Time                   `json:"updated_at"`
}

// View renders the endpoint without its secret.
func (e *Row) View() WebhookEndpoint {
	var prev, failing *apitime.Time
	if e.PreviousSecretExpiresAt != nil {
		t := apitime.At(*e.PreviousSecretExpiresAt)
		prev = &t
	}
	if e.FailingSince != nil {
		t := apitime.At(*e.FailingSince)
		failing = &t
	}
	return WebhookEndpoint{
		Object: "webhook_endpoint", ID: e.ID, URL: e.URL, Description: e.Description, Events: asEventNames(e.Events),
		Status: WebhookEndpointStatus(e.Status), DisabledReason: (*WebhookEndpointDisabledReason)(e.DisabledReason),
		Payload: WebhookPayload(e.Payload), Ordering: WebhookOrdering(e.Ordering), Headers: append([]string{}, e.HeaderNames...), ClientCertificate: e.clientCertificateView(), OAuth2: e.oauth2View(),
		PreviousSecretExpiresAt: prev,
		SubscriberMemberID:      e.SubscriberMemberID, SubscriberAPIKeyID: e.SubscriberKeyID, FailingSince: failing,
		CreatedAt: apitime.At(e.CreatedAt), UpdatedAt: apitime.At(e.UpdatedAt),
	}
}

// ViewWithSecret renders the endpoint with the secret Create or
// RotateSecret just made (their answers only; other rows have none to
// show: a stored secret is sealed and never shown again).
func (e *Row) ViewWithSecret() WebhookEndpoint {
	v := e.View()
	v.Secret = e.shown
	return v
}

// Subscriber is who an endpoint's deliveries are sent on behalf of: the
// member, and the API key when the subscription was made through the API.
type Subscriber struct {
	MemberID string
	KeyID    string // "" from the dashboard
}

func (s Subscriber) keyID() *string {
	if s.KeyID == "" {
		return nil
	}
	k := s.KeyID
	return &k
}

// Get reads an endpoint of the transaction's company; a malformed or
// unknown id (or another company's) is 404.
func Get(ctx context.Context, tx bun.IDB, id string) (*Row, error) {
	return get(ctx, tx, id, false)
}

// getForUpdate reads and locks an endpoint.
func getForUpdate(ctx context.Context, tx bun.IDB, id string) (*Row, error) {
	return get(ctx, tx, id, true)
}

func get(ctx context.Context, tx bun.IDB, id string, lock bool) (*Row, error) {
	return db.ByID[Row](ctx, tx, IDPrefix, id, lock)
}

// List pages through the company's endpoints, newest first.
func List(ctx context.Context, tx bun.IDB, p page.Params, s page.Sync) (page.List[WebhookEndpoint], error) {
	var es []Row
	if err := p.Apply(s.Apply(tx.NewSelect().Model(&es), "created_at", "updated_at"), "id").Scan(ctx); err != nil {
		return page.List[WebhookEndpoint]{}, fmt.Errorf("webhooks: list: %w", err)
	}
	vs := make([]WebhookEndpoint, len(es))
	for i := range es {
		vs[i] = es[i].View()
	}
	return page.Wrap(p, vs), nil
}

// Count is the number of endpoints of the company, enabled or not (the plan
// quota counts every registered endpoint).
func Count(ctx context.Context, tx bun.IDB) (int, error) {
	n, err := tx.NewSelect().Model((*Row)(nil)).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("webhooks: count: %w", err)
	}
	return int(n), nil
}
