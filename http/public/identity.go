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
	p := c.P
	pg, err := page.Parse(c.Query())
	if err != nil {
		return page.List[tenant.TeamMember]{}, err
	}
	var types []string
	for _, t := range []string{tenant.TypeTechnician, tenant.TypeSeller, tenant.TypeOrgMember, tenant.TypeAssistant} {
		if p.SeesTeamType(t) {
			types = append(types, t)
		}
	}
	var out page.List[tenant.TeamMember]
	err = s.read(ctx, p, func(ctx context.Context, tx bun.Tx) error {
		var rows []tenant.Member
		if len(types) > 0 {
			q := tx.NewSelect().Model(&rows).Where("status = 'active'").Where("type IN (?)", bun.List(types))
			if err := pg.Apply(q, "id").Scan(ctx); err != nil {
				return err
			}
		}
		list := page.Wrap(pg, rows)
		out = page.List[tenant.TeamMember]{Object: "list", HasMore: list.HasMore, Data: make([]tenant.TeamMember, len(list.Data))}
		for i := range list.Data {
			out.Data[i] = list.Data[i].TeamMember()
		}
		return nil
	})
	return out, err
}

func (s *Server) listServiceOrderTypes(ctx context.Context, c *Call[any]) (page.List[orders.ServiceOrderType], error) {
	p := c.P
	pg, err := page.Parse(c.Query())
	if err != nil {
		return page.List[orders.ServiceOrderType]{}, err
	}
	var out page.List[orders.ServiceOrderType]
	err = s.read(ctx, p, func(ctx context.Context, tx bun.Tx) error {
		out, err = orders.ListTypes(ctx, tx, pg)
		return err
	})
	return out, err
}
