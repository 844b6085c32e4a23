package streams_test

import (
	"fmt"
	"testing"

	"oficina/streams"
)

// Spec 6.4 and 5.4: what may be subscribed to, and which module reads a
// subscription needs (all modules with events for "*").
func TestCatalogueAndSubscriptionModules(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"*": true, "sale.paid": true, "sale.*": true, "financial_transaction.*": true, "financial_transaction.updated": true,
		"stock.changed": true, "quote.status_changed": true, "ping": false, "sale.exploded": false, "invoice.*": false,
		"*.updated": false, "": false, "sale": false,
	} {
		if streams.Subscribable(name) != ok {
			t.Errorf("Subscribable(%q) = %v", name, !ok)
		}
	}
	for _, tc := range []struct {
		events []string
		want   string
	}{
		{[]string{"sale.*"}, "[sales]"},
		{[]string{"sale.paid", "sale.created"}, "[sales]"},
		{[]string{"financial_transaction.*", "stock.changed"}, "[finance products]"},
		{[]string{"*"}, "[clients finance products quotes sales service_orders services tasks]"},
	} {
		if got := fmt.Sprint(streams.SubscriptionModules(tc.events)); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.events, got, tc.want)
		}
	}
	for _, tc := range []struct {
		events []string
		typ    string
		want   bool
	}{
		{[]string{"*"}, "sale.paid", true}, {[]string{"sale.*"}, "sale.paid", true}, {[]string{"sale.paid"}, "sale.paid", true},
		{[]string{"sale.created"}, "sale.paid", false}, {[]string{"service.*"}, "service_order.updated", false},
		{[]string{"*"}, "ping", false},
	} {
		if got := streams.Matches(tc.events, tc.typ); got != tc.want {
			t.Errorf("Matches(%v, %s) = %v", tc.events, tc.typ, got)
		}
	}
	for _, name := range streams.Catalogue() {
		if streams.ModuleOf(name) == "" {
			t.Errorf("%s has no module", name)
		}
	}
}
