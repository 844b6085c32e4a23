package webhooks

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apitime"
	"oficina/schema/eventnames"
	"oficina/schema/ids"
	"oficina/streams"
)

// Operational events (issue 27, decision 0037): what happens to the
// webhooks themselves, for the integrator's own monitoring — an endpoint
// disabled (with its reason) or enabled again, failing or recovered, a
// delivery given up, a client certificate about to expire. They are events
// of the table like any other (families webhook_endpoint and
// webhook_delivery, permission webhooks:read), with two differences: "*"
// does not subscribe to them, and one is never delivered to the endpoint
// it is about (streams.Change.About). The mails stay as they were.
const (
	EventEndpointDisabled            = "webhook_endpoint.disabled"
	EventEndpointEnabled             = "webhook_endpoint.enabled"
	EventEndpointFailing             = "webhook_endpoint.failing"
	EventEndpointRecovered           = "webhook_endpoint.recovered"
	EventEndpointCertificateExpiring = "webhook_endpoint.client_certificate_expiring"
	EventDeliveryGivenUp             = "webhook_delivery.given_up"
)

// CertificateWarning is how long before its client certificate expires an
// endpoint's webhook_endpoint.client_certificate_expiring is sent (once
// per certificate): two weeks leave time to get a new one from a CA that
// has a person in the loop.
const CertificateWarning = 14 * 24 * time.Hour

// EventTypes describes the operational events for the catalogue; data.object
// is the endpoint as its GET returns it (never a secret), or the delivery
// as the delivery log shows it.
func EventTypes() []streams.EventType {
	disabled := exampleEndpoint()
	disabled.Status, disabled.DisabledReason = StatusDisabled, new(WebhookEndpointDisabledReason(ReasonFailing))
	failing := exampleEndpoint()
	failing.FailingSince = new(apitime.TimeOf(2026, 3, 14, 13, 5, 9))
	expiring := exampleEndpoint()
	expiring.ClientCertificate = &WebhookClientCertificate{Subject: "CN=oficina,O=Example Ltda",
		ExpiresAt: apitime.TimeOf(2026, 3, 28, 13, 5, 9)}
	return []streams.EventType{
		{Name: EventEndpointDisabled, Kind: "webhook_endpoint", Object: disabled,
			Summary: "An endpoint was disabled: disabled_reason says why (manual, failing after 3 days of failures, " +
				"receiver_requested by its receiver's answer, emergency_key_rotation). Never sent to that endpoint; \"*\" does not include it."},
		{Name: EventEndpointEnabled, Kind: "webhook_endpoint", Object: exampleEndpoint(),
			Summary: "A disabled endpoint was enabled again (API, admin API or portal). Never sent to that endpoint; \"*\" does not include it."},
		{Name: EventEndpointFailing, Kind: "webhook_endpoint", Object: failing,
			Summary: "An endpoint's delivery failed after a success (or its first delivery failed): failing_since is set. " +
				"Never sent to that endpoint; \"*\" does not include it."},
		{Name: EventEndpointRecovered, Kind: "webhook_endpoint", Object: exampleEndpoint(),
			Summary: "A failing endpoint answered a delivery 2xx again: failing_since is null. Never sent to that endpoint; \"*\" does not include it."},
		{Name: EventEndpointCertificateExpiring, Kind: "webhook_endpoint", Object: expiring,
			Summary: "An endpoint's client certificate expires within 14 days (client_certificate.expires_at): sent once per " +
				"certificate. Never sent to that endpoint; \"*\" does not include it."},
		{Name: EventDeliveryGivenUp, Kind: "webhook_delivery", Object: exampleDelivery(),
			Summary: "A delivery failed for good after an attempt: its attempts ran out, its receiver answered " +
				"webhook-delivery: abort-message, or that failure disabled its endpoint. Not sent for deliveries closed " +
				"without an attempt, pings and operational events; never to the delivery's endpoint; \"*\" does not include it."},
	}
}

func exampleEndpoint() WebhookEndpoint {
	at := apitime.TimeOf(2026, 3, 14, 13, 5, 9)
	return WebhookEndpoint{Object: "webhook_endpoint", ID: ids.Example(IDPrefix, 1), URL: "https://erp.example.com/oficina/webhooks",
		Description: "ERP", Events: []EventName{"sale.*", "service_order.*"}, Status: StatusEnabled, Payload: PayloadFull, Ordering: OrderingNone,
		Headers: []string{"X-Api-Key"}, SubscriberMemberID: ids.Example("mem", 1), SubscriberAPIKeyID: new(ids.Example("key", 1)),
		CreatedAt: at, UpdatedAt: at}
}

