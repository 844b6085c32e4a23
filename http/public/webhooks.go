package public

import (
	"context"
	"net/http"

	"github.com/uptrace/bun"

	"oficina/schema/page"
	"oficina/schema/webhooks"
	"oficina/tenant"
)

func (s *Server) webhookRoutes() {
	const base, tg = "/webhook_endpoints", "webhooks"
	reads := " Subscribing also needs `<module>:read` for every module of the events (all modules for `*`)."
	handle(s, http.MethodPost, base, need("webhooks:create"), op{id: "createWebhookEndpoint", tag: tg,
		summary: "Register a webhook endpoint", status: http.StatusCreated,
		desc: "The answer carries the signing `secret` (`whsec_…`), shown only here and on rotation; a replay with the " +
			"same `Idempotency-Key` answers without it. A refused URL is 422 with `param: url` and the cause as its code." + reads,
		example: `{"url": "https://example.com/webhooks/oficina", "description": "ERP", "events": ["sale.paid", "service_order.*"]}`},
		s.createWebhookEndpoint)
	handle(s, http.MethodGet, base, need("webhooks:read"), op{id: "listWebhookEndpoints", tag: tg,
		summary: "List webhook endpoints", query: pageParams(syncParams()...)}, s.listWebhookEndpoints)
	handle(s, http.MethodGet, base+"/{id}", need("webhooks:read"), op{id: "getWebhookEndpoint", tag: tg,
		summary: "Read a webhook endpoint"}, s.getWebhookEndpoint)
	handle(s, http.MethodPatch, base+"/{id}", need("webhooks:update"), op{id: "updateWebhookEndpoint", tag: tg,
		summary: "Change a webhook endpoint", desc: "Changing the URL or the events makes the caller the subscriber." + reads,
		example: `{"events": ["*"]}`}, s.updateWebhookEndpoint)
	handle(s, http.MethodDelete, base+"/{id}", need("webhooks:delete"), op{id: "deleteWebhookEndpoint", tag: tg,
		summary: "Delete a webhook endpoint", desc: "Its pending deliveries are dropped and its delivery log deleted."},
		s.deleteWebhookEndpoint)
	handle(s, http.MethodPost, base+"/{id}/enable", need("webhooks:update"), op{id: "enableWebhookEndpoint", tag: tg,
		summary: "Re-enable a webhook endpoint", desc: "The caller becomes the subscriber." + reads}, s.enableWebhookEndpoint)
	handle(s, http.MethodPost, base+"/{id}/disable", need("webhooks:update"), op{id: "disableWebhookEndpoint", tag: tg,
		summary: "Disable a webhook endpoint"}, s.disableWebhookEndpoint)
	handle(s, http.MethodPost, base+"/{id}/ping", need("webhooks:update"), op{id: "pingWebhookEndpoint", tag: tg,
		summary: "Send a ping event", status: http.StatusAccepted,
		desc: "Sends a real `ping` event to this endpoint only; 202 without a body. A disabled endpoint refuses (409)." + reads},
		s.pingWebhookEndpoint)
	handle(s, http.MethodPost, base+"/{id}/rotate_secret", need("webhooks:update"), op{id: "rotateWebhookEndpointSecret",
		tag: tg, summary: "Rotate the signing secret", optionalBody: true,
		desc: "The answer carries the new `secret`. During the grace period deliveries carry a signature with each " +
			"secret." + reads, example: `{"grace_period_seconds": 3600}`}, s.rotateWebhookSecret)
	handle(s, http.MethodGet, base+"/{id}/deliveries", need("webhooks:read"), op{id: "listWebhookDeliveries", tag: tg,
		summary: "List an endpoint's deliveries", desc: "The delivery log, newest first; kept 30 days.", query: pageParams(
			query[webhooks.WebhookDeliveryStatus]("status", "Only deliveries in this status."),
			query[webhooks.EventType]("event_type", "Only deliveries of this event type."),
			patterned("event_id", "Only deliveries of this event (`evt_…`): the original and its resends; empty is none.",
				webhooks.FilterEventIDPattern),
			timestampQuery("created_after", "Only deliveries created at or after this time."),
			timestampQuery("created_before", "Only deliveries created before this time."))},
		s.listWebhookDeliveries)
	handle(s, http.MethodPost, base+"/{id}/deliveries/{delivery_id}/resend", need("webhooks:update"), op{
		id: "resendWebhookDelivery", tag: tg, summary: "Resend a delivery", status: http.StatusAccepted,
		desc: "Sends the logged delivery's event again, with the same event id, as a new delivery."},
		s.resendWebhookDelivery)
	s.recoverRoutes()
	s.portalSessionRoutes()
}

// webhookManager is the owner/admin rule of 4.6, for every webhook route.
func webhookManager(p *tenant.Principal) error { return webhooks.RequireManager(p) }

// webhookAccess authorizes subscribing the caller to events (part 5.2).
func webhookAccess(p *tenant.Principal) webhooks.Access { return webhooks.PrincipalAccess(p) }

func subscriber(p *tenant.Principal) webhooks.Subscriber {
	return webhooks.Subscriber{MemberID: p.Member.ID, KeyID: p.Key.ID}
}

