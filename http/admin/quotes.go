package admin

import (
	"context"
	"net/http"

	"oficina/schema/page"
	"oficina/schema/quotes"
	"oficina/streams"
)

// Quotes as the dashboard creates, lists, changes and deletes them; each
// write records its events (quote.created, quote.updated,
// quote.status_changed, quote.deleted) as a dashboard write. Opening the
// list expires the quotes past valid_until (spec 6.3 rule 7).
func (s *Server) quoteRoutes() {
	c := Prefix + "/companies/{company}/quotes"
	s.mux.HandleFunc("GET "+c, s.company(false, listQuotes))
	s.mux.HandleFunc("POST "+c, s.company(false, createQuote))
	s.mux.HandleFunc("GET "+c+"/{id}", s.company(false, getQuote))
	s.mux.HandleFunc("PATCH "+c+"/{id}", s.company(false, updateQuote))
	s.mux.HandleFunc("DELETE "+c+"/{id}", s.company(false, deleteQuote))
	s.mux.HandleFunc("POST "+c+"/{id}/status", s.company(false, setQuoteStatus))
}

func listQuotes(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	pg, err := page.Parse(r.URL.Query())
	if err != nil {
		return 0, nil, err
	}
	l, err := quotes.List(ctx, w, pg)
	return http.StatusOK, l, err
}

func createQuote(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[quotes.QuoteCreate](r)
	if err != nil {
		return 0, nil, err
	}
	q, err := quotes.Create(ctx, w, in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, q.View(), nil
}

func getQuote(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	q, err := quotes.Get(ctx, w.Tx, r.PathValue("id"), false)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, q.View(), nil
}

func updateQuote(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[quotes.QuoteUpdate](r)
	if err != nil {
		return 0, nil, err
	}
	q, err := quotes.Update(ctx, w, r.PathValue("id"), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, q.View(), nil
}

type statusBody struct {
	Status string `json:"status"`
}

func setQuoteStatus(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[statusBody](r)
	if err != nil {
		return 0, nil, err
	}
	q, err := quotes.SetStatus(ctx, w, r.PathValue("id"), in.Status)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, q.View(), nil
}

func deleteQuote(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	q, err := quotes.Delete(ctx, w, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, deleted{Object: "quote", ID: q.ID, Deleted: true}, nil
}
