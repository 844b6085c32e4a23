package public

import (
	"context"
	"net/http"
	"net/url"

	"github.com/go-fuego/fuego"
	"github.com/uptrace/bun"

	"oficina/http/wire"
	"oficina/schema/page"
	"oficina/schema/portal"
	"oficina/streams"
	"oficina/tenant"
)

// portalSessionRoutes: sessions of the company webhook portal (issue 18,
// docs/portal.md).
func (s *Server) portalSessionRoutes() {
	const base, tg = "/portal_sessions", "webhooks"
	handle(s, http.MethodPost, base, need("webhooks:read"), op{id: "createPortalSession", tag: tg,
		summary: "Open the webhook portal", status: http.StatusCreated,
		desc: "Mints a one-time link (`url`) to the company's webhook portal: opening it starts a session in that " +
			"browser, for `ttl_seconds` (default one hour, at most 7 days). Each capability needs the key's " +
			"permissions: `manage_endpoints` `webhooks:create`, `webhooks:update` and `webhooks:delete`; " +
			"`view_secret` and `recover` `webhooks:update`. The session acts as this key (and its member) while it is " +
			"valid; a replay with the same `Idempotency-Key` answers without `url`.",
		example: `{"capabilities": ["manage_endpoints", "recover"], "ttl_seconds": 3600}`, optionalBody: true},
		s.createPortalSession)
	handle(s, http.MethodGet, base, need("webhooks:read"), op{id: "listPortalSessions", tag: tg,
		summary: "List portal sessions", query: pageParams()}, s.listPortalSessions)
	handle(s, http.MethodPost, base+"/{id}/revoke", need("webhooks:read"), op{id: "revokePortalSession", tag: tg,
		summary: "Revoke a portal session", desc: "Its next request is refused."}, s.revokePortalSession)
}

// portalLink is the one-time link of token: under Deps.PortalURL, or the
// portal on the host this request came to.
func (s *Server) portalLink(r *http.Request, token string) string {
	base := ""
	if s.deps.PortalURL != nil {
		base = s.deps.PortalURL()
	}
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host + "/portal/"
	}
	return base + "login?token=" + url.QueryEscape(token)
}

func (s *Server) createPortalSession(c fuego.ContextWithBody[portal.PortalSessionCreate]) (portal.PortalSession, error) {
	p := principal(c.Context())
	var in portal.PortalSessionCreate
	if err := wire.Decode(c.Request(), &in); err != nil {
		return portal.PortalSession{}, err
	}
	// The link is shown once: an idempotent replay answers without it.
	omitOnReplay(c.Context(), "url")
	allow := func(perms []tenant.Permission) error {
		if err := p.Require(perms...); err != nil {
			return err
		}
		return webhookManager(p)
	}
	var out portal.PortalSession
	err := s.write(c.Context(), p, func(ctx context.Context, tx bun.Tx, w *streams.Write) error {
		r, link, err := portal.Mint(ctx, tx, p.CompanyID(), in, portal.Minter{MemberID: p.Member.ID, KeyID: p.Key.ID}, allow, w.At)
		if err == nil {
			out = r.View(w.At)
			out.URL = s.portalLink(c.Request(), link)
		}
		return err
	})
	return out, err
}

func (s *Server) listPortalSessions(c fuego.ContextNoBody) (page.List[portal.PortalSession], error) {
	p := principal(c.Context())
	if err := webhookManager(p); err != nil {
		return page.List[portal.PortalSession]{}, err
	}
	pg, err := page.Parse(c.Request().URL.Query())
	if err != nil {
		return page.List[portal.PortalSession]{}, err
	}
	var out page.List[portal.PortalSession]
	err = s.tx(c.Context(), p, func(ctx context.Context, tx bun.Tx) error {
		out, err = portal.List(ctx, tx, pg, s.deps.BusinessNow())
		return err
	})
	return out, err
}

func (s *Server) revokePortalSession(c fuego.ContextNoBody) (portal.PortalSession, error) {
	p := principal(c.Context())
	if err := webhookManager(p); err != nil {
		return portal.PortalSession{}, err
	}
	var out portal.PortalSession
	err := s.write(c.Context(), p, func(ctx context.Context, tx bun.Tx, w *streams.Write) error {
		r, err := portal.Revoke(ctx, tx, c.PathParam("id"), w.At)
		if err == nil {
			out = r.View(w.At)
		}
		return err
	})
	return out, err
}
