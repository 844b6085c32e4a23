package portal

import (
	"net/http"
	"net/url"
	"time"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/page"
	"oficina/schema/webhooks"
	"oficina/streams"
)

func (s *Server) deliveryRoutes() {
	d := Prefix + "endpoints/{id}/deliveries"
	s.mux.Handle("GET "+d, s.page(nil, s.listDeliveries))
	s.mux.Handle("GET "+d+"/{delivery}", s.page(nil, s.showDelivery))
	s.mux.Handle("POST "+d+"/{delivery}/resend", s.page(recoverCap, s.resendDelivery))
}

// logFilter is the delivery log's filter form as sent and as understood.
type logFilter struct {
	Status, EventType, EventID, After, Before string
}

// filterQuery turns the form (times in the company's zone, as
// datetime-local sends them) into the API's query, which
// webhooks.ParseDeliveryFilter reads as the API does.
func (c *call) filterQuery(q url.Values) (logFilter, url.Values, error) {
	f := logFilter{Status: q.Get("status"), EventType: q.Get("event_type"), EventID: q.Get("event_id"),
		After: q.Get("created_after"), Before: q.Get("created_before")}
	api, err := c.apiQuery(map[string]string{"status": f.Status, "event_type": f.EventType, "event_id": f.EventID},
		map[string]string{"created_after": f.After, "created_before": f.Before})
	return f, api, err
}

// apiQuery turns a filter form into the API's query: the plain members as
// sent (the empty ones left out), the times — datetime-local in the
// company's zone — as timestamps of part 2.1.
func (c *call) apiQuery(plain, times map[string]string) (url.Values, error) {
	api := url.Values{}
	for k, v := range plain {
		if v != "" {
			api.Set(k, v)
		}
	}
	for k, v := range times {
		if v == "" {
			continue
		}
		t, err := c.parseLocal(v)
		if err != nil {
			return nil, apierr.New(apierr.InvalidRequest)
		}
		api.Set(k, apitime.At(t).String())
	}
	return api, nil
}

// nextPage is the link to the page after the one that ended with last,
// keeping the filters of q.
func nextPage(q url.Values, last string) string {
	next := url.Values{}
	for k, vs := range q {
		next[k] = vs
	}
	next.Set("starting_after", last)
	next.Del("lang")
	return "?" + next.Encode()
}

// parseLocal reads a datetime-local value in the company's zone.
func (c *call) parseLocal(v string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, v, c.view.location()); err == nil {
			return t, nil
		}
	}
	t, err := apitime.ParseTimestamp(v)
	return t.Time, err
}

