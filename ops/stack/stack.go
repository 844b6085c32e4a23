// Package stack assembles Oficina's processes from their parts: `oficina
// dev` (everything in one process on an embedded NATS), `oficina serve`
// (public and admin API) — start-up order, readiness and graceful shutdown.
package stack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"

	"oficina/http/admin"
	"oficina/http/docsui"
	"oficina/http/portal"
	"oficina/http/public"
	"oficina/http/wire"
	"oficina/ops/config"
	"oficina/ops/metrics"
	"oficina/ops/migrate"
	"oficina/ops/natsauth"
	"oficina/ops/natsembed"
	"oficina/schema/db"
	"oficina/schema/secretbox"
	"oficina/schema/service"
	"oficina/tenant"
)

// Options choose what a process runs.
type Options struct {
	Config   config.Config
	Embedded bool      // start an in-process NATS (dev)
	Migrate  bool      // apply migrations at start (dev)
	Seed     bool      // create or refresh the demo company (dev)
	Out      io.Writer // human-readable start-up lines (keys, URLs)
	// Logger is the process's logger (nil: slog.Default), handed to every
	// service it runs as their service.Base's Log.
	Logger *slog.Logger
	// Ready, when set, is called once the process's listeners accept
	// requests (serve, dev: both API listeners; dispatch, relay: the
	// metrics listener, if any).
	Ready func(Addrs)
	// Only, when set, confines the background work that crosses companies
	// to these companies: the relay and the mail sender serve only them,
	// and the sweeps and routines over every company do not run. For tests
	// that share a database with others; production leaves it empty. A
	// test without it must own its database (testkit.ScratchDB): its relay
	// would otherwise publish other tests' backlogs to its own NATS.
	Only []string
}

// Addrs are where a started process listens.
type Addrs struct {
	Public, Admin string // host:port
	NATS          string // client URL of the NATS in use ("" without one)
	Metrics       string // host:port of OFICINA_METRICS_ADDR's listener ("" without one)
}

// Stack is a running process.
type Stack struct {
	natsURL string
	opts    Options
	log     *slog.Logger
	ready   atomic.Bool
	nats    *natsembed.Server
	nc      *nats.Conn
	db      *bun.DB // requests, as oficina_app
	workers *bun.DB // relay, dispatch, sweepers, as oficina_worker
	bus     *tenant.Bus
	secrets *secretbox.Keyring
	public  *http.Server
	api     *public.Server // the public API, whose event streams end first on shutdown
	admin   *http.Server
	events  *eventParts
	sweeper func() // stops the idempotency sweeper
	// metrics is the process's one registry: every part registers its
	// series there; /metrics serves it.
	metrics     *metrics.Metrics
	metricsAddr *metricsListener

	// dispatchNATS is the identity of dev's in-process dispatcher (its
	// own user, as `oficina dispatch` has); nil: it shares nc.
	dispatchNATS *config.NATS
	dispatchNC   *nats.Conn
	// dispatchDone closes when the in-process dispatcher (dev) has
	// stopped: its sends in flight are recorded before the database
	// and NATS close under it.
	dispatchDone chan struct{}
	stopDispatch context.CancelFunc

	// Outages: health.go and limits.go.
	stopping atomic.Bool
	deps     depStates // each dependency's last state
	limiter  func()    // stops the rate limiter's presence

	publicAddr atomic.Value // net.Addr of the public listener, for portal links

	// embedded and demo are dev's embedded NATS and demo company, for the
	// start-up banner (nil when absent).
	embedded *embeddedNATS
	demo     *demo
}

// newStack is the process of o: its logger the base's (o.Logger, else
// slog.Default).
func newStack(o Options) *Stack {
	return &Stack{opts: o, log: service.Base{Log: o.Logger}.Logger()}
}

// Run starts the process and blocks until ctx ends, then shuts down.
func Run(ctx context.Context, o Options) error {
	if o.Out == nil {
		o.Out = io.Discard
	}
	s := newStack(o)
	s.metrics = metrics.New()
	defer s.close()
	pl, al, err := s.start(ctx)
	if err != nil {
		return err
	}
	errc := make(chan error, 2)
	go func() { errc <- serve(s.public, pl) }()
	go func() { errc <- serve(s.admin, al) }()
	s.ready.Store(true)
	s.banner(o.Out, pl.Addr(), al.Addr())
	if o.Ready != nil {
		o.Ready(Addrs{Public: pl.Addr().String(), Admin: al.Addr().String(), NATS: s.natsURL, Metrics: s.metricsAddr.addr()})
	}
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	s.ready.Store(false)
	s.stopping.Store(true)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.Config.ShutdownTimeout)
	defer cancel()
	s.log.Info("shutting down")
	if s.api != nil {
		s.api.Close()
	}
	_ = s.public.Shutdown(sctx)
	_ = s.admin.Shutdown(sctx)
	return err
}

