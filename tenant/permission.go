package tenant

import (
	"slices"
	"strings"
)

// Permission is "module:action" (part 5.1).
type Permission string

// Actions.
const (
	Read   = "read"
	Create = "create"
	Update = "update"
	Delete = "delete"
)

// Modules lists each key module and its actions (part 5.1's table).
var Modules = map[string][]string{
	"clients":        {Read, Create, Update, Delete},
	"leads":          {Read, Create},
	"service_orders": {Read, Create, Update, Delete},
	"quotes":         {Read, Create, Update, Delete},
	"sales":          {Read, Create, Update},
	"finance":        {Read, Create, Update, Delete},
	"appointments":   {Read, Create, Update, Delete},
	"products":       {Read, Create, Update, Delete},
	"services":       {Read, Create, Update, Delete},
	"tasks":          {Read, Create, Update, Delete},
	"team":           {Read},
	"webhooks":       {Read, Create, Update, Delete},
	"events":         {Read},
}

// MemberModules are the modules of a member's profile: the key modules plus
// "technicians", which the dashboard ticks separately and GET /team reads.
func MemberModules() []string {
	out := make([]string, 0, len(Modules)+1)
	for m := range Modules {
		out = append(out, m)
	}
	out = append(out, "technicians")
	slices.Sort(out)
	return out
}

// LegacyLeadsWrite is the first API version's name of leads:create (part 9).
const LegacyLeadsWrite Permission = "leads:write"

// Perm builds a permission.
func Perm(module, action string) Permission { return Permission(module + ":" + action) }

// Split returns the module and action.
func (p Permission) Split() (module, action string) {
	m, a, _ := strings.Cut(string(p), ":")
	return m, a
}

// Valid reports whether p is in the catalogue (legacy leads:write included).
func (p Permission) Valid() bool {
	if p == LegacyLeadsWrite {
		return true
	}
	m, a := p.Split()
	return slices.Contains(Modules[m], a)
}

// canonical maps legacy names to their current meaning.
func (p Permission) canonical() Permission {
	if p == LegacyLeadsWrite {
		return "leads:create"
	}
	return p
}

// AllPermissions lists every current permission (legacy names excluded),
// sorted: the demo and benchmark keys hold them all.
func AllPermissions() []string {
	var out []string
	for m, actions := range Modules {
		for _, a := range actions {
			out = append(out, m+":"+a)
		}
	}
	slices.Sort(out)
	return out
}
