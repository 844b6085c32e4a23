package stack

import (
	"net"
	"net/netip"
	"strings"

	"oficina/http/portal"
	"oficina/http/public"
	"oficina/ops/config"
	"oficina/schema/service"
)

// newPortal builds the company webhook portal served at /portal/ on the
// public listener, beside the API whose OpenAPI document gives it the
// event catalogue (docs/portal.md).
func (s *Stack) newPortal(cfg config.Config, pub *public.Server, proxies []netip.Prefix) (*portal.Server, error) {
	return portal.New(portal.Deps{Base: service.Base{Log: s.log}, DB: s.db, Secrets: s.secrets, Destinations: s.events.destinations(),
		Publisher: s.events.publisher(), OpenAPI: pub.OpenAPI(), TrustedProxies: proxies,
		FrameAncestors: strings.FieldsFunc(cfg.PortalFrameAncestors, func(r rune) bool { return r == ',' || r == ' ' })})
}

// portalURL is the portal's base URL for one-time links: under
// OFICINA_PUBLIC_URL, else on the public listener's address.
func (s *Stack) portalURL() string {
	if u := strings.TrimRight(s.opts.Config.PublicURL, "/"); u != "" {
		return u + portal.Prefix
	}
	if a, ok := s.publicAddr.Load().(net.Addr); ok {
		return "http://" + displayAddr(a) + portal.Prefix
	}
	return ""
}