func (s *Server) listDeliveries(c *call) (*result, error) {
	e, err := webhooks.Get(c.ctx, c.tx, c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	q := c.r.URL.Query()
	data := map[string]any{"E": e.View(), "Types": s.eventTypes(), "Statuses": webhooks.WebhookDeliveryStatus("").Values()}
	form, api, err := c.filterQuery(q)
	data["F"] = form
	if err == nil {
		var f webhooks.DeliveryFilter
		if f, err = webhooks.ParseDeliveryFilter(api); err == nil {
			pg := page.Params{Limit: 25, StartingAfter: q.Get("starting_after")}
			var l page.List[streams.Delivery]
			if l, err = webhooks.DeliveryLogRows(c.ctx, c.tx, e.ID, f, pg); err == nil {
				data["Rows"] = logRows(l.Data)
				if l.HasMore {
					data["Next"] = nextPage(q, l.Data[len(l.Data)-1].ID)
				}
				data["Paged"] = pg.StartingAfter != ""
			}
		}
	}
	if err != nil && apierr.As(err).Code == apierr.InvalidRequest {
		data["BadFilter"] = true
		return &result{status: http.StatusBadRequest, page: "deliveries", data: data}, nil
	}
	if err != nil {
		return nil, err
	}
	return &result{page: "deliveries", data: data}, nil
}

// logRow is a delivery as the log lists it: the API's view, and the
// answer's status whatever it was (the API's shows a failure's only).
type logRow struct {
	webhooks.WebhookDelivery
	Answer *int
}

func logRows(ds []streams.Delivery) []logRow {
	out := make([]logRow, len(ds))
	for i := range ds {
		out[i] = logRow{WebhookDelivery: webhooks.ViewDelivery(&ds[i]), Answer: ds[i].ResponseStatusCode}
	}
	return out
}

func (s *Server) showDelivery(c *call) (*result, error) {
	e, err := webhooks.Get(c.ctx, c.tx, c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	d, err := webhooks.GetDelivery(c.ctx, c.tx, e.ID, c.r.PathValue("delivery"))
	if err != nil {
		return nil, err
	}
	as, err := webhooks.Attempts(c.ctx, c.tx, d.ID)
	if err != nil {
		return nil, err
	}
	// Newest attempt first: it says what happens next.
	for i, j := 0, len(as)-1; i < j; i, j = i+1, j-1 {
		as[i], as[j] = as[j], as[i]
	}
	return &result{page: "delivery", data: map[string]any{"E": e.View(), "D": webhooks.ViewDelivery(d), "Row": d,
		"Attempts": as}}, nil
}

func (s *Server) resendDelivery(c *call) (*result, error) {
	id := c.r.PathValue("id")
	d, err := webhooks.Resend(c.ctx, c.unit, id, c.r.PathValue("delivery"))
	if err != nil {
		return nil, err
	}
	return &result{redirect: Prefix + "endpoints/" + id + "/deliveries/" + d.ID + "?done=resent"}, nil
}

func (s *Server) recoverDeliveries(c *call) (*result, error) {
	id := c.r.PathValue("id")
	in := webhooks.WebhookRecoverRequest{DryRun: c.r.PostFormValue("confirm") == ""}
	var f apierr.Fields
	if t, err := c.parseLocal(c.r.PostFormValue("since")); err == nil {
		in.Since = apitime.At(t)
	} else {
		f.Add("since", apierr.InvalidTimestamp)
	}
	if v := c.r.PostFormValue("until"); v != "" {
		if t, err := c.parseLocal(v); err == nil {
			u := apitime.At(t)
			in.Until = &u
		} else {
			f.Add("until", apierr.InvalidTimestamp)
		}
	}
	err := f.Err()
	var out webhooks.WebhookRecoverTask
	if err == nil {
		out, err = webhooks.Recover(c.ctx, c.tx, id, in, c.now)
	}
	if err != nil {
		if apierr.As(err).Code != apierr.ValidationFailed {
			return nil, err
		}
		c.view.fieldErrors(err)
		e, gerr := webhooks.Get(c.ctx, c.tx, id)
		if gerr != nil {
			return nil, gerr
		}
		return &result{status: http.StatusUnprocessableEntity, page: "recover_confirm", data: map[string]any{"E": e.View(),
			"Since": c.r.PostFormValue("since"), "Until": c.r.PostFormValue("until")}}, err
	}
	if in.DryRun {
		e, err := webhooks.Get(c.ctx, c.tx, id)
		if err != nil {
			return nil, err
		}
		// The form keeps what was typed: an empty until stays "now".
		return &result{page: "recover_confirm", data: map[string]any{"E": e.View(), "T": out,
			"Since": c.r.PostFormValue("since"), "Until": c.r.PostFormValue("until")}}, nil
	}
	return &result{redirect: Prefix + "endpoints/" + id + "/recover_tasks/" + *out.ID}, nil
}

func (s *Server) showTask(c *call) (*result, error) {
	e, err := webhooks.Get(c.ctx, c.tx, c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	t, err := webhooks.GetRecoverTask(c.ctx, c.tx, e.ID, c.r.PathValue("task"))
	if err != nil {
		return nil, err
	}
	return &result{page: "task", data: map[string]any{"E": e.View(), "T": t}}, nil
}

func (s *Server) events(c *call) (*result, error) {
	return &result{page: "events", data: s.catalogue}, nil
}