func serve(srv *http.Server, l net.Listener) error {
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (s *Stack) start(ctx context.Context) (net.Listener, net.Listener, error) {
	cfg := s.opts.Config
	var err error
	if s.secrets, err = secretKeys(cfg, s.opts.Embedded, s.opts.Out); err != nil {
		return nil, nil, err
	}
	if s.opts.Embedded && cfg.NATSURL == "" {
		if err := s.startEmbeddedNATS(ctx, &cfg); err != nil {
			return nil, nil, err
		}
	}
	if s.opts.Migrate {
		applied, err := migrate.Run(ctx, cfg.DatabaseURL)
		if err != nil {
			return nil, nil, err
		}
		if len(applied.Migrations) > 0 {
			s.log.Info("migrations applied", "names", applied.Migrations)
		}
		if len(applied.Functions) > 0 {
			s.log.Info("functions applied", "names", applied.Functions)
		}
	}
	appURL, err := db.AppURL(cfg.DatabaseURL, cfg.AppDBPassword)
	if err != nil {
		return nil, nil, err
	}
	s.db, err = db.Open(ctx, appURL, db.Options{MaxOpenConns: cfg.DBMaxConns})
	if err != nil {
		return nil, nil, err
	}
	if s.workers, err = openWorkers(ctx, cfg, 8); err != nil {
		return nil, nil, err
	}
	s.metrics.WatchPool("app", s.db.DB)
	s.metrics.WatchPool("worker", s.workers.DB)
	if err := sealUnsealed(ctx, s.workers, s.secrets, s.opts.Only, s.log); err != nil {
		return nil, nil, err
	}
	s.natsURL = cfg.NATSURL
	if cfg.NATSURL != "" {
		if s.nc, err = s.connectNATS(cfg.NATSURL, cfg.NATS, natsauth.API); err != nil {
			return nil, nil, fmt.Errorf("stack: %w", err)
		}
	} else {
		s.log.Warn("no NATS_URL: cache invalidations stay in this process")
	}
	auth := tenant.NewAuthenticator(s.db, tenant.AuthConfig{CacheTTL: cfg.AuthCacheTTL})
	if s.bus, err = tenant.NewBus(auth, s.nc); err != nil {
		return nil, nil, err
	}
	if s.events, err = s.startEvents(ctx, cfg, true); err != nil {
		return nil, nil, err
	}
	s.startDispatch(ctx)
	limiter, err := s.rateLimiter(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	if len(s.opts.Only) == 0 {
		s.sweeper = s.startSweeper(ctx)
	}
	proxies, err := config.Prefixes("OFICINA_TRUSTED_PROXIES", cfg.TrustedProxies)
	if err != nil {
		return nil, nil, err
	}
	m := s.metrics
	m.WatchRateLimit(limiter)
	var stream jetstream.JetStream
	if s.nc != nil {
		if stream, err = jetstream.New(s.nc); err != nil {
			return nil, nil, fmt.Errorf("stack: jetstream: %w", err)
		}
	}
	pub, err := public.New(public.Deps{Base: service.Base{Log: s.log}, DB: s.db, Auth: auth, Observe: m.ObserveRequest, Idempotency: m.Idempotency(), TrustedProxies: proxies, Events: stream,
		Publisher: s.events.publisher(), Destinations: s.events.destinations(), Limiter: limiter, Secrets: s.secrets, PortalURL: s.portalURL})
	if err != nil {
		return nil, nil, err
	}
	s.api = pub
	po, err := s.newPortal(cfg, pub, proxies)
	if err != nil {
		return nil, nil, err
	}
	token, err := s.adminToken(cfg)
	if err != nil {
		return nil, nil, err
	}
	adm := admin.New(admin.Deps{Base: service.Base{Log: s.log}, DB: s.db, Token: token, Bus: s.bus, Destinations: s.events.destinations(),
		Publisher: s.events.publisher(), TrustedProxies: proxies, Workers: s.workers, Secrets: s.secrets, PortalURL: s.portalURL})
	if s.opts.Seed {
		if s.demo, err = seed(ctx, s.db, s.bus, cfg.DataDir); err != nil {
			return nil, nil, err
		}
	}
	s.public = &http.Server{Handler: s.publicHandler(pub, po), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10}
	// The admin listener gets the public one's limits: without a read
	// timeout a client sending its body a byte at a time holds a connection
	// (and a goroutine) for as long as it likes.
	s.admin = &http.Server{Handler: s.adminHandler(adm, m, cfg.MetricsRequireToken), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10}
	pl, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("stack: listen %s: %w", cfg.HTTPAddr, err)
	}
	s.publicAddr.Store(pl.Addr())
	al, err := net.Listen("tcp", cfg.AdminAddr)
	if err != nil {
		pl.Close()
		return nil, nil, fmt.Errorf("stack: listen %s: %w", cfg.AdminAddr, err)
	}
	if s.metricsAddr, err = startMetrics(cfg, m, token, s.log); err != nil {
		pl.Close()
		al.Close()
		return nil, nil, err
	}
	return pl, al, nil
}

// adminToken returns the configured token or, in dev, a generated one kept
// in <data-dir>/admin-token so `oficina admin` finds it.
func (s *Stack) adminToken(cfg config.Config) (string, error) {
	if cfg.AdminToken != "" {
		if len(cfg.AdminToken) < admin.MinTokenLen {
			return "", fmt.Errorf("stack: OFICINA_ADMIN_TOKEN must be at least %d bytes (openssl rand -hex 32 makes one)", admin.MinTokenLen)
		}
		return cfg.AdminToken, nil
	}
	if !s.opts.Embedded {
		return "", errors.New("stack: OFICINA_ADMIN_TOKEN is required")
	}
	path := filepath.Join(cfg.DataDir, "admin-token")
	if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
		return string(b), nil
	}
	var raw [24]byte
	_, _ = rand.Read(raw[:])
	tok := "oat_" + hex.EncodeToString(raw[:])
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return "", fmt.Errorf("stack: %w", err)
	}
	if err := os.WriteFile(path, []byte(tok), 0o600); err != nil {
		return "", fmt.Errorf("stack: write admin token: %w", err)
	}
	fmt.Fprintf(s.opts.Out, "admin token written to %s\n", path)
	return tok, nil
}

