package dispatch_test

import (
	"net/http"
	"testing"
	"time"

	"oficina/dispatch"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// Issue 27 item 3, receiver control (standard-webhooks#291): an answer's
// webhook-delivery header. abort-message ends that delivery as failed after
// its one attempt, with retries left and the endpoint untouched; disable
// disables the endpoint at once (reason receiver_requested, the managers
// mailed), the answer itself counting as it was — a 2xx delivered.
func TestTheReceiverControlsDeliveryThroughItsAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, header string
		code         int
		want         string // the delivery's status after
		disabled     bool
	}{
		{"abort-message on a failure", "abort-message", http.StatusServiceUnavailable, streams.StatusFailed, false},
		{"abort-message on a success is a success", "Abort-Message", http.StatusOK, streams.StatusSucceeded, false},
		{"disable on a success", "disable", http.StatusNoContent, streams.StatusSucceeded, true},
		{"disable on a failure", " DISABLE ", http.StatusGone, streams.StatusFailed, true},
		{"an unknown request is ignored", "pause", http.StatusServiceUnavailable, streams.StatusPending, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			srv, _ := receiver(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("webhook-delivery", tc.header)
				w.WriteHeader(tc.code)
			})
			co := company(t, tenant.PlanSupra)
			ep := newEndpoint(t, co, srv.URL, webhooks.Subscriber{MemberID: co.Owner.ID})
			e.start(t, dispatch.Config{Client: guardClient(t, srv, true), Schedule: []time.Duration{time.Hour}})
			dm := e.enqueue(t, co, ep, "sale.paid")
			d := waitFor(t, co, dm.DeliveryID, func(d streams.Delivery) bool {
				return d.AttemptCount == 1 && (d.Status != streams.StatusPending || d.NextAttemptAt != nil)
			})
			if d.Status != tc.want || d.AttemptCount != 1 {
				t.Errorf("delivery %s after %d attempts, want %s after 1", d.Status, d.AttemptCount, tc.want)
			}
			got := endpointRow(t, co, ep.ID)
			if disabled := got.Status == webhooks.StatusDisabled; disabled != tc.disabled ||
				tc.disabled && ptrStr(got.DisabledReason) != dispatch.ReasonReceiverRequested {
				t.Errorf("endpoint %s (%s), want disabled %v for %s", got.Status, ptrStr(got.DisabledReason), tc.disabled, dispatch.ReasonReceiverRequested)
			}
			if n := len(co.Mails(t, dispatch.MailEndpointDisabled)); (n == 1) != tc.disabled || n > 1 {
				t.Errorf("%d disable mails, want one: %v", n, tc.disabled)
			}
		})
	}
}
