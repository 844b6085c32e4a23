package public

import (
	"context"
	"net/http"
	"time"

	"github.com/go-fuego/fuego"
	"github.com/uptrace/bun"

	"oficina/http/wire"
	"oficina/schema/apierr"
	"oficina/schema/page"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// WebhookEndpointCreate documents the body of POST /webhook_endpoints.
type WebhookEndpointCreate struct {
	URL         string   `json:"url" validate:"required" description:"https URL with a public host; no user or password"`
	Description *string  `json:"description" description:"Free text (up to 10,000 characters)"`
	Events      []string `json:"events" validate:"required" description:"Event names, family wildcards such as sale.*, or [\"*\"] alone (docs/events.md)"`
}

// WebhookEndpointUpdate documents the body of PATCH /webhook_endpoints/{id};
// omitted fields stay as they are.
type WebhookEndpointUpdate struct {
	URL         *string   `json:"url" description:"New URL; changing it needs module reads and makes the caller the subscriber"`
	Description *string   `json:"description" description:"New description; null clears it"`
	Events      *[]string `json:"events" description:"New subscription; changing it needs module reads and makes the caller the subscriber"`
}

// RotateSecretRequest is the optional body of rotate_secret.
type RotateSecretRequest struct {
	GracePeriodSeconds *int64 `json:"grace_period_seconds" description:"How long the previous secret keeps signing too, 0 to 604800 (default 86400)"`
}

func (s *Server) webhookRoutes() {
	const base = "/webhook_endpoints"
	t := tag("webhooks")
	handle(s, http.MethodPost, base, need("webhooks:create"), s.createWebhookEndpoint, t,
		summary("Register a webhook endpoint; the answer carries its secret"), fuego.OptionDefaultStatusCode(http.StatusCreated))
	handle(s, http.MethodGet, base, need("webhooks:read"), s.listWebhookEndpoints, t, summary("List webhook endpoints"), pageParams())
	handle(s, http.MethodGet, base+"/{id}", need("webhooks:read"), s.getWebhookEndpoint, t, summary("Read a webhook endpoint"))
	handle(s, http.MethodPatch, base+"/{id}", need("webhooks:update"), s.updateWebhookEndpoint, t, summary("Change URL, description or events"))
	handle(s, http.MethodDelete, base+"/{id}", need("webhooks:delete"), s.deleteWebhookEndpoint, t, summary("Delete a webhook endpoint and its delivery log"))
	handle(s, http.MethodPost, base+"/{id}/enable", need("webhooks:update"), s.enableWebhookEndpoint, t, summary("Re-enable; the caller becomes the subscriber"))
	handle(s, http.MethodPost, base+"/{id}/disable", need("webhooks:update"), s.disableWebhookEndpoint, t, summary("Disable"))
	handle(s, http.MethodPost, base+"/{id}/ping", need("webhooks:update"), s.pingWebhookEndpoint, t,
		summary("Send a real ping event to this endpoint only (202, no body)"), fuego.OptionDefaultStatusCode(http.StatusAccepted))
	handle(s, http.MethodPost, base+"/{id}/rotate_secret", need("webhooks:update"), s.rotateWebhookSecret, t, summary("New signing secret"))
	handle(s, http.MethodGet, base+"/{id}/deliveries", need("webhooks:read"), s.listWebhookDeliveries, t, summary("Delivery log, newest first"), pageParams())
	handle(s, http.MethodPost, base+"/{id}/deliveries/{delivery_id}/resend", need("webhooks:update"), s.resendWebhookDelivery, t,
		summary("Send a logged delivery's event again (same event id)"), fuego.OptionDefaultStatusCode(http.StatusAccepted))
}

// webhookManager is the owner/admin rule of 4.6, for every webhook route.
func webhookManager(p *tenant.Principal) error {
	if !p.Role().IsManager() {
		return apierr.New(apierr.MemberPermissionDenied)
	}
	return nil
}

// webhookAccess authorizes subscribing the caller to events, in the order
// of part 5.2: the key's <module>:read permissions, the owner/admin role,
// then the member and plan layers.
func webhookAccess(p *tenant.Principal) webhooks.Access {
	return func(events []string) error {
		perms := make([]tenant.Permission, 0, 8)
		for _, m := range streams.SubscriptionModules(events) {
			perms = append(perms, tenant.Perm(m, tenant.Read))
		}
		for _, perm := range perms {
			if !p.HasKeyPermission(perm) {
				return apierr.New(apierr.PermissionMissing)
			}
		}
		if err := webhookManager(p); err != nil {
			return err
		}
		return p.Require(perms...)
	}
}

func subscriber(p *tenant.Principal) webhooks.Subscriber {
	return webhooks.Subscriber{MemberID: p.Member.ID, KeyID: p.Key.ID}
}

func (s *Server) createWebhookEndpoint(c fuego.ContextWithBody[WebhookEndpointCreate]) (webhooks.WebhookEndpoint, error) {
	p := principal(c.Context())
	var in webhooks.WebhookEndpointCreate
	if err := wire.Decode(c.Request(), &in); err != nil {
		return webhooks.WebhookEndpoint{}, err
	}
	// The secret is shown once: an idempotent replay answers without it.
	omitOnReplay(c.Context(), "secret")
	var out webhooks.WebhookEndpoint
	err := s.write(c.Context(), p, func(ctx context.Context, tx bun.Tx, w streams.Write) error {
		e, err := webhooks.Create(ctx, tx, p.CompanyID(), in, subscriber(p), webhookAccess(p), s.deps.Destinations, w.At)
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

func (s *Server) updateWebhookEndpoint(c fuego.ContextWithBody[WebhookEndpointUpdate]) (webhooks.WebhookEndpoint, error) {
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

func (s *Server) deleteWebhookEndpoint(c fuego.ContextNoBody) (webhooks.Deleted, error) {
	p := principal(c.Context())
	if err := webhookManager(p); err != nil {
		return webhooks.Deleted{}, err
	}
	var out webhooks.Deleted
	err := s.write(c.Context(), p, func(ctx context.Context, tx bun.Tx, _ streams.Write) error {
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

func (s *Server) rotateWebhookSecret(c fuego.ContextWithBody[RotateSecretRequest]) (webhooks.WebhookEndpoint, error) {
	p := principal(c.Context())
	var in RotateSecretRequest
	if err := wire.Decode(c.Request(), &in); err != nil {
		return webhooks.WebhookEndpoint{}, err
	}
	grace := webhooks.DefaultSecretGrace
	if in.GracePeriodSeconds != nil {
		if g := *in.GracePeriodSeconds; g < 0 || g > int64(webhooks.MaxSecretGrace/time.Second) {
			return webhooks.WebhookEndpoint{}, apierr.Invalid("grace_period_seconds", "out_of_range")
		}
		grace = time.Duration(*in.GracePeriodSeconds) * time.Second
	}
	var out webhooks.WebhookEndpoint
	err := s.write(c.Context(), p, func(ctx context.Context, tx bun.Tx, w streams.Write) error {
		e, err := webhooks.RotateSecret(ctx, tx, c.PathParam("id"), grace, webhookAccess(p), w.At)
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
	return nil, s.write(c.Context(), p, func(ctx context.Context, tx bun.Tx, w streams.Write) error {
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
	var out page.List[webhooks.WebhookDelivery]
	err = s.tx(c.Context(), p, func(ctx context.Context, tx bun.Tx) error {
		out, err = webhooks.Deliveries(ctx, tx, c.PathParam("id"), pg)
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
	err := s.write(c.Context(), p, func(ctx context.Context, tx bun.Tx, _ streams.Write) error {
		var err error
		out, err = webhooks.Resend(ctx, tx, c.PathParam("id"), c.PathParam("delivery_id"))
		return err
	})
	return out, err
}

// endpointWrite runs one endpoint change and renders it without secret.
func (s *Server) endpointWrite(ctx context.Context, p *tenant.Principal, fn func(ctx context.Context, tx bun.Tx, now time.Time) (*webhooks.Row, error)) (webhooks.WebhookEndpoint, error) {
	var out webhooks.WebhookEndpoint
	err := s.write(ctx, p, func(ctx context.Context, tx bun.Tx, w streams.Write) error {
		e, err := fn(ctx, tx, w.At)
		if err == nil {
			out = e.View()
		}
		return err
	})
	return out, err
}
