package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/clients"
	"oficina/streams"
)

// Client records as the dashboard creates, reads, changes and deletes them;
// each write records its event (client.created, client.updated,
// client.deleted) as a dashboard write.
func (s *Server) clientRoutes() {
	s.mux.HandleFunc("POST "+Prefix+"/companies/{company}/clients", s.company(false, createClient))
	s.mux.HandleFunc("GET "+Prefix+"/companies/{company}/clients/{id}", s.company(false, getClient))
	s.mux.HandleFunc("PATCH "+Prefix+"/companies/{company}/clients/{id}", s.company(false, updateClient))
	s.mux.HandleFunc("DELETE "+Prefix+"/companies/{company}/clients/{id}", s.company(false, deleteClient))
}

// dashboard is a write made in the dashboard.
func dashboard(companyID string, now time.Time) streams.Write {
	return streams.Write{CompanyID: companyID, Actor: streams.Actor{Kind: streams.ActorDashboard}, At: now}
}

func createClient(ctx context.Context, tx bun.Tx, r *http.Request, companyID string, now time.Time) (int, any, error) {
	in, err := decode[clients.ClientCreate](r)
	if err != nil {
		return 0, nil, err
	}
	c, err := clients.CreateRecorded(ctx, tx, dashboard(companyID, now), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, c.View(), nil
}

func getClient(ctx context.Context, tx bun.Tx, r *http.Request, _ string, _ time.Time) (int, any, error) {
	c, err := clients.Get(ctx, tx, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, c.View(), nil
}

func updateClient(ctx context.Context, tx bun.Tx, r *http.Request, companyID string, now time.Time) (int, any, error) {
	in, err := decode[clients.ClientUpdate](r)
	if err != nil {
		return 0, nil, err
	}
	c, err := clients.Update(ctx, tx, dashboard(companyID, now), r.PathValue("id"), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, c.View(), nil
}

// deleted is the answer of a delete (Stripe's shape).
type deleted struct {
	Object  string `json:"object"`
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

func deleteClient(ctx context.Context, tx bun.Tx, r *http.Request, companyID string, now time.Time) (int, any, error) {
	c, err := clients.Delete(ctx, tx, dashboard(companyID, now), r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, deleted{Object: "client", ID: c.ID, Deleted: true}, nil
}
