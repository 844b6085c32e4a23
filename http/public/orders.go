package public

import (
	"context"
	"net/http"

	"github.com/uptrace/bun"

	"oficina/http/openapi"
	"oficina/schema/orders"
	"oficina/schema/page"
	"oficina/tenant"
)

// orderRoutes registers the service order routes (4.3).
func (s *Server) orderRoutes() {
	const tg = "service_orders"
	handle(s, http.MethodPost, "/service_orders", need("service_orders:create"), op{id: "createServiceOrder", tag: tg,
		summary: "Create a service order", status: http.StatusCreated,
		desc: "The order gets the company's next number, counts against the monthly order quota (403 " +
			"`plan_limit_reached`), has its total calculated and the company's automatic checklists applied. " +
			"`scheduled_start` makes it `scheduled`, else `pending`. With `create_appointment: true` and " +
			"`scheduled_start` it also needs `appointments:create`; a missing extra permission saves nothing.",
		example: `{"client_name": "Maria Souza", "client_phone": "+55 11 91234-5678", "service_address": "Rua das Flores, 100",
  "scheduled_start": "2026-12-01T13:00:00Z", "priority": "high",
  "items": [{"description": "Visita técnica", "quantity": 1, "unit_price_cents": 15000, "total_cents": 15000}]}`},
		s.createServiceOrder)
	handle(s, http.MethodGet, "/service_orders", need("service_orders:read"), op{id: "listServiceOrders", tag: tg,
		summary: "List service orders", desc: "Newest first.", query: pageParams(orderFilterParams()...)}, s.listServiceOrders)
	handle(s, http.MethodGet, "/service_orders/{id}", need("service_orders:read"), op{id: "getServiceOrder", tag: tg,
		summary: "Read a service order"}, s.getServiceOrder)
	handle(s, http.MethodPatch, "/service_orders/{id}", need("service_orders:update"), op{id: "updateServiceOrder", tag: tg,
		summary: "Edit a service order",
		desc: "Only the members sent change; `null` clears the members that allow it. A completed or canceled order " +
			"refuses (409 `conflict`); `POST /service_orders/{id}/status` reopens it.",
		example: `{"internal_notes": "Cliente pediu visita pela manhã"}`}, s.updateServiceOrder)
	handle(s, http.MethodPost, "/service_orders/{id}/status", need("service_orders:update"), op{id: "changeServiceOrderStatus",
		tag: tg, summary: "Change the status", desc: "Any status to any status: the only way to reopen a completed or canceled order.",
		example: `{"status": "pending"}`}, s.setServiceOrderStatus)
	handle(s, http.MethodPost, "/service_orders/{id}/start", need("service_orders:update"), op{id: "startServiceOrder", tag: tg,
		summary: "Start a service order", desc: "The order becomes `in_progress` with `started_at` set; a completed or " +
			"canceled order refuses (409 `conflict`). The body, when sent, is an empty object.", optionalBody: true,
		example: `{}`}, s.startServiceOrder)
	handle(s, http.MethodPost, "/service_orders/{id}/complete", need("service_orders:update"), op{id: "completeServiceOrder",
		tag: tg, summary: "Complete a service order", optionalBody: true,
		desc: "Needs the required checklist items done and the technicians' completion order respected (else 409). " +
			"With `link_financial_transaction: true` the total is posted to finance as revenue, which also needs " +
			"`finance:create`.", example: `{"link_financial_transaction": true}`}, s.completeServiceOrder)
	handle(s, http.MethodPost, "/service_orders/{id}/cancel", need("service_orders:update"), op{id: "cancelServiceOrder", tag: tg,
		summary: "Cancel a service order", desc: "A completed or canceled order refuses (409 `conflict`). The body, when " +
			"sent, is an empty object.", optionalBody: true, example: `{}`},
		s.cancelServiceOrder)
	handle(s, http.MethodPost, "/service_orders/from_quote", need("service_orders:create"), op{id: "createServiceOrderFromQuote",
		tag: tg, summary: "Convert an approved quote into a service order", status: http.StatusCreated,
		desc: "Also needs `quotes:read` and member access to quotes (and `appointments:create` with " +
			"`create_appointment` and `scheduled_start`). A quote converts once (409 `conflict`).",
		example: `{"quote_id": "quo_01m80xxst6jzjf9e2f6wtgqx92", "scheduled_start": "2026-12-01T13:00:00Z"}`},
		s.serviceOrderFromQuote)
}

