package chaos

import (
	"oficina/ops/testkit/hooks"
)

// The run's webhook receiver is the kit's (hooks.Receiver), answering 204
// to everything; each company's endpoint is /hooks/<company id>, so a
// delivery is a company and a webhook-id.

// hookURL is the endpoint URL of a company at recv.
func hookURL(recv *hooks.Receiver, companyID string) string {
	return recv.URL() + "/hooks/" + companyID
}

func deliveryKey(companyID, webhookID string) hooks.Key {
	return hooks.Key{Path: "/hooks/" + companyID, WebhookID: webhookID}
}

// seen is what the receiver saw, as the report reads it.
type seen struct {
	got        map[hooks.Key]hooks.Delivery
	requests   int
	mismatched []string // webhook-id header differing from the body's id
}

func observe(recv *hooks.Receiver) seen {
	return seen{got: recv.Deliveries(), requests: recv.Requests(), mismatched: recv.Mismatched()}
}
