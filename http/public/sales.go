package public

import (
	"context"
	"net/http"

	"github.com/uptrace/bun"

	"oficina/http/openapi"
	"oficina/schema/page"
	"oficina/schema/sales"
	"oficina/tenant"
)

// saleRoutes registers the sales routes (4.4).
func (s *Server) saleRoutes() {
	const tg = "sales"
	finance := " Finance permissions are needed only when the request decides: sending `track_in_finance` or an " +
		"account needs member finance access, `true` also `finance:create`, an account `finance:read` and `finance:create`."
	handle(s, http.MethodPost, "/sales", need("sales:create"), op{id: "createSale", tag: tg, summary: "Register a sale",
		status: http.StatusCreated,
		desc: "The sale gets the company's next number, counts against the monthly sale quota, builds its installments " +
			"from the payment plan, posts to finance (the company setting decides unless `track_in_finance` is sent) and " +
			"deducts stock for catalog items (unless `decrement_stock: false`). Totals are computed, never sent." + finance,
		example: `{"client_id": "cli_01m80xxst6jzjf9e2f6wtgqx92",
  "items": [{"type": "custom", "name": "Instalação", "unit_price_cents": 25000, "quantity": 2}],
  "payment_plan": {"mode": "installments", "payment_method": "boleto",
    "installments": [{"amount_cents": 25000, "due_date": "2026-12-10"}, {"amount_cents": 25000, "due_date": "2027-01-10"}]}}`},
		s.createSale)
	handle(s, http.MethodGet, "/sales", need("sales:read"), op{id: "listSales", tag: tg, summary: "List sales",
		desc: "Newest first.", query: pageParams(saleFilterParams()...)}, s.listSales)
	handle(s, http.MethodGet, "/sales/{id}", need("sales:read"), op{id: "getSale", tag: tg, summary: "Read a sale",
		desc: "`account_id` and `finance_transactions` are present only for a key with `finance:read` whose member has " +
			"finance access."}, s.getSale)
	handle(s, http.MethodPatch, "/sales/{id}", need("sales:update"), op{id: "updateSale", tag: tg,
		summary: "Change notes and production", desc: "Without a new version. Only the members sent change; `null` clears " +
			"the members that allow it.", example: `{"production_status": "in_production"}`}, s.updateSale)
	handle(s, http.MethodPost, "/sales/{id}/payments", need("sales:update"), op{id: "createSalePayment", tag: tg,
		summary: "Receive a payment",
		desc: "The amount cannot exceed the balance. With `installment_id` it settles that open installment; without, it " +
			"is applied in due-date order. `account_id` needs `finance:read` and `finance:create` and member finance access.",
		example: `{"amount_cents": 25000, "paid_at": "2026-12-10", "payment_method": "pix"}`}, s.receiveSalePayment)
	handle(s, http.MethodPost, "/sales/{id}/payments/{payment_id}/cancel", need("sales:update"), op{id: "cancelSalePayment",
		tag: tg, summary: "Reverse a payment", desc: "A payment already reversed or with an active invoice refuses (409).",
		example: `{"reason": "Estorno a pedido do cliente"}`}, s.reverseSalePayment)
	handle(s, http.MethodPatch, "/sales/{id}/installments", need("sales:update"), op{id: "rescheduleSaleInstallments",
		tag: tg, summary: "Reschedule open installments",
		desc:    "New amounts and due dates for the open installments; they must add up to the open balance.",
		example: `{"installments": [{"amount_cents": 50000, "due_date": "2027-01-10"}]}`}, s.rescheduleSale)
	handle(s, http.MethodPost, "/sales/{id}/versions", need("sales:update"), op{id: "createSaleVersion", tag: tg,
		summary: "Make a new version of a sale",
		desc: "A commercial change (items, amounts, client, seller, balance plan) keeps the sale's id and increases " +
			"`version`; received payments still count. An account needs `finance:read` and `finance:update`.",
		example: `{"reason": "Cliente trocou o modelo", "items": [{"type": "custom", "name": "Instalação", "unit_price_cents": 30000}]}`},
		s.newSaleVersion)
	handle(s, http.MethodGet, "/sales/{id}/versions", need("sales:read"), op{id: "listSaleVersions", tag: tg,
		summary: "List a sale's versions", desc: "Newest first."}, s.listSaleVersions)
	handle(s, http.MethodPost, "/sales/{id}/cancel", need("sales:update"), op{id: "cancelSale", tag: tg, summary: "Cancel a sale",
		desc: "Payments are reversed, deducted stock returns, finance transactions are canceled. A sale with an active " +
			"invoice refuses (409).", example: `{"reason": "Desistência"}`}, s.cancelSale)
	handle(s, http.MethodPost, "/quotes/{id}/convert_to_sale", need("quotes:update"), op{id: "convertQuoteToSale",
		tag: "quotes", summary: "Convert an approved quote into a sale", status: http.StatusCreated,
		desc: "Also needs `sales:create`. The sale takes the quote's client, items, discount and additional costs; a " +
			"quote converts once (409 `conflict`). `payment_plan` defaults to the quote's plan (its mode, when absent, " +
			"follows from what it has: an entry → `entry_and_rest`, installments → `installments`, else `paid_full`) and " +
			"to `paid_full` paid on the sale date when the quote has none, so `{}` or no body converts." + finance,
		example: `{"payment_plan": {"mode": "paid_full", "payment_method": "pix", "paid_at": "2026-12-01"}}`},
		s.convertQuoteToSale)
}

