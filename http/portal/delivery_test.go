package portal_test

import (
	"bytes"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"oficina/dispatch"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/apierr"
	"oficina/tenant"
)

// delivered is an env whose dispatcher delivers to a local receiver, with
// an endpoint there and one event (a lead's client.created) delivered to
// it and recorded.
type delivered struct {
	*env
	ep, secret string
	arrival    testkit.Received // the request as the receiver got it
	delivery   string           // its delivery id
}

// newDelivered starts the receiver, answering status with a small body,
// and waits until the event's delivery is recorded as succeeded.
func newDelivered(t *testing.T, status int) delivered {
	t.Helper()
	srv, got := testkit.Receiver(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"received": true}`))
	})
	guard := testkit.LoopbackGuard(t, srv)
	d := delivered{env: newEnv(t, httpkit.APIOptions{Destinations: guard})}
	testkit.Dispatcher(t, dispatch.Config{JS: d.js, Client: guard.Client(), Partitions: 4})
	r := d.api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints", Key: d.key,
		Body: map[string]any{"url": srv.URL + "/hooks", "events": []string{"client.created"}}})
	if r.Status != 201 {
		t.Fatalf("endpoint: %d %s", r.Status, r.Raw)
	}
	d.ep, d.secret = r.Body["id"].(string), r.Body["secret"].(string)
	all := d.co.OwnerKey(t, tenant.AllPermissions()...)
	if r := d.api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: all,
		Body: map[string]any{"name": "Maria Souza", "email": "maria@example.com", "notes": "Prefere \"WhatsApp\" <à tarde> & 2ª"}}); r.Status != 201 {
		t.Fatalf("lead: %d %s", r.Status, r.Raw)
	}
	select {
	case d.arrival = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the delivery never arrived")
	}
	for deadline := time.Now().Add(30 * time.Second); d.delivery == ""; time.Sleep(100 * time.Millisecond) {
		l := d.api.Do(t, httpkit.Req{Method: "GET", Path: "/webhook_endpoints/" + d.ep + "/deliveries?status=succeeded", Key: d.key})
		for _, x := range l.Body["data"].([]any) {
			if x := x.(map[string]any); x["event_id"] == d.arrival.WebhookID {
				d.delivery = x["id"].(string)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the delivery of %s was never recorded as succeeded", d.arrival.WebhookID)
		}
	}
	return d
}

var (
	sentBodyRE  = regexp.MustCompile(`(?s)<pre class="body" id="body-[^"]+">\n(.*?)</pre>`)
	formattedRE = regexp.MustCompile(`(?s)<details class="formatted">.*?<pre>\n(.*?)</pre>`)
	headerRE    = regexp.MustCompile(`<th class="hdr">([^<]+)</th><td class="mono token">([^<]*)</td>`)
)