func (s *Stack) publicHandler(pub *public.Server, po http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(portal.Prefix, po)
	mux.Handle("GET /portal", http.RedirectHandler(portal.Prefix, http.StatusMovedPermanently))
	mux.Handle(public.Prefix+"/", pub)
	mux.Handle(public.Prefix, pub)
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(pub.OpenAPI())
	})
	mux.Handle("GET /docs", http.RedirectHandler("/docs/", http.StatusMovedPermanently))
	mux.Handle("GET /docs/", docsui.Handler())
	mux.Handle("GET /favicon.ico", docsui.Favicon())
	s.health(mux)
	// Outside /public/v1 an unknown path is 404 route_not_found and a known
	// one with another method 405, in the envelope without request_id and
	// in the caller's language, as every error is (spec 7).
	outside := wire.Envelope(mux)
	// /public/v1 goes to the API as sent: ServeMux would answer an unclean
	// path (//, ./, ../) with its own 307, without Request-Id or envelope.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == public.Prefix || strings.HasPrefix(r.URL.Path, public.Prefix+"/") {
			pub.ServeHTTP(w, r)
			return
		}
		outside.ServeHTTP(w, r)
	})
}

// adminHandler serves the admin API, health and /metrics; with
// metricsToken, /metrics answers only with the operator token (throttled
// like the admin API).
func (s *Stack) adminHandler(adm *admin.Server, m *metrics.Metrics, metricsToken bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(admin.Prefix+"/", adm)
	metricsH := m.Handler()
	if metricsToken {
		open := metricsH
		metricsH = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if adm.Authorize(w, wire.WithLanguage(r)) {
				open.ServeHTTP(w, r)
			}
		})
	}
	mux.Handle("GET /metrics", metricsH)
	s.health(mux)
	return wire.Envelope(mux)
}

// openWorkers opens the worker role's pool (relay, dispatch, sweepers).
func openWorkers(ctx context.Context, cfg config.Config, conns int) (*bun.DB, error) {
	u, err := db.WorkerURL(cfg.DatabaseURL, cfg.WorkerDBPassword)
	if err != nil {
		return nil, err
	}
	return db.Open(ctx, u, db.Options{MaxOpenConns: conns})
}

func (s *Stack) close() {
	s.metricsAddr.stop()
	if s.limiter != nil {
		s.limiter()
	}
	if s.dispatchDone != nil {
		s.stopDispatch()
		<-s.dispatchDone // it hands its partitions back and finishes its sends first
	}
	if s.sweeper != nil {
		s.sweeper()
	}
	s.events.stop()
	if s.bus != nil {
		s.bus.Close()
	}
	if s.nc != nil {
		s.nc.Close()
	}
	if s.dispatchNC != nil {
		s.dispatchNC.Close()
	}
	if s.db != nil {
		_ = s.db.Close()
	}
	if s.workers != nil && s.workers != s.db {
		_ = s.workers.Close()
	}
	if s.nats != nil {
		s.nats.Shutdown()
	}
}

// banner says where the process listens, once it does: the addresses
// are the listeners' own (a port chosen by the system included), and the
// commands it suggests carry the demo company's id.
func (s *Stack) banner(w io.Writer, public, admin net.Addr) {
	pub := "http://" + displayAddr(public)
	company := ""
	if s.demo != nil {
		company = s.demo.companyID
	}
	if s.embedded != nil {
		s.embedded.print(w, company)
	}
	if s.demo != nil {
		s.demo.print(w, pub)
	}
	fmt.Fprintf(w, "\npublic API  %s/public/v1  (OpenAPI: /openapi.json, UI: /docs, portal: /portal/)\nadmin API   http://%s/admin/v1  (metrics: /metrics)\n",
		pub, displayAddr(admin))
}

func displayAddr(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}
