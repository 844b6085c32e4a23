package public

import (
	"context"
	"net/http"
	"time"

	"github.com/go-fuego/fuego"
	"github.com/uptrace/bun"

	"oficina/http/wire"
	"oficina/schema/page"
	"oficina/schema/webhooks"
	"oficina/streams"
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
		summary: "List webhook endpoints", query: pageParams()}, s.listWebhookEndpoints)
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
			query[string]("event_id", "Only deliveries of this event (`evt_…`): the original and its resends."),
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

func (s *Server) createWebhookEndpoint(c fuego.ContextWithBody[webhooks.WebhookEndpointCreate]) (webhooks.WebhookEndpoint, error) {
	p := principal(c.Context())
	var in webhooks.WebhookEndpointCreate
	if err := wire.Decode(c.Request(), &in); err != nil {
		return webhooks.WebhookEndpoint{}, err
	}
	// The secret is shown once: an idempotent replay answers without it.
	omitOnReplay(c.Context(), "secret")
	var out webhooks.WebhookEndpoint
	err := s.write(c.Context(), p, func(ctx context.Context, tx bun.Tx, w *streams.Write) error {
		e, err := webhooks.Create(ctx, tx, p.CompanyID(), in, subscriber(p), webhookAccess(p), s.deps.Destinations, s.deps.Secrets, w.At)
		if err == nil {
			out = e.ViewWithSecret()
		}
		return err
	})
	return out, err
}

func (s *Server) listWebhookEndpoints(c fuego.ContextNoBody) (page.List[webhooks.WebhookEndpoint], error) {
	p := principal(c.Context())
	if err := webhookManager(p); err != nil {
		return page.List[webhooks.WebhookEndpoint]{}, err
	}
	pg, err := page.Parse(c.Request().URL.Query())
	if err != nil {
		return page.List[webhooks.WebhookEndpoint]{}, err
	}
	var out page.List[webhooks.WebhookEndpoint]
	err = s.tx(c.Context(), p, func(ctx context.Context, tx bun.Tx) error {
		out, err = webhooks.List(ctx, tx, pg)
		return err
	})
	return out, err
}

func (s *Server) getWebhookEndpoint(c fuego.ContextNoBody) (webhooks.WebhookEndpoint, error) {
	p := principal(c.Context())
	if err := webhookManager(p); err != nil {
		return webhooks.WebhookEndpoint{}, err
	}
	var out webhooks.WebhookEndpoint
	err := s.tx(c.Context(), p, func(ctx context.Context, tx bun.Tx) error {
		e, err := webhooks.Get(ctx, tx, c.PathParam("id"))
		if err == nil {
			out = e.View()
		}
		return err
	})
	return out, err
}

func (s *Server) updateWebhookEndpoint(c fuego.ContextWithBody[webhooks.WebhookEndpointUpdate]) (webhooks.WebhookEndpoint, error) {
	p := principal(c.Context())
	if err := webhookManager(p); err != nil {
		return webhooks.WebhookEndpoint{}, err
	}
	var in webhooks.WebhookEndpointUpdate
	if err := wire.Decode(c.Request(), &in); err != nil {
		return webhooks.WebhookEndpoint{}, err
	}
	return s.endpointWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, now time.Time) (*webhooks.Row, error) {
		return webhooks.Update(ctx, tx, c.PathParam("id"), in, subscriber(p), webhookAccess(p), s.deps.Destinations, now)
	})
}

func (s *Server) deleteWebhookEndpoint(c fuego.ContextNoBody) (webhooks.WebhookEndpointDeleted, error) {
	p := principal(c.Context())
	if err := webhookManager(p); err != nil {
		return webhooks.WebhookEndpointDeleted{}, err
	}
	var out webhooks.WebhookEndpointDeleted
	err := s.write(c.Context(), p, func(ctx context.Context, tx bun.Tx, _ *streams.Write) error {
		var err error
		out, err = webhooks.Delete(ctx, tx, c.PathParam("id"))
		return err
	})
	return out, err
}

func (s *Server) enableWebhookEndpoint(c fuego.ContextNoBody) (webhooks.WebhookEndpoint, error) {
	p := principal(c.Context())
	return s.endpointWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, now time.Time) (*webhooks.Row, error) {
		return webhooks.Enable(ctx, tx, c.PathParam("id"), subscriber(p), webhookAccess(p), now)
	})
}

