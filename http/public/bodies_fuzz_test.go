package public_test

import (
	"errors"
	"testing"

	"oficina/http/wire"
	"oficina/schema/apierr"
	"oficina/schema/webhooks"
)

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
		err := wire.DecodeBytes(body, &in)
		if err == nil {
			return
		}
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status() >= 500 {
			t.Fatalf("%q: %v is not a catalogue error", body, err)
		}
		if e.Code == apierr.ValidationFailed && len(e.Fields) == 0 {
			t.Fatalf("%q: validation_failed without errors[]", body)
		}
	})
}
