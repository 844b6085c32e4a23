package portal_test

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"oficina/ops/proving/contract"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/apierr"
	"oficina/streams"
	"oficina/tenant"
)

// endpoint creates an endpoint through the API and returns its id.
func (e *env) endpoint(t *testing.T) string {
	t.Helper()
	r := e.api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints", Key: e.key,
		Body: map[string]any{"url": "https://hooks.example.com/oficina", "events": []string{"*"}}})
	if r.Status != 201 {
		t.Fatalf("endpoint: %d %s", r.Status, r.Raw)
	}
	return r.Body["id"].(string)
}

// Issue 18 item 1: the capabilities are enforced on the server, whatever
// the pages show: a read-only session reads and nothing else; each write
// needs its capability.
func TestCapabilitiesAreEnforcedOnTheServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{})
	ep := e.endpoint(t)
	d := e.co.LogDelivery(t, ep, "client.created", streams.StatusFailed, time.Now().Add(-time.Hour))
	since := time.Now().Add(-2 * time.Hour).UTC().Format("2006-01-02T15:04")
	writes := map[string]url.Values{
		"/portal/endpoints":                                                   {"url": {"https://hooks.example.com/x"}, "events": {"*"}},
		"/portal/endpoints/" + ep:                                             {"url": {"https://hooks.example.com/y"}, "events": {"*"}},
		"/portal/endpoints/" + ep + "/disable":                                {},
		"/portal/endpoints/" + ep + "/delete":                                 {},
		"/portal/endpoints/" + ep + "/rotate":                                 {"grace": {"0"}},
		"/portal/endpoints/" + ep + "/ping":                                   {},
		"/portal/endpoints/" + ep + "/reveal":                                 {},
		"/portal/endpoints/" + ep + "/recover":                                {"since": {since}},
		"/portal/endpoints/" + ep + "/deliveries/" + d.DeliveryID + "/resend": {},
	}
	needs := func(path string) string {
		switch {
		case strings.HasSuffix(path, "/reveal"):
			return "view_secret"
		case strings.HasSuffix(path, "/recover"), strings.HasSuffix(path, "/resend"):
			return "recover"
		}
		return "manage_endpoints"
	}
	for _, caps := range [][]string{{"read_only"}, {"manage_endpoints"}, {"view_secret", "recover"}} {
		b := newBrowser(t, e.api.URL)
		b.login(t, e.link(t, caps...))
		csrf := b.csrf(t)
		if p := b.get(t, "/portal/endpoints/"+ep); p.status != 200 {
			t.Fatalf("%v: endpoint page %d", caps, p.status)
		}
		for path, form := range writes {
			if strings.Contains(strings.Join(caps, ","), needs(path)) {
				continue
			}
			form.Set("csrf", csrf)
			if p := b.post(t, path, form); p.status != http.StatusForbidden {
				t.Errorf("%v: POST %s: %d, want 403", caps, path, p.status)
			}
		}
		if p := b.get(t, "/portal/endpoints/new"); (p.status == 200) != strings.Contains(strings.Join(caps, ","), "manage_endpoints") {
			t.Errorf("%v: the new-endpoint form: %d", caps, p.status)
		}
	}
	if r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/webhook_endpoints/" + ep, Key: e.key}); r.Body["status"] != "enabled" {
		t.Errorf("a refused write changed the endpoint: %s", r.Raw)
	}
}

