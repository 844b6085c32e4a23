// Package events is the one table of event types. Each module declares its
// events (names as constants, described by an exported list of
// streams.EventType); this package, above the modules, assembles them with
// the family → permission module table. Subscription validation
// (schema/webhooks), the subscription permissions (http/public), dispatch's
// access check before each send, docs/events.md and the OpenAPI webhooks
// section all read it — schema/webhooks, which the table imports, through
// schema/eventnames, generated here — so a name is subscribable exactly
// when a module declares it.
package events

import (
	"cmp"
	"slices"
	"sync"

	"oficina/schema/clients"
	"oficina/schema/eventnames"
	"oficina/schema/finance"
	"oficina/schema/ids"
	"oficina/schema/orders"
	"oficina/schema/products"
	"oficina/schema/quotes"
	"oficina/schema/sales"
	"oficina/schema/tasks"
	"oficina/schema/webhooks"
	"oficina/streams"
)

//go:generate go run ./internal/gen

// Families lists the event families and the module each needs, sorted by
// name: the table's second half. Stock movements belong to the products
// module; financial entries to finance; the operational families, about
// the webhooks themselves, to webhooks, and "*" leaves them out
// (decision 0037).
func Families() []eventnames.Family {
	return []eventnames.Family{
		{Name: "client", Module: "clients"},
		{Name: "financial_transaction", Module: "finance"},
		{Name: "product", Module: "products"},
		{Name: "quote", Module: "quotes"},
		{Name: "sale", Module: "sales"},
		{Name: "service", Module: "services"},
		{Name: "service_order", Module: "service_orders"},
		{Name: "stock", Module: "products"},
		{Name: "task", Module: "tasks"},
		{Name: "webhook_delivery", Module: "webhooks", Operational: true},
		{Name: "webhook_endpoint", Module: "webhooks", Operational: true},
	}
}

// Ping is the event POST /webhook_endpoints/{id}/ping sends to that endpoint
// only. It is not subscribable, not in Catalogue and never on EVENTS.
var Ping = streams.EventType{
	Name: streams.PingType, Kind: "ping", Object: streams.PingObject{Object: streams.PingType, WebhookEndpointID: ids.Example("we", 1)},
	Summary: "Sent by POST /webhook_endpoints/{id}/ping to that endpoint only, to test it; it carries no company record.",
}

// table is the assembled catalogue, built once.
var table = sync.OnceValue(func() catalogue {
	var all []streams.EventType
	for _, list := range [][]streams.EventType{
		clients.EventTypes(), finance.EventTypes(), orders.EventTypes(), products.EventTypes(),
		quotes.EventTypes(), sales.EventTypes(), tasks.EventTypes(), webhooks.EventTypes(),
	} {
		all = append(all, list...)
	}
	slices.SortFunc(all, func(a, b streams.EventType) int { return cmp.Compare(a.Name, b.Name) })
	c := catalogue{types: all, byName: make(map[string]streams.EventType, len(all))}
	for _, t := range all {
		c.byName[t.Name] = t
	}
	return c
})

type catalogue struct {
	types  []streams.EventType
	byName map[string]streams.EventType
}

// Catalogue returns every subscribable event type, sorted by name.
func Catalogue() []streams.EventType {
	return slices.Clone(table().types)
}

// Lookup returns the catalogued event type of that name.
func Lookup(name string) (streams.EventType, bool) {
	t, ok := table().byName[name]
	return t, ok
}

// The name-level answers below come from schema/eventnames, generated from
// this table for schema/webhooks, which the table imports (decision 0037):
// every package asks the same data, and TestTheGeneratedNamesAreTheTables
// fails when it and the table differ.

// Names returns the subscribable event names, sorted.
func Names() []string { return eventnames.Names() }

// Subscribable reports whether name may appear in an endpoint's events:
// "*", a catalogued name, or a family wildcard such as "sale.*".
func Subscribable(name string) bool { return eventnames.Subscribable(name) }

// ModuleOf is the permission module of an event type or subscription name
// ("sale.paid" and "sale.*" are both "sales"); "" when it has none (ping).
func ModuleOf(name string) string { return eventnames.ModuleOf(name) }

// Operational reports whether name is of an operational family.
func Operational(name string) bool { return eventnames.Operational(name) }

// SubscriptionModules are the modules whose read access a subscription to
// names needs, sorted and without duplicates: for "*", every module with
// events but the operational families' (spec 5.4: "all modules for *").
func SubscriptionModules(names []string) []string { return eventnames.SubscriptionModules(names) }
