package public

import (
	"context"
	"net/http"

	"github.com/go-fuego/fuego"
	"github.com/uptrace/bun"

	"oficina/http/wire"
	"oficina/schema/orders"
	"oficina/schema/page"
	"oficina/streams"
	"oficina/tenant"
)

// The OpenAPI names of the order schemas. fuego names components after the
// bare Go type name, so orders.View would share "View" with the other
// modules' views; these defined types give the document distinct names.
// Handlers decode into the orders types (UpdateInput's own decoding tells
// null from omitted) and convert the answers.
type (
	// ServiceOrder is an order as GET returns it.
	ServiceOrder orders.ServiceOrder
	// ServiceOrderCreate is the body of POST /service_orders.
	ServiceOrderCreate orders.ServiceOrderCreate
	// ServiceOrderUpdate is the body of PATCH /service_orders/{id}.
	ServiceOrderUpdate orders.ServiceOrderUpdate
	// ServiceOrderStatus is the body of POST /service_orders/{id}/status.
	ServiceOrderStatus orders.ServiceOrderStatusChange
	// ServiceOrderComplete is the body of POST /service_orders/{id}/complete.
	ServiceOrderComplete orders.ServiceOrderComplete
	// ServiceOrderFromQuote is the body of POST /service_orders/from_quote.
	ServiceOrderFromQuote orders.ServiceOrderFromQuote
	// ServiceOrderAction is the body of start and cancel: nothing, or {}.
	ServiceOrderAction struct{}
)

// orderRoutes registers the service order routes (4.3).
func (s *Server) orderRoutes() {
	tg := tag("service_orders")
	created := fuego.OptionDefaultStatusCode(http.StatusCreated)
	handle(s, http.MethodPost, "/service_orders", need("service_orders:create"), s.createServiceOrder, tg, created,
		summary("Create a service order (+ appointments:create with create_appointment and scheduled_start)"))
	handle(s, http.MethodGet, "/service_orders", need("service_orders:read"), s.listServiceOrders, tg,
		summary("List service orders, newest first"), pageParams(), orderFilterParams())
	handle(s, http.MethodGet, "/service_orders/{id}", need("service_orders:read"), s.getServiceOrder, tg,
		summary("Read a service order"))
	handle(s, http.MethodPatch, "/service_orders/{id}", need("service_orders:update"), s.updateServiceOrder, tg,
		summary("Edit a service order (409 when completed or canceled)"))
	handle(s, http.MethodPost, "/service_orders/{id}/status", need("service_orders:update"), s.setServiceOrderStatus, tg,
		summary("Change the status, any to any (the only way to reopen)"))
	handle(s, http.MethodPost, "/service_orders/{id}/start", need("service_orders:update"), s.startServiceOrder, tg,
		summary("Start: in_progress with started_at"))
	handle(s, http.MethodPost, "/service_orders/{id}/complete", need("service_orders:update"), s.completeServiceOrder, tg,
		summary("Complete (+ finance:create with link_financial_transaction)"))
	handle(s, http.MethodPost, "/service_orders/{id}/cancel", need("service_orders:update"), s.cancelServiceOrder, tg,
		summary("Cancel"))
	handle(s, http.MethodPost, "/service_orders/from_quote", need("service_orders:create"), s.serviceOrderFromQuote, tg, created,
		summary("Convert an approved quote into a service order (+ quotes:read, member access to quotes)"))
}

func orderFilterParams() func(*fuego.BaseRoute) {
	return fuego.GroupOptions(
		fuego.OptionQuery("status", "pending, scheduled, in_progress, completed or canceled"),
		fuego.OptionQuery("client_id", "Orders of this client"),
		fuego.OptionQuery("technician_id", "Orders with this technician, in charge or in support"),
		fuego.OptionQuery("type_id", "Orders of this type"),
		fuego.OptionQuery("created_after", "Created after this timestamp (YYYY-MM-DDThh:mm:ssZ)"),
		fuego.OptionQuery("created_before", "Created before this timestamp"),
		fuego.OptionQuery("updated_after", "Changed after this timestamp"),
	)
}

// orderWrite runs one write that yields an order.
func (s *Server) orderWrite(ctx context.Context, p *tenant.Principal, fn func(ctx context.Context, tx bun.Tx, w streams.Write) (*orders.Row, error)) (ServiceOrder, error) {
	var out ServiceOrder
	err := s.write(ctx, p, func(ctx context.Context, tx bun.Tx, w streams.Write) error {
		o, err := fn(ctx, tx, w)
		if err == nil {
			out = ServiceOrder(o.View())
		}
		return err
	})
	return out, err
}

func (s *Server) createServiceOrder(c fuego.ContextWithBody[ServiceOrderCreate]) (ServiceOrder, error) {
	p := principal(c.Context())
	var in orders.ServiceOrderCreate
	if err := wire.Decode(c.Request(), &in); err != nil {
		return ServiceOrder{}, err
	}
	if err := in.Validate(); err != nil {
		return ServiceOrder{}, err
	}
	if in.NeedsAppointment() {
		if err := p.Require("appointments:create"); err != nil {
			return ServiceOrder{}, err
		}
	}
	return s.orderWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, w streams.Write) (*orders.Row, error) {
		return orders.Create(ctx, tx, w, in)
	})
}

