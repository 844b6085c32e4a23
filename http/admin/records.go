package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/clients"
	"oficina/schema/quotes"
)

// Clients and quotes as the dashboard creates them.
func (s *Server) recordRoutes() {
	s.mux.HandleFunc("POST "+Prefix+"/companies/{company}/clients", s.company(false, createClient))
	s.mux.HandleFunc("GET "+Prefix+"/companies/{company}/clients/{id}", s.company(false, getClient))
	s.mux.HandleFunc("POST "+Prefix+"/companies/{company}/quotes", s.company(false, createQuote))
	s.mux.HandleFunc("GET "+Prefix+"/companies/{company}/quotes/{id}", s.company(false, getQuote))
	s.mux.HandleFunc("POST "+Prefix+"/companies/{company}/quotes/{id}/status", s.company(false, setQuoteStatus))
}

func createClient(ctx context.Context, tx bun.Tx, r *http.Request, companyID string, now time.Time) (int, any, error) {
	in, err := decode[clients.Input](r)
	if err != nil {
		return 0, nil, err
	}
	c, err := clients.Create(ctx, tx, companyID, in, now)
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

func createQuote(ctx context.Context, tx bun.Tx, r *http.Request, companyID string, now time.Time) (int, any, error) {
	in, err := decode[quotes.Input](r)
	if err != nil {
		return 0, nil, err
	}
	q, err := quotes.Create(ctx, tx, companyID, in, now)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, q.View(), nil
}

func getQuote(ctx context.Context, tx bun.Tx, r *http.Request, _ string, _ time.Time) (int, any, error) {
	q, err := quotes.Get(ctx, tx, r.PathValue("id"), false)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, q.View(), nil
}

type statusBody struct {
	Status string `json:"status"`
}

func setQuoteStatus(ctx context.Context, tx bun.Tx, r *http.Request, _ string, now time.Time) (int, any, error) {
	in, err := decode[statusBody](r)
	if err != nil {
		return 0, nil, err
	}
	q, err := quotes.SetStatus(ctx, tx, r.PathValue("id"), in.Status, now)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, q.View(), nil
}
