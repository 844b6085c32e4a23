package destguard_test

import (
	"context"
	"errors"
	"testing"

	"oficina/dispatch/destguard"
	"oficina/schema/webhooks"
)

// The records recognise a refused URL by behaviour (webhooks.Refusal), not
// by importing the guard: every refusal the guard makes must show it.
var _ webhooks.Refusal = (*destguard.RefusedError)(nil)

func TestRefusalsAreRecognisedByTheRecords(t *testing.T) {
	g, err := destguard.New(destguard.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]string{
		"http://example.com/hook":      destguard.ReasonNotHTTPS,
		"https://u:p@example.com/hook": destguard.ReasonUserinfo,
		"https://10.0.0.1/hook":        destguard.ReasonPrivateAddress,
		"https://localhost/hook":       destguard.ReasonForbiddenHostname,
	} {
		r, ok := errors.AsType[webhooks.Refusal](g.CheckURL(context.Background(), raw))
		if !ok || r.RefusalReason() != want {
			t.Errorf("%s: refusal %v, want reason %s", raw, r, want)
		}
	}
}
