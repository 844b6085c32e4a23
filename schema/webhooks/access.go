package webhooks

import (
	"oficina/schema/apierr"
	"oficina/schema/eventnames"
	"oficina/tenant"
)

// RequireManager is the owner/admin rule of spec 4.6, for every webhook
// operation of an API key (reads included) and of a portal session.
func RequireManager(p *tenant.Principal) error {
	if !p.Role().IsManager() {
		return apierr.New(apierr.MemberPermissionDenied)
	}
	return nil
}

// PrincipalAccess authorizes subscribing an API key's principal to events,
// in the order of part 5.2: the key's <module>:read permissions, the
// owner/admin role, then the member and plan layers.
func PrincipalAccess(p *tenant.Principal) Access {
	return func(names []string) error {
		perms := make([]tenant.Permission, 0, 8)
		for _, m := range eventnames.SubscriptionModules(names) {
			perms = append(perms, tenant.Perm(m, tenant.Read))
		}
		for _, perm := range perms {
			if !p.HasKeyPermission(perm) {
				return apierr.New(apierr.PermissionMissing)
			}
		}
		if err := RequireManager(p); err != nil {
			return err
		}
		return p.Require(perms...)
	}
}

// MemberAccess authorizes a member acting in the dashboard (or through a
// session the dashboard opened): owners and admins read every module.
func MemberAccess(m *tenant.Member) Access {
	return func([]string) error {
		if m.Status != "active" || !m.Role.IsManager() {
			return apierr.New(apierr.MemberPermissionDenied)
		}
		return nil
	}
}
