package dispatch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/dispatch"
	"oficina/ops/testkit"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// Issue 27 item 2, OAuth2 client credentials: deliveries carry a bearer
// token from a local token server (client credentials grant, HTTP Basic),
// kept between deliveries and asked again once when the receiver answers
// 401; a token URL that refuses the credentials fails the attempt; the
// attempt log never holds the token.
func TestDeliveriesCarryAnOAuth2BearerToken(t *testing.T) {
	t.Parallel()
	var issued atomic.Int64
	tokens := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if !ok || id != "oficina" || secret != "s3cret" || r.PostFormValue("grant_type") != "client_credentials" ||
			r.PostFormValue("scope") != "webhooks.write" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		n := issued.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("tok-%d", n), "token_type": "Bearer", "expires_in": 3600})
	}))
	t.Cleanup(tokens.Close)
	var mu sync.Mutex
	valid := "tok-1"
	seen := make(chan string, 8)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ok := r.Header.Get("Authorization") == "Bearer "+valid
		mu.Unlock()
		seen <- r.Header.Get("Authorization")
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)

	e := newEnv(t)
	e.start(t, dispatch.Config{Client: guardClient(t, srv, true), Schedule: []time.Duration{time.Hour}})
	co := company(t, tenant.PlanSupra)
	endpoint := func(secret string) *webhooks.Row {
		var ep *webhooks.Row
		co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
			var err error
			ep, err = webhooks.Create(ctx, tx, co.Company.ID, webhooks.WebhookEndpointCreate{URL: srv.URL + "/hook",
				Events: []webhooks.EventName{"*"}, OAuth2: &webhooks.WebhookOAuth2Input{TokenURL: tokens.URL + "/token",
					ClientID: "oficina", ClientSecret: secret, Scope: new("webhooks.write")}},
				webhooks.Subscriber{MemberID: co.Owner.ID}, func([]string) error { return nil }, testkit.AnyURL{}, testkit.Keyring(t), time.Now())
			return err
		})
		return ep
	}
	ep := endpoint("s3cret")
	if v := ep.View().OAuth2; v == nil || v.ClientID != "oficina" || v.TokenURL != tokens.URL+"/token" {
		t.Fatalf("the endpoint shows %+v", v)
	}
	for range 2 {
		dm := e.enqueue(t, co, ep, "sale.paid")
		if got := <-seen; got != "Bearer tok-1" {
			t.Fatalf("the receiver got %q", got)
		}
		waitStatus(t, co, dm.DeliveryID, streams.StatusSucceeded)
	}
	if n := issued.Load(); n != 1 {
		t.Errorf("%d tokens asked for two deliveries, want 1 (kept)", n)
	}
	// Revoked before it expired: a 401, a new token, the same attempt.
	mu.Lock()
	valid = "tok-2"
	mu.Unlock()
	dm := e.enqueue(t, co, ep, "sale.paid")
	if a, b := <-seen, <-seen; a != "Bearer tok-1" || b != "Bearer tok-2" {
		t.Errorf("after the revocation the receiver got %q then %q", a, b)
	}
	d := waitStatus(t, co, dm.DeliveryID, streams.StatusSucceeded)
	if d.AttemptCount != 1 {
		t.Errorf("%d attempts, want the one", d.AttemptCount)
	}
	for _, a := range attempts(t, co, dm.DeliveryID) {
		if got := a.RequestHeaders["Authorization"]; len(got) != 1 || got[0] != dispatch.SealedHeaderValue {
			t.Errorf("the attempt log keeps Authorization %v", got)
		}
	}
	// Credentials the token URL refuses: no request to the receiver.
	bad := e.enqueue(t, co, endpoint("wrong"), "sale.paid")
	failed := waitFor(t, co, bad.DeliveryID, func(d streams.Delivery) bool { return d.AttemptCount == 1 })
	if ptrStr(failed.Error) != "oauth2_token_failed" {
		t.Errorf("with refused credentials: %s, want oauth2_token_failed", ptrStr(failed.Error))
	}
}