func exampleDelivery() WebhookDelivery {
	at := apitime.TimeOf(2026, 3, 14, 13, 5, 9)
	return WebhookDelivery{Object: "webhook_delivery", ID: ids.Example(streams.DeliveryIDPrefix, 1),
		WebhookEndpointID: ids.Example(IDPrefix, 1), EventID: "evt_9f86d081884c7d659a2feaa0c55ad015", EventType: "sale.paid",
		Status: streams.StatusFailed, ResponseStatusCode: new(503), Attempts: 11, LastAttemptAt: &at, CreatedAt: at}
}

// recordEndpoint records an operational event of type typ about each of
// es, with the endpoint as it is now.
func recordEndpoint(ctx context.Context, w *streams.Write, typ string, es ...*Row) error {
	changes := make([]streams.Change, len(es))
	for i, e := range es {
		changes[i] = streams.Change{Type: typ, Object: e.View(), About: e.ID}
	}
	if _, err := streams.Record(ctx, w, changes...); err != nil {
		return fmt.Errorf("webhooks: %s: %w", typ, err)
	}
	return nil
}

// Turns are what a dispatcher cycle recorded of one company that an
// operational event reports: the endpoints that started failing, recovered
// or were disabled, and the deliveries given up (oficina_dispatch_record's
// answer).
type Turns struct {
	Failing, Recovered, Disabled []string // endpoint ids
	GivenUp                      []string // delivery ids
}

// Empty reports turns without anything to report.
func (t Turns) Empty() bool {
	return len(t.Failing)+len(t.Recovered)+len(t.Disabled)+len(t.GivenUp) == 0
}

// RecordTurns records the operational events of t in w, the dispatcher's
// cycle transaction scoped to w's company, so an event exists exactly when
// the turn it reports committed (at least once, as every event: w puts it
// in the backlog, for the relay, since the dispatcher does not publish).
// Per endpoint, in the order they happened: failing, recovered, the
// deliveries given up, disabled. A given-up delivery of a ping or of an
// operational event reports nothing: operational events are about the
// company's events, and two failing endpoints would otherwise tell each
// other about their failures without end.
func RecordTurns(ctx context.Context, w *streams.Write, t Turns) error {
	if t.Empty() {
		return nil
	}
	endpoints, err := rowsByID(ctx, w.Tx, slices.Concat(t.Failing, t.Recovered, t.Disabled))
	if err != nil {
		return err
	}
	var changes []streams.Change
	add := func(typ string, idList []string) {
		for _, id := range idList {
			if e := endpoints[id]; e != nil {
				changes = append(changes, streams.Change{Type: typ, Object: e.View(), About: e.ID})
			}
		}
	}
	add(EventEndpointFailing, t.Failing)
	add(EventEndpointRecovered, t.Recovered)
	if len(t.GivenUp) > 0 {
		var ds []streams.Delivery
		q := w.Tx.NewSelect().Model(&ds).Where("id IN (?)", bun.List(t.GivenUp)).Where("kind <> ?", streams.KindPing).Order("id")
		if from, ok := earliest(t.GivenUp); ok {
			q = q.Where("created_at >= ?", from) // a delivery id is made at its created_at: the days to read
		}
		err := q.Scan(ctx)
		if err != nil {
			return fmt.Errorf("webhooks: given-up deliveries: %w", err)
		}
		for i := range ds {
			if !eventnames.Operational(ds[i].EventType) {
				changes = append(changes, streams.Change{Type: EventDeliveryGivenUp, Object: ViewDelivery(&ds[i]), About: ds[i].EndpointID})
			}
		}
	}
	add(EventEndpointDisabled, t.Disabled)
	if _, err := streams.Record(ctx, w, changes...); err != nil {
		return fmt.Errorf("webhooks: operational events: %w", err)
	}
	return nil
}

// earliest is the earliest time the delivery ids were made at.
func earliest(deliveryIDs []string) (time.Time, bool) {
	var from time.Time
	for _, id := range deliveryIDs {
		at, ok := ids.Time(id)
		if !ok {
			return time.Time{}, false
		}
		if from.IsZero() || at.Before(from) {
			from = at
		}
	}
	return from, !from.IsZero()
}

// rowsByID reads the endpoints ids of the transaction's company.
func rowsByID(ctx context.Context, tx bun.IDB, idList []string) (map[string]*Row, error) {
	out := make(map[string]*Row, len(idList))
	if len(idList) == 0 {
		return out, nil
	}
	var rows []Row
	if err := tx.NewSelect().Model(&rows).Where("id IN (?)", bun.List(idList)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("webhooks: endpoints %v: %w", idList, err)
	}
	for i := range rows {
		out[rows[i].ID] = &rows[i]
	}
	return out, nil
}
