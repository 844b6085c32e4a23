package portal_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit/httpkit"
	"oficina/streams"
)

// Issue 26 item 7: the portal's event history lists the company's events
// with GET /events' filters, trimmed to what the session's minter may read,
// and shows one event's body as delivered.
func TestThePortalListsTheEventHistory(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{})
	var sale, fin string
	e.co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		w := &streams.Write{Tx: tx, CompanyID: e.co.Company.ID, Actor: streams.Actor{Kind: streams.ActorAPI}, At: time.Now()}
		rs, err := streams.Record(ctx, w,
			streams.Change{Type: "sale.created", Object: map[string]any{"object": "sale", "id": "sal_portal"}},
			streams.Change{Type: "financial_transaction.created", Object: map[string]any{"object": "financial_transaction", "id": "fin_portal"}})
		if err == nil {
			sale, fin = rs[0].ID, rs[1].ID
		}
		return err
	})
	b := newBrowser(t, e.api.URL)
	b.login(t, e.link(t))
	p := b.get(t, "/portal/events/log?lang=en")
	if p.status != 200 || !strings.Contains(p.body, sale) || !strings.Contains(p.body, fin) || !strings.Contains(p.body, "sal_portal") {
		t.Fatalf("history: %d, want both events:\n%s", p.status, p.body)
	}
	if p := b.get(t, "/portal/events/log?type=sale.created"); !strings.Contains(p.body, sale) || strings.Contains(p.body, fin) {
		t.Errorf("filtered by type: want the sale event only:\n%s", p.body)
	}
	if p := b.get(t, "/portal/events/log?delivery_success=maybe"); p.status != 400 {
		t.Errorf("a bad filter: %d", p.status)
	}
	if p := b.get(t, "/portal/events/log/"+sale); p.status != 200 || !strings.Contains(p.body, `&#34;id&#34;: &#34;sal_portal&#34;`) {
		t.Errorf("one event: %d\n%s", p.status, p.body)
	}
	// A session minted by a key without finance:read sees no finance event.
	e.key = e.co.OwnerKey(t, "webhooks:read", "sales:read")
	nb := newBrowser(t, e.api.URL)
	nb.login(t, e.link(t))
	if p := nb.get(t, "/portal/events/log"); p.status != 200 || !strings.Contains(p.body, sale) || strings.Contains(p.body, fin) {
		t.Errorf("without finance:read: %d, want the sale event only:\n%s", p.status, p.body)
	}
	if p := nb.get(t, "/portal/events/log/"+fin); p.status != 404 {
		t.Errorf("a finance event by id without finance:read: %d", p.status)
	}
}

// Issue 27 item 1 in the portal: the endpoint form offers the operational
// families beside the others, an endpoint subscribes to them through it,
// and disabling and enabling an endpoint in the portal records
// webhook_endpoint.disabled and .enabled, which the event history shows
// (the session's key reads webhooks).
func TestThePortalSubscribesToAndShowsTheOperationalEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{})
	b := newBrowser(t, e.api.URL)
	b.login(t, e.link(t, "manage_endpoints"))
	form := b.get(t, "/portal/endpoints/new?lang=en")
	for _, want := range []string{`value="webhook_endpoint.*"`, `value="webhook_delivery.given_up"`, `value="webhook_endpoint.disabled"`} {
		if !strings.Contains(form.body, want) {
			t.Errorf("the endpoint form has no %s", want)
		}
	}
	created := b.post(t, "/portal/endpoints", url.Values{"csrf": {b.csrf(t)}, "url": {"https://hooks.example.com/monitor"},
		"events": {"webhook_endpoint.*", "webhook_delivery.*"}})
	if created.status != 200 || !strings.Contains(created.body, "whsec_") {
		t.Fatalf("a monitor endpoint: %d\n%s", created.status, created.body)
	}
	ep := e.api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints", Key: e.key,
		Body: map[string]any{"url": "https://hooks.example.com/erp", "events": []string{"sale.*"}}}).Body["id"].(string)
	for _, action := range []string{"disable", "enable"} {
		if p := b.post(t, "/portal/endpoints/"+ep+"/"+action, url.Values{"csrf": {b.csrf(t)}}); p.status != http.StatusSeeOther {
			t.Fatalf("%s: %d\n%s", action, p.status, p.body)
		}
	}
	p := b.get(t, "/portal/events/log?type=webhook_endpoint.*")
	if p.status != 200 || !strings.Contains(p.body, "webhook_endpoint.disabled") || !strings.Contains(p.body, "webhook_endpoint.enabled") ||
		!strings.Contains(p.body, ep) {
		t.Errorf("the history of webhook_endpoint.*: %d, want the two events about %s:\n%s", p.status, ep, p.body)
	}
}
