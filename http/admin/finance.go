package admin

import (
	"context"
	"net/http"

	"oficina/schema/finance"
	"oficina/schema/sales"
	"oficina/streams"
)

// financeRoutes are the dashboard's financial entries: a manual entry,
// reading one, marking one paid and deleting one, each recording its
// financial_transaction.* events as a dashboard write (finance accounts:
// sales.go).
func (s *Server) financeRoutes() {
	c := Prefix + "/companies/{company}/financial_transactions"
	s.mux.HandleFunc("POST "+c, s.company(false, createEntry))
	s.mux.HandleFunc("GET "+c+"/{id}", s.company(false, getEntry))
	s.mux.HandleFunc("POST "+c+"/{id}/mark_paid", s.company(false, markEntryPaid))
	s.mux.HandleFunc("DELETE "+c+"/{id}", s.company(false, deleteEntry))
}

func createEntry(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[finance.FinancialTransactionCreate](r)
	if err != nil {
		return 0, nil, err
	}
	t, err := finance.CreateEntry(ctx, w, in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, t.View(), nil
}

func getEntry(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	t, err := finance.GetTransaction(ctx, w.Tx, r.PathValue("id"), false)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, t.View(), nil
}

func markEntryPaid(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[finance.FinancialTransactionMarkPaid](r)
	if err != nil {
		return 0, nil, err
	}
	t, err := finance.MarkPaid(ctx, w, r.PathValue("id"), in, sales.PayReceivable)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, t.View(), nil
}

func deleteEntry(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	t, err := finance.DeleteTransaction(ctx, w, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, deleted{Object: "financial_transaction", ID: t.ID, Deleted: true}, nil
}