func orderFilterParams() []openapi.Param {
	return append([]openapi.Param{
		query[orders.ServiceOrderStatus]("status", "Orders in this status."),
		idQuery("client_id", "Orders of this client.", "cli"),
		idQuery("technician_id", "Orders with this technician, in charge or in support.", "mem"),
		idQuery("type_id", "Orders of this type.", "sot"),
	}, syncParams()...)
}

// orderView renders the order a write rule returns.
var orderView = as((*orders.Row).View)

func (s *Server) createServiceOrder(ctx context.Context, c *Call[orders.ServiceOrderCreate]) (orders.ServiceOrder, error) {
	p := c.P
	in := c.Body
	if err := in.Validate(); err != nil {
		return orders.ServiceOrder{}, err
	}
	if in.NeedsAppointment() {
		if err := p.Require("appointments:create"); err != nil {
			return orders.ServiceOrder{}, err
		}
	}
	return orderView(orders.Create(ctx, c.W, in))
}

func (s *Server) serviceOrderFromQuote(ctx context.Context, c *Call[orders.ServiceOrderFromQuote]) (orders.ServiceOrder, error) {
	p := c.P
	in := c.Body
	if err := in.Validate(); err != nil {
		return orders.ServiceOrder{}, err
	}
	perms := []tenant.Permission{"quotes:read"}
	if in.NeedsAppointment() {
		perms = append(perms, "appointments:create")
	}
	// Require runs the member layer too: the member needs access to quotes.
	if err := p.Require(perms...); err != nil {
		return orders.ServiceOrder{}, err
	}
	return orderView(orders.FromQuote(ctx, c.W, in))
}

func (s *Server) getServiceOrder(ctx context.Context, c *Call[any]) (orders.ServiceOrder, error) {
	p := c.P
	var out orders.ServiceOrder
	err := s.read(ctx, p, func(ctx context.Context, tx bun.Tx) error {
		o, err := orders.Get(ctx, tx, c.Path("id"))
		if err == nil {
			out = o.View()
		}
		return err
	})
	return out, err
}

func (s *Server) listServiceOrders(ctx context.Context, c *Call[any]) (page.List[orders.ServiceOrder], error) {
	return filteredList(ctx, s, c, orders.ParseFilter, func(ctx context.Context, tx bun.Tx, p *tenant.Principal, pg page.Params,
		f orders.Filter) (page.List[orders.ServiceOrder], error) {
		return orders.List(ctx, tx, p.CompanyID(), pg, f)
	})
}

func (s *Server) updateServiceOrder(ctx context.Context, c *Call[orders.ServiceOrderUpdate]) (orders.ServiceOrder, error) {
	in := c.Body
	return orderView(orders.Update(ctx, c.W, c.Path("id"), in))
}

func (s *Server) setServiceOrderStatus(ctx context.Context, c *Call[orders.ServiceOrderStatusChange]) (orders.ServiceOrder, error) {
	in := c.Body
	return orderView(orders.SetStatus(ctx, c.W, c.Path("id"), in))
}

func (s *Server) startServiceOrder(ctx context.Context, c *Call[struct{}]) (orders.ServiceOrder, error) {
	return orderView(orders.Start(ctx, c.W, c.Path("id")))
}

func (s *Server) cancelServiceOrder(ctx context.Context, c *Call[struct{}]) (orders.ServiceOrder, error) {
	return orderView(orders.Cancel(ctx, c.W, c.Path("id")))
}

func (s *Server) completeServiceOrder(ctx context.Context, c *Call[orders.ServiceOrderComplete]) (orders.ServiceOrder, error) {
	p := c.P
	in := c.Body
	if in.LinkFinancialTransaction {
		if err := p.Require("finance:create"); err != nil {
			return orders.ServiceOrder{}, err
		}
	}
	return orderView(orders.Complete(ctx, c.W, c.Path("id"), in))
}
