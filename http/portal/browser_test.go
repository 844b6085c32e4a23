package portal_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/uptrace/bun"

	"oficina/dispatch"
	"oficina/dispatch/recovery"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/streams"
	"oficina/tenant"
)

// ScreenshotsEnv names the directory the browser test writes its
// screenshots to (make portal-screenshots: docs/portal); unset, they go to
// a temporary directory.
const ScreenshotsEnv = "OFICINA_PORTAL_SCREENSHOTS"

// chromium finds the browser: the Debian package's, or one on PATH. Under
// CI a missing browser fails the test (.ci/run installs it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium not found: CI must install it (.ci/run: apt-get install -y chromium)")
	}
	t.Skip("chromium not found: install the Debian package chromium (apt-get install chromium) to run the portal in a real browser")
	return ""
}

// tab is one headless Chromium tab with a fresh profile.
func tab(t *testing.T, width, height int) context.Context {
	t.Helper()
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, height))
	t.Cleanup(cancel)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	// Start the browser and the tab now, under this context: steps run
	// under shorter ones.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	return ctx
}

// shots writes full-page screenshots.
type shots struct {
	t   *testing.T
	dir string
}

func newShots(t *testing.T) shots {
	dir := os.Getenv(ScreenshotsEnv)
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return shots{t: t, dir: dir}
}

func (s shots) take(ctx context.Context, name string) {
	s.t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		s.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, name+".png"), png, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// do runs browser steps, failing the test on error.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
}

// text is the visible text of sel.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("browser: text of %s: %v", sel, err)
	}
	return s
}

// waitText reloads the page until sel's text holds want.
func waitText(t *testing.T, ctx context.Context, sel, want string) string {
	t.Helper()
	return waitUntil(t, ctx, sel, fmt.Sprintf("%q", want), func(s string) bool { return strings.Contains(s, want) })
}

// waitUntil reloads the page until sel's text is what ok wants.
func waitUntil(t *testing.T, ctx context.Context, sel, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := text(t, ctx, sel)
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("browser: %s never showed %s; last:\n%s", sel, what, got)
		}
		time.Sleep(500 * time.Millisecond)
		do(t, ctx, "reload", chromedp.Reload())
	}
}