func (s *Server) serviceOrderFromQuote(c fuego.ContextWithBody[ServiceOrderFromQuote]) (ServiceOrder, error) {
	p := principal(c.Context())
	var in orders.ServiceOrderFromQuote
	if err := wire.Decode(c.Request(), &in); err != nil {
		return ServiceOrder{}, err
	}
	if err := in.Validate(); err != nil {
		return ServiceOrder{}, err
	}
	perms := []tenant.Permission{"quotes:read"}
	if in.NeedsAppointment() {
		perms = append(perms, "appointments:create")
	}
	// Require runs the member layer too: the member needs access to quotes.
	if err := p.Require(perms...); err != nil {
		return ServiceOrder{}, err
	}
	return s.orderWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, w streams.Write) (*orders.Row, error) {
		return orders.FromQuote(ctx, tx, w, in)
	})
}

func (s *Server) getServiceOrder(c fuego.ContextNoBody) (ServiceOrder, error) {
	p := principal(c.Context())
	var out ServiceOrder
	err := s.tx(c.Context(), p, func(ctx context.Context, tx bun.Tx) error {
		o, err := orders.Get(ctx, tx, c.PathParam("id"))
		if err == nil {
			out = ServiceOrder(o.View())
		}
		return err
	})
	return out, err
}

func (s *Server) listServiceOrders(c fuego.ContextNoBody) (page.List[ServiceOrder], error) {
	p := principal(c.Context())
	q := c.Request().URL.Query()
	pg, err := page.Parse(q)
	if err != nil {
		return page.List[ServiceOrder]{}, err
	}
	f, err := orders.ParseFilter(q)
	if err != nil {
		return page.List[ServiceOrder]{}, err
	}
	var out page.List[ServiceOrder]
	err = s.tx(c.Context(), p, func(ctx context.Context, tx bun.Tx) error {
		l, err := orders.List(ctx, tx, p.CompanyID(), pg, f)
		out = page.List[ServiceOrder]{Object: l.Object, HasMore: l.HasMore, Data: make([]ServiceOrder, len(l.Data))}
		for i := range l.Data {
			out.Data[i] = ServiceOrder(l.Data[i])
		}
		return err
	})
	return out, err
}

func (s *Server) updateServiceOrder(c fuego.ContextWithBody[ServiceOrderUpdate]) (ServiceOrder, error) {
	p := principal(c.Context())
	var in orders.ServiceOrderUpdate
	if err := wire.Decode(c.Request(), &in); err != nil {
		return ServiceOrder{}, err
	}
	return s.orderWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, w streams.Write) (*orders.Row, error) {
		return orders.Update(ctx, tx, w, c.PathParam("id"), in)
	})
}

func (s *Server) setServiceOrderStatus(c fuego.ContextWithBody[ServiceOrderStatus]) (ServiceOrder, error) {
	p := principal(c.Context())
	var in orders.ServiceOrderStatusChange
	if err := wire.Decode(c.Request(), &in); err != nil {
		return ServiceOrder{}, err
	}
	return s.orderWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, w streams.Write) (*orders.Row, error) {
		return orders.SetStatus(ctx, tx, w, c.PathParam("id"), in)
	})
}

func (s *Server) startServiceOrder(c fuego.ContextWithBody[ServiceOrderAction]) (ServiceOrder, error) {
	p := principal(c.Context())
	if err := wire.Decode(c.Request(), &ServiceOrderAction{}); err != nil {
		return ServiceOrder{}, err
	}
	return s.orderWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, w streams.Write) (*orders.Row, error) {
		return orders.Start(ctx, tx, w, c.PathParam("id"))
	})
}

func (s *Server) cancelServiceOrder(c fuego.ContextWithBody[ServiceOrderAction]) (ServiceOrder, error) {
	p := principal(c.Context())
	if err := wire.Decode(c.Request(), &ServiceOrderAction{}); err != nil {
		return ServiceOrder{}, err
	}
	return s.orderWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, w streams.Write) (*orders.Row, error) {
		return orders.Cancel(ctx, tx, w, c.PathParam("id"))
	})
}

func (s *Server) completeServiceOrder(c fuego.ContextWithBody[ServiceOrderComplete]) (ServiceOrder, error) {
	p := principal(c.Context())
	var in orders.ServiceOrderComplete
	if err := wire.Decode(c.Request(), &in); err != nil {
		return ServiceOrder{}, err
	}
	if in.LinkFinancialTransaction {
		if err := p.Require("finance:create"); err != nil {
			return ServiceOrder{}, err
		}
	}
	return s.orderWrite(c.Context(), p, func(ctx context.Context, tx bun.Tx, w streams.Write) (*orders.Row, error) {
		return orders.Complete(ctx, tx, w, c.PathParam("id"), in)
	})
}
