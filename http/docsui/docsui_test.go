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
	if strings.Contains(CSP, "http") || strings.Contains(CSP, "*") {
		t.Errorf("CSP allows another origin: %s", CSP)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/docs/redoc.standalone.js", nil))
	if rec.Code != 200 || !strings.Contains(rec.Header().Get("Content-Type"), "javascript") || rec.Body.Len() < 100_000 {
		t.Fatalf("viewer: %d %s %d bytes", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len())
	}
}
