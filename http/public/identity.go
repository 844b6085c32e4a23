package public

import (
	"context"

	"github.com/uptrace/bun"

	"oficina/schema/orders"
	"oficina/schema/page"
	"oficina/tenant"
)

func (s *Server) getMe(ctx context.Context, c *Call[any]) (tenant.Me, error) {
	return c.P.Me(), nil
}

func (s *Server) listTeam(ctx context.Context, c *Call[any]) (page.List[tenant.TeamMember], error) {
	return filteredList(ctx, s, c, page.ParseSync, func(ctx context.Context, tx bun.Tx, p *tenant.Principal, pg page.Params,
		sync page.Sync) (page.List[tenant.TeamMember], error) {
		return team(ctx, tx, p, pg, sync)
	})
}

// team is the page of active members p sees (GET /team).
func team(ctx context.Context, tx bun.Tx, p *tenant.Principal, pg page.Params, sync page.Sync) (page.List[tenant.TeamMember], error) {
	var types []string
	for _, t := range []string{tenant.TypeTechnician, tenant.TypeSeller, tenant.TypeOrgMember, tenant.TypeAssistant} {
		if p.SeesTeamType(t) {
			types = append(types, t)
		}
	}
	var rows []tenant.Member
	if len(types) > 0 {
		q := tx.NewSelect().Model(&rows).Where("status = 'active'").Where("type IN (?)", bun.List(types))
		if err := pg.Apply(sync.Apply(q, "created_at", "updated_at"), "id").Scan(ctx); err != nil {
			return page.List[tenant.TeamMember]{}, err
		}
	}
	list := page.Wrap(pg, rows)
	out := page.List[tenant.TeamMember]{Object: "list", HasMore: list.HasMore, Data: make([]tenant.TeamMember, len(list.Data))}
	for i := range list.Data {
		out.Data[i] = list.Data[i].TeamMember()
	}
	return out, nil
}

func (s *Server) listServiceOrderTypes(ctx context.Context, c *Call[any]) (page.List[orders.ServiceOrderType], error) {
	return filteredList(ctx, s, c, page.ParseSync, func(ctx context.Context, tx bun.Tx, _ *tenant.Principal, pg page.Params,
		sync page.Sync) (page.List[orders.ServiceOrderType], error) {
		return orders.ListTypes(ctx, tx, pg, sync)
	})
}
