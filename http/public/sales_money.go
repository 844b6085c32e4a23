package public

import (
	"context"

	"github.com/go-fuego/fuego"
	"github.com/uptrace/bun"

	"oficina/http/wire"
	"oficina/schema/page"
	"oficina/schema/sales"
	"oficina/streams"
)

func (s *Server) receiveSalePayment(c fuego.ContextWithBody[sales.PaymentCreate]) (sales.Sale, error) {
	p := principal(c.Context())
	var in sales.PaymentCreate
	if err := wire.Decode(c.Request(), &in); err != nil {
		return sales.Sale{}, err
	}
	if err := requireFinance(p, sales.FinanceRequest{ChoosesAccount: in.AccountID != nil}, "finance:read", "finance:create"); err != nil {
		return sales.Sale{}, err
	}
	return s.saleWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, w *streams.Write) (*sales.Row, error) {
		return sales.Receive(ctx, tx, w, c.PathParam("id"), in)
	})
}

func (s *Server) reverseSalePayment(c fuego.ContextWithBody[sales.Cancellation]) (sales.Sale, error) {
	p := principal(c.Context())
	var in sales.Cancellation
	if err := wire.Decode(c.Request(), &in); err != nil {
		return sales.Sale{}, err
	}
	return s.saleWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, w *streams.Write) (*sales.Row, error) {
		return sales.ReversePayment(ctx, tx, w, c.PathParam("id"), c.PathParam("payment_id"), in)
	})
}

func (s *Server) rescheduleSale(c fuego.ContextWithBody[sales.InstallmentsReschedule]) (sales.Sale, error) {
	p := principal(c.Context())
	var in sales.InstallmentsReschedule
	if err := wire.Decode(c.Request(), &in); err != nil {
		return sales.Sale{}, err
	}
	return s.saleWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, w *streams.Write) (*sales.Row, error) {
		return sales.Reschedule(ctx, tx, w, c.PathParam("id"), in)
	})
}

func (s *Server) newSaleVersion(c fuego.ContextWithBody[sales.SaleVersionCreate]) (sales.Sale, error) {
	p := principal(c.Context())
	var in sales.SaleVersionCreate
	if err := wire.Decode(c.Request(), &in); err != nil {
		return sales.Sale{}, err
	}
	if err := requireFinance(p, sales.FinanceRequest{ChoosesAccount: in.ChoosesAccount()}, "finance:read", "finance:update"); err != nil {
		return sales.Sale{}, err
	}
	return s.saleWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, w *streams.Write) (*sales.Row, error) {
		return sales.NewVersion(ctx, tx, w, c.PathParam("id"), in)
	})
}

func (s *Server) listSaleVersions(c fuego.ContextNoBody) (page.List[sales.SaleVersion], error) {
	p := principal(c.Context())
	var out page.List[sales.SaleVersion]
	err := s.tx(c.Context(), p, func(ctx context.Context, tx bun.Tx) error {
		vs, err := sales.Versions(ctx, tx, c.PathParam("id"), financeVisible(p))
		out = page.List[sales.SaleVersion]{Object: "list", Data: vs}
		return err
	})
	return out, err
}

func (s *Server) cancelSale(c fuego.ContextWithBody[sales.Cancellation]) (sales.Sale, error) {
	p := principal(c.Context())
	var in sales.Cancellation
	if err := wire.Decode(c.Request(), &in); err != nil {
		return sales.Sale{}, err
	}
	return s.saleWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, w *streams.Write) (*sales.Row, error) {
		return sales.Cancel(ctx, tx, w, c.PathParam("id"), in)
	})
}
