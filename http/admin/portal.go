package admin

import (
	"context"
	"net/http"
	"net/url"

	"oficina/schema/page"
	"oficina/schema/portal"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// Portal sessions opened from the dashboard, and recovering an endpoint's
// failed deliveries (issue 18, docs/portal.md).
func (s *Server) portalRoutes() {
	base := "/companies/{company}"
	s.mux.HandleFunc("GET "+Prefix+base+"/portal_sessions", s.company(false, s.listPortalSessions))
	s.mux.HandleFunc("POST "+Prefix+base+"/portal_sessions", s.company(false, s.createPortalSession))
	s.mux.HandleFunc("POST "+Prefix+base+"/portal_sessions/{id}/revoke", s.company(false, s.revokePortalSession))
	s.mux.HandleFunc("POST "+Prefix+base+"/webhook_endpoints/{id}/recover", s.company(false, recoverDeliveries))
	s.mux.HandleFunc("GET "+Prefix+base+"/webhook_endpoints/{id}/recover_tasks/{task_id}", s.company(false, getRecoverTask))
}

type portalSessionBody struct {
	MemberID string `json:"member_id"`
	portal.PortalSessionCreate
}

// createPortalSession mints a session acting as the member, who must be
// an active owner or admin (spec 4.6).
func (s *Server) createPortalSession(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[portalSessionBody](r)
	if err != nil {
		return 0, nil, err
	}
	sub, access, err := dashboardMember(ctx, w.Tx, in.MemberID)
	if err != nil {
		return 0, nil, err
	}
	allow := func([]tenant.Permission) error { return access(nil) }
	row, link, err := portal.Mint(ctx, w.Tx, w.CompanyID, in.PortalSessionCreate, portal.Minter{MemberID: sub.MemberID}, allow, w.At)
	if err != nil {
		return 0, nil, err
	}
	v := row.View(w.At)
	base := "/portal/"
	if s.deps.PortalURL != nil && s.deps.PortalURL() != "" {
		base = s.deps.PortalURL()
	}
	v.URL = base + "login?token=" + url.QueryEscape(link)
	return http.StatusCreated, v, nil
}

func (s *Server) listPortalSessions(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	l, err := portal.List(ctx, w.Tx, page.Params{Limit: page.MaxLimit}, w.At)
	return http.StatusOK, l, err
}

func (s *Server) revokePortalSession(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	row, err := portal.Revoke(ctx, w.Tx, r.PathValue("id"), w.At)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, row.View(w.At), nil
}

func recoverDeliveries(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[webhooks.WebhookRecoverRequest](r)
	if err != nil {
		return 0, nil, err
	}
	t, err := webhooks.Recover(ctx, w.Tx, r.PathValue("id"), in, w.At)
	return http.StatusAccepted, t, err
}

func getRecoverTask(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	t, err := webhooks.GetRecoverTask(ctx, w.Tx, r.PathValue("id"), r.PathValue("task_id"))
	return http.StatusOK, t, err
}
