package public

import (
	"context"
	"net/http"

	"github.com/uptrace/bun"

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
		query: pageParams(
			query[[]string]("type", "Only events of these types: names of the catalogue or family wildcards such as "+
				"`sale.*`; repeat the parameter for several (up to 20)."),
			timestampQuery("created_after", "Only events whose `timestamp` is at or after this time."),
			timestampQuery("created_before", "Only events whose `timestamp` is before this time."),
			query[string]("object_id", "Only events about this record (`data.object.id`, e.g. `sal_…`)."),
			query[bool]("delivery_success", "`false`: events some endpoint has not received; `true`: events every "+
				"endpoint they were sent to received."))},
		s.listEvents)
	handle(s, http.MethodGet, "/events/{id}", need("events:read"), op{id: "getEvent", tag: tg, summary: "Read an event",
		desc: "The event exactly as its webhooks deliver it." + reads}, s.getEvent)
	s.streamRoutes()
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
