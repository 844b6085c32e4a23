package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/quotes"
)

// Quotes as the dashboard creates them (clients: clients.go).
func (s *Server) recordRoutes() {
	s.mux.HandleFunc("POST "+Prefix+"/companies/{company}/quotes", s.company(false, createQuote))
	s.mux.HandleFunc("GET "+Prefix+"/companies/{company}/quotes/{id}", s.company(false, getQuote))
	s.mux.HandleFunc("POST "+Prefix+"/companies/{company}/quotes/{id}/status", s.company(false, setQuoteStatus))
}

func createQuote(ctx context.Context, tx bun.Tx, r *http.Request, companyID string, now time.Time) (int, any, error) {
	in, err := decode[quotes.QuoteCreate](r)
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
