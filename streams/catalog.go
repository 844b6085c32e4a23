package streams

import (
	"slices"
	"strings"
)

// EventType is one catalogued event. Each module declares its own (names as
// constants, described by an exported list); oficina/schema/events
// assembles them into the one table that subscription validation, family
// permissions, dispatch, docs/events.md and the OpenAPI webhooks section
// read.
type EventType struct {
	// Name is the event type, e.g. "sale.paid".
	Name string
	// Summary tells integrators, in one sentence, when the event is sent.
	Summary string
	// Kind is data.object.object, e.g. "sale".
	Kind string
	// Object is an example of the Go type the module renders as
	// data.object, the type its GET (or admin GET) returns: the type gives
	// the OpenAPI schema of the event and the value its example.
	Object any
	// ChangedFields is, for an .updated event, the example's
	// changed_fields: members of Object, in alphabetical order.
	ChangedFields []string
}

// Family is the event family: the part of the name before the first dot.
func (t EventType) Family() string { return Family(t.Name) }

// PingType is the event sent by POST /webhook_endpoints/{id}/ping. It is
// delivered to that endpoint only, never on the EVENTS firehose, and cannot
// be subscribed to.
const PingType = "ping"

// PingObject is data.object of a ping (spec 6.2): the endpoint pinged and
// no company record.
type PingObject struct {
	Object            string `json:"object" const:"ping"` // always "ping"
	WebhookEndpointID string `json:"webhook_endpoint_id"`
}

// SubscribeAll is the subscription to every event, later additions
// included, but the operational ones (Change.About).
const SubscribeAll = "*"

// Family is the part of an event type before its first dot ("sale" for
// "sale.paid").
func Family(eventType string) string {
	f, _, _ := strings.Cut(eventType, ".")
	return f
}

// subscriptionKeys are the entries of webhook_endpoints.events that receive
// an event of type t: "*" (but for an operational event), t itself and its
// family wildcard.
func subscriptionKeys(t string, operational bool) []string {
	if operational {
		return []string{t, Family(t) + ".*"}
	}
	return []string{SubscribeAll, t, Family(t) + ".*"}
}

// Matches reports whether an endpoint subscribed to events receives type t,
// an operational event (one about an endpoint: Change.About) when
// operational is set. The endpoint an operational event is about never
// receives it, whatever its subscription.
func Matches(events []string, t string, operational bool) bool {
	if t == PingType {
		return false
	}
	for _, k := range subscriptionKeys(t, operational) {
		if slices.Contains(events, k) {
			return true
		}
	}
	return false
}
