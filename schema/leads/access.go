package leads

import (
	"oficina/schema/apierr"
	"oficina/tenant"
)

// Permissions of a capture (spec 5.4, first item).
const (
	PermCreate      tenant.Permission = "leads:create" // legacy leads:write counts
	PermTaskCreate  tenant.Permission = "tasks:create"
	PermRead        tenant.Permission = "leads:read"
	PermClientsRead tenant.Permission = "clients:read"
)

// Authorize runs the permission layers of a capture in the order of part
// 5.2, before anything is written: the key needs leads:create, plus
// tasks:create when a task opens (else 403 permission_missing); the member
// needs clients create access, plus tasks create access when a task opens
// (else 403 member_permission_denied — a lead is a client record, so the
// member layer is the clients module's, not a separate leads one); then the
// plan and subscription.
func Authorize(p *tenant.Principal, opensTask bool) error {
	if !p.HasKeyPermission(PermCreate) || (opensTask && !p.HasKeyPermission(PermTaskCreate)) {
		return apierr.New(apierr.PermissionMissing)
	}
	if !p.MemberAllows("clients", tenant.Create) || (opensTask && !p.MemberAllows("tasks", tenant.Create)) {
		return apierr.New(apierr.MemberPermissionDenied)
	}
	return p.RequireAPIAccess()
}

// SeesRecord reports whether the answer may show the record and the task in
// full: the key holds leads:read or clients:read (spec 4.5) and the member
// may read that module too, so the capture never shows what GET
// /clients/{id} would refuse. Otherwise both come with only object and id.
func SeesRecord(p *tenant.Principal) bool {
	return (p.HasKeyPermission(PermRead) && p.MemberAllows("leads", tenant.Read)) ||
		(p.HasKeyPermission(PermClientsRead) && p.MemberAllows("clients", tenant.Read))
}
