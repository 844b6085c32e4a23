package public

import (
	"context"

	"github.com/go-fuego/fuego"
	"github.com/uptrace/bun"

	"oficina/schema/apitime"
	"oficina/schema/orders"
	"oficina/schema/page"
	"oficina/tenant"
)

// Me is GET /me (2.2).
type Me struct {
	Object       string         `json:"object"`
	Organization MeOrganization `json:"organization"`
	Key          MeKey          `json:"key"`
	Limits       MeLimits       `json:"limits"`
}

// MeOrganization is the company of the key.
type MeOrganization struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Timezone string `json:"timezone"`
	Currency string `json:"currency"`
}

// MeKey describes the calling key.
type MeKey struct {
	ID          string        `json:"id"`
	Name        string        `json:"name"`
	Prefix      string        `json:"prefix"`
	Permissions []string      `json:"permissions"`
	ExpiresAt   *apitime.Time `json:"expires_at"`
	CreatedAt   apitime.Time  `json:"created_at"`
}

// MeLimits are the company's limits.
type MeLimits struct {
	RequestsPerMinute *int `json:"requests_per_minute"`
}

func (s *Server) getMe(c fuego.ContextNoBody) (Me, error) {
	p := principal(c.Context())
	var exp *apitime.Time
	if p.Key.ExpiresAt != nil {
		t := apitime.At(*p.Key.ExpiresAt)
		exp = &t
	}
	return Me{
		Object: "me",
		Organization: MeOrganization{ID: p.Company.ID, Name: p.Company.Name,
			Timezone: p.Company.Timezone, Currency: p.Company.Currency},
		Key: MeKey{ID: p.Key.ID, Name: p.Key.Name, Prefix: p.Key.DisplayPrefix,
			Permissions: p.KeyPermissions(), ExpiresAt: exp, CreatedAt: apitime.At(p.Key.CreatedAt)},
		Limits: MeLimits{RequestsPerMinute: p.Company.RequestsPerMinute()},
	}, nil
}

// TeamMember is an entry of GET /team (2.4).
type TeamMember struct {
	Object string `json:"object"`
	ID     string `json:"id"`
	Name   string `json:"name"`
	Type   string `json:"type"`
}

func (s *Server) listTeam(c fuego.ContextNoBody) (page.List[TeamMember], error) {
	p := principal(c.Context())
	pg, err := page.Parse(c.Request().URL.Query())
	if err != nil {
		return page.List[TeamMember]{}, err
	}
	var types []string
	for _, t := range []string{tenant.TypeTechnician, tenant.TypeSeller, tenant.TypeOrgMember, tenant.TypeAssistant} {
		if p.SeesTeamType(t) {
			types = append(types, t)
		}
	}
	var out page.List[TeamMember]
	err = s.tx(c.Context(), p, func(ctx context.Context, tx bun.Tx) error {
		var rows []tenant.Member
		if len(types) > 0 {
			q := tx.NewSelect().Model(&rows).Where("status = 'active'").Where("type IN (?)", bun.In(types))
			if err := pg.Apply(q, "id").Scan(ctx); err != nil {
				return err
			}
		}
		list := page.Wrap(pg, rows)
		out = page.List[TeamMember]{Object: "list", HasMore: list.HasMore, Data: make([]TeamMember, len(list.Data))}
		for i, m := range list.Data {
			out.Data[i] = TeamMember{Object: "team_member", ID: m.ID, Name: m.Name, Type: m.Type}
		}
		return nil
	})
	return out, err
}

func (s *Server) listServiceOrderTypes(c fuego.ContextNoBody) (page.List[orders.ServiceOrderType], error) {
	p := principal(c.Context())
	pg, err := page.Parse(c.Request().URL.Query())
	if err != nil {
		return page.List[orders.ServiceOrderType]{}, err
	}
	var out page.List[orders.ServiceOrderType]
	err = s.tx(c.Context(), p, func(ctx context.Context, tx bun.Tx) error {
		out, err = orders.ListTypes(ctx, tx, pg)
		return err
	})
	return out, err
}
