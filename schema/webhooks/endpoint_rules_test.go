package webhooks_test

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"oficina/ops/testkit"
	"oficina/schema/webhooks"
	"oficina/streams"
)

// Issue 26 item 6: an endpoint's events list in the OpenAPI document is
// NormalizeEvents' (one at least, "*" alone), its URL and description
// lengths the validators' (checkURL, checkDescription).
func TestDocumentedEndpointRulesAreTheValidators(t *testing.T) {
	t.Parallel()
	testkit.Tags(t, map[string]map[string]string{
		"events":      {"minItems": "1", "alone": streams.SubscribeAll},
		"url":         {"minLength": "1", "maxLength": strconv.Itoa(webhooks.MaxURLLength), "pattern": "nonblank"},
		"description": {"maxLength": strconv.Itoa(webhooks.MaxDescriptionLength)},
	}, reflect.TypeFor[webhooks.WebhookEndpointCreate](), reflect.TypeFor[webhooks.WebhookEndpointUpdate]())
	for names, ok := range map[string]bool{"": false, "*": true, "*,sale.*": false, "sale.*,*": false, "sale.*,client.created": true} {
		_, err := webhooks.NormalizeEvents(strings.FieldsFunc(names, func(r rune) bool { return r == ',' }))
		if (err == nil) != ok {
			t.Errorf("events %q: %v, want accepted %v", names, err, ok)
		}
	}
}
