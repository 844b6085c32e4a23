package public

import (
	"context"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/uptrace/bun"

	"oficina/http/openapi"
	"oficina/schema/events"
	"oficina/schema/page"
	"oficina/tenant"
)

// eventRoutes registers the events log (decision 0035).
func (s *Server) eventRoutes() {
	const tg = "events"
	reads := " A key sees the events of the modules it may read (`<module>:read`, and its member's access), as a " +
		"subscription would; the others are not listed, and reading one by id is 404."
	handle(s, http.MethodGet, "/events", need("events:read"), op{id: "listEvents", tag: tg, summary: "List events",
		desc: "Every event of the company, whether or not an endpoint subscribed, as its webhooks deliver it, newest " +
			"first (by `timestamp`, then `id`); kept 30 days. `delivery_success=false` lists the events some endpoint " +
			"has not received yet (pending or failed; a successful resend counts): what to catch up on after an " +
			"outage." + reads,
		query: append([]openapi.Param{limitParam(),
			patterned("starting_after", "Cursor: the `id` of the last event of the previous page (an event the key "+
				"reads, else 400).", events.IDPattern)},
			typeFilter("Only events of these types: names of the catalogue or family wildcards such as "+
				"`sale.*`; repeat the parameter for several (up to 20)."),
			timestampQuery("created_after", "Only events whose `timestamp` is at or after this time."),
			timestampQuery("created_before", "Only events whose `timestamp` is before this time."),
			patterned("object_id", "Only events about this record (`data.object.id`, e.g. `sal_…`).", events.ObjectIDPattern),
			query[bool]("delivery_success", "`false`: events some endpoint has not received; `true`: events every "+
				"endpoint they were sent to received."))},
		s.listEvents)
	handle(s, http.MethodGet, "/events/{id}", need("events:read"), op{id: "getEvent", tag: tg, summary: "Read an event",
		desc: "The event exactly as its webhooks deliver it." + reads}, s.getEvent)
	s.streamRoutes()
}

// typeFilter is the type filter of GET /events and its stream: up to
// events.MaxTypes names or family wildcards, stated as a pattern so that
// generated clients keep it a list of strings.
func typeFilter(desc string) openapi.Param {
	maxTypes := uint64(events.MaxTypes)
	return openapi.Param{Name: "type", Description: desc, Schema: &openapi3.Schema{Type: &openapi3.Types{"array"},
		MaxItems: &maxTypes, Items: openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"},
			Pattern: events.TypeFilterPattern()})}}
}

// eventsVisible are the event types p may read.
func eventsVisible(p *tenant.Principal) []string { return events.Visible(events.PrincipalReads(p)) }

func (s *Server) listEvents(ctx context.Context, c *Call[any]) (page.List[events.Event], error) {
	return filteredList(ctx, s, c, events.ParseFilter, func(ctx context.Context, tx bun.Tx, p *tenant.Principal, pg page.Params,
		f events.Filter) (page.List[events.Event], error) {
		return events.List(ctx, tx, p.CompanyID(), eventsVisible(p), pg, f)
	})
}

func (s *Server) getEvent(ctx context.Context, c *Call[any]) (events.Event, error) {
	var out events.Event
	err := s.read(ctx, c.P, func(ctx context.Context, tx bun.Tx) error {
		var err error
		out, err = events.Get(ctx, tx, c.P.CompanyID(), eventsVisible(c.P), c.Path("id"))
		return err
	})
	return out, err
}