// Issue 18, "Done when": the portal in a real browser. Headless Chromium
// logs in through a one-time link, creates an endpoint, sees a failed
// delivery's attempt as sent and got, recovers a time range and the
// resends arrive at the receiver with their events' ids; a session of
// another company gets 404 on this company's endpoint, and a revoked
// session is refused on its next request. Each page is photographed for
// docs/portal.md.
func TestPortalInARealBrowser(t *testing.T) {
	t.Parallel()
	var ok atomic.Bool // the receiver fails until the test says otherwise
	srv, got := testkit.Receiver(t, func(w http.ResponseWriter, _ *http.Request) {
		if ok.Load() {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error": "down for maintenance"}`))
	})
	guard := testkit.LoopbackGuard(t, srv)
	e := newEnv(t, httpkit.APIOptions{Destinations: guard})
	testkit.Dispatcher(t, dispatch.Config{JS: e.js, Client: guard.Client(), Partitions: 4})
	rec := &recovery.Runner{DB: testkit.WorkerDB(t), Publisher: streams.NewPublisher(testkit.DB(t), e.js, nil),
		Interval: 200 * time.Millisecond, Only: []string{e.co.Company.ID}}
	rctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = rec.Run(rctx) }()
	t.Cleanup(func() { stop(); <-done })
	e.api.Admin(t, "PATCH", "/companies/"+e.co.Company.ID, map[string]any{"name": "Oficina Demo Ltda"})
	shot := newShots(t)
	ctx := tab(t, 1200, 900)

	// Log in through a one-time link (the script posts the form at once).
	link := e.link(t, "manage_endpoints", "view_secret", "recover")
	do(t, ctx, "log in", chromedp.Navigate(link+"&lang=pt-BR"), chromedp.WaitVisible(chromedp.CSS(`a[href="/portal/endpoints/new"]`)))

	// Create an endpoint on the test receiver: its secret is shown once.
	do(t, ctx, "create an endpoint",
		chromedp.Click(chromedp.CSS(`a[href="/portal/endpoints/new"]`)), chromedp.WaitVisible(chromedp.CSS(`#url`)),
		chromedp.SetValue(chromedp.CSS(`#url`), srv.URL+"/hooks/oficina"),
		chromedp.SetValue(chromedp.CSS(`#description`), "ERP"),
		chromedp.Click(chromedp.CSS(`input[name="events"][value="*"]`)))
	shot.take(ctx, "endpoint-new")
	do(t, ctx, "submit", chromedp.Submit(chromedp.CSS(`#url`)), chromedp.WaitVisible(chromedp.CSS(`#secret`)))
	if s := text(t, ctx, "#secret"); !strings.HasPrefix(s, "whsec_") {
		t.Fatalf("secret shown %q", s)
	}
	shot.take(ctx, "secret")
	do(t, ctx, "open the endpoint", chromedp.Click(chromedp.CSS(`main a.button`)), chromedp.WaitVisible(chromedp.CSS(`form[action$="/recover"]`)))
	endpointURL, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}

	// Two events reach the endpoint while the receiver is down: both fail.
	all := e.co.OwnerKey(t, tenant.AllPermissions()...)
	r := e.api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: all, Body: map[string]any{"name": "Maria Souza", "email": "maria@example.com"}})
	if r.Status != 201 {
		t.Fatalf("lead: %d %s", r.Status, r.Raw)
	}
	failedEvents := waitFailed(t, e, 2)
	do(t, ctx, "endpoints", chromedp.Navigate(e.api.URL+"/portal/"), chromedp.WaitVisible(chromedp.CSS(`table.stack`)))
	if front := text(t, ctx, "main"); !strings.Contains(front, srv.URL) || !strings.Contains(front, "100.0%") {
		t.Errorf("front page, the endpoint failing:\n%s", front)
	}
	shot.take(ctx, "endpoints")

	// The delivery log, filtered to failures, and one failed delivery's
	// attempts as sent and got.
	do(t, ctx, "open the log", chromedp.Navigate(endpointURL+"/deliveries"), chromedp.WaitVisible(chromedp.CSS(`#status`)),
		chromedp.SetValue(chromedp.CSS(`#status`), "failed"), chromedp.Submit(chromedp.CSS(`#status`)),
		chromedp.WaitVisible(chromedp.CSS(`table.stack tbody tr`)))
	if log := text(t, ctx, "main"); strings.Count(log, "falhou") < 2 {
		t.Fatalf("filtered log:\n%s", log)
	}
	do(t, ctx, "open a delivery", chromedp.Click(chromedp.CSS(`table.stack tbody tr a`)), chromedp.WaitVisible(chromedp.CSS(`.attempt`)))
	detail := text(t, ctx, "main")
	for _, want := range []string{"HTTP 503", "down for maintenance", "webhook-signature", "Webhook-Id", "Retry-After", "automática", "ms"} {
		if !strings.Contains(strings.ToLower(detail), strings.ToLower(want)) {
			t.Errorf("attempt detail lacks %q:\n%s", want, detail)
		}
	}
	shot.take(ctx, "delivery")

	// The receiver is back: recover the last hour. Count, then resend.
	ok.Store(true)
	do(t, ctx, "count", chromedp.Navigate(endpointURL), chromedp.WaitVisible(chromedp.CSS(`#since`)),
		chromedp.Submit(chromedp.CSS(`#since`)), chromedp.WaitVisible(chromedp.CSS(`button[name="confirm"]`)))
	if c := text(t, ctx, "main"); !strings.Contains(c, "2 entregas serão reenviadas") {
		t.Fatalf("dry run:\n%s", c)
	}
	shot.take(ctx, "recover")
	do(t, ctx, "resend", chromedp.Click(chromedp.CSS(`button[name="confirm"]`)), chromedp.WaitVisible(chromedp.CSS(`#task-status`)))
	waitText(t, ctx, "#task-status", "concluída")
	if s := text(t, ctx, "#task-sent"); s != "2" {
		t.Errorf("task sent %q, want 2", s)
	}
	shot.take(ctx, "task")
	arrived := map[string]bool{}
	for deadline := time.After(30 * time.Second); len(arrived) < 2; {
		select {
		case rcv := <-got:
			if id := rcv.Header.Get("webhook-id"); failedEvents[id] && ok.Load() {
				arrived[id] = true
			}
		case <-deadline:
			t.Fatalf("resends arrived for %v, want the failed events %v", arrived, failedEvents)
		}
	}

	// The whole log: the failures and their resends, each with the
	// receiver's answer.
	do(t, ctx, "the whole log", chromedp.Navigate(endpointURL+"/deliveries"), chromedp.WaitVisible(chromedp.CSS(`table.stack tbody tr`)))
	if log := waitUntil(t, ctx, "main", "both resends answered 204", func(s string) bool { return strings.Count(s, "204") == 2 }); !strings.Contains(log, "503") {
		t.Errorf("the log does not show the failures' answers:\n%s", log)
	}
	shot.take(ctx, "deliveries")

	// The endpoint with its health, the catalogue, and the endpoint page on
	// a phone.
	do(t, ctx, "endpoint", chromedp.Navigate(endpointURL), chromedp.WaitVisible(chromedp.CSS(`.stat`)))
	shot.take(ctx, "endpoint")
	do(t, ctx, "catalogue", chromedp.Navigate(e.api.URL+"/portal/events"), chromedp.WaitVisible(chromedp.CSS(`#event-task\.created`)),
		chromedp.Click(chromedp.CSS(`#event-task\.created summary`)), chromedp.WaitVisible(chromedp.CSS(`#event-task\.created pre`)))
	if ex := text(t, ctx, `#event-task\.created pre`); !strings.Contains(ex, `"type": "task.created"`) {
		t.Errorf("task.created example:\n%s", ex)
	}
	shot.take(ctx, "events")
	do(t, ctx, "phone", chromedp.EmulateViewport(phoneWidth, 844, chromedp.EmulateMobile),
		chromedp.Navigate(e.api.URL+"/portal/"), chromedp.WaitVisible(chromedp.CSS(`table.stack`)))
	shot.take(ctx, "endpoints-phone")
	fitsAPhone(t, ctx, "endpoints")
	do(t, ctx, "phone endpoint", chromedp.Navigate(endpointURL), chromedp.WaitVisible(chromedp.CSS(`.stat`)))
	shot.take(ctx, "endpoint-phone")
	fitsAPhone(t, ctx, "endpoint")
	do(t, ctx, "phone delivery", chromedp.Navigate(endpointURL+"/deliveries"), chromedp.WaitVisible(chromedp.CSS(`table.stack tbody tr a`)),
		chromedp.Click(chromedp.CSS(`table.stack tbody tr a`)), chromedp.WaitVisible(chromedp.CSS(`.attempt`)))
	shot.take(ctx, "delivery-phone")
	fitsAPhone(t, ctx, "delivery")
	do(t, ctx, "desktop", chromedp.EmulateReset())

	// A session of another company: this company's endpoint is 404.
	other := testkit.NewCompany(t, tenant.CompanyInput{})
	otherKey := other.OwnerKey(t, webhookPerms...)
	or := e.api.Do(t, httpkit.Req{Method: "POST", Path: "/portal_sessions", Key: otherKey, Body: map[string]any{}})
	octx := tab(t, 1200, 900)
	do(t, octx, "other company", chromedp.Navigate(or.Body["url"].(string)+"&lang=pt-BR"), chromedp.WaitVisible(chromedp.CSS(`main h1`)),
		chromedp.Navigate(endpointURL), chromedp.WaitVisible(chromedp.CSS(`main h1`)))
	if h := text(t, octx, "main h1"); h != "Não encontrado" {
		t.Errorf("another company's session on this endpoint: %q, want Não encontrado", h)
	}

	// A revoked session is refused on its next request.
	ls := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/portal_sessions", Key: e.key})
	for _, s := range ls.Body["data"].([]any) {
		if s.(map[string]any)["status"] == "active" {
			e.api.Do(t, httpkit.Req{Method: "POST", Path: "/portal_sessions/" + s.(map[string]any)["id"].(string) + "/revoke", Key: e.key})
		}
	}
	do(t, ctx, "after revocation", chromedp.Navigate(endpointURL), chromedp.WaitVisible(chromedp.CSS(`main h1`)))
	if h := text(t, ctx, "main h1"); h != "Sessão inválida ou encerrada" {
		t.Errorf("revoked session: %q", h)
	}
	shot.take(ctx, "signed-out")
}

