package admin

import (
	"context"
	"net/http"
	"time"

	"oficina/http/wire"
	"oficina/schema/orders"
	"oficina/schema/page"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

func (s *Server) routes() {
	s.mux.HandleFunc("POST "+Prefix+"/companies", s.createCompany)
	s.mux.HandleFunc("GET "+Prefix+"/companies/{company}", s.company(false, getCompany))
	s.mux.HandleFunc("PATCH "+Prefix+"/companies/{company}", s.company(true, updateCompany))

	s.mux.HandleFunc("GET "+Prefix+"/companies/{company}/members", s.company(false, listMembers))
	s.mux.HandleFunc("POST "+Prefix+"/companies/{company}/members", s.company(false, createMember))
	s.mux.HandleFunc("GET "+Prefix+"/companies/{company}/members/{id}", s.company(false, getMember))
	s.mux.HandleFunc("PATCH "+Prefix+"/companies/{company}/members/{id}", s.company(true, updateMember))

	s.mux.HandleFunc("GET "+Prefix+"/companies/{company}/api_keys", s.company(false, listKeys))
	s.mux.HandleFunc("POST "+Prefix+"/companies/{company}/api_keys", s.company(true, createKey))
	s.mux.HandleFunc("POST "+Prefix+"/companies/{company}/api_keys/{id}/rotate", s.company(true, rotateKey))
	s.mux.HandleFunc("POST "+Prefix+"/companies/{company}/api_keys/{id}/revoke", s.company(true, revokeKey))

	s.mux.HandleFunc("GET "+Prefix+"/companies/{company}/service_order_types", s.company(false, listTypes))
	s.mux.HandleFunc("POST "+Prefix+"/companies/{company}/service_order_types", s.company(false, createType))
	s.mux.HandleFunc("PATCH "+Prefix+"/companies/{company}/service_order_types/{id}", s.company(false, updateType))
	s.quoteRoutes()
	s.financeRoutes()
	s.taskRoutes()
	s.webhookRoutes()
	s.secretRoutes()
	s.orderRoutes()
	s.clientRoutes()
	s.salesRoutes()
}

func (s *Server) createCompany(w http.ResponseWriter, r *http.Request) {
	in, err := decode[tenant.CompanyInput](r)
	if err == nil {
		var c *tenant.Company
		c, err = tenant.CreateCompany(r.Context(), s.deps.DB, in, s.deps.BusinessNow())
		if err == nil {
			wire.WriteJSON(w, http.StatusCreated, c)
			return
		}
	}
	wire.WriteError(w, r, err)
}

func getCompany(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	c, err := tenant.GetCompany(ctx, w.Tx, w.CompanyID)
	return http.StatusOK, c, err
}

func updateCompany(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[tenant.CompanyInput](r)
	if err != nil {
		return 0, nil, err
	}
	c, err := tenant.UpdateCompany(ctx, w.Tx, w.CompanyID, in, w.At)
	return http.StatusOK, c, err
}

func listMembers(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	ms, err := tenant.ListMembers(ctx, w.Tx)
	return http.StatusOK, page.List[tenant.Member]{Object: "list", Data: ms}, err
}

func createMember(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[tenant.MemberInput](r)
	if err != nil {
		return 0, nil, err
	}
	m, err := tenant.CreateMember(ctx, w.Tx, w.CompanyID, in, w.At)
	return http.StatusCreated, m, err
}

func getMember(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	m, err := tenant.GetMember(ctx, w.Tx, r.PathValue("id"))
	return http.StatusOK, m, err
}

func updateMember(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[tenant.MemberInput](r)
	if err != nil {
		return 0, nil, err
	}
	m, err := tenant.UpdateMember(ctx, w.Tx, r.PathValue("id"), in, w.At)
	return http.StatusOK, m, err
}

func listKeys(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	ks, err := tenant.ListKeys(ctx, w.Tx)
	return http.StatusOK, page.List[tenant.APIKey]{Object: "list", Data: ks}, err
}

func createKey(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[tenant.KeyInput](r)
	if err != nil {
		return 0, nil, err
	}
	k, err := tenant.CreateKey(ctx, w.Tx, w.CompanyID, in, w.At)
	return http.StatusCreated, k, err
}

type rotateBody struct {
	GracePeriodSeconds int64 `json:"grace_period_seconds"`
}

func rotateKey(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[rotateBody](r)
	if err != nil {
		return 0, nil, err
	}
	rot, err := tenant.RotateKey(ctx, w.Tx, r.PathValue("id"), time.Duration(in.GracePeriodSeconds)*time.Second, w.At)
	if err != nil {
		return 0, nil, err
	}
	// Endpoints subscribed with the old key: disabled on "stop w.At",
	// moved to the new key with a grace period (spec 3.3).
	if err := webhooks.KeyRotated(ctx, w, rot); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, rot, nil
}

type revokeBody struct {
	Reason string `json:"reason"`
}

func revokeKey(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[revokeBody](r)
	if err != nil {
		return 0, nil, err
	}
	k, err := tenant.RevokeKey(ctx, w.Tx, r.PathValue("id"), in.Reason, w.At)
	if err != nil {
		return 0, nil, err
	}
	// A key revoked after public exposure disables its endpoints (3.3).
	if err := webhooks.KeyRevoked(ctx, w, k); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, k, nil
}

func listTypes(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	l, err := orders.ListTypes(ctx, w.Tx, page.Params{Limit: page.MaxLimit}, page.Sync{})
	return http.StatusOK, l, err
}

func createType(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[orders.ServiceOrderTypeCreate](r)
	if err != nil {
		return 0, nil, err
	}
	t, err := orders.CreateType(ctx, w.Tx, w.CompanyID, in, w.At)
	return http.StatusCreated, t, err
}

func updateType(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[orders.ServiceOrderTypeCreate](r)
	if err != nil {
		return 0, nil, err
	}
	t, err := orders.UpdateType(ctx, w.Tx, r.PathValue("id"), in, w.At)
	return http.StatusOK, t, err
}
