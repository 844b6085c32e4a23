package docsui

import (
	"io"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// Issue 15 item 7: the /docs viewer is served from the binary at its pinned
// version, and the page names no third-party origin.
func TestViewerIsEmbeddedPinnedAndFirstParty(t *testing.T) {
	t.Parallel()
	sum, err := ViewerSHA256()
	if err != nil {
		t.Fatal(err)
	}
	if sum != PinnedRedocSHA256 {
		t.Fatalf("embedded viewer %s, pinned %s (%s): run make docs-ui", sum, PinnedRedocSHA256, PinnedRedoc)
	}
	h := Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/docs/", nil))
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != 200 || rec.Header().Get("Content-Security-Policy") != CSP {
		t.Fatalf("page: %d, CSP %q", rec.Code, rec.Header().Get("Content-Security-Policy"))
	}
	if m := regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).Find(body); m != nil {
		t.Errorf("the page loads from another origin: %s", m)
	}
	// Another origin only as Redoc's logo image, that one file (issue 23).
	if rest := strings.Replace(CSP, "img-src 'self' data: "+RedocLogo+";", "", 1); strings.Contains(rest, "http") || strings.Contains(CSP, "*") {
		t.Errorf("CSP allows another origin: %s", CSP)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/docs/redoc.standalone.js", nil))
	if rec.Code != 200 || !strings.Contains(rec.Header().Get("Content-Type"), "javascript") || rec.Body.Len() < 100_000 {
		t.Fatalf("viewer: %d %s %d bytes", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len())
	}
}

// Issue 23 item 6: the page's policy lets Redoc show its logo — the
// address its bundle loads it from, exactly, and as an image only — so
// loading /docs/ logs no policy violation.
func TestDocsPolicyAllowsRedocsLogoAndNothingBroader(t *testing.T) {
	t.Parallel()
	js, err := assets.ReadFile("assets/redoc.standalone.js")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `src:"`+RedocLogo+`"`) {
		t.Fatalf("the embedded viewer does not load its logo from %s: update RedocLogo", RedocLogo)
	}
	for _, d := range strings.Split(CSP, ";") {
		d = strings.TrimSpace(d)
		if strings.Contains(d, RedocLogo) != strings.HasPrefix(d, "img-src ") {
			t.Errorf("directive %q: the logo belongs to img-src alone", d)
		}
	}
}

// Issue 23 item 6: /favicon.ico is an icon, not a 404.
func TestFaviconIsServed(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	Favicon().ServeHTTP(rec, httptest.NewRequest("GET", "/favicon.ico", nil))
	b := rec.Body.Bytes()
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "image/x-icon" || len(b) < 22 || string(b[:4]) != "\x00\x00\x01\x00" {
		t.Fatalf("favicon: %d %s %d bytes % x", rec.Code, rec.Header().Get("Content-Type"), len(b), b[:min(len(b), 8)])
	}
}
