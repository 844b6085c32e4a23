package webhooks_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"oficina/schema/webhooks"
	"oficina/streams/envelope"
)

// Issue 26 item 6: the delivery log's event_id filter in the OpenAPI
// document (FilterEventIDPattern) takes what ParseDeliveryFilter takes: an
// event id (envelope.EventIDPattern) or nothing.
func TestFilterEventIDPatternIsParseDeliveryFilters(t *testing.T) {
	t.Parallel()
	re, id := regexp.MustCompile(webhooks.FilterEventIDPattern), regexp.MustCompile(envelope.EventIDPattern)
	for _, v := range []string{"", "evt_" + strings.Repeat("0a", 16), "evt_" + strings.Repeat("0A", 16), "evt_" + strings.Repeat("a", 31),
		"evt_" + strings.Repeat("a", 33), "evt", "sal_01", " "} {
		_, err := webhooks.ParseDeliveryFilter(url.Values{"event_id": {v}})
		if re.MatchString(v) != (err == nil) || v != "" && re.MatchString(v) != id.MatchString(v) {
			t.Errorf("%q: pattern %v, ParseDeliveryFilter %v", v, re.MatchString(v), err)
		}
	}
}

// The event_type filter takes the event types the document lists (the
// catalogue and ping) and nothing else, as GET /events' type does.
func TestEventTypeFilterIsTheDocumentsEnum(t *testing.T) {
	t.Parallel()
	for _, v := range append(webhooks.EventType("").Values(), "", "sale.*", "*", "nothing.created", "Sale.created") {
		_, err := webhooks.ParseDeliveryFilter(url.Values{"event_type": {v}})
		listed := v == "" || strings.Contains(strings.Join(webhooks.EventType("").Values(), "\n")+"\n", v+"\n")
		if listed != (err == nil) {
			t.Errorf("%q: listed %v, ParseDeliveryFilter %v", v, listed, err)
		}
	}
}
