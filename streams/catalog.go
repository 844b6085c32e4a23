package streams

import (
	"maps"
	"slices"
	"strings"
)

// PingType is the event sent by POST /webhook_endpoints/{id}/ping. It is
// delivered to that endpoint only, never on the EVENTS firehose, and cannot
// be subscribed to.
const PingType = "ping"

// SubscribeAll is the subscription to every event, later additions included.
const SubscribeAll = "*"

// familyModules maps each event family (the part of the type before the
// dot) to the permission module whose read access a subscriber needs (spec
// 5.4, 6.3 rule 6). Stock movements belong to the products module.
var familyModules = map[string]string{
	"client":                "clients",
	"financial_transaction": "finance",
	"product":               "products",
	"quote":                 "quotes",
	"sale":                  "sales",
	"service":               "services",
	"service_order":         "service_orders",
	"stock":                 "products",
	"task":                  "tasks",
}

// catalogue lists the event names that can be subscribed to one by one
// (spec 6.4, completed with the names the modules emit). A module adding
// an event adds its name here; "*" and "<family>.*" subscriptions receive
// it without any change on the endpoint.
var catalogue = map[string]bool{
	"client.created": true, "client.updated": true, "client.deleted": true,
	"financial_transaction.created": true, "financial_transaction.updated": true,
	"financial_transaction.deleted": true, "financial_transaction.paid": true,
	"product.created": true, "product.updated": true, "product.deleted": true,
	"quote.created": true, "quote.updated": true, "quote.status_changed": true, "quote.deleted": true,
	"sale.created": true, "sale.updated": true, "sale.paid": true, "sale.payment_registered": true,
	"sale.payment_canceled": true, "sale.canceled": true,
	"service.created": true, "service.updated": true, "service.deleted": true,
	"service_order.created": true, "service_order.updated": true, "service_order.status_changed": true,
	"service_order.deleted": true,
	"stock.changed":         true,
	"task.created":          true, "task.updated": true, "task.deleted": true,
}

// Catalogue returns the subscribable event names, sorted.
func Catalogue() []string {
	return slices.Sorted(maps.Keys(catalogue))
}

// Family is the part of an event type before its first dot ("sale" for
// "sale.paid").
func Family(eventType string) string {
	f, _, _ := strings.Cut(eventType, ".")
	return f
}

// Subscribable reports whether name may appear in an endpoint's events:
// "*", a catalogue name, or a family wildcard such as "sale.*".
func Subscribable(name string) bool {
	if name == SubscribeAll || catalogue[name] {
		return true
	}
	fam, ok := strings.CutSuffix(name, ".*")
	_, known := familyModules[fam]
	return ok && known
}

// ModuleOf is the permission module of an event type or subscription name
// ("sale.paid" and "sale.*" are both "sales"); "" when it has none.
func ModuleOf(name string) string {
	return familyModules[Family(name)]
}

// SubscriptionModules are the modules whose read access a subscription to
// names needs, sorted and without duplicates: every module with events for
// "*" (spec 5.4: "all modules for *").
func SubscriptionModules(names []string) []string {
	var out []string
	for _, n := range names {
		if n == SubscribeAll {
			out = slices.AppendSeq(out[:0], maps.Values(familyModules))
			break
		}
		if m := ModuleOf(n); m != "" {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// subscriptionKeys are the entries of webhook_endpoints.events that receive
// an event of type t: "*", t itself and its family wildcard.
func subscriptionKeys(t string) []string {
	return []string{SubscribeAll, t, Family(t) + ".*"}
}

// Matches reports whether an endpoint subscribed to events receives type t.
func Matches(events []string, t string) bool {
	if t == PingType {
		return false
	}
	for _, k := range subscriptionKeys(t) {
		if slices.Contains(events, k) {
			return true
		}
	}
	return false
}
