package webhooks

import (
	"context"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/ids"
	"oficina/streams"
)

// WebhookDelivery is a delivery log entry (spec 2.8). response_status_code
// is present when the receiver answered non-2xx, error when there was no
// answer or the delivery was closed for a reason (subscriber_access_lost,
// plan_without_api).
type WebhookDelivery struct {
	Object             string                `json:"object" const:"webhook_delivery"`
	ID                 string                `json:"id"`
	WebhookEndpointID  string                `json:"webhook_endpoint_id"`
	EventID            string                `json:"event_id"`
	EventType          EventType             `json:"event_type"`
	Status             WebhookDeliveryStatus `json:"status"`
	ResponseStatusCode *int                  `json:"response_status_code,omitempty"`
	Error              *string               `json:"error,omitempty" doc:"Why the last attempt got no answer (timeout, dns_error, destination_refused: …), or why the delivery was closed without one: subscriber_access_lost, plan_without_api or endpoint_disabled. The spec also writes subscriber_access_lostl, a typo: only subscriber_access_lost is sent (docs/api.md)."`
	Attempts           int                   `json:"attempts"`
	LastAttemptAt      *apitime.Time         `json:"last_attempt_at"`
	NextAttemptAt      *apitime.Time         `json:"next_attempt_at"`
	ResendOf           *string               `json:"resend_of"`
	CreatedAt          apitime.Time          `json:"created_at"`
}

// WebhookDeliveryStatus is a delivery's status (spec 2.8).
type WebhookDeliveryStatus string

// Values are the delivery statuses.
func (WebhookDeliveryStatus) Values() []string {
	return []string{streams.StatusPending, streams.StatusSucceeded, streams.StatusFailed}
}

// ViewDelivery renders a delivery log entry.
func ViewDelivery(d *streams.Delivery) WebhookDelivery {
	v := WebhookDelivery{
		Object: "webhook_delivery", ID: d.ID, WebhookEndpointID: d.EndpointID, EventID: d.EventID,
		EventType: EventType(d.EventType), Status: WebhookDeliveryStatus(d.Status), Error: d.Error, Attempts: d.AttemptCount,
		ResendOf: d.ResendOf, CreatedAt: apitime.At(d.CreatedAt),
	}
	if c := d.ResponseStatusCode; c != nil && (*c < 200 || *c > 299) {
		v.ResponseStatusCode = c
	}
	if d.LastAttemptAt != nil {
		t := apitime.At(*d.LastAttemptAt)
		v.LastAttemptAt = &t
	}
	if d.NextAttemptAt != nil && d.Status == streams.StatusPending {
		t := apitime.At(*d.NextAttemptAt)
		v.NextAttemptAt = &t
	}
	return v
}

// Ping records a real ping event delivered to this endpoint only (spec
// 4.6). It needs access to the subscribed events; a disabled endpoint is
// 409 conflict.
func Ping(ctx context.Context, w *streams.Write, id string, access Access) (streams.Recorded, error) {
	e, err := Get(ctx, w.Tx, id)
	if err != nil {
		return streams.Recorded{}, err
	}
	if err := access(e.Events); err != nil {
		return streams.Recorded{}, err
	}
	if e.Status != StatusEnabled {
		return streams.Recorded{}, apierr.New(apierr.Conflict)
	}
	return streams.Ping(ctx, w, e.ID)
}

// Resend creates a new delivery of a logged delivery's event (same event
// id and body) to its endpoint, which must be enabled (else 409).
func Resend(ctx context.Context, w *streams.Write, endpointID, deliveryID string) (WebhookDelivery, error) {
	e, err := Get(ctx, w.Tx, endpointID)
	if err != nil {
		return WebhookDelivery{}, err
	}
	if !ids.Valid(streams.DeliveryIDPrefix, deliveryID) {
		return WebhookDelivery{}, apierr.New(apierr.ResourceNotFound)
	}
	orig := new(streams.Delivery)
	err = w.Tx.NewSelect().Model(orig).Where("id = ?", deliveryID).Where("endpoint_id = ?", e.ID).Scan(ctx)
	if err != nil {
		return WebhookDelivery{}, apierr.NoRows(err)
	}
	if e.Status != StatusEnabled {
		return WebhookDelivery{}, apierr.New(apierr.Conflict)
	}
	d, err := streams.Resend(ctx, w, orig)
	if err != nil {
		return WebhookDelivery{}, apierr.NoRows(err) // its event past retention: as if the delivery were gone
	}
	return ViewDelivery(d), nil
}
