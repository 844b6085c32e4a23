package public

import (
	"context"
	"net/http"

	"github.com/go-fuego/fuego"
	"github.com/uptrace/bun"

	"oficina/http/wire"
	"oficina/schema/page"
	"oficina/schema/sales"
	"oficina/streams"
	"oficina/tenant"
)

// saleRoutes registers the sales routes (4.4).
func (s *Server) saleRoutes() {
	tg := tag("sales")
	created := fuego.OptionDefaultStatusCode(http.StatusCreated)
	handle(s, http.MethodPost, "/sales", need("sales:create"), s.createSale, tg, created,
		summary("Register a sale (finance permissions only when the request decides track_in_finance or chooses an account)"))
	handle(s, http.MethodGet, "/sales", need("sales:read"), s.listSales, tg,
		summary("List sales, newest first"), pageParams(), saleFilterParams())
	handle(s, http.MethodGet, "/sales/{id}", need("sales:read"), s.getSale, tg, summary("Read a sale"))
	handle(s, http.MethodPatch, "/sales/{id}", need("sales:update"), s.updateSale, tg,
		summary("Change notes and production without a new version"))
	handle(s, http.MethodPost, "/sales/{id}/payments", need("sales:update"), s.receiveSalePayment, tg,
		summary("Receive a payment (+ finance:read and finance:create with account_id)"))
	handle(s, http.MethodPost, "/sales/{id}/payments/{payment_id}/cancel", need("sales:update"), s.reverseSalePayment, tg,
		summary("Reverse a payment"))
	handle(s, http.MethodPatch, "/sales/{id}/installments", need("sales:update"), s.rescheduleSale, tg,
		summary("Reschedule amounts and due dates of open installments"))
	handle(s, http.MethodPost, "/sales/{id}/versions", need("sales:update"), s.newSaleVersion, tg,
		summary("Make a new version: items, amounts, client, seller, balance plan (+ finance:read and finance:update with account_id)"))
	handle(s, http.MethodGet, "/sales/{id}/versions", need("sales:read"), s.listSaleVersions, tg,
		summary("Version history, newest first"))
	handle(s, http.MethodPost, "/sales/{id}/cancel", need("sales:update"), s.cancelSale, tg, summary("Cancel a sale"))
	handle(s, http.MethodPost, "/quotes/{id}/convert_to_sale", need("quotes:update"), s.convertQuoteToSale, tag("quotes"), created,
		summary("Convert an approved quote into a sale, once (+ sales:create; finance permissions as for POST /sales)"))
}

func saleFilterParams() func(*fuego.BaseRoute) {
	return fuego.GroupOptions(
		fuego.OptionQuery("sale_date_after", "Sales dated on or after this date (YYYY-MM-DD)"),
		fuego.OptionQuery("sale_date_before", "Sales dated on or before this date (YYYY-MM-DD)"),
		fuego.OptionQuery("payment_status", "pending, partial or paid"),
		fuego.OptionQuery("client_id", "Sales of this client"),
		fuego.OptionQuery("canceled", "true: only canceled sales; false: only sales not canceled"),
	)
}

// financeVisible reports whether the caller sees a sale's finance fields:
// the key has finance:read and its member has finance access (2.6).
func financeVisible(p *tenant.Principal) bool {
	return p.HasKeyPermission("finance:read") && p.MemberAllows("finance", tenant.Read)
}

// requireFinance checks, before anything is written, the finance
// permissions a sale request needs (4.4, 5.4): none when it leaves finance
// to the company setting; member finance access when it decides
// track_in_finance or chooses an account; finance:create for true; and
// accountPerms for an account.
func requireFinance(p *tenant.Principal, fr sales.FinanceRequest, accountPerms ...tenant.Permission) error {
	if !fr.Decides && !fr.ChoosesAccount {
		return nil
	}
	var perms []tenant.Permission
	if fr.Track {
		perms = append(perms, "finance:create")
	}
	if fr.ChoosesAccount {
		perms = append(perms, accountPerms...)
	}
	if len(perms) > 0 {
		if err := p.Require(perms...); err != nil {
			return err
		}
	}
	return p.RequireMemberAccess("finance", tenant.Read)
}