// phoneWidth is the phone the layout is checked on (CSS pixels).
const phoneWidth = 390

// layoutFaultsJS opens every <details> and measures what a page meant
// for width CSS pixels gets wrong: how much wider it is (a phone browser
// zooms out to fit it, so the window's own width grows with it), and the
// words of its text that wrap inside themselves (a range over the word
// has boxes on more than one line). Words end at hyphens too, a sensible
// place to wrap ("date-|time"); URLs, tokens and code may break
// anywhere; hidden text has no boxes.
const layoutFaultsJS = `((width) => {
  document.querySelectorAll("details").forEach(d => { d.open = true; });
  const split = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n; (n = walk.nextNode());) {
    const el = n.parentElement;
    if (!el || el.closest("pre, code, .url, .token, .secret, script") || el.getClientRects().length === 0) continue;
    for (const m of n.data.matchAll(/[^\s-]+/g)) {
      const r = document.createRange();
      r.setStart(n, m.index);
      r.setEnd(n, m.index + m[0].length);
      const lines = new Set([...r.getClientRects()].filter(b => b.width > 0).map(b => Math.round(b.top)));
      if (lines.size > 1) split.push(m[0]);
    }
  }
  return {overflow: document.documentElement.scrollWidth - width, split: split};
})`

// layoutFaults is what layoutFaultsJS measures.
type layoutFaults struct {
	Overflow int      `json:"overflow"` // CSS pixels
	Split    []string `json:"split"`
}