// Issue 23 item 5: the delivery page shows the request body byte for byte
// as it was sent, so that a receiver's developer who copies it, with the
// headers shown beside it and the endpoint's secret, verifies the
// signature. A formatted view, labelled as such, keeps the keys in their
// order.
func TestTheDeliveryPageShowsTheBodyByteForByteAsSent(t *testing.T) {
	t.Parallel()
	d := newDelivered(t, http.StatusOK)
	b := newBrowser(t, d.api.URL)
	b.login(t, d.link(t))
	p := b.get(t, "/portal/endpoints/"+d.ep+"/deliveries/"+d.delivery)
	m := sentBodyRE.FindStringSubmatch(p.body)
	if p.status != 200 || m == nil {
		t.Fatalf("delivery page: %d, no body as sent:\n%s", p.status, p.body)
	}
	shown := []byte(html.UnescapeString(m[1]))
	if !bytes.Equal(shown, d.arrival.Body) {
		t.Fatalf("the page shows\n%s\nthe receiver got\n%s", shown, d.arrival.Body)
	}
	headers := http.Header{}
	for _, h := range headerRE.FindAllStringSubmatch(p.body, -1) {
		headers.Add(html.UnescapeString(h[1]), html.UnescapeString(h[2]))
	}
	wh, err := standardwebhooks.NewWebhook(d.secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(shown, headers); err != nil {
		t.Errorf("the body and headers copied from the page do not verify: %v (headers %v)", err, headers)
	}
	f := formattedRE.FindStringSubmatch(p.body)
	if f == nil {
		t.Fatalf("no formatted view:\n%s", p.body)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(html.UnescapeString(f[1]))); err != nil {
		t.Fatal(err)
	}
	if compact.String() != string(d.arrival.Body) || !strings.Contains(f[1], "\n  ") {
		t.Errorf("the formatted view is not the body indented, keys in order:\n%s", f[1])
	}
}

// Issue 23 item 5: the delivery log's Answer column shows the receiver's
// status for successful deliveries too (the API's view shows a failure's
// only), on the log and on the endpoint's recent deliveries.
func TestTheLogShowsTheAnswersStatusOfSuccessfulDeliveries(t *testing.T) {
	t.Parallel()
	d := newDelivered(t, http.StatusAccepted)
	b := newBrowser(t, d.api.URL)
	b.login(t, d.link(t))
	answer := regexp.MustCompile(`data-label="Resposta" class="mono">([^<]*)</td>`)
	for _, path := range []string{"/portal/endpoints/" + d.ep + "/deliveries?lang=pt-BR", "/portal/endpoints/" + d.ep} {
		p := b.get(t, path)
		m := answer.FindStringSubmatch(p.body)
		if p.status != 200 || m == nil || strings.TrimSpace(m[1]) != "202" {
			t.Errorf("%s: %d, Answer %q, want 202", path, p.status, m)
		}
	}
	if p := b.get(t, "/portal/endpoints/"+d.ep+"/deliveries/"+d.delivery); !strings.Contains(p.body, "<td>HTTP 202</td>") {
		t.Errorf("the delivery page does not show the answer's status:\n%s", p.body)
	}
}

// Issue 23 item 5: the new-endpoint form starts with no event ticked
// (a pre-ticked * made ticking one event fail), and one ticked event is
// a valid subscription.
func TestTheNewEndpointFormStartsWithNothingTicked(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{})
	b := newBrowser(t, e.api.URL)
	b.login(t, e.link(t, "manage_endpoints"))
	p := b.get(t, "/portal/endpoints/new")
	if p.status != 200 || !strings.Contains(p.body, `name="events" value="*"`) || strings.Contains(p.body, " checked") {
		t.Fatalf("new-endpoint form: %d, want every event box unticked:\n%s", p.status, p.body)
	}
	created := b.post(t, "/portal/endpoints", url.Values{"csrf": {b.csrf(t)}, "url": {"https://hooks.example.com/one"}, "events": {"client.created"}})
	if created.status != 200 || !strings.Contains(created.body, "whsec_") {
		t.Errorf("one ticked event: %d\n%s", created.status, created.body)
	}
}

// Issue 23 item 5: the endpoint forms show every field's error at the
// first submission: a refused URL beside the events' error, although the
// schema checks the destination only once the other fields are valid.
func TestTheEndpointFormShowsEveryFieldsErrorAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{})
	ep := e.endpoint(t)
	b, csrf := e.signIn(t, "manage_endpoints")
	msg := func(code apierr.FieldCode) string {
		f, ok := apierr.Default.Field(code)
		if !ok {
			t.Fatalf("no field code %s", code)
		}
		return html.EscapeString(f.Messages["pt-BR"])
	}
	errs := regexp.MustCompile(`<span class="err">([^<]*)</span>`)
	for name, tc := range map[string]struct {
		path   string
		events []string
		want   []string
	}{
		"create, no event":         {"/portal/endpoints", nil, []string{msg("not_public"), msg("required")}},
		"edit, * with another one": {"/portal/endpoints/" + ep, []string{"*", "client.created"}, []string{msg("not_public"), msg("invalid_event")}},
	} {
		p := b.post(t, tc.path+"?lang=pt-BR", url.Values{"csrf": {csrf}, "url": {"https://10.0.0.1/hooks"}, "events": tc.events})
		var got []string
		for _, m := range errs.FindAllStringSubmatch(p.body, -1) {
			got = append(got, m[1])
		}
		if p.status != http.StatusUnprocessableEntity || strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: %d, errors %q, want %q", name, p.status, got, tc.want)
		}
	}
}

