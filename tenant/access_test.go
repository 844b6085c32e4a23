package tenant

import (
	"errors"
	"testing"

	"oficina/schema/apierr"
)

func principalFor(role Role, profile MemberPermissions, keyPerms ...string) *Principal {
	return &Principal{
		Key:         APIKey{Permissions: keyPerms},
		Member:      Member{Role: role, Permissions: profile, Status: "active"},
		Company:     Company{Plan: PlanSupra, APIEnabled: true, SubscriptionStatus: "active", Status: "active"},
		CreatorRole: RoleOwner,
	}
}

func code(err error) apierr.Code {
	var e *apierr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Part 5.2 and 5.3: the layers in order, and the role matrix.
func TestPermissionLayersAndRoleMatrix(t *testing.T) {
	t.Parallel()
	ticked := MemberPermissions{"sales": {"read", "create"}, "clients": {"read"}}
	for _, tc := range []struct {
		name    string
		p       *Principal
		perm    Permission
		want    apierr.Code
		company func(*Company)
	}{
		{"owner goes through every area", principalFor(RoleOwner, nil, "finance:delete"), "finance:delete", "", nil},
		{"admin goes through every area", principalFor(RoleAdmin, nil, "webhooks:create"), "webhooks:create", "", nil},
		{"member follows ticked permissions (write)", principalFor(RoleMember, ticked, "sales:create"), "sales:create", "", nil},
		{"member without the tick is refused", principalFor(RoleMember, ticked, "sales:update"), "sales:update", apierr.MemberPermissionDenied, nil},
		{"member reads what is ticked", principalFor(RoleMember, ticked, "clients:read"), "clients:read", "", nil},
		{"viewer reads what is ticked", principalFor(RoleViewer, ticked, "sales:read"), "sales:read", "", nil},
		{"viewer never writes even when ticked", principalFor(RoleViewer, ticked, "sales:create"), "sales:create", apierr.MemberPermissionDenied, nil},
		{"viewer does not read what is not ticked", principalFor(RoleViewer, ticked, "finance:read"), "finance:read", apierr.MemberPermissionDenied, nil},
		{"key lacks permission comes first", principalFor(RoleViewer, nil), "sales:create", apierr.PermissionMissing, nil},
		{"legacy leads:write counts as leads:create", principalFor(RoleOwner, nil, "leads:write"), "leads:create", "", nil},
		{"leads:create does not grant leads:read", principalFor(RoleOwner, nil, "leads:write"), "leads:read", apierr.PermissionMissing, nil},
		{"plan without API", principalFor(RoleOwner, nil, "sales:read"), "sales:read", apierr.PlanFeatureUnavailable,
			func(c *Company) { c.Plan = PlanFree }},
		{"API turned off", principalFor(RoleOwner, nil, "sales:read"), "sales:read", apierr.PlanFeatureUnavailable,
			func(c *Company) { c.APIEnabled = false }},
		{"subscription past due", principalFor(RoleOwner, nil, "sales:read"), "sales:read", apierr.SubscriptionInactive,
			func(c *Company) { c.SubscriptionStatus = "past_due" }},
		{"trialing is in good standing", principalFor(RoleOwner, nil, "sales:read"), "sales:read", "",
			func(c *Company) { c.SubscriptionStatus = "trialing" }},
		{"member layer before plan layer", principalFor(RoleViewer, nil, "sales:create"), "sales:create", apierr.MemberPermissionDenied,
			func(c *Company) { c.Plan = PlanFree }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.company != nil {
				tc.company(&tc.p.Company)
			}
			if got := code(tc.p.Require(tc.perm)); got != tc.want {
				t.Fatalf("Require(%s) = %q, want %q", tc.perm, got, tc.want)
			}
		})
	}
}

// Part 5 item 4: a key never acts above its creator's role.
func TestKeyActsNoHigherThanItsCreator(t *testing.T) {
	t.Parallel()
	p := principalFor(RoleAdmin, MemberPermissions{"sales": {"read"}}, "finance:read", "sales:read")
	p.CreatorRole = RoleViewer
	if p.Role() != RoleViewer {
		t.Fatalf("role %s", p.Role())
	}
	if got := code(p.Require("finance:read")); got != apierr.MemberPermissionDenied {
		t.Fatalf("got %q", got)
	}
	if got := code(p.Require("sales:read")); got != "" {
		t.Fatalf("got %q", got)
	}
}

// Part 5.3: GET /team shows technicians with the technicians permission,
// sellers with sales, panel members and assistants with tasks.
func TestTeamFilterFollowsMemberPermissions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		role    Role
		profile MemberPermissions
		sees    map[string]bool
	}{
		{RoleOwner, nil, map[string]bool{TypeTechnician: true, TypeSeller: true, TypeOrgMember: true, TypeAssistant: true}},
		{RoleAdmin, nil, map[string]bool{TypeTechnician: true, TypeSeller: true, TypeOrgMember: true, TypeAssistant: true}},
		{RoleMember, MemberPermissions{"technicians": {"read"}}, map[string]bool{TypeTechnician: true}},
		{RoleMember, MemberPermissions{"sales": {"read"}}, map[string]bool{TypeSeller: true}},
		{RoleViewer, MemberPermissions{"tasks": {"read"}}, map[string]bool{TypeOrgMember: true, TypeAssistant: true}},
		{RoleMember, nil, map[string]bool{}},
	} {
		p := principalFor(tc.role, tc.profile)
		for _, typ := range []string{TypeTechnician, TypeSeller, TypeOrgMember, TypeAssistant} {
			if got := p.SeesTeamType(typ); got != tc.sees[typ] {
				t.Errorf("%s %v sees %s = %v", tc.role, tc.profile, typ, got)
			}
		}
	}
}

func TestPermissionCatalogue(t *testing.T) {
	t.Parallel()
	for _, p := range []Permission{"sales:read", "team:read", "events:read", "leads:write", "leads:create"} {
		if !p.Valid() {
			t.Errorf("%s refused", p)
		}
	}
	for _, p := range []Permission{"sales:delete", "team:update", "events:create", "nope:read", "sales", ""} {
		if p.Valid() {
			t.Errorf("%s accepted", p)
		}
	}
}
