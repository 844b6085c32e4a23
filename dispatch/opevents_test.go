package dispatch_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/dispatch"
	"oficina/ops/testkit"
	"oficina/ops/testkit/hooks"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// Issue 27 item 1 (and item 2's certificate warning), decision 0037: each
// operational event arrives when its cause happens at an endpoint
// subscribed to it, signed (every body of every endpoint verified with the
// Standard Webhooks library), with the endpoint (or the delivery) as it is
// now; never at the endpoint it is about, though that one subscribes to
// the webhook families too; never at an endpoint subscribed to "*". The
// dispatcher records the turns it sees in its cycle's transaction and the
// relay publishes them; the API's writes and the certificate routine are
// write units like any other.
func TestEachOperationalEventArrivesWhenItsCauseHappens(t *testing.T) {
	t.Parallel()
	always := func(code int, control string) func(int) (int, string) {
		return func(int) (int, string) { return code, control }
	}
	for _, tc := range []struct {
		name   string
		event  string          // what the monitor subscribes to and awaits
		reason string          // the object's disabled_reason, when disabled
		cfg    dispatch.Config // the dispatcher's schedule and auto-disable
		// answer is the troubled endpoint's answer to its n-th request
		// (1-based): a status and a webhook-delivery header.
		answer func(n int) (int, string)
		// cause makes it happen.
		cause func(s *scene, t *testing.T)
	}{
		{name: "a first failure", event: webhooks.EventEndpointFailing, cfg: dispatch.Config{Schedule: []time.Duration{time.Hour}},
			answer: always(http.StatusServiceUnavailable, ""), cause: (*scene).sale},
		{name: "a success after failing", event: webhooks.EventEndpointRecovered,
			answer: func(n int) (int, string) {
				if n == 1 {
					return http.StatusServiceUnavailable, ""
				}
				return http.StatusNoContent, ""
			}, cause: (*scene).sale},
		{name: "the attempts ran out", event: webhooks.EventDeliveryGivenUp, cfg: dispatch.Config{Schedule: []time.Duration{}},
			answer: always(http.StatusBadGateway, ""), cause: (*scene).sale},
		{name: "failing for DisableAfter", event: webhooks.EventEndpointDisabled, reason: webhooks.ReasonFailing,
			cfg: dispatch.Config{DisableAfter: time.Nanosecond}, answer: always(http.StatusServiceUnavailable, ""), cause: (*scene).sale},
		{name: "the receiver asked", event: webhooks.EventEndpointDisabled, reason: webhooks.ReasonReceiverRequested,
			answer: always(http.StatusNoContent, "disable"), cause: (*scene).sale},
		{name: "disabled through the API", event: webhooks.EventEndpointDisabled, reason: webhooks.ReasonManual,
			cause: func(s *scene, t *testing.T) { s.disable(t) }},
		{name: "enabled again through the API", event: webhooks.EventEndpointEnabled,
			cause: func(s *scene, t *testing.T) {
				s.disable(t)
				s.co.Write(t, func(ctx context.Context, w *streams.Write) error {
					_, err := webhooks.Enable(ctx, w, s.about.ID, webhooks.Subscriber{MemberID: s.co.Owner.ID}, allowAll)
					return err
				})
			}},
		{name: "a client certificate about to expire", event: webhooks.EventEndpointCertificateExpiring,
			cause: func(s *scene, t *testing.T) {
				wr := &streams.Writer{DB: s.co.DB}
				err := wr.Run(context.Background(), webhooks.CertificateUnit(s.co.Company.ID, time.Now()), func(ctx context.Context, w *streams.Write) error {
					n, err := webhooks.WarnExpiringCertificates(ctx, w)
					if err == nil && n != 1 {
						t.Errorf("warned %d endpoints, want the one", n)
					}
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newScene(t, tc.event, tc.answer)
			cfg, guard := tc.cfg, testkit.LoopbackGuard(t, s.rcv.Server())
			cfg.Client, cfg.CertifiedClient = guard.Client(), guard.ClientWithCertificate
			s.e.start(t, cfg)
			tc.cause(s, t)

			a := s.await(t, tc.event)
			var ev struct {
				ID   string `json:"id"`
				Data struct {
					Object struct {
						Object, ID, Status string
						DisabledReason     *string `json:"disabled_reason"`
						FailingSince       *string `json:"failing_since"`
						WebhookEndpointID  string  `json:"webhook_endpoint_id"`
						ClientCertificate  *struct {
							ExpiresAt string `json:"expires_at"`
						} `json:"client_certificate"`
					} `json:"object"`
				} `json:"data"`
			}
			if err := json.Unmarshal(a.Body, &ev); err != nil {
				t.Fatal(err)
			}
			obj := ev.Data.Object
			switch {
			case tc.event == webhooks.EventDeliveryGivenUp && (obj.Object != "webhook_delivery" || obj.Status != streams.StatusFailed):
				t.Errorf("given up: %s", a.Body)
			case tc.reason != "" && (obj.Status != webhooks.StatusDisabled || obj.DisabledReason == nil || *obj.DisabledReason != tc.reason):
				t.Errorf("disabled: %s, want reason %s", a.Body, tc.reason)
			case tc.event == webhooks.EventEndpointEnabled && (obj.Status != webhooks.StatusEnabled || obj.DisabledReason != nil):
				t.Errorf("enabled: %s", a.Body)
			case tc.event == webhooks.EventEndpointFailing && obj.FailingSince == nil,
				tc.event == webhooks.EventEndpointRecovered && obj.FailingSince != nil:
				t.Errorf("%s: failing_since in %s", tc.event, a.Body)
			case tc.event == webhooks.EventEndpointCertificateExpiring && obj.ClientCertificate == nil:
				t.Errorf("certificate: %s", a.Body)
			}
			// Delivered to the monitor only: the endpoint it is about and
			// the "*" one got no delivery of it, so none can come later.
			var to []string
			s.co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
				return tx.NewSelect().Model((*streams.Delivery)(nil)).Column("endpoint_id").Where("event_id = ?", ev.ID).Scan(ctx, &to)
			})
			if !slices.Equal(to, []string{s.monitor.ID}) {
				t.Errorf("%s was delivered to %v, want the monitor %s only", tc.event, to, s.monitor.ID)
			}
			s.verifyAll(t)
		})
	}
}

