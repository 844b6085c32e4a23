package dispatch_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/dispatch"
	"oficina/ops/testkit"
	"oficina/schema/apierr"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// Issue 27 item 2, mutual TLS: a receiver that demands a client
// certificate (RequireAndVerifyClientCert) gets the endpoint's on every
// delivery; an endpoint without one is refused at the handshake; the
// endpoint shows the certificate's subject and expiry, and one that is
// expired, or a key of another certificate, is refused when set.
func TestAReceiverDemandingMutualTLSGetsTheEndpointsCertificate(t *testing.T) {
	t.Parallel()
	until := time.Now().Add(12 * time.Hour).Truncate(time.Second)
	certPEM, keyPEM, cert := testkit.ClientCertificate(t, "oficina-client", until)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	seen := make(chan string, 4)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.TLS.PeerCertificates[0].Subject.CommonName
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	e := newEnv(t)
	guard := testkit.LoopbackGuard(t, srv)
	e.start(t, dispatch.Config{Client: guard.Client(), CertifiedClient: guard.ClientWithCertificate, Schedule: []time.Duration{time.Hour}})
	co := company(t, tenant.PlanSupra)
	create := func(in *webhooks.WebhookClientCertificateInput) (*webhooks.Row, error) {
		var ep *webhooks.Row
		err := tenant.Tx(context.Background(), co.DB, co.Company.ID, func(ctx context.Context, tx bun.Tx) error {
			var err error
			ep, err = webhooks.Create(ctx, tx, co.Company.ID, webhooks.WebhookEndpointCreate{URL: srv.URL + "/hook",
				Events: []webhooks.EventName{"*"}, ClientCertificate: in}, webhooks.Subscriber{MemberID: co.Owner.ID},
				func([]string) error { return nil }, testkit.AnyURL{}, testkit.Keyring(t), time.Now())
			return err
		})
		return ep, err
	}
	ep, err := create(&webhooks.WebhookClientCertificateInput{Certificate: certPEM, PrivateKey: keyPEM})
	if err != nil {
		t.Fatal(err)
	}
	if v := ep.View().ClientCertificate; v == nil || v.Subject != "CN=oficina-client" || !v.ExpiresAt.Equal(until) {
		t.Fatalf("the endpoint shows %+v, want the subject and expiry", v)
	}
	dm := e.enqueue(t, co, ep, "sale.paid")
	if cn := <-seen; cn != "oficina-client" {
		t.Errorf("the receiver saw %q", cn)
	}
	waitStatus(t, co, dm.DeliveryID, streams.StatusSucceeded)

	plain := newEndpoint(t, co, srv.URL+"/hook", webhooks.Subscriber{MemberID: co.Owner.ID})
	refused := e.enqueue(t, co, plain, "sale.paid")
	d := waitFor(t, co, refused.DeliveryID, func(d streams.Delivery) bool { return d.AttemptCount == 1 })
	if d.Status == streams.StatusSucceeded || d.Error == nil {
		t.Errorf("without a certificate: %s %v, want a failed handshake", d.Status, ptrStr(d.Error))
	}

	expiredPEM, expiredKey, _ := testkit.ClientCertificate(t, "old", time.Now().Add(-time.Minute))
	_, otherKey, _ := testkit.ClientCertificate(t, "other", until)
	for name, in := range map[string]*webhooks.WebhookClientCertificateInput{
		"expired":                   {Certificate: expiredPEM, PrivateKey: expiredKey},
		"another certificate's key": {Certificate: certPEM, PrivateKey: otherKey},
		"not PEM":                   {Certificate: "hello", PrivateKey: "world"},
	} {
		if _, err := create(in); apierr.As(err).Code != apierr.ValidationFailed || apierr.As(err).Fields[0].Param != "client_certificate" {
			t.Errorf("%s: %v, want 422 on client_certificate", name, err)
		}
	}
}