func (s *Server) createWebhookEndpoint(ctx context.Context, c *Call[webhooks.WebhookEndpointCreate]) (webhooks.WebhookEndpoint, error) {
	p := c.P
	// The secret is shown once: an idempotent replay answers without it.
	c.OmitOnReplay("secret")
	return as((*webhooks.Row).ViewWithSecret)(webhooks.Create(ctx, c.W.Tx, p.CompanyID(), c.Body, subscriber(p),
		webhookAccess(p), s.deps.Destinations, s.deps.Secrets, c.W.At))
}

func (s *Server) listWebhookEndpoints(ctx context.Context, c *Call[any]) (page.List[webhooks.WebhookEndpoint], error) {
	p := c.P
	if err := webhookManager(p); err != nil {
		return page.List[webhooks.WebhookEndpoint]{}, err
	}
	return filteredList(ctx, s, c, page.ParseSync, func(ctx context.Context, tx bun.Tx, _ *tenant.Principal, pg page.Params,
		sync page.Sync) (page.List[webhooks.WebhookEndpoint], error) {
		return webhooks.List(ctx, tx, pg, sync)
	})
}

func (s *Server) getWebhookEndpoint(ctx context.Context, c *Call[any]) (webhooks.WebhookEndpoint, error) {
	p := c.P
	if err := webhookManager(p); err != nil {
		return webhooks.WebhookEndpoint{}, err
	}
	var out webhooks.WebhookEndpoint
	err := s.read(ctx, p, func(ctx context.Context, tx bun.Tx) error {
		e, err := webhooks.Get(ctx, tx, c.Path("id"))
		if err == nil {
			out = e.View()
		}
		return err
	})
	return out, err
}

func (s *Server) updateWebhookEndpoint(ctx context.Context, c *Call[webhooks.WebhookEndpointUpdate]) (webhooks.WebhookEndpoint, error) {
	p := c.P
	if err := webhookManager(p); err != nil {
		return webhooks.WebhookEndpoint{}, err
	}
	return endpointView(webhooks.Update(ctx, c.W.Tx, c.Path("id"), c.Body, subscriber(p), webhookAccess(p), s.deps.Destinations, s.deps.Secrets, c.W.At))
}

func (s *Server) deleteWebhookEndpoint(ctx context.Context, c *Call[any]) (webhooks.WebhookEndpointDeleted, error) {
	p := c.P
	if err := webhookManager(p); err != nil {
		return webhooks.WebhookEndpointDeleted{}, err
	}
	return webhooks.Delete(ctx, c.W.Tx, c.Path("id"))
}

func (s *Server) enableWebhookEndpoint(ctx context.Context, c *Call[any]) (webhooks.WebhookEndpoint, error) {
	p := c.P
	return endpointView(webhooks.Enable(ctx, c.W, c.Path("id"), subscriber(p), webhookAccess(p)))
}

func (s *Server) disableWebhookEndpoint(ctx context.Context, c *Call[any]) (webhooks.WebhookEndpoint, error) {
	p := c.P
	if err := webhookManager(p); err != nil {
		return webhooks.WebhookEndpoint{}, err
	}
	return endpointView(webhooks.Disable(ctx, c.W, c.Path("id")))
}

func (s *Server) rotateWebhookSecret(ctx context.Context, c *Call[webhooks.WebhookSecretRotation]) (webhooks.WebhookEndpoint, error) {
	p := c.P
	in := c.Body
	grace := webhooks.DefaultSecretGrace
	if in.GracePeriodSeconds != nil {
		var err error
		if grace, err = webhooks.SecretGrace(*in.GracePeriodSeconds); err != nil {
			return webhooks.WebhookEndpoint{}, err
		}
	}
	// As on creation, the new secret is shown once: the idempotency record
	// is stored without it, so a replay answers without it.
	c.OmitOnReplay("secret")
	return as((*webhooks.Row).ViewWithSecret)(webhooks.RotateSecret(ctx, c.W.Tx, c.Path("id"), grace, webhookAccess(p), s.deps.Secrets, c.W.At))
}

// pingWebhookEndpoint answers 202 with no body (a nil answer of type any
// has none).
func (s *Server) pingWebhookEndpoint(ctx context.Context, c *Call[any]) (any, error) {
	_, err := webhooks.Ping(ctx, c.W, c.Path("id"), webhookAccess(c.P))
	return nil, err
}

func (s *Server) listWebhookDeliveries(ctx context.Context, c *Call[any]) (page.List[webhooks.WebhookDelivery], error) {
	p := c.P
	if err := webhookManager(p); err != nil {
		return page.List[webhooks.WebhookDelivery]{}, err
	}
	pg, err := page.Parse(c.Query())
	if err != nil {
		return page.List[webhooks.WebhookDelivery]{}, err
	}
	f, err := webhooks.ParseDeliveryFilter(c.Query())
	if err != nil {
		return page.List[webhooks.WebhookDelivery]{}, err
	}
	var out page.List[webhooks.WebhookDelivery]
	err = s.read(ctx, p, func(ctx context.Context, tx bun.Tx) error {
		out, err = webhooks.DeliveryLog(ctx, tx, c.Path("id"), f, pg)
		return err
	})
	return out, err
}

func (s *Server) resendWebhookDelivery(ctx context.Context, c *Call[any]) (webhooks.WebhookDelivery, error) {
	p := c.P
	if err := webhookManager(p); err != nil {
		return webhooks.WebhookDelivery{}, err
	}
	return webhooks.Resend(ctx, c.W, c.Path("id"), c.Path("delivery_id"))
}

// endpointView renders the endpoint a write rule returns, without its
// secret.
var endpointView = as((*webhooks.Row).View)