// fitsAPhone fails the test when the page in ctx is wider than a phone
// or breaks a word mid-letter. It opens the page's <details>.
func fitsAPhone(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	got, err := chromedp.Run(c, chromedp.Evaluate[layoutFaults](fmt.Sprintf("(%s)(%d)", layoutFaultsJS, phoneWidth)))
	if err != nil {
		t.Fatalf("browser: layout of %s: %v", page, err)
	}
	if got.Overflow > 0 || len(got.Split) > 0 {
		t.Errorf("%s at %d px: scrolls %d px sideways; words broken mid-letter: %q", page, phoneWidth, got.Overflow, got.Split)
	}
}

// Issue 23 item 5: at phone width (390 px) the pages fit the screen and
// wrap between words: a table row becomes a card of label/value lines,
// URLs and tokens may break anywhere, event types after their dots, and
// no other word breaks mid-letter — the endpoint list broke "ERP" and
// the status badges' reasons apart.
func TestAtPhoneWidthPagesFitAndWrapBetweenWords(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{})
	var ep string
	for i, u := range []string{"https://hooks.example.com/erp",
		"https://hooks.example.com/webhooks/oficina/receiver/production?tenant=acme-industrial-ltda"} {
		r := e.api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints", Key: e.key, Body: map[string]any{"url": u,
			"events": []string{"financial_transaction.*", "service_order.*"}, "description": "ERP de produção (financeiro)"}})
		if r.Status != 201 {
			t.Fatalf("endpoint: %d %s", r.Status, r.Raw)
		}
		if ep = r.Body["id"].(string); i == 0 {
			e.api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + ep + "/disable", Key: e.key})
		}
	}
	now := time.Now()
	var failed testkit.LoggedDelivery
	for i, typ := range []string{"financial_transaction.updated", "service_order.status_changed", "financial_transaction.created"} {
		status := []string{streams.StatusSucceeded, streams.StatusFailed, streams.StatusPending}[i]
		if d := e.co.LogDelivery(t, ep, typ, status, now.Add(-time.Duration(i)*time.Minute)); status == streams.StatusFailed {
			failed = d
		}
	}
	r := e.api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + ep + "/deliveries/" + failed.DeliveryID + "/resend", Key: e.key})
	if r.Status != http.StatusAccepted {
		t.Fatalf("resend: %d %s", r.Status, r.Raw)
	}
	resend := r.Body["id"].(string)
	ctx := tab(t, phoneWidth, 844)
	do(t, ctx, "phone", chromedp.EmulateViewport(phoneWidth, 844, chromedp.EmulateMobile),
		chromedp.Navigate(e.link(t, "manage_endpoints", "view_secret", "recover")+"&lang=pt-BR"),
		chromedp.WaitVisible(chromedp.CSS(`table.stack`)))
	fitsAPhone(t, ctx, "endpoints")
	for _, page := range []string{"/portal/endpoints/" + ep, "/portal/endpoints/" + ep + "/deliveries",
		"/portal/endpoints/" + ep + "/deliveries/" + resend, "/portal/endpoints/new", "/portal/events"} {
		do(t, ctx, page, chromedp.Navigate(e.api.URL+page), chromedp.WaitVisible(chromedp.CSS(`main h1`)))
		fitsAPhone(t, ctx, page)
	}
}

// waitFailed waits until n deliveries of the company failed and returns
// their event ids.
func waitFailed(t *testing.T, e *env, n int) map[string]bool {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var ds []streams.Delivery
		e.co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
			return tx.NewSelect().Model(&ds).Where("status = ?", streams.StatusFailed).Scan(ctx)
		})
		if len(ds) >= n {
			out := map[string]bool{}
			for _, d := range ds {
				out[d.EventID] = true
			}
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries failed, want %d", len(ds), n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