func allowAll([]string) error { return nil }

// scene is one company with three endpoints on one receiver: "about" (the
// endpoint the events are about, subscribed to sales and to both webhook
// families, with a client certificate expiring in a week) at /about,
// "monitor" subscribed to the one operational event awaited at /monitor
// and ordering by object,
// and "all" subscribed to "*" at /all; a relay for the company.
type scene struct {
	e                   *env
	co                  *testkit.Company
	rcv                 *hooks.Receiver
	about, monitor, all *webhooks.Row
	secrets             map[string]string // by path
}

func newScene(t *testing.T, event string, answer func(n int) (int, string)) *scene {
	t.Helper()
	s := &scene{e: newEnv(t), co: company(t, tenant.PlanSupra), secrets: map[string]string{}}
	var n atomic.Int32
	s.rcv = testkit.NewReceiver(t, hooks.Options{Record: true, Answer: func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/about" || answer == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		code, control := answer(int(n.Add(1)))
		if control != "" {
			w.Header().Set("webhook-delivery", control)
		}
		w.WriteHeader(code)
	}})
	certPEM, keyPEM, _ := testkit.ClientCertificate(t, "about", time.Now().Add(7*24*time.Hour))
	create := func(path string, in webhooks.WebhookEndpointCreate) *webhooks.Row {
		in.URL = s.rcv.URL() + path
		var e *webhooks.Row
		s.co.Tx(t, func(ctx context.Context, tx bun.Tx) (err error) {
			e, err = webhooks.Create(ctx, tx, s.co.Company.ID, in, webhooks.Subscriber{MemberID: s.co.Owner.ID}, allowAll,
				testkit.AnyURL{}, testkit.Keyring(t), time.Now())
			return err
		})
		s.secrets[path] = e.ViewWithSecret().Secret
		return e
	}
	s.about = create("/about", webhooks.WebhookEndpointCreate{Events: []webhooks.EventName{"sale.*", "webhook_endpoint.*", "webhook_delivery.*"},
		ClientCertificate: &webhooks.WebhookClientCertificateInput{Certificate: certPEM, PrivateKey: keyPEM}})
	// The monitor orders by object (decision 0039): the dispatcher's events
	// reach it through the relay with their place in their object's order.
	s.monitor = create("/monitor", webhooks.WebhookEndpointCreate{Events: []webhooks.EventName{webhooks.EventName(event)},
		Ordering: new(webhooks.WebhookOrdering(webhooks.OrderingObject))})
	s.all = create("/all", webhooks.WebhookEndpointCreate{Events: []webhooks.EventName{"*"}})
	testkit.Relay(t, s.e.js, s.co.Company.ID)
	return s
}

