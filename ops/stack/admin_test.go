package stack

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"oficina/http/admin"
	"oficina/ops/config"
	"oficina/ops/metrics"
	"oficina/ops/testkit"
	"oficina/schema/service"
)

// Issue 15 item 7: /metrics can be put behind the operator token; by
// default it stays open for scrapers on the private admin listener.
func TestMetricsBehindTheOperatorToken(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := &Stack{db: testkit.DB(t), log: log}
	token := strings.Repeat("m", admin.MinTokenLen)
	adm := admin.New(admin.Deps{Base: service.Base{Log: log}, DB: testkit.DB(t), Token: token})
	for _, tc := range []struct {
		name         string
		requireToken bool
		auth         string
		status       int
	}{
		{"open by default", false, "", 200},
		{"behind the token, without it", true, "", 401},
		{"behind the token, a wrong one", true, "Bearer " + strings.Repeat("x", 40), 401},
		{"behind the token, with it", true, "Bearer " + token, 200},
	} {
		srv := httptest.NewServer(s.adminHandler(adm, metrics.New(), tc.requireToken))
		req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		srv.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.status)
		}
	}
}

// Issue 15 item 7: a configured operator token shorter than 32 bytes stops
// the process at start, with how to make one.
func TestShortAdminTokenRefusedAtStart(t *testing.T) {
	t.Parallel()
	s := &Stack{}
	cfg := config.Default()
	cfg.AdminToken = "too-short"
	if _, err := s.adminToken(cfg); err == nil || !strings.Contains(err.Error(), "at least 32 bytes") {
		t.Fatalf("got %v", err)
	}
}
