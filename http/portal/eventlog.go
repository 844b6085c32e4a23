package portal

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"

	"oficina/schema/apierr"
	"oficina/schema/events"
	"oficina/schema/page"
)

// The company's event log (issue 26 item 7): GET /events with the same
// filters, for whoever the session acts as.
func (s *Server) eventLogRoutes() {
	s.mux.Handle("GET "+Prefix+"events/log", s.page(nil, s.listEventLog))
	s.mux.Handle("GET "+Prefix+"events/log/{id}", s.page(nil, s.showEvent))
}

// eventFilter is the log's filter form as sent.
type eventFilter struct {
	Type, ObjectID, Delivered, After, Before string
}

// eventQuery turns the form (times in the company's zone) into the API's
// query, which events.ParseFilter reads as the API does.
func (c *call) eventQuery(q url.Values) (eventFilter, url.Values, error) {
	f := eventFilter{Type: q.Get("type"), ObjectID: q.Get("object_id"), Delivered: q.Get("delivery_success"),
		After: q.Get("created_after"), Before: q.Get("created_before")}
	api, err := c.apiQuery(map[string]string{"type": f.Type, "object_id": f.ObjectID, "delivery_success": f.Delivered},
		map[string]string{"created_after": f.After, "created_before": f.Before})
	return f, api, err
}

// eventRow is an event as the log lists it.
type eventRow struct {
	events.Event
	Object string
}

func (s *Server) listEventLog(c *call) (*result, error) {
	q := c.r.URL.Query()
	data := map[string]any{"Types": s.eventTypes()}
	form, api, err := c.eventQuery(q)
	data["F"] = form
	if err == nil {
		var f events.Filter
		if f, err = events.ParseFilter(api); err == nil {
			pg := page.Params{Limit: 25, StartingAfter: q.Get("starting_after")}
			var l page.List[events.Event]
			if l, err = events.List(c.ctx, c.tx, c.company.ID, events.Visible(c.actor.Reads), pg, f); err == nil {
				rows := make([]eventRow, len(l.Data))
				for i, e := range l.Data {
					rows[i] = eventRow{Event: e, Object: e.ObjectID()}
				}
				data["Rows"] = rows
				if l.HasMore {
					data["Next"] = nextPage(q, l.Data[len(l.Data)-1].ID)
				}
				data["Paged"] = pg.StartingAfter != ""
			}
		}
	}
	if err != nil && apierr.As(err).Code == apierr.InvalidRequest {
		data["BadFilter"] = true
		return &result{status: http.StatusBadRequest, page: "eventlog", data: data}, nil
	}
	if err != nil {
		return nil, err
	}
	return &result{page: "eventlog", data: data}, nil
}

func (s *Server) showEvent(c *call) (*result, error) {
	e, err := events.Get(c.ctx, c.tx, c.company.ID, events.Visible(c.actor.Reads), c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, e.Body(), "", "  "); err != nil {
		return nil, err
	}
	return &result{page: "event", data: map[string]any{"E": eventRow{Event: e, Object: e.ObjectID()}, "Body": pretty.String()}}, nil
}
