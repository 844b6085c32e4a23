package wire_test

import (
	"fmt"
	"testing"

	"oficina/http/wire"
	"oficina/ops/testkit"
	"oficina/schema/webhooks"
)

// FuzzEndpointRequestBodies: any body of POST /webhook_endpoints (which
// even) or PATCH /webhook_endpoints/{id} (odd) is decoded, and its events
// normalised, without panicking; every refusal is a catalogue error below
// 500 naming its fields (part 7). The URL's destination rules have their
// own fuzz target (dispatch/destguard).
func FuzzEndpointRequestBodies(f *testing.F) {
	for i, s := range []string{
		`{"url":"https://example.com/hook","description":"ERP","events":["sale.*","client.created"]}`,
		`{"url":"https://example.com/hook","events":["*"]}`, `{"events":["*","sale.created"]}`, `{"events":["ping"]}`,
		`{"url":null,"description":null,"events":null}`, `{"events":[]}`, `{"events":["sale.*","sale.*"]}`,
		`{"URL":"https://example.com"}`, `{"url":"a","url":"b"}`, `{"description":"a\u0000b"}`, `{"events":"sale.*"}`,
		`{"events":[1]}`, `[]`, `{`, ``,
	} {
		f.Add(byte(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which byte, body []byte) {
		var err error
		var events []webhooks.EventName
		if which%2 == 0 {
			var in webhooks.WebhookEndpointCreate
			if err = wire.DecodeBytes(body, &in); err == nil {
				events = in.Events
			}
		} else {
			var in webhooks.WebhookEndpointUpdate
			if err = wire.DecodeBytes(body, &in); err == nil && in.Events.Set && !in.Events.Null {
				events = in.Events.Value
			}
		}
		if err == nil && events != nil {
			_, err = webhooks.NormalizeEvents(names(events))
		}
		if err != nil {
			testkit.Refused(t, fmt.Sprintf("%q", body), err)
		}
	})
}

func names(ns []webhooks.EventName) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = string(n)
	}
	return out
}

// FuzzRotateSecretRequest: the body of POST
// /webhook_endpoints/{id}/rotate_secret decodes without panicking, and
// every refusal is a catalogue error below 500 naming its field.
func FuzzRotateSecretRequest(f *testing.F) {
	for _, s := range []string{`{}`, `{"grace_period_seconds":0}`, `{"grace_period_seconds":604800}`, `{"grace_period_seconds":-1}`,
		`{"grace_period_seconds":1e400}`, `{"grace_period_seconds":"60"}`, `{"grace_period_seconds":null}`,
		`{"GRACE_PERIOD_SECONDS":60}`, `{"grace_period_seconds":1,"grace_period_seconds":2}`, `[]`, `{`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in webhooks.WebhookSecretRotation
		if err := wire.DecodeBytes(body, &in); err != nil {
			testkit.Refused(t, fmt.Sprintf("%q", body), err)
		}
	})
}
