package tenant

import "slices"

// Role of a member (part 5.3).
type Role string

// Roles, highest first.
const (
	RoleOwner  Role = "OWNER"
	RoleAdmin  Role = "ADMIN"
	RoleMember Role = "MEMBER"
	RoleViewer Role = "VIEWER"
)

func (r Role) rank() int {
	switch r {
	case RoleOwner:
		return 4
	case RoleAdmin:
		return 3
	case RoleMember:
		return 2
	case RoleViewer:
		return 1
	}
	return 0
}

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r.rank() > 0 }

// Above reports whether r ranks above o.
func (r Role) Above(o Role) bool { return r.rank() > o.rank() }

// Lower returns the lower of two roles.
func Lower(a, b Role) Role {
	if a.rank() <= b.rank() {
		return a
	}
	return b
}

// IsManager reports OWNER or ADMIN, who go through every area.
func (r Role) IsManager() bool { return r == RoleOwner || r == RoleAdmin }

// MemberPermissions are the actions ticked per module in a member's profile.
type MemberPermissions map[string][]string

// Allows reports whether the profile ticks action on module.
func (m MemberPermissions) Allows(module, action string) bool {
	return slices.Contains(m[module], action)
}

// roleAllows is the member layer of part 5.3: managers go everywhere,
// MEMBER follows the profile, VIEWER never writes and reads what is ticked.
func roleAllows(role Role, profile MemberPermissions, module, action string) bool {
	switch role {
	case RoleOwner, RoleAdmin:
		return true
	case RoleMember:
		return profile.Allows(module, action)
	case RoleViewer:
		return action == Read && profile.Allows(module, Read)
	}
	return false
}
