package public

import (
	"context"

	"github.com/uptrace/bun"

	"oficina/schema/page"
	"oficina/schema/sales"
)

func (s *Server) receiveSalePayment(ctx context.Context, c *Call[sales.PaymentCreate]) (sales.Sale, error) {
	p := c.P
	in := c.Body
	if err := requireFinance(p, sales.FinanceRequest{ChoosesAccount: in.AccountID != nil}, "finance:read", "finance:create"); err != nil {
		return sales.Sale{}, err
	}
	return saleView(p)(sales.Receive(ctx, c.W, c.Path("id"), in))
}

func (s *Server) reverseSalePayment(ctx context.Context, c *Call[sales.Cancellation]) (sales.Sale, error) {
	p := c.P
	in := c.Body
	return saleView(p)(sales.ReversePayment(ctx, c.W, c.Path("id"), c.Path("payment_id"), in))
}

func (s *Server) rescheduleSale(ctx context.Context, c *Call[sales.InstallmentsReschedule]) (sales.Sale, error) {
	p := c.P
	in := c.Body
	return saleView(p)(sales.Reschedule(ctx, c.W, c.Path("id"), in))
}

func (s *Server) newSaleVersion(ctx context.Context, c *Call[sales.SaleVersionCreate]) (sales.Sale, error) {
	p := c.P
	in := c.Body
	if err := requireFinance(p, sales.FinanceRequest{ChoosesAccount: in.ChoosesAccount()}, "finance:read", "finance:update"); err != nil {
		return sales.Sale{}, err
	}
	return saleView(p)(sales.NewVersion(ctx, c.W, c.Path("id"), in))
}

func (s *Server) listSaleVersions(ctx context.Context, c *Call[any]) (page.List[sales.SaleVersion], error) {
	p := c.P
	var out page.List[sales.SaleVersion]
	err := s.read(ctx, p, func(ctx context.Context, tx bun.Tx) error {
		vs, err := sales.Versions(ctx, tx, c.Path("id"), financeVisible(p))
		out = page.List[sales.SaleVersion]{Object: "list", Data: vs}
		return err
	})
	return out, err
}

func (s *Server) cancelSale(ctx context.Context, c *Call[sales.Cancellation]) (sales.Sale, error) {
	p := c.P
	in := c.Body
	return saleView(p)(sales.Cancel(ctx, c.W, c.Path("id"), in))
}
