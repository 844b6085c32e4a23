package hooks_test

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"oficina/ops/testkit/hooks"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// post sends a signed webhook with header id and body id bodyID to path.
func post(t *testing.T, r *hooks.Receiver, path, id, bodyID string) {
	t.Helper()
	body := []byte(`{"id":"` + bodyID + `","type":"client.created"}`)
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	sig, err := wh.Sign(id, now, body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", r.URL()+path, bytes.NewReader(body))
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := r.Server().Client().Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	_ = resp.Body.Close()
}

// The receiver notes each delivery by path and webhook-id (first arrival,
// count), the first 2xx by webhook-id, bodies whose id differs from the
// header, and verifies signatures with the Standard Webhooks library.
func TestTheReceiverNotesDeliveriesAndVerifiesThem(t *testing.T) {
	t.Parallel()
	r := hooks.New(hooks.Options{Record: true, Answer: func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/fail" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}})
	defer r.Close()
	arrived := r.Expect("evt_a")
	post(t, r, "/co_1/hook", "evt_a", "evt_a")
	post(t, r, "/co_1/hook", "evt_a", "evt_a")
	post(t, r, "/fail", "evt_b", "evt_x")
	select {
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("Expect never fired")
	}
	if d, ok := r.Delivery(hooks.Key{Path: "/co_1/hook", WebhookID: "evt_a"}); !ok || d.N != 2 {
		t.Errorf("delivery evt_a: %+v %v, want 2 requests", d, ok)
	}
	if _, ok := r.At("evt_b"); ok || r.Count() != 1 || r.Requests() != 3 {
		t.Errorf("a 503 counted as arrived: count %d, requests %d", r.Count(), r.Requests())
	}
	if m := r.Mismatched(); len(m) != 1 || m[0] != "evt_b != evt_x" {
		t.Errorf("mismatched %v", m)
	}
	as := r.Arrivals()
	if len(as) != 3 || as[2].Status != http.StatusServiceUnavailable || as[0].Status != http.StatusNoContent {
		t.Fatalf("arrivals %+v", as)
	}
	if err := hooks.Verify(secret, as[0]); err != nil {
		t.Errorf("a signed delivery does not verify: %v", err)
	}
	if err := hooks.Verify("whsec_"+"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", as[0]); err == nil {
		t.Error("verified with another secret")
	}
}

// The receiver keeps the most requests in flight at once, by path and by
// company.
func TestTheReceiverKeepsInFlightPeaks(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	r := hooks.New(hooks.Options{Answer: func(http.ResponseWriter, *http.Request) { <-release }})
	defer r.Close()
	var wg sync.WaitGroup
	for _, p := range []string{"/co_1/a", "/co_1/a", "/co_1/b"} {
		wg.Go(func() { post(t, r, p, "evt_"+p, "evt_"+p) })
	}
	if !r.WaitFor(5*time.Second, func() bool { return r.InFlight(hooks.Group("/co_1/a")) == 3 }) {
		t.Fatalf("in flight for co_1: %d, want 3", r.InFlight(hooks.Group("/co_1/a")))
	}
	close(release)
	wg.Wait()
	if r.Peak("/co_1/a") != 2 || r.Peak("company:co_1") != 3 || r.InFlight("/co_1/a") != 0 {
		t.Errorf("peaks: path %d, company %d; in flight %d", r.Peak("/co_1/a"), r.Peak("company:co_1"), r.InFlight("/co_1/a"))
	}
}