func (s *Server) disableWebhookEndpoint(c fuego.ContextNoBody) (webhooks.WebhookEndpoint, error) {
	p := principal(c.Context())
	if err := webhookManager(p); err != nil {
		return webhooks.WebhookEndpoint{}, err
	}
	return s.endpointWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, now time.Time) (*webhooks.Row, error) {
		return webhooks.Disable(ctx, tx, c.PathParam("id"), now)
	})
}

func (s *Server) rotateWebhookSecret(c fuego.ContextWithBody[webhooks.WebhookSecretRotation]) (webhooks.WebhookEndpoint, error) {
	p := principal(c.Context())
	var in webhooks.WebhookSecretRotation
	if err := wire.Decode(c.Request(), &in); err != nil {
		return webhooks.WebhookEndpoint{}, err
	}
	grace := webhooks.DefaultSecretGrace
	if in.GracePeriodSeconds != nil {
		var err error
		if grace, err = webhooks.SecretGrace(*in.GracePeriodSeconds); err != nil {
			return webhooks.WebhookEndpoint{}, err
		}
	}
	// As on creation, the new secret is shown once: the idempotency record
	// is stored without it, so a replay answers without it.
	omitOnReplay(c.Context(), "secret")
	var out webhooks.WebhookEndpoint
	err := s.write(c.Context(), p, func(ctx context.Context, tx bun.Tx, w *streams.Write) error {
		e, err := webhooks.RotateSecret(ctx, tx, c.PathParam("id"), grace, webhookAccess(p), s.deps.Secrets, w.At)
		if err == nil {
			out = e.ViewWithSecret()
		}
		return err
	})
	return out, err
}

// pingWebhookEndpoint answers 202 with no body (a nil answer of type any
// is not serialized).
func (s *Server) pingWebhookEndpoint(c fuego.ContextNoBody) (any, error) {
	p := principal(c.Context())
	return nil, s.write(c.Context(), p, func(ctx context.Context, tx bun.Tx, w *streams.Write) error {
		_, err := webhooks.Ping(ctx, tx, w, c.PathParam("id"), webhookAccess(p))
		return err
	})
}

func (s *Server) listWebhookDeliveries(c fuego.ContextNoBody) (page.List[webhooks.WebhookDelivery], error) {
	p := principal(c.Context())
	if err := webhookManager(p); err != nil {
		return page.List[webhooks.WebhookDelivery]{}, err
	}
	pg, err := page.Parse(c.Request().URL.Query())
	if err != nil {
		return page.List[webhooks.WebhookDelivery]{}, err
	}
	f, err := webhooks.ParseDeliveryFilter(c.Request().URL.Query())
	if err != nil {
		return page.List[webhooks.WebhookDelivery]{}, err
	}
	var out page.List[webhooks.WebhookDelivery]
	err = s.tx(c.Context(), p, func(ctx context.Context, tx bun.Tx) error {
		out, err = webhooks.DeliveryLog(ctx, tx, c.PathParam("id"), f, pg)
		return err
	})
	return out, err
}

func (s *Server) resendWebhookDelivery(c fuego.ContextNoBody) (webhooks.WebhookDelivery, error) {
	p := principal(c.Context())
	if err := webhookManager(p); err != nil {
		return webhooks.WebhookDelivery{}, err
	}
	var out webhooks.WebhookDelivery
	err := s.write(c.Context(), p, func(ctx context.Context, tx bun.Tx, w *streams.Write) error {
		var err error
		out, err = webhooks.Resend(ctx, tx, w, c.PathParam("id"), c.PathParam("delivery_id"))
		return err
	})
	return out, err
}

// endpointWrite runs one endpoint change and renders it without secret.
func (s *Server) endpointWrite(ctx context.Context, p *tenant.Principal, fn func(ctx context.Context, tx bun.Tx, now time.Time) (*webhooks.Row, error)) (webhooks.WebhookEndpoint, error) {
	var out webhooks.WebhookEndpoint
	err := s.write(ctx, p, func(ctx context.Context, tx bun.Tx, w *streams.Write) error {
		e, err := fn(ctx, tx, w.At)
		if err == nil {
			out = e.View()
		}
		return err
	})
	return out, err
}
