package admin

import (
	"context"
	"net/http"

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

func createClient(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[clients.ClientCreate](r)
	if err != nil {
		return 0, nil, err
	}
	c, err := clients.CreateRecorded(ctx, w, in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, c.View(), nil
}

func getClient(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	c, err := clients.Get(ctx, w.Tx, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, c.View(), nil
}

func updateClient(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[clients.ClientUpdate](r)
	if err != nil {
		return 0, nil, err
	}
	c, err := clients.Update(ctx, w, r.PathValue("id"), in)
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

func deleteClient(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	c, err := clients.Delete(ctx, w, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, deleted{Object: "client", ID: c.ID, Deleted: true}, nil
}
