package streams_test

import (
	"testing"

	"oficina/streams"
)

// Spec 6.4: an endpoint receives a type through "*", the exact name or the
// family wildcard, and never a ping through a subscription; an operational
// event not through "*" (decision 0037).
func TestSubscriptionMatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		events      []string
		typ         string
		operational bool
		want        bool
	}{
		{[]string{"*"}, "sale.paid", false, true}, {[]string{"sale.*"}, "sale.paid", false, true},
		{[]string{"sale.paid"}, "sale.paid", false, true}, {[]string{"sale.created"}, "sale.paid", false, false},
		{[]string{"service.*"}, "service_order.updated", false, false}, {[]string{"*"}, "ping", false, false},
		{[]string{"*"}, "webhook_endpoint.disabled", true, false},
		{[]string{"webhook_endpoint.*"}, "webhook_endpoint.disabled", true, true},
		{[]string{"webhook_endpoint.disabled"}, "webhook_endpoint.disabled", true, true},
	} {
		if got := streams.Matches(tc.events, tc.typ, tc.operational); got != tc.want {
			t.Errorf("Matches(%v, %s) = %v", tc.events, tc.typ, got)
		}
	}
}
