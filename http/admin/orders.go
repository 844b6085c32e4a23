package admin

import (
	"context"
	"net/http"

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

func getOrderSettings(ctx context.Context, w *streams.Write, _ *http.Request) (int, any, error) {
	v, err := orders.GetSettings(ctx, w.Tx, w.CompanyID, w.At)
	return http.StatusOK, v, err
}

func updateOrderSettings(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[orders.SettingsInput](r)
	if err != nil {
		return 0, nil, err
	}
	v, err := orders.UpdateSettings(ctx, w.Tx, w.CompanyID, in, w.At)
	return http.StatusOK, v, err
}

func listChecklists(ctx context.Context, w *streams.Write, _ *http.Request) (int, any, error) {
	cs, err := orders.ListChecklists(ctx, w.Tx)
	return http.StatusOK, page.List[orders.ChecklistView]{Object: "list", Data: cs}, err
}

func createChecklist(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[orders.ChecklistInput](r)
	if err != nil {
		return 0, nil, err
	}
	c, err := orders.CreateChecklist(ctx, w.Tx, w.CompanyID, in, w.At)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, c.View(), nil
}

func updateChecklist(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[orders.ChecklistInput](r)
	if err != nil {
		return 0, nil, err
	}
	c, err := orders.UpdateChecklist(ctx, w.Tx, r.PathValue("id"), in, w.At)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, c.View(), nil
}

func getOrder(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	o, err := orders.Get(ctx, w.Tx, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, o.View(), nil
}

func deleteOrder(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	o, err := orders.Delete(ctx, w, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, deleted{Object: "service_order", ID: o.ID, Deleted: true}, nil
}

func orderNotifications(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	o, err := orders.Get(ctx, w.Tx, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	ns, err := notify.ForSubject(ctx, w.Tx, o.ID)
	return http.StatusOK, page.List[notify.Notification]{Object: "list", Data: ns}, err
}

type tickBody struct {
	Done *bool `json:"done"`
}

func tickChecklistItem(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[tickBody](r)
	if err != nil {
		return 0, nil, err
	}
	if in.Done == nil {
		in.Done = new(bool)
		*in.Done = true
	}
	o, err := orders.TickChecklistItem(ctx, w, r.PathValue("id"), r.PathValue("item"), *in.Done)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, o.View(), nil
}

func markTechnicianDone(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[orders.TechnicianCompletionInput](r)
	if err != nil {
		return 0, nil, err
	}
	o, err := orders.MarkTechnicianDone(ctx, w, r.PathValue("id"), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, o.View(), nil
}

func listCalendars(ctx context.Context, w *streams.Write, _ *http.Request) (int, any, error) {
	cs, err := appointments.Connections(ctx, w.Tx)
	return http.StatusOK, page.List[appointments.ConnectionView]{Object: "list", Data: cs}, err
}

func connectCalendar(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[appointments.ConnectionInput](r)
	if err != nil {
		return 0, nil, err
	}
	c, err := appointments.Connect(ctx, w.Tx, w.CompanyID, in, w.At)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, c.View(), nil
}

func disconnectCalendar(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	c, err := appointments.Disconnect(ctx, w.Tx, r.PathValue("id"), w.At)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, c.View(), nil
}

func getAppointment(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	a, err := appointments.Get(ctx, w.Tx, r.PathValue("id"))
	return http.StatusOK, a, err
}
