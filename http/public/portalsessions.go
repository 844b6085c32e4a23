package public

import (
	"context"
	"net/http"
	"net/url"

	"github.com/uptrace/bun"

	"oficina/schema/page"
	"oficina/schema/portal"
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

func (s *Server) createPortalSession(ctx context.Context, c *Call[portal.PortalSessionCreate]) (portal.PortalSession, error) {
	p := c.P
	in := c.Body
	// The link is shown once: an idempotent replay answers without it.
	c.OmitOnReplay("url")
	allow := func(perms []tenant.Permission) error {
		if err := p.Require(perms...); err != nil {
			return err
		}
		return webhookManager(p)
	}
	r, link, err := portal.Mint(ctx, c.W.Tx, p.CompanyID(), in, portal.Minter{MemberID: p.Member.ID, KeyID: p.Key.ID}, allow, c.W.At)
	if err != nil {
		return portal.PortalSession{}, err
	}
	out := r.View(c.W.At)
	out.URL = s.portalLink(c.Request(), link)
	return out, nil
}

func (s *Server) listPortalSessions(ctx context.Context, c *Call[any]) (page.List[portal.PortalSession], error) {
	p := c.P
	if err := webhookManager(p); err != nil {
		return page.List[portal.PortalSession]{}, err
	}
	pg, err := page.Parse(c.Query())
	if err != nil {
		return page.List[portal.PortalSession]{}, err
	}
	var out page.List[portal.PortalSession]
	err = s.read(ctx, p, func(ctx context.Context, tx bun.Tx) error {
		out, err = portal.List(ctx, tx, pg, s.deps.BusinessNow())
		return err
	})
	return out, err
}

func (s *Server) revokePortalSession(ctx context.Context, c *Call[any]) (portal.PortalSession, error) {
	p := c.P
	if err := webhookManager(p); err != nil {
		return portal.PortalSession{}, err
	}
	r, err := portal.Revoke(ctx, c.W.Tx, c.Path("id"), c.W.At)
	if err != nil {
		return portal.PortalSession{}, err
	}
	return r.View(c.W.At), nil
}