// saleWrite runs one write that yields a sale and renders it for the caller.
func (s *Server) saleWrite(ctx context.Context, p *tenant.Principal, fn func(ctx context.Context, tx bun.Tx, w streams.Write) (*sales.Row, error)) (sales.Sale, error) {
	var out sales.Sale
	err := s.write(ctx, p, func(ctx context.Context, tx bun.Tx, w streams.Write) error {
		sale, err := fn(ctx, tx, w)
		if err == nil {
			out = sale.View(financeVisible(p))
		}
		return err
	})
	return out, err
}

func (s *Server) createSale(c fuego.ContextWithBody[sales.SaleCreate]) (sales.Sale, error) {
	p := principal(c.Context())
	var in sales.SaleCreate
	if err := wire.Decode(c.Request(), &in); err != nil {
		return sales.Sale{}, err
	}
	if err := requireFinance(p, in.Finance(), "finance:read", "finance:create"); err != nil {
		return sales.Sale{}, err
	}
	return s.saleWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, w streams.Write) (*sales.Row, error) {
		return sales.Create(ctx, tx, w, in, sales.CreateOptions{})
	})
}

func (s *Server) convertQuoteToSale(c fuego.ContextWithBody[sales.QuoteConversion]) (sales.Sale, error) {
	p := principal(c.Context())
	var in sales.QuoteConversion
	if err := wire.Decode(c.Request(), &in); err != nil {
		return sales.Sale{}, err
	}
	if err := p.Require("sales:create"); err != nil {
		return sales.Sale{}, err
	}
	if err := requireFinance(p, in.Finance(), "finance:create"); err != nil {
		return sales.Sale{}, err
	}
	return s.saleWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, w streams.Write) (*sales.Row, error) {
		return sales.ConvertQuote(ctx, tx, w, c.PathParam("id"), in)
	})
}

func (s *Server) getSale(c fuego.ContextNoBody) (sales.Sale, error) {
	p := principal(c.Context())
	fin := financeVisible(p)
	if !fin && callOf(c.Context(), p.CompanyID()) == nil {
		// The common read is one statement (no finance rows to join).
		sale, err := sales.Read(c.Context(), s.deps.DB, p.CompanyID(), c.PathParam("id"))
		if err != nil {
			return sales.Sale{}, err
		}
		return sale.View(false), nil
	}
	var out sales.Sale
	err := s.tx(c.Context(), p, func(ctx context.Context, tx bun.Tx) error {
		sale, err := sales.Load(ctx, tx, c.PathParam("id"), sales.LoadOptions{Finance: fin})
		if err == nil {
			out = sale.View(fin)
		}
		return err
	})
	return out, err
}

func (s *Server) listSales(c fuego.ContextNoBody) (page.List[sales.Sale], error) {
	p := principal(c.Context())
	q := c.Request().URL.Query()
	pg, err := page.Parse(q)
	if err != nil {
		return page.List[sales.Sale]{}, err
	}
	f, err := sales.ParseFilter(q)
	if err != nil {
		return page.List[sales.Sale]{}, err
	}
	var out page.List[sales.Sale]
	err = s.tx(c.Context(), p, func(ctx context.Context, tx bun.Tx) error {
		out, err = sales.List(ctx, tx, pg, f, financeVisible(p))
		return err
	})
	return out, err
}

func (s *Server) updateSale(c fuego.ContextWithBody[sales.SaleUpdate]) (sales.Sale, error) {
	p := principal(c.Context())
	var in sales.SaleUpdate
	if err := wire.Decode(c.Request(), &in); err != nil {
		return sales.Sale{}, err
	}
	return s.saleWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, w streams.Write) (*sales.Row, error) {
		sale, err := sales.Update(ctx, tx, w, c.PathParam("id"), in)
		if err == nil && financeVisible(p) {
			err = sales.LoadFinance(ctx, tx, sale)
		}
		return sale, err
	})
}
