package streams_test

import (
	"testing"

	"oficina/streams"
)

// Spec 6.4: an endpoint receives a type through "*", the exact name or the
// family wildcard, and never a ping through a subscription.
func TestSubscriptionMatches(t *testing.T) {
	t.Parallel()
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
}
