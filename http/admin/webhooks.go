package admin

import (
	"context"
	"net/http"

	"github.com/uptrace/bun"

	"oficina/dispatch/destguard"
	"oficina/http/wire"
	"oficina/schema/apierr"
	"oficina/schema/mail"
	"oficina/schema/page"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// Webhook endpoints as the dashboard manages them (the subscriber is the
// acting member, without an API key), and the mail outbox for operators.
func (s *Server) webhookRoutes() {
	base := "/companies/{company}/webhook_endpoints"
	s.mux.HandleFunc("GET "+Prefix+base, s.company(false, listEndpoints))
	s.mux.HandleFunc("POST "+Prefix+base, s.company(false, s.createEndpoint))
	s.mux.HandleFunc("GET "+Prefix+base+"/{id}", s.company(false, getEndpoint))
	s.mux.HandleFunc("PATCH "+Prefix+base+"/{id}", s.company(false, s.updateEndpoint))
	s.mux.HandleFunc("POST "+Prefix+base+"/{id}/enable", s.company(false, enableEndpoint))
	s.mux.HandleFunc("POST "+Prefix+base+"/{id}/disable", s.company(false, disableEndpoint))
	s.mux.HandleFunc("GET "+Prefix+"/companies/{company}/mail", s.company(false, listMail))
	s.mux.HandleFunc("POST "+Prefix+"/routines/warn_client_certificates", s.warnClientCertificates)
	s.portalRoutes()
}

// certificateRun is the answer of the certificate warning routine.
type certificateRun struct {
	Object string `json:"object"` // "routine_run"
	Warned int    `json:"warned"`
}

// warnClientCertificates runs the certificate warning now (the scheduler
// runs it every quarter hour): webhook_endpoint.client_certificate_expiring
// for each certificate expiring within webhooks.CertificateWarning not
// warned about yet, of one company ({company_id}) or of every company ({}).
func (s *Server) warnClientCertificates(w http.ResponseWriter, r *http.Request) {
	in, err := decode[routineBody](r)
	if err != nil {
		wire.WriteError(w, r, err)
		return
	}
	now := s.deps.BusinessNow()
	res := certificateRun{Object: "routine_run"}
	if in.CompanyID != nil {
		err = s.writer.Run(r.Context(), webhooks.CertificateUnit(*in.CompanyID, now), func(ctx context.Context, w *streams.Write) error {
			if _, err := tenant.GetCompany(ctx, w.Tx, *in.CompanyID); err != nil {
				return err
			}
			res.Warned, err = webhooks.WarnExpiringCertificates(ctx, w)
			return err
		})
	} else {
		res.Warned, err = webhooks.WarnExpiringCertificatesAll(r.Context(), s.writer, s.deps.Workers, now)
	}
	if err != nil {
		wire.WriteError(w, r, err)
		return
	}
	wire.WriteJSON(w, http.StatusOK, res)
}

// destinations is the URL guard: the production one unless the deps name
// one (tests, dev with OFICINA_ALLOW_PRIVATE_DESTINATIONS).
func (s *Server) destinations() (webhooks.URLChecker, error) {
	if s.deps.Destinations != nil {
		return s.deps.Destinations, nil
	}
	return destguard.New(destguard.Config{})
}

// dashboardMember is the member acting in the dashboard: it must be an
// active owner or admin (spec 4.6), who has every module's read access.
func dashboardMember(ctx context.Context, tx bun.Tx, id string) (webhooks.Subscriber, webhooks.Access, error) {
	if id == "" {
		return webhooks.Subscriber{}, nil, apierr.Invalid("member_id", apierr.Required)
	}
	m, err := tenant.GetMember(ctx, tx, id)
	if err != nil {
		return webhooks.Subscriber{}, nil, err
	}
	if m.Status != "active" {
		return webhooks.Subscriber{}, nil, apierr.Invalid("member_id", apierr.InvalidValue)
	}
	access := func([]string) error {
		if !m.Role.IsManager() {
			return apierr.New(apierr.MemberPermissionDenied)
		}
		return nil
	}
	return webhooks.Subscriber{MemberID: m.ID}, access, nil
}

type endpointCreateBody struct {
	MemberID string `json:"member_id"`
	webhooks.WebhookEndpointCreate
}

func (s *Server) createEndpoint(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[endpointCreateBody](r)
	if err != nil {
		return 0, nil, err
	}
	sub, access, err := dashboardMember(ctx, w.Tx, in.MemberID)
	if err != nil {
		return 0, nil, err
	}
	guard, err := s.destinations()
	if err != nil {
		return 0, nil, err
	}
	e, err := webhooks.Create(ctx, w.Tx, w.CompanyID, in.WebhookEndpointCreate, sub, access, guard, s.deps.Secrets, w.At)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, e.ViewWithSecret(), nil
}

type endpointPatchBody struct {
	MemberID string `json:"member_id"`
	webhooks.WebhookEndpointUpdate
}

func (s *Server) updateEndpoint(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[endpointPatchBody](r)
	if err != nil {
		return 0, nil, err
	}
	sub, access, err := dashboardMember(ctx, w.Tx, in.MemberID)
	if err != nil {
		return 0, nil, err
	}
	if err := access(nil); err != nil {
		return 0, nil, err
	}
	guard, err := s.destinations()
	if err != nil {
		return 0, nil, err
	}
	e, err := webhooks.Update(ctx, w.Tx, r.PathValue("id"), in.WebhookEndpointUpdate, sub, access, guard, s.deps.Secrets, w.At)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, e.View(), nil
}

type memberBody struct {
	MemberID string `json:"member_id"`
}

func enableEndpoint(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[memberBody](r)
	if err != nil {
		return 0, nil, err
	}
	sub, access, err := dashboardMember(ctx, w.Tx, in.MemberID)
	if err != nil {
		return 0, nil, err
	}
	e, err := webhooks.Enable(ctx, w, r.PathValue("id"), sub, access)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, e.View(), nil
}

func disableEndpoint(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	e, err := webhooks.Disable(ctx, w, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, e.View(), nil
}

func listEndpoints(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	l, err := webhooks.List(ctx, w.Tx, page.Params{Limit: page.MaxLimit}, page.Sync{})
	return http.StatusOK, l, err
}

func getEndpoint(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	e, err := webhooks.Get(ctx, w.Tx, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, e.View(), nil
}

func listMail(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	ms, err := mail.List(ctx, w.Tx, page.MaxLimit)
	if ms == nil {
		ms = []mail.Message{}
	}
	return http.StatusOK, page.List[mail.Message]{Object: "list", Data: ms}, err
}