// Issue 18 item 1: a session of company A gets 404 on everything of
// company B, reads and writes alike, and changes nothing there.
func TestASessionOfAnotherCompanyGets404(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{})
	ep := e.endpoint(t)
	d := e.co.LogDelivery(t, ep, "client.created", streams.StatusFailed, time.Now().Add(-time.Hour))
	task := e.api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + ep + "/recover", Key: e.key,
		Body: map[string]any{"since": time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)}})
	other := testkit.NewCompany(t, tenant.CompanyInput{})
	key := other.OwnerKey(t, webhookPerms...)
	r := e.api.Do(t, httpkit.Req{Method: "POST", Path: "/portal_sessions", Key: key,
		Body: map[string]any{"capabilities": []string{"manage_endpoints", "view_secret", "recover"}}})
	b := newBrowser(t, e.api.URL)
	b.login(t, r.Body["url"].(string))
	csrf := b.csrf(t)
	for _, path := range []string{"/portal/endpoints/" + ep, "/portal/endpoints/" + ep + "/edit", "/portal/endpoints/" + ep + "/deliveries",
		"/portal/endpoints/" + ep + "/deliveries/" + d.DeliveryID, "/portal/endpoints/" + ep + "/recover_tasks/" + task.Body["id"].(string)} {
		if p := b.get(t, path); p.status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, p.status)
		}
	}
	for _, path := range []string{"/disable", "/delete", "/reveal", "/ping", "/deliveries/" + d.DeliveryID + "/resend"} {
		if p := b.post(t, "/portal/endpoints/"+ep+path, url.Values{"csrf": {csrf}}); p.status != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", path, p.status)
		}
	}
	if front := b.get(t, "/portal/"); strings.Contains(front.body, ep) {
		t.Error("B's front page lists A's endpoint")
	}
	if r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/webhook_endpoints/" + ep, Key: e.key}); r.Status != 200 || r.Body["status"] != "enabled" {
		t.Errorf("A's endpoint after B's attempts: %d %s", r.Status, r.Raw)
	}
}

// Issue 18 item 2: every page renders in pt-BR (the default), en and es,
// with every text found.
func TestEveryPageRendersInEveryLanguage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{})
	ep := e.endpoint(t)
	d := e.co.LogDelivery(t, ep, "client.created", streams.StatusFailed, time.Now().Add(-time.Hour))
	task := e.api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + ep + "/recover", Key: e.key,
		Body: map[string]any{"since": time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339), "until": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)}})
	b := newBrowser(t, e.api.URL)
	b.login(t, e.link(t, "manage_endpoints", "view_secret", "recover"))
	pages := map[string]int{"/portal/": 200, "/portal/events": 200, "/portal/endpoints/new": 200, "/portal/endpoints/" + ep: 200,
		"/portal/endpoints/" + ep + "/edit": 200, "/portal/endpoints/" + ep + "/delete": 200, "/portal/endpoints/" + ep + "/deliveries": 200,
		"/portal/endpoints/" + ep + "/deliveries/" + d.DeliveryID: 200, "/portal/endpoints/" + ep + "/recover_tasks/" + task.Body["id"].(string): 200,
		"/portal/endpoints/we_missing": 404, "/portal/nowhere": 404}
	titles := map[string]string{}
	for _, lang := range apierr.Languages {
		for path, want := range pages {
			p := b.get(t, path+"?lang="+lang)
			if p.status != want || !strings.Contains(p.body, `<html lang="`+lang+`">`) || strings.Contains(p.body, "⟦") {
				t.Errorf("%s in %s: %d (want %d), missing texts: %v", path, lang, p.status, want, regexp.MustCompile(`⟦[^⟧]*⟧`).FindAllString(p.body, -1))
			}
			if path == "/portal/" {
				titles[lang] = regexp.MustCompile(`<h1>([^<]*)</h1>`).FindStringSubmatch(p.body)[1]
			}
		}
	}
	if titles["pt-BR"] == titles["en"] || titles["en"] == titles["es"] {
		t.Errorf("titles %v, want one per language", titles)
	}
	// Without a choice, Accept-Language decides, as in the API.
	fresh := newBrowser(t, e.api.URL)
	for header, want := range map[string]string{"": "pt-BR", "es-AR,es;q=0.9": "es", "en-US": "en", "fr": "pt-BR"} {
		p := fresh.do(t, "GET", "/portal/login", nil, map[string]string{"Accept-Language": header})
		if !strings.Contains(p.body, `<html lang="`+want+`">`) {
			t.Errorf("Accept-Language %q: want %s", header, want)
		}
	}
}

// Every message of the portal exists in the three languages.
func TestEveryTextHasTheThreeLanguages(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("texts.json")
	if err != nil {
		t.Fatal(err)
	}
	var texts map[string]map[string]string
	if err := json.Unmarshal(raw, &texts); err != nil {
		t.Fatal(err)
	}
	for key, m := range texts {
		for _, lang := range apierr.Languages {
			if strings.TrimSpace(m[lang]) == "" {
				t.Errorf("%s has no %s text", key, lang)
			}
		}
	}
}