// Issue 26 item 3 and issue 27 item 4: the form sets the payload and the
// ordering, and the endpoint's page shows them.
func TestThePortalSetsThePayloadAndOrdering(t *testing.T) {
	t.Parallel()
	b := endpointManager(t)
	created := b.post(t, "/portal/endpoints", url.Values{"csrf": {b.csrf(t)}, "url": {"https://hooks.example.com/thin"},
		"events": {"client.created"}, "payload": {"thin"}, "ordering": {"object"}})
	if created.status != 200 || !strings.Contains(created.body, "whsec_") {
		t.Fatalf("create: %d\n%s", created.status, created.body)
	}
	id := createdID(t, created)
	if p := b.get(t, "/portal/endpoints/"+id+"?lang=en"); !strings.Contains(p.body, "Thin: only object and id") {
		t.Errorf("the endpoint page does not show the thin payload:\n%s", p.body)
	}
	if p := b.get(t, "/portal/endpoints/"+id+"?lang=en"); !strings.Contains(p.body, "Per record: the events of one record") {
		t.Errorf("the endpoint page does not show the ordering:\n%s", p.body)
	}
	p := b.get(t, "/portal/endpoints/"+id+"/edit")
	if !strings.Contains(p.body, `<option value="thin" selected>`) {
		t.Errorf("the edit form does not keep the thin payload:\n%s", p.body)
	}
	if !strings.Contains(p.body, `<option value="object" selected>`) {
		t.Errorf("the edit form does not keep the ordering:\n%s", p.body)
	}
}

// Issue 27 item 2: the form sets custom headers ("Name: value" a line);
// the endpoint's page shows their names, never a value; an empty box keeps
// them on edit, and the box ticked removes them.
func TestThePortalSetsCustomHeadersWithoutShowingThem(t *testing.T) {
	t.Parallel()
	b := endpointManager(t)
	created := b.post(t, "/portal/endpoints", url.Values{"csrf": {b.csrf(t)}, "url": {"https://hooks.example.com/gw"},
		"events": {"client.created"}, "headers": {"x-api-key: gw-secret-value\n\nX-Tenant: 42"}})
	id := createdID(t, created)
	page := func() string { return b.get(t, "/portal/endpoints/"+id).body }
	if p := page(); !strings.Contains(p, "X-Api-Key, X-Tenant") || strings.Contains(p, "gw-secret-value") {
		t.Fatalf("the endpoint page: want the names only\n%s", p)
	}
	if p := b.get(t, "/portal/endpoints/"+id+"/edit"); strings.Contains(p.body, "gw-secret-value") || !strings.Contains(p.body, "clear_headers") {
		t.Errorf("the edit form shows a value or no way to remove them\n%s", p.body)
	}
	edit := url.Values{"csrf": {b.csrf(t)}, "url": {"https://hooks.example.com/gw"}, "events": {"client.created"}}
	b.post(t, "/portal/endpoints/"+id, edit)
	if !strings.Contains(page(), "X-Api-Key, X-Tenant") {
		t.Error("an edit with the box empty did not keep the headers")
	}
	edit.Set("clear_headers", "1")
	b.post(t, "/portal/endpoints/"+id, edit)
	if strings.Contains(page(), "X-Api-Key") {
		t.Error("the ticked box did not remove the headers")
	}
	bad := b.post(t, "/portal/endpoints", url.Values{"csrf": {b.csrf(t)}, "url": {"https://hooks.example.com/gw2"},
		"events": {"client.created"}, "headers": {"no colon here"}})
	if bad.status != 422 {
		t.Errorf("a line without a colon: %d", bad.status)
	}
}

