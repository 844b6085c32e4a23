package portal_test

import (
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
)

// Issue 18 item 2: every portal answer carries a strict
// Content-Security-Policy (this origin's script and style only, forms to
// this origin, no framing unless allowed), nosniff, no referrer and no
// caching of pages.
func TestEveryAnswerCarriesAStrictContentSecurityPolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{})
	b := newBrowser(t, e.api.URL)
	for _, path := range []string{"/portal/", "/portal/login?token=nothing", "/portal/nowhere", "/portal/assets/portal.css"} {
		p := b.get(t, path)
		csp := p.header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "form-action 'self'",
			"base-uri 'none'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") || strings.Contains(csp, "*") {
			t.Errorf("%s: CSP %q allows inline code or any source", path, csp)
		}
		if p.header.Get("X-Content-Type-Options") != "nosniff" || p.header.Get("Referrer-Policy") != "no-referrer" ||
			p.header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: headers %v", path, p.header)
		}
	}
	// No inline script or style anywhere: the CSP would block it.
	p := b.login(t, e.link(t, "manage_endpoints", "recover"))
	front := b.get(t, "/portal/")
	if p.status != http.StatusSeeOther || front.status != 200 {
		t.Fatalf("login %d, front page %d", p.status, front.status)
	}
	for _, bad := range []string{"<script>", "style=", "onclick", "onsubmit", "javascript:", "<style"} {
		if strings.Contains(front.body, bad) {
			t.Errorf("the front page holds %q", bad)
		}
	}
	if front.header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", front.header.Get("Cache-Control"))
	}
}

// Issue 18 item 2: frame-ancestors is a setting: the operator's origins
// for every company, and a company's own (settings.portal_frame_ancestors)
// on its pages; values that are not origins are ignored.
func TestFrameAncestorsAreConfigurable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{FrameAncestors: []string{"https://erp.example.com"}})
	r := e.api.Admin(t, "PATCH", "/companies/"+e.co.Company.ID, map[string]any{"settings": map[string]any{
		"portal_frame_ancestors": []string{"https://app.customer.example", "javascript:alert(1)", "*"}}})
	if r.Status != 200 {
		t.Fatalf("settings: %d %s", r.Status, r.Raw)
	}
	b := newBrowser(t, e.api.URL)
	link := e.link(t)
	login := b.get(t, link)
	b.login(t, link)
	for name, p := range map[string]page{"login": login, "front": b.get(t, "/portal/")} {
		csp := p.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors https://erp.example.com https://app.customer.example") ||
			strings.Contains(csp, "javascript") || strings.Contains(csp, "*") || p.header.Get("X-Frame-Options") != "" {
			t.Errorf("%s: CSP %q, X-Frame-Options %q", name, csp, p.header.Get("X-Frame-Options"))
		}
	}
	other := newBrowser(t, e.api.URL)
	if csp := other.get(t, "/portal/").header.Get("Content-Security-Policy"); strings.Contains(csp, "customer") {
		t.Errorf("without a session the company's origins are allowed: %q", csp)
	}
}

