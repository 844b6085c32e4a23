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

// Issue 24 item 4: with OFICINA_PPROF, Go's profiles (goroutine stacks,
// heaps, CPU profiles) answer only the operator token, also when /metrics
// is open; without a token the process does not start.
func TestProfilesAlwaysNeedTheOperatorToken(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.DiscardHandler)
	token := strings.Repeat("p", admin.MinTokenLen)
	for _, requireToken := range []bool{false, true} {
		cfg := config.Default()
		cfg.MetricsAddr, cfg.Pprof, cfg.MetricsRequireToken = "127.0.0.1:0", true, requireToken
		ml, err := startMetrics(cfg, metrics.New(), token, log)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			path, auth string
			status     int
		}{
			{"/debug/pprof/", "", 401},
			{"/debug/pprof/goroutine?debug=2", "", 401},
			{"/debug/pprof/heap", "", 401},
			{"/debug/pprof/profile?seconds=1", "", 401},
			{"/debug/pprof/trace?seconds=1", "", 401},
			{"/debug/pprof/goroutine?debug=2", "Bearer " + strings.Repeat("x", admin.MinTokenLen), 401},
			{"/debug/pprof/goroutine?debug=1", "Bearer " + token, 200},
			{"/metrics", "", map[bool]int{false: 200, true: 401}[requireToken]},
			{"/metrics", "Bearer " + token, 200},
		} {
			req, _ := http.NewRequest("GET", "http://"+ml.addr()+tc.path, nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("require token %v, %s with %q: %d, want %d", requireToken, tc.path, tc.auth, resp.StatusCode, tc.status)
			}
			if resp.StatusCode == 401 && strings.Contains(string(body), "goroutine") {
				t.Errorf("require token %v, %s: a refusal that shows the profile", requireToken, tc.path)
			}
		}
		ml.stop()
	}
	for _, short := range []string{"", "too-short"} {
		cfg := config.Default()
		cfg.MetricsAddr, cfg.Pprof = "127.0.0.1:0", true
		if ml, err := startMetrics(cfg, metrics.New(), short, log); err == nil || !strings.Contains(err.Error(), "OFICINA_PPROF") {
			ml.stop()
			t.Errorf("profiles with the token %q: started (%v), want refused naming OFICINA_PPROF", short, err)
		}
	}
}