// Issue 27 item 2: the form sets a client certificate (PEM and key); the
// endpoint's page shows its subject and expiry, never the key; the box
// ticked removes it.
func TestThePortalSetsAClientCertificate(t *testing.T) {
	t.Parallel()
	b := endpointManager(t)
	certPEM, keyPEM, _ := testkit.ClientCertificate(t, "portal-client", time.Now().Add(24*time.Hour))
	created := b.post(t, "/portal/endpoints", url.Values{"csrf": {b.csrf(t)}, "url": {"https://hooks.example.com/mtls"},
		"events": {"client.created"}, "client_certificate": {certPEM}, "client_key": {keyPEM}})
	id := createdID(t, created)
	keyLine := strings.Split(keyPEM, "\n")[1]
	if p := b.get(t, "/portal/endpoints/"+id); !strings.Contains(p.body, "CN=portal-client") || strings.Contains(p.body, keyLine) {
		t.Fatalf("the endpoint page: want the subject, never the key\n%s", p.body)
	}
	b.post(t, "/portal/endpoints/"+id, url.Values{"csrf": {b.csrf(t)}, "url": {"https://hooks.example.com/mtls"},
		"events": {"client.created"}, "clear_client_certificate": {"1"}})
	if p := b.get(t, "/portal/endpoints/"+id); strings.Contains(p.body, "CN=portal-client") {
		t.Error("the ticked box did not remove the certificate")
	}
	bad := b.post(t, "/portal/endpoints", url.Values{"csrf": {b.csrf(t)}, "url": {"https://hooks.example.com/mtls2"},
		"events": {"client.created"}, "client_certificate": {"not a certificate"}, "client_key": {"nor a key"}})
	if bad.status != 422 {
		t.Errorf("a certificate that does not parse: %d", bad.status)
	}
}

// Issue 27 item 2: the form sets OAuth2 client credentials; the page shows
// the client and token URL, never the secret; a member missing is 422.
func TestThePortalSetsOAuth2Credentials(t *testing.T) {
	t.Parallel()
	b := endpointManager(t)
	form := url.Values{"csrf": {b.csrf(t)}, "url": {"https://hooks.example.com/oauth"}, "events": {"client.created"},
		"oauth2_token_url": {"https://hooks.example.com/token"}, "oauth2_client_id": {"portal-client"},
		"oauth2_client_secret": {"portal-secret-value"}}
	created := b.post(t, "/portal/endpoints", form)
	id := createdID(t, created)
	if p := b.get(t, "/portal/endpoints/"+id); !strings.Contains(p.body, "portal-client") || strings.Contains(p.body, "portal-secret-value") {
		t.Fatalf("the endpoint page: want the client, never the secret\n%s", p.body)
	}
	form.Del("oauth2_client_secret")
	form.Set("url", "https://hooks.example.com/oauth2")
	if bad := b.post(t, "/portal/endpoints", form); bad.status != 422 {
		t.Errorf("without the secret: %d", bad.status)
	}
}

// endpointManager is a browser signed in to a company's portal with a
// session that may manage endpoints.
func endpointManager(t *testing.T) *browser {
	t.Helper()
	e := newEnv(t, httpkit.APIOptions{})
	b := newBrowser(t, e.api.URL)
	b.login(t, e.link(t, "manage_endpoints"))
	return b
}

// createdID is the id of the endpoint a creation form's answer shows.
func createdID(t *testing.T, created page) string {
	t.Helper()
	m := regexp.MustCompile(`/portal/endpoints/(we_[0-9a-z]+)`).FindStringSubmatch(created.body)
	if created.status != 200 || m == nil {
		t.Fatalf("create: %d\n%s", created.status, created.body)
	}
	return m[1]
}
