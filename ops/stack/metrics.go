package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"oficina/http/admin"
	"oficina/http/wire"
	"oficina/ops/config"
	"oficina/ops/metrics"
)

// metricsListener serves /metrics (and, with OFICINA_PPROF, Go's
// profiles) on OFICINA_METRICS_ADDR: the way
// `oficina dispatch` and `oficina relay` are scraped (they have no admin
// listener), and a second way for serve and dev.
type metricsListener struct {
	srv *http.Server
	ln  net.Listener
	log *slog.Logger
}

// startMetrics listens on cfg.MetricsAddr and serves m there until stop;
// nil without an address. With OFICINA_METRICS_REQUIRE_TOKEN /metrics
// answers only the operator token (token), throttled like the admin API;
// Go's profiles (OFICINA_PPROF) always do.
func startMetrics(cfg config.Config, m *metrics.Metrics, token string, log *slog.Logger) (*metricsListener, error) {
	if cfg.MetricsAddr == "" {
		return nil, nil
	}
	h, err := metricsHandler(cfg, m, token)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("stack: listen %s (OFICINA_METRICS_ADDR): %w", cfg.MetricsAddr, err)
	}
	ml := &metricsListener{ln: ln, log: log, srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10}}
	go func() {
		if err := ml.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "err", err)
		}
	}()
	log.Info("metrics listening", "addr", ln.Addr().String())
	return ml, nil
}

// metricsHandler is what the metrics listener serves: /metrics, open or
// behind the operator token (OFICINA_METRICS_REQUIRE_TOKEN), and with
// OFICINA_PPROF Go's profiles, always behind it: goroutine stacks and heap
// profiles show code paths and the data in flight, and a CPU profile or a
// trace takes CPU while it runs, so an operator who opens /metrics to a
// scraper does not open them too. Either needs the token; without one the
// process refuses to start.
func metricsHandler(cfg config.Config, m *metrics.Metrics, token string) (http.Handler, error) {
	var gate *admin.Gate
	if cfg.MetricsRequireToken || cfg.Pprof {
		if len(token) < admin.MinTokenLen {
			setting := "OFICINA_METRICS_REQUIRE_TOKEN"
			if !cfg.MetricsRequireToken {
				setting = "OFICINA_PPROF"
			}
			return nil, fmt.Errorf("stack: %s needs OFICINA_ADMIN_TOKEN (at least %d bytes)", setting, admin.MinTokenLen)
		}
		proxies, err := config.Prefixes("OFICINA_TRUSTED_PROXIES", cfg.TrustedProxies)
		if err != nil {
			return nil, err
		}
		gate = admin.NewGate(token, proxies, 0, nil)
	}
	gated := func(open http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if gate.Authorize(w, wire.WithLanguage(r)) {
				open.ServeHTTP(w, r)
			}
		})
	}
	mux := http.NewServeMux()
	if cfg.MetricsRequireToken {
		mux.Handle("GET /metrics", gated(m.Handler()))
	} else {
		mux.Handle("GET /metrics", m.Handler())
	}
	if cfg.Pprof {
		// On the internal listener only, never the admin or public one.
		mux.Handle("GET /debug/pprof/", gated(http.HandlerFunc(pprof.Index)))
		mux.Handle("GET /debug/pprof/profile", gated(http.HandlerFunc(pprof.Profile)))
		mux.Handle("GET /debug/pprof/trace", gated(http.HandlerFunc(pprof.Trace)))
	}
	return wire.Envelope(mux), nil
}

// addr is where the listener listens ("" without one).
func (ml *metricsListener) addr() string {
	if ml == nil {
		return ""
	}
	return ml.ln.Addr().String()
}

// stop closes the listener, letting a scrape in progress finish.
func (ml *metricsListener) stop() {
	if ml == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = ml.srv.Shutdown(ctx)
}
