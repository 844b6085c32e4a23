// Package eventnames answers what a subscription may name: the event
// table's names, its families and the permission module each family needs,
// as data generated from the table (oficina/schema/events) by
// `go generate ./schema/events`.
//
// The table is assembled from the modules' declarations, and one of those
// modules, schema/webhooks, declares the webhook families whose data.object
// are its endpoint and delivery views — while its endpoints subscribe to
// the table's names. Go forbids the import cycle that would follow, so the
// names come down here, below every module, and schema/events answers
// through this package too: one answer everywhere, and a test of
// schema/events fails when this data and the modules' declarations differ
// (decision 0037).
package eventnames

import (
	"slices"
	"strings"

	"oficina/streams"
)

// Family is an event family (the part of a name before the dot) and the
// permission module whose read access its subscribers need (spec 5.4, 6.3
// rule 6).
type Family struct {
	Name   string // "stock"
	Module string // "products"
	// Operational marks the families about the webhooks themselves
	// (webhook_endpoint, webhook_delivery): "*" does not subscribe to them
	// nor needs their module; only their names and wildcards do
	// (decision 0037).
	Operational bool
}

// Families lists the event families, sorted by name.
func Families() []Family { return slices.Clone(families) }

// Names returns the catalogued event names, sorted.
func Names() []string { return slices.Clone(names) }

// Catalogued reports whether name is an event type of the table.
func Catalogued(name string) bool {
	_, ok := slices.BinarySearch(names, name)
	return ok
}

// known returns the family named f.
func known(f string) (Family, bool) {
	i, ok := slices.BinarySearchFunc(families, f, func(x Family, f string) int { return strings.Compare(x.Name, f) })
	if !ok {
		return Family{}, false
	}
	return families[i], true
}

// WildcardFamily returns the family a wildcard such as "sale.*" names, if
// it is one of the table's.
func WildcardFamily(name string) (string, bool) {
	f, ok := strings.CutSuffix(name, ".*")
	if !ok {
		return "", false
	}
	_, ok = known(f)
	return f, ok
}

// Subscribable reports whether name may appear in an endpoint's events:
// "*", a catalogued name, or a family wildcard such as "sale.*".
func Subscribable(name string) bool {
	if name == streams.SubscribeAll || Catalogued(name) {
		return true
	}
	_, ok := WildcardFamily(name)
	return ok
}

// ModuleOf is the permission module of an event type or subscription name
// ("sale.paid" and "sale.*" are both "sales"); "" when it has none (ping).
func ModuleOf(name string) string {
	f, _ := known(streams.Family(name))
	return f.Module
}

// Operational reports whether name (an event type or a family wildcard)
// is of an operational family.
func Operational(name string) bool {
	f, _ := known(streams.Family(name))
	return f.Operational
}

// SubscriptionModules are the modules whose read access a subscription to
// names needs, sorted and without duplicates: for "*", every module with
// events but the operational families' (spec 5.4: "all modules for *";
// "*" does not subscribe to those).
func SubscriptionModules(names []string) []string {
	var out []string
	for _, n := range names {
		if n == streams.SubscribeAll {
			out = out[:0]
			for _, f := range families {
				if !f.Operational {
					out = append(out, f.Module)
				}
			}
			break
		}
		if m := ModuleOf(n); m != "" {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