// Issue 18 item 2: the session cookie is HttpOnly and SameSite=Strict,
// and Secure (with the __Host- prefix, so host-only at Path=/) behind TLS:
// here a trusted proxy that says https; an untrusted peer saying so is not
// believed. The one-time link works once.
func TestTheSessionCookieIsHttpOnlyStrictAndSecureBehindTLS(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		proxies []netip.Prefix
		secure  bool
	}{
		{"plain HTTP", nil, false},
		{"X-Forwarded-Proto from an untrusted peer", []netip.Prefix{netip.MustParsePrefix("10.9.9.9/32")}, false},
		{"behind a trusted TLS proxy", []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, true},
	} {
		e := newEnv(t, httpkit.APIOptions{TrustedProxies: tc.proxies})
		b := newBrowser(t, e.api.URL)
		link := e.link(t)
		login := b.do(t, "GET", link, nil, map[string]string{"X-Forwarded-Proto": "https"})
		p := b.do(t, "POST", "/portal/login", url.Values{"token": {find(t, tokenRE, login.body)}, "nonce": {find(t, nonceRE, login.body)}},
			map[string]string{"X-Forwarded-Proto": "https"})
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/portal/" {
			t.Fatalf("%s: login %d %v", tc.name, p.status, p.header)
		}
		ck := sessionCookie(t, p.header)
		name := "oficina_portal"
		if tc.secure {
			name = "__Host-oficina_portal"
		}
		if ck.Name != name || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Secure != tc.secure ||
			ck.Path != "/" || ck.Domain != "" || ck.Expires.IsZero() {
			t.Errorf("%s: cookie %+v, want %s HttpOnly SameSite=Strict Secure=%v Path=/ host-only, expiring", tc.name, ck, name, tc.secure)
		}
		if again := newBrowser(t, e.api.URL).login(t, link); again.status != http.StatusUnauthorized {
			t.Errorf("%s: second use of the link: %d, want 401", tc.name, again.status)
		}
	}
}

func sessionCookie(t *testing.T, h http.Header) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if strings.HasSuffix(c.Name, "oficina_portal") {
			return c
		}
	}
	t.Fatalf("no session cookie in %v", h)
	return nil
}

// Issue 18 item 2: every form carries a CSRF token bound to the session;
// a post without it, with another session's, or that a browser says came
// from another site, is refused and changes nothing.
func TestEveryFormIsProtectedFromCrossSiteRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{})
	b := newBrowser(t, e.api.URL)
	b.login(t, e.link(t, "manage_endpoints"))
	other := newBrowser(t, e.api.URL)
	other.login(t, e.link(t, "manage_endpoints"))
	form := func(csrf string) url.Values {
		return url.Values{"csrf": {csrf}, "url": {"https://hooks.example.com/x"}, "events": {"*"}}
	}
	for name, p := range map[string]page{
		"no token":             b.post(t, "/portal/endpoints", url.Values{"url": {"https://hooks.example.com/x"}, "events": {"*"}}),
		"another session's":    b.post(t, "/portal/endpoints", form(other.csrf(t))),
		"cross-site":           b.do(t, "POST", "/portal/endpoints", form(b.csrf(t)), map[string]string{"Sec-Fetch-Site": "cross-site"}),
		"another origin":       b.do(t, "POST", "/portal/endpoints", form(b.csrf(t)), map[string]string{"Sec-Fetch-Site": "", "Origin": "https://evil.example"}),
		"login without nonce":  b.post(t, "/portal/login", url.Values{"token": {"opl_x"}}),
		"logout without token": b.post(t, "/portal/logout", url.Values{}),
	} {
		if p.status != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, p.status)
		}
	}
	if r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/webhook_endpoints", Key: e.key}); len(r.Body["data"].([]any)) != 0 {
		t.Errorf("a refused form created an endpoint: %s", r.Raw)
	}
	if p := b.post(t, "/portal/endpoints", form(b.csrf(t))); p.status != 200 || !strings.Contains(p.body, "whsec_") {
		t.Errorf("with its token: %d %s", p.status, p.body)
	}
}

// Issue 18 item 1: signing out revokes the session: the cookie is
// cleared, and the token, replayed, is refused.
func TestSigningOutRevokesTheSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{})
	b := newBrowser(t, e.api.URL)
	ck := sessionCookie(t, b.login(t, e.link(t)).header)
	p := b.post(t, "/portal/logout", url.Values{"csrf": {b.csrf(t)}})
	if p.status != 200 || sessionCookie(t, p.header).MaxAge >= 0 {
		t.Fatalf("sign out: %d %v", p.status, p.header)
	}
	replay := newBrowser(t, e.api.URL)
	if p := replay.do(t, "GET", "/portal/", nil, map[string]string{"Cookie": ck.Name + "=" + ck.Value}); p.status != http.StatusUnauthorized {
		t.Errorf("the token after sign-out: %d, want 401", p.status)
	}
	ls := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/portal_sessions", Key: e.key})
	if s := ls.Body["data"].([]any)[0].(map[string]any); s["status"] != "revoked" {
		t.Errorf("session after sign-out: %v", s)
	}
}