func saleFilterParams() []openapi.Param {
	return append([]openapi.Param{
		dateQuery("sale_date_after", "Sales dated on or after this date."),
		dateQuery("sale_date_before", "Sales dated on or before this date."),
		query[sales.PaymentStatus]("payment_status", "Sales in this payment status."),
		text("client_id", "Sales of this client.", 1, 0),
		query[bool]("canceled", "`true`: only canceled sales; `false`: only sales not canceled."),
	}, syncParams()...)
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

// saleView renders the sale a write rule returns for the caller p (with
// finance fields when p sees them).
func saleView(p *tenant.Principal) func(*sales.Row, error) (sales.Sale, error) {
	return as(func(r *sales.Row) sales.Sale { return r.View(financeVisible(p)) })
}

func (s *Server) createSale(ctx context.Context, c *Call[sales.SaleCreate]) (sales.Sale, error) {
	p := c.P
	in := c.Body
	if err := requireFinance(p, in.Finance(), "finance:read", "finance:create"); err != nil {
		return sales.Sale{}, err
	}
	return saleView(p)(sales.Create(ctx, c.W, in, sales.CreateOptions{}))
}

func (s *Server) convertQuoteToSale(ctx context.Context, c *Call[sales.QuoteConversion]) (sales.Sale, error) {
	p := c.P
	in := c.Body
	if err := p.Require("sales:create"); err != nil {
		return sales.Sale{}, err
	}
	if err := requireFinance(p, in.Finance(), "finance:create"); err != nil {
		return sales.Sale{}, err
	}
	return saleView(p)(sales.ConvertQuote(ctx, c.W, c.Path("id"), in))
}

func (s *Server) getSale(ctx context.Context, c *Call[any]) (sales.Sale, error) {
	p := c.P
	fin := financeVisible(p)
	if !fin {
		// The common read is one statement (no finance rows to join).
		sale, err := sales.Read(ctx, s.deps.DB, p.CompanyID(), c.Path("id"))
		if err != nil {
			return sales.Sale{}, err
		}
		return sale.View(false), nil
	}
	var out sales.Sale
	err := s.read(ctx, p, func(ctx context.Context, tx bun.Tx) error {
		sale, err := sales.Load(ctx, tx, c.Path("id"), sales.LoadOptions{Finance: fin})
		if err == nil {
			out = sale.View(fin)
		}
		return err
	})
	return out, err
}

func (s *Server) listSales(ctx context.Context, c *Call[any]) (page.List[sales.Sale], error) {
	return filteredList(ctx, s, c, sales.ParseFilter, func(ctx context.Context, tx bun.Tx, p *tenant.Principal, pg page.Params,
		f sales.Filter) (page.List[sales.Sale], error) {
		return sales.List(ctx, tx, pg, f, financeVisible(p))
	})
}

func (s *Server) updateSale(ctx context.Context, c *Call[sales.SaleUpdate]) (sales.Sale, error) {
	p := c.P
	sale, err := sales.Update(ctx, c.W, c.Path("id"), c.Body)
	if err == nil && financeVisible(p) {
		err = sales.LoadFinance(ctx, c.W.Tx, sale)
	}
	return saleView(p)(sale, err)
}
