package tenant

import (
	"slices"

	"oficina/schema/apitime"
)

// Values are the permissions a key may hold (part 5.1), the legacy
// leads:write included, so the API's permission lists are an enum.
func (Permission) Values() []string { return append(AllPermissions(), string(LegacyLeadsWrite)) }

// TeamMemberType is a team member's type (2.4).
type TeamMemberType string

// Values are the member types.
func (TeamMemberType) Values() []string { return slices.Clone(memberTypes) }

// Me is GET /me (2.2): the key's company, the key and the company's limits.
type Me struct {
	Object       string         `json:"object" const:"me"`
	Organization MeOrganization `json:"organization"`
	Key          MeKey          `json:"key"`
	Limits       MeLimits       `json:"limits"`
}

// MeOrganization is the company of the key.
type MeOrganization struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Timezone string `json:"timezone" doc:"IANA time zone name of the company."`
	Currency string `json:"currency" doc:"ISO 4217 code of every money member."`
}

// MeKey describes the calling key.
type MeKey struct {
	ID          string        `json:"id"`
	Name        string        `json:"name"`
	Prefix      string        `json:"prefix" doc:"The key's first characters, as lists show it."`
	Permissions []Permission  `json:"permissions" doc:"Exactly the permissions the key has."`
	ExpiresAt   *apitime.Time `json:"expires_at" doc:"Expiry of the key; null when it does not expire."`
	CreatedAt   apitime.Time  `json:"created_at"`
}

// MeLimits are the company's limits.
type MeLimits struct {
	RequestsPerMinute *int `json:"requests_per_minute" doc:"The per-minute ceiling; null when the company has none."`
}

// Me renders the principal as GET /me answers.
func (p *Principal) Me() Me {
	var exp *apitime.Time
	if p.Key.ExpiresAt != nil {
		exp = new(apitime.At(*p.Key.ExpiresAt))
	}
	perms := p.KeyPermissions()
	out := make([]Permission, len(perms))
	for i, s := range perms {
		out[i] = Permission(s)
	}
	return Me{
		Object: "me",
		Organization: MeOrganization{ID: p.Company.ID, Name: p.Company.Name,
			Timezone: p.Company.Timezone, Currency: p.Company.Currency},
		Key: MeKey{ID: p.Key.ID, Name: p.Key.Name, Prefix: p.Key.DisplayPrefix,
			Permissions: out, ExpiresAt: exp, CreatedAt: apitime.At(p.Key.CreatedAt)},
		Limits: MeLimits{RequestsPerMinute: p.Company.RequestsPerMinute()},
	}
}

// TeamMember is an entry of GET /team (2.4).
type TeamMember struct {
	Object string         `json:"object" const:"team_member"`
	ID     string         `json:"id"`
	Name   string         `json:"name"`
	Type   TeamMemberType `json:"type"`
}

// TeamMember renders a member as GET /team lists it.
func (m *Member) TeamMember() TeamMember {
	return TeamMember{Object: "team_member", ID: m.ID, Name: m.Name, Type: TeamMemberType(m.Type)}
}