// Issue 24 item 3: behind TLS the session is read from the __Host-
// cookie only. An unprefixed cookie there may have been planted by a
// sibling subdomain or a plain-HTTP answer (the prefix is what stops
// that), so it is refused like no cookie; over plain HTTP (local
// development) the unprefixed name is the session's.
func TestBehindTLSOnlyTheHostPrefixedCookieIsAccepted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	// A valid session token, as an attacker holding a session of their own
	// would plant it.
	tok := sessionCookie(t, newBrowser(t, e.api.URL).login(t, e.link(t)).header).Value
	for _, tc := range []struct {
		name, cookie string
		tls          bool
		want         int
	}{
		{"TLS, unprefixed", "oficina_portal", true, http.StatusUnauthorized},
		{"TLS, __Host-", "__Host-oficina_portal", true, http.StatusOK},
		{"TLS, both, unprefixed first", "oficina_portal=x; __Host-oficina_portal", true, http.StatusOK},
		{"plain HTTP, unprefixed", "oficina_portal", false, http.StatusOK},
		{"plain HTTP, __Host-", "__Host-oficina_portal", false, http.StatusUnauthorized},
	} {
		h := map[string]string{"Cookie": tc.cookie + "=" + tok}
		if tc.tls {
			h["X-Forwarded-Proto"] = "https"
		}
		if p := newBrowser(t, e.api.URL).do(t, "GET", "/portal/", nil, h); p.status != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, p.status, tc.want)
		}
	}
}

// Issue 24 item 7: while the database cannot be reached the portal
// answers its 503 page with Retry-After, as the API answers 503
// service_unavailable — not 500 — and shows nothing of the driver's
// message; once the database is back the same session works again.
func TestADatabaseOutageAnswersThe503PageWithRetryAfter(t *testing.T) {
	t.Parallel()
	pool, proxy := testkit.ProxiedDB(t)
	e := newEnv(t, httpkit.APIOptions{DB: pool})
	b := newBrowser(t, e.api.URL)
	spare := e.link(t)
	b.login(t, e.link(t, "manage_endpoints"))
	csrf := b.csrf(t)

	proxy.Cut()
	login := newBrowser(t, e.api.URL)
	loginPage := login.get(t, spare)
	for name, p := range map[string]page{
		"a page":  b.get(t, "/portal/?lang=en"),
		"a form":  b.post(t, "/portal/endpoints", url.Values{"csrf": {csrf}, "url": {"https://hooks.example.com/x"}, "events": {"*"}}),
		"a login": login.post(t, "/portal/login", url.Values{"token": {find(t, tokenRE, loginPage.body)}, "nonce": {find(t, nonceRE, loginPage.body)}}),
	} {
		if p.status != http.StatusServiceUnavailable || p.header.Get("Retry-After") == "" {
			t.Errorf("%s: %d, Retry-After %q; want 503 with Retry-After", name, p.status, p.header.Get("Retry-After"))
		}
		if !strings.Contains(p.body, "<html lang=") {
			t.Errorf("%s: not the portal's page:\n%s", name, p.body)
		}
		for _, leak := range []string{"oficina_app", "oficina_test", "127.0.0.1", "failed to connect", "dial", "refused"} {
			if strings.Contains(p.body, leak) {
				t.Errorf("%s: the page shows %q", name, leak)
			}
		}
	}
	if err := proxy.Restore(); err != nil {
		t.Fatal(err)
	}
	if p := b.get(t, "/portal/"); p.status != http.StatusOK {
		t.Errorf("after the outage: %d", p.status)
	}
}

