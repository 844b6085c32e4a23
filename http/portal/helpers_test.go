package portal_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"oficina/dispatch/destguard"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/streams"
	"oficina/streams/jsconfig"
	"oficina/tenant"
)

// env is the public API with the portal beside it, a company with an
// owner key that may do everything with webhooks, and a browser-like
// client (cookie jar, no redirects followed unless asked).
type env struct {
	api *httpkit.API
	js  jetstream.JetStream
	co  *testkit.Company
	key string
}

var allReads = []string{"clients:read", "finance:read", "products:read", "quotes:read", "sales:read",
	"service_orders:read", "services:read", "tasks:read"}

var webhookPerms = append([]string{"webhooks:create", "webhooks:read", "webhooks:update", "webhooks:delete"}, allReads...)

func newEnv(t *testing.T, o httpkit.APIOptions) *env {
	t.Helper()
	if o.Destinations == nil {
		g, err := destguard.New(destguard.Config{Resolver: testkit.DNS{"hooks.example.com": {"93.184.215.14"}}})
		if err != nil {
			t.Fatal(err)
		}
		o.Destinations = g
	}
	e := &env{}
	if o.Publisher == nil {
		e.js = testkit.JetStream(t, jsconfig.Config{Partitions: 4})
		o.Publisher = streams.NewPublisher(testkit.DB(t), e.js, nil)
	}
	e.api = httpkit.NewAPI(t, o)
	e.co = testkit.NewCompany(t, tenant.CompanyInput{})
	e.key = e.co.OwnerKey(t, webhookPerms...)
	return e
}

// link mints a session through the public API and returns its link.
func (e *env) link(t *testing.T, caps ...string) string {
	t.Helper()
	body := map[string]any{}
	if len(caps) > 0 {
		body["capabilities"] = caps
	}
	r := e.api.Do(t, httpkit.Req{Method: "POST", Path: "/portal_sessions", Key: e.key, Body: body})
	if r.Status != 201 {
		t.Fatalf("mint: %d %s", r.Status, r.Raw)
	}
	return r.Body["url"].(string)
}

// browser is an HTTP client with a cookie jar that does not follow
// redirects, sending what a browser sends on same-origin form posts.
type browser struct {
	c    *http.Client
	base string
}

// signIn is a browser signed in to the portal with a session of caps, and
// the session's CSRF token.
func (e *env) signIn(t *testing.T, caps ...string) (*browser, string) {
	t.Helper()
	b := newBrowser(t, e.api.URL)
	b.login(t, e.link(t, caps...))
	return b, b.csrf(t)
}

func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &browser{base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(t *testing.T, method, path string, form url.Values, h map[string]string) page {
	t.Helper()
	var rd io.Reader
	if form != nil {
		rd = strings.NewReader(form.Encode())
	}
	u := path
	if !strings.HasPrefix(u, "http") {
		u = b.base + path
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, header: resp.Header, body: string(raw)}
}

func (b *browser) get(t *testing.T, path string) page {
	t.Helper()
	return b.do(t, "GET", path, nil, nil)
}

func (b *browser) post(t *testing.T, path string, form url.Values) page {
	t.Helper()
	return b.do(t, "POST", path, form, nil)
}

var (
	nonceRE = regexp.MustCompile(`name="nonce" value="([^"]+)"`)
	tokenRE = regexp.MustCompile(`name="token" value="([^"]+)"`)
	csrfRE  = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
)

func find(t *testing.T, re *regexp.Regexp, body string) string {
	t.Helper()
	m := re.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no %s in:\n%s", re, body)
	}
	return m[1]
}

// login opens link as a browser does: the login page, then its form.
func (b *browser) login(t *testing.T, link string) page {
	t.Helper()
	p := b.get(t, link)
	if p.status != 200 {
		t.Fatalf("login page: %d %s", p.status, p.body)
	}
	return b.post(t, "/portal/login", url.Values{"token": {find(t, tokenRE, p.body)}, "nonce": {find(t, nonceRE, p.body)}})
}

// csrf is the CSRF token of the portal's forms, read from its front page.
func (b *browser) csrf(t *testing.T) string {
	t.Helper()
	return find(t, csrfRE, b.get(t, "/portal/").body)
}
