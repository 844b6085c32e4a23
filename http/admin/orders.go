package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/appointments"
	"oficina/schema/notify"
	"oficina/schema/orders"
	"oficina/schema/page"
	"oficina/streams"
)

// orderRoutes are the dashboard's service order actions: order settings
// (required fields, technician completion order, monthly quota), automatic
// checklists, ticking checklist items and technicians' completions on an
// order, deleting an order, and members' connected calendars.
func (s *Server) orderRoutes() {
	c := Prefix + "/companies/{company}"
	s.mux.HandleFunc("GET "+c+"/service_order_settings", s.company(false, getOrderSettings))
	s.mux.HandleFunc("PATCH "+c+"/service_order_settings", s.company(false, updateOrderSettings))
	s.mux.HandleFunc("GET "+c+"/service_order_checklists", s.company(false, listChecklists))
	s.mux.HandleFunc("POST "+c+"/service_order_checklists", s.company(false, createChecklist))
	s.mux.HandleFunc("PATCH "+c+"/service_order_checklists/{id}", s.company(false, updateChecklist))
	s.mux.HandleFunc("GET "+c+"/service_orders/{id}", s.company(false, getOrder))
	s.mux.HandleFunc("DELETE "+c+"/service_orders/{id}", s.company(false, deleteOrder))
	s.mux.HandleFunc("GET "+c+"/service_orders/{id}/notifications", s.company(false, orderNotifications))
	s.mux.HandleFunc("POST "+c+"/service_orders/{id}/checklist/{item}", s.company(false, tickChecklistItem))
	s.mux.HandleFunc("POST "+c+"/service_orders/{id}/technician_completions", s.company(false, markTechnicianDone))
	s.mux.HandleFunc("GET "+c+"/connected_calendars", s.company(false, listCalendars))
	s.mux.HandleFunc("POST "+c+"/connected_calendars", s.company(false, connectCalendar))
	s.mux.HandleFunc("DELETE "+c+"/connected_calendars/{id}", s.company(false, disconnectCalendar))
	s.mux.HandleFunc("GET "+c+"/appointments/{id}", s.company(false, getAppointment))
}

// byDashboard is an order write made in the dashboard, for its events.
func byDashboard(companyID string, now time.Time) streams.Write {
	return streams.Write{CompanyID: companyID, Actor: streams.Actor{Kind: streams.ActorDashboard}, At: now}
}

func getOrderSettings(ctx context.Context, tx bun.Tx, _ *http.Request, companyID string, now time.Time) (int, any, error) {
	v, err := orders.GetSettings(ctx, tx, companyID, now)
	return http.StatusOK, v, err
}

func updateOrderSettings(ctx context.Context, tx bun.Tx, r *http.Request, companyID string, now time.Time) (int, any, error) {
	in, err := decode[orders.SettingsInput](r)
	if err != nil {
		return 0, nil, err
	}
	v, err := orders.UpdateSettings(ctx, tx, companyID, in, now)
	return http.StatusOK, v, err
}

func listChecklists(ctx context.Context, tx bun.Tx, _ *http.Request, _ string, _ time.Time) (int, any, error) {
	cs, err := orders.ListChecklists(ctx, tx)
	return http.StatusOK, page.List[orders.ChecklistView]{Object: "list", Data: cs}, err
}

func createChecklist(ctx context.Context, tx bun.Tx, r *http.Request, companyID string, now time.Time) (int, any, error) {
	in, err := decode[orders.ChecklistInput](r)
	if err != nil {
		return 0, nil, err
	}
	c, err := orders.CreateChecklist(ctx, tx, companyID, in, now)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, c.View(), nil
}

func updateChecklist(ctx context.Context, tx bun.Tx, r *http.Request, _ string, now time.Time) (int, any, error) {
	in, err := decode[orders.ChecklistInput](r)
	if err != nil {
		return 0, nil, err
	}
	c, err := orders.UpdateChecklist(ctx, tx, r.PathValue("id"), in, now)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, c.View(), nil
}

func getOrder(ctx context.Context, tx bun.Tx, r *http.Request, _ string, _ time.Time) (int, any, error) {
	o, err := orders.Get(ctx, tx, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, o.View(), nil
}

func deleteOrder(ctx context.Context, tx bun.Tx, r *http.Request, companyID string, now time.Time) (int, any, error) {
	o, err := orders.Delete(ctx, tx, byDashboard(companyID, now), r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, deleted{Object: "service_order", ID: o.ID, Deleted: true}, nil
}

func orderNotifications(ctx context.Context, tx bun.Tx, r *http.Request, _ string, _ time.Time) (int, any, error) {
	o, err := orders.Get(ctx, tx, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	ns, err := notify.ForSubject(ctx, tx, o.ID)
	return http.StatusOK, page.List[notify.Notification]{Object: "list", Data: ns}, err
}

type tickBody struct {
	Done *bool `json:"done"`
}

func tickChecklistItem(ctx context.Context, tx bun.Tx, r *http.Request, companyID string, now time.Time) (int, any, error) {
	in, err := decode[tickBody](r)
	if err != nil {
		return 0, nil, err
	}
	if in.Done == nil {
		in.Done = new(bool)
		*in.Done = true
	}
	o, err := orders.TickChecklistItem(ctx, tx, byDashboard(companyID, now), r.PathValue("id"), r.PathValue("item"), *in.Done)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, o.View(), nil
}

func markTechnicianDone(ctx context.Context, tx bun.Tx, r *http.Request, companyID string, now time.Time) (int, any, error) {
	in, err := decode[orders.TechnicianCompletionInput](r)
	if err != nil {
		return 0, nil, err
	}
	o, err := orders.MarkTechnicianDone(ctx, tx, byDashboard(companyID, now), r.PathValue("id"), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, o.View(), nil
}

func listCalendars(ctx context.Context, tx bun.Tx, _ *http.Request, _ string, _ time.Time) (int, any, error) {
	cs, err := appointments.Connections(ctx, tx)
	return http.StatusOK, page.List[appointments.ConnectionView]{Object: "list", Data: cs}, err
}

func connectCalendar(ctx context.Context, tx bun.Tx, r *http.Request, companyID string, now time.Time) (int, any, error) {
	in, err := decode[appointments.ConnectionInput](r)
	if err != nil {
		return 0, nil, err
	}
	c, err := appointments.Connect(ctx, tx, companyID, in, now)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, c.View(), nil
}

func disconnectCalendar(ctx context.Context, tx bun.Tx, r *http.Request, _ string, now time.Time) (int, any, error) {
	c, err := appointments.Disconnect(ctx, tx, r.PathValue("id"), now)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, c.View(), nil
}

func getAppointment(ctx context.Context, tx bun.Tx, r *http.Request, _ string, _ time.Time) (int, any, error) {
	a, err := appointments.Get(ctx, tx, r.PathValue("id"))
	return http.StatusOK, a, err
}