// Issue 24, smaller: the rotate form's grace period has the API's bounds
// (0 to 604800 seconds): a number that would overflow into a short grace
// (18446744074 s wraps to 0.29 s) is 422 out_of_range, as on the API,
// and rotates nothing.
func TestTheRotationGracePeriodHasTheAPIsBounds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{})
	ep := e.endpoint(t)
	b, csrf := e.signIn(t, "manage_endpoints")
	for _, grace := range []string{"18446744074", "-1", "604801", "99999999999999999999", "1.5", "day"} {
		p := b.post(t, "/portal/endpoints/"+ep+"/rotate", url.Values{"csrf": {csrf}, "grace": {grace}})
		if p.status != http.StatusUnprocessableEntity || strings.Contains(p.body, "whsec_") {
			t.Errorf("grace %s: %d, want 422 and no new secret", grace, p.status)
		}
	}
	if r := e.api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints/" + ep + "/rotate_secret", Key: e.key,
		Body: map[string]any{"grace_period_seconds": 18446744074}}); r.Status != 422 {
		t.Errorf("the API: %d %s, want 422 like the portal", r.Status, r.Raw)
	}
	if r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/webhook_endpoints/" + ep, Key: e.key}); r.Body["previous_secret_expires_at"] != nil {
		t.Errorf("a refused rotation rotated: %s", r.Raw)
	}
	for _, grace := range []string{"0", "604800", ""} {
		if p := b.post(t, "/portal/endpoints/"+ep+"/rotate", url.Values{"csrf": {csrf}, "grace": {grace}}); p.status != 200 || !strings.Contains(p.body, "whsec_") {
			t.Errorf("grace %q: %d, want the new secret", grace, p.status)
		}
	}
}

// Issue 24, smaller: a secret is revealed only while the company may use
// the API. With the API off, or the subscription lapsed, the API refuses
// every key (403) and the portal refuses the reveal the same way.
func TestASecretIsNotRevealedWhileTheCompanysAPIIsOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{})
	ep := e.endpoint(t)
	b, csrf := e.signIn(t, "view_secret")
	reveal := func() page { return b.post(t, "/portal/endpoints/"+ep+"/reveal", url.Values{"csrf": {csrf}}) }
	if p := reveal(); p.status != 200 || !strings.Contains(p.body, "whsec_") {
		t.Fatalf("reveal with the API on: %d", p.status)
	}
	for _, off := range []map[string]any{{"api_enabled": false}, {"subscription_status": "past_due"}} {
		if r := e.api.Admin(t, "PATCH", "/companies/"+e.co.Company.ID, off); r.Status != 200 {
			t.Fatalf("%v: %d %s", off, r.Status, r.Raw)
		}
		if r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/webhook_endpoints/" + ep, Key: e.key}); r.Status != 403 {
			t.Errorf("%v: the API answers %d, want 403", off, r.Status)
		}
		if p := reveal(); p.status != http.StatusForbidden || strings.Contains(p.body, "whsec_") {
			t.Errorf("%v: reveal %d, want 403 and no secret", off, p.status)
		}
		e.api.Admin(t, "PATCH", "/companies/"+e.co.Company.ID, map[string]any{"api_enabled": true, "subscription_status": "active"})
	}
	if p := reveal(); p.status != 200 || !strings.Contains(p.body, "whsec_") {
		t.Errorf("reveal with the API back on: %d", p.status)
	}
}

// Issue 24, smaller: /portal/assets/ serves its files and lists nothing:
// the directory is the portal's 404.
func TestTheAssetsDirectoryIsNotListed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpkit.APIOptions{})
	b := newBrowser(t, e.api.URL)
	for _, path := range []string{"/portal/assets/", "/portal/assets/?C=M;O=D", "/portal/assets/nothing.css"} {
		if p := b.get(t, path); p.status != http.StatusNotFound || strings.Contains(p.body, `href="portal.js"`) || !strings.Contains(p.body, "<html lang=") {
			t.Errorf("%s: %d, want the portal's 404 without a listing\n%s", path, p.status, p.body)
		}
	}
	for _, f := range []string{"portal.css", "portal.js"} {
		if p := b.get(t, "/portal/assets/"+f); p.status != 200 || p.header.Get("Cache-Control") == "no-store" {
			t.Errorf("%s: %d %v", f, p.status, p.header)
		}
	}
}
