package tenant

import (
	"net/netip"
	"slices"
	"time"

	"oficina/schema/apierr"
)

// Principal is an authenticated caller: the key, the member it acts as, the
// company, and the role of whoever created the key (a key never acts above
// its creator's role).
type Principal struct {
	Key         APIKey
	Member      Member
	Company     Company
	CreatorRole Role

	cidrs []netip.Prefix
	gen   uint64
}

// CompanyID is the caller's company.
func (p *Principal) CompanyID() string { return p.Company.ID }

// Role is the role the key acts with: the member's, capped by the creator's.
func (p *Principal) Role() Role { return Lower(p.Member.Role, p.CreatorRole) }

// usable reports whether the principal may authenticate now from ip. Every
// cause of failure is the same to the caller (uniform 401).
func (p *Principal) usable(now time.Time, ip netip.Addr) bool {
	if !p.Key.Active(now) || p.Member.Status != "active" || p.Company.Status != "active" {
		return false
	}
	if len(p.cidrs) == 0 {
		return true
	}
	ip = ip.Unmap()
	for _, c := range p.cidrs {
		if c.Contains(ip) {
			return true
		}
	}
	return false
}

// HasKeyPermission reports whether the key itself holds perm; leads:write
// counts as leads:create.
func (p *Principal) HasKeyPermission(perm Permission) bool {
	for _, have := range p.Key.Permissions {
		if Permission(have).canonical() == perm {
			return true
		}
	}
	return false
}

// MemberAllows is the member layer for module/action.
func (p *Principal) MemberAllows(module, action string) bool {
	return roleAllows(p.Role(), p.Member.Permissions, module, action)
}

// Require runs the layers of part 5.2 in order for each permission: key
// permission, member role and permissions, plan, subscription. Handlers call
// it for the extra permissions an operation needs (5.4) before writing.
func (p *Principal) Require(perms ...Permission) error {
	for _, perm := range perms {
		if !p.HasKeyPermission(perm) {
			return apierr.New(apierr.PermissionMissing)
		}
	}
	for _, perm := range perms {
		m, a := perm.Split()
		if !p.MemberAllows(m, a) {
			return apierr.New(apierr.MemberPermissionDenied)
		}
	}
	return p.RequireAPIAccess()
}

// RequireAPIAccess is the plan and subscription layers alone (GET /me needs
// only a valid key, but a company without the API still cannot use it).
func (p *Principal) RequireAPIAccess() error { return p.Company.RequireAPIAccess() }

// RequireMemberAccess checks only the member layer (e.g. "the member needs
// access to quotes").
func (p *Principal) RequireMemberAccess(module, action string) error {
	if !p.MemberAllows(module, action) {
		return apierr.New(apierr.MemberPermissionDenied)
	}
	return nil
}

// SeesTeamType is the GET /team filter of part 5.3.
func (p *Principal) SeesTeamType(memberType string) bool {
	if p.Role().IsManager() {
		return true
	}
	module := map[string]string{
		TypeTechnician: "technicians",
		TypeSeller:     "sales",
		TypeOrgMember:  "tasks",
		TypeAssistant:  "tasks",
	}[memberType]
	return module != "" && p.MemberAllows(module, Read)
}

// KeyPermissions returns exactly the permissions the key has, sorted.
func (p *Principal) KeyPermissions() []string {
	out := slices.Clone(p.Key.Permissions)
	slices.Sort(out)
	return out
}