// sale records a sale.paid delivered to "about" and "all" and publishes
// both deliveries, as a write and its publisher do.
func (s *scene) sale(t *testing.T) {
	t.Helper()
	for _, ep := range []*webhooks.Row{s.about, s.all} {
		s.e.enqueue(t, s.co, ep, "sale.paid")
	}
}

// disable disables "about" through a write unit, as the API does.
func (s *scene) disable(t *testing.T) {
	t.Helper()
	s.co.Write(t, func(ctx context.Context, w *streams.Write) error {
		_, err := webhooks.Disable(ctx, w, s.about.ID)
		return err
	})
}

// await waits for the first event of type typ about "about" at the
// monitor, verified with the monitor's secret.
func (s *scene) await(t *testing.T, typ string) hooks.Arrival {
	t.Helper()
	var got *hooks.Arrival
	found := func() bool {
		for _, a := range s.rcv.Arrivals() {
			if a.Path == "/monitor" && s.isAbout(t, a, typ) {
				got = &a
				return true
			}
		}
		return false
	}
	if !s.rcv.WaitFor(time.Minute, found) {
		t.Fatalf("no %s about %s at the monitor; arrivals: %v", typ, s.about.ID, s.summary(t))
	}
	return *got
}

// isAbout reports an arrival of type typ whose object is "about" or one of
// its deliveries.
func (s *scene) isAbout(t *testing.T, a hooks.Arrival, typ string) bool {
	t.Helper()
	var ev struct {
		Type string
		Data struct {
			Object struct {
				ID                string
				WebhookEndpointID string `json:"webhook_endpoint_id"`
			}
		}
	}
	if err := json.Unmarshal(a.Body, &ev); err != nil {
		t.Fatalf("%s: %v", a.Body, err)
	}
	return (typ == "" || ev.Type == typ) && (ev.Data.Object.ID == s.about.ID || ev.Data.Object.WebhookEndpointID == s.about.ID)
}

// verifyAll verifies the signature of every arrival with its endpoint's
// secret, and that neither "about" nor "all" got an operational event
// about "about".
func (s *scene) verifyAll(t *testing.T) {
	t.Helper()
	for _, a := range s.rcv.Arrivals() {
		if err := hooks.Verify(s.secrets[a.Path], a); err != nil {
			t.Errorf("%s: %v", a.Path, err)
		}
		if a.Path != "/monitor" && s.isAbout(t, a, "") {
			t.Errorf("%s got %s", a.Path, a.Body)
		}
	}
}

// summary lists the arrivals by path and type, for a failure.
func (s *scene) summary(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, a := range s.rcv.Arrivals() {
		var ev struct{ Type string }
		_ = json.Unmarshal(a.Body, &ev)
		out = append(out, a.Path+" "+ev.Type)
	}
	return out
}