// Issue 18 item 2: the catalogue is the OpenAPI webhooks section: every
// event type appears, grouped by family, and its example is a body its
// schema accepts.
func TestTheCatalogueShowsEveryEventWithAnExampleItsSchemaAccepts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{})
	b := newBrowser(t, e.api.URL)
	b.login(t, e.link(t))
	p := b.get(t, "/portal/events")
	doc, err := contract.Load(e.api.Public.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	var webhooks struct {
		Webhooks map[string]any `json:"webhooks"`
	}
	if err := json.Unmarshal(e.api.Public.OpenAPI(), &webhooks); err != nil {
		t.Fatal(err)
	}
	examples := regexp.MustCompile(`(?s)<details class="event" id="event-([^"]+)">.*?<pre>(.*?)</pre>`).FindAllStringSubmatch(p.body, -1)
	if len(examples) != len(webhooks.Webhooks) || len(examples) < 30 {
		t.Fatalf("%d events shown, the document has %d", len(examples), len(webhooks.Webhooks))
	}
	for _, m := range examples {
		body := html.UnescapeString(m[2])
		if ms := doc.Webhook([]byte(body)); len(ms) > 0 {
			t.Errorf("%s: example refused by its schema: %v\n%s", m[1], ms, body)
		}
		if _, ok := webhooks.Webhooks[m[1]]; !ok {
			t.Errorf("%s is not in the webhooks section", m[1])
		}
	}
	for _, fam := range []string{"client", "sale", "service_order", "financial_transaction", "ping"} {
		if !strings.Contains(p.body, `id="family-`+fam+`"`) {
			t.Errorf("family %s missing", fam)
		}
	}
}

// Issue 18 item 2: the delivery log filters by status, event type, event
// id and time, and pages with a cursor; a bad filter is said so.
func TestTheDeliveryLogFiltersAndPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{})
	ep := e.endpoint(t)
	now := time.Now().UTC().Truncate(time.Minute)
	var first testkit.LoggedDelivery
	for i := range 30 {
		status, typ := streams.StatusSucceeded, "client.created"
		if i%3 == 0 {
			status, typ = streams.StatusFailed, "client.updated"
		}
		d := e.co.LogDelivery(t, ep, typ, status, now.Add(-time.Duration(30-i)*time.Hour))
		if i == 0 {
			first = d
		}
	}
	b := newBrowser(t, e.api.URL)
	b.login(t, e.link(t))
	rows := func(p page) int { return strings.Count(p.body, `>Detalhes</a>`) }
	base := "/portal/endpoints/" + ep + "/deliveries"
	p := b.get(t, base+"?lang=pt-BR")
	next := regexp.MustCompile(`href="(\?[^"]+)" rel="next"`).FindStringSubmatch(p.body)
	if rows(p) != 25 || next == nil {
		t.Fatalf("first page: %d rows, next %v", rows(p), next)
	}
	if p2 := b.get(t, base+html.UnescapeString(next[1])); rows(p2) != 5 || strings.Contains(p2.body, `rel="next"`) {
		t.Errorf("second page: %d rows", rows(p2))
	}
	loc, _ := time.LoadLocation(e.co.Company.Timezone)
	for q, want := range map[string]int{
		"status=failed":                           10,
		"event_type=client.created":               20,
		"event_id=" + first.EventID:               1,
		"status=failed&event_type=client.created": 0,
		"created_after=" + url.QueryEscape(now.Add(-10*time.Hour).In(loc).Format("2006-01-02T15:04")) + "&created_before=" + url.QueryEscape(now.Add(-5*time.Hour).In(loc).Format("2006-01-02T15:04")): 5,
	} {
		if got := rows(b.get(t, base+"?"+q)); got != want {
			t.Errorf("%s: %d rows, want %d", q, got, want)
		}
	}
	if bad := b.get(t, base+"?event_id=nope"); bad.status != http.StatusBadRequest || !strings.Contains(bad.body, `role="alert"`) {
		t.Errorf("bad filter: %d", bad.status)
	}
}
