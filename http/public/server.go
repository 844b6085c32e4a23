// Package public serves the integrators' API under /public/v1: route
// matching, the request pipeline of DESIGN.md (request id → route → auth
// throttle → key → rate limit → permission layers → body rules →
// idempotency) and thin handlers that call schema/… inside the company
// transaction. The OpenAPI document is generated from these routes.
package public

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/go-fuego/fuego"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"

	"oficina/dispatch/destguard"
	"oficina/http/openapi"
	"oficina/http/wire"
	"oficina/schema/apierr"
	"oficina/schema/idempotency"
	"oficina/schema/secretbox"
	"oficina/schema/service"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
	"oficina/tenant/ratelimit"
)

// Prefix of every public route.
const Prefix = "/public/v1"

// Deps are what the handlers need.
type Deps struct {
	// Base: Log receives the request log; the business clock (Now) is what
	// the handlers' rules and the auth throttle read.
	service.Base
	DB   *bun.DB
	Auth *tenant.Authenticator
	// Limiter is the company rate limit of part 8, run after
	// authentication and before the permission layers. Nil means none.
	Limiter *ratelimit.Limiter
	// AuthFailuresPerMinute is the per-address ceiling of authentication
	// failures (5 item 3): 0 means ratelimit.DefaultAuthFailures, negative
	// turns the throttle off.
	AuthFailuresPerMinute int
	// IdempotencyTTL is how long a stored response is replayed (default
	// 24 h, part 8).
	IdempotencyTTL time.Duration
	// Guard runs after the rate limit and before the permission layers.
	// Nil means none.
	Guard Guard
	// Publisher publishes events after a write commits. Nil: the relay
	// alone publishes them.
	Publisher streams.AfterCommitter
	// Destinations checks webhook endpoint URLs (spec 6.5). Nil: the
	// production guard (public addresses only, system resolver).
	Destinations webhooks.URLChecker
	// Secrets seals the webhook signing secrets (OFICINA_SECRET_KEYS);
	// without it creating an endpoint or rotating its secret fails.
	Secrets *secretbox.Keyring
	// Observe is told each finished request (metrics). Nil means none.
	Observe func(route, method string, status int, d time.Duration)
	// Idempotency is told when a request with an Idempotency-Key is
	// replayed or refused (idempotency.Replayed, KeyReused or
	// KeyInProgress; metrics). Nil means none.
	Idempotency func(result string)
	// TrustedProxies are the proxies in front of the API: the client
	// address is read from X-Forwarded-For only when the peer is one of
	// them (wire.ClientAddr). Empty: the TCP peer, always.
	TrustedProxies []netip.Prefix
	// Events is JetStream, for the live event stream (GET /events/stream).
	// Nil: that route answers 503.
	Events jetstream.JetStream
	// PortalURL is the base URL of the company portal, for the one-time
	// links of POST /portal_sessions ("https://api.example.com/portal/").
	// Nil or "": the portal on the host the request came to.
	PortalURL func() string
}

// Guard is a step of the pipeline that may refuse a request or add headers.
type Guard interface {
	Check(w http.ResponseWriter, r *http.Request, p *tenant.Principal) error
}

// Server is the public API handler.
type Server struct {
	deps     Deps
	writer   *streams.Writer
	throttle *ratelimit.Throttle
	f        *fuego.Server
	routes   map[string]*route // by ServeMux pattern
	// literal holds the paths of the routes without wildcards (lookup).
	literal map[string]bool
	// spec is what the OpenAPI document is built from; handle adds the
	// routes.
	spec    openapi.Spec
	openapi []byte
	// closing ends the open event streams (Close).
	closing   chan struct{}
	closeOnce sync.Once
}

// Close ends the open event streams, so that a graceful shutdown does not
// wait for clients that would never leave; their clients reconnect to
// another process with Last-Event-ID.
func (s *Server) Close() { s.closeOnce.Do(func() { close(s.closing) }) }

// access is a route's declared permission.
type access struct {
	perm   tenant.Permission
	anyKey bool // GET /me: any valid key
	// memberCheck=false: the member layer filters instead of refusing
	// (GET /team trims the list).
	skipMember bool
}

type route struct {
	pattern string
	access  access
	body    bool
	write   bool // runs as one write unit; takes an Idempotency-Key
	run     run  // the handler behind the pipeline
}

// New builds the server and registers every route.
func New(d Deps) (*Server, error) {
	if d.Destinations == nil {
		g, err := destguard.New(destguard.Config{})
		if err != nil {
			return nil, fmt.Errorf("public: destination guard: %w", err)
		}
		d.Destinations = g
	}
	if d.IdempotencyTTL <= 0 {
		d.IdempotencyTTL = idempotency.TTL
	}
	sp, err := spec()
	if err != nil {
		return nil, err
	}
	s := &Server{deps: d, routes: map[string]*route{}, literal: map[string]bool{}, spec: sp, closing: make(chan struct{}),
		writer: &streams.Writer{DB: d.DB, Publisher: d.Publisher, Now: d.BusinessNow, Wall: d.WallNow}}
	switch {
	case d.AuthFailuresPerMinute == 0:
		s.throttle = ratelimit.NewThrottle(ratelimit.DefaultAuthFailures, time.Minute, d.BusinessNow)
	case d.AuthFailuresPerMinute > 0:
		s.throttle = ratelimit.NewThrottle(d.AuthFailuresPerMinute, time.Minute, d.BusinessNow)
	}
	// fuego routes the requests (its ServeMux patterns give the handlers
	// their path values); the pipeline, the handlers and the answers are
	// ours, and the OpenAPI document is built by http/openapi from the
	// same route table (docs/decisions/0015, 0034). Its request log is
	// off: ServeHTTP logs each request once.
	s.f = fuego.NewServer(
		fuego.WithoutStartupMessages(),
		fuego.WithLoggingMiddleware(fuego.LoggingConfig{DisableRequest: true, DisableResponse: true}),
		fuego.WithEngineOptions(fuego.WithOpenAPIConfig(fuego.OpenAPIConfig{
			DisableLocalSave: true, DisableSwaggerUI: true, DisableMessages: true, DisableDefaultServer: true,
		})),
	)
	s.register()
	doc, err := openapi.Build(s.spec)
	if err != nil {
		return nil, fmt.Errorf("public: %w", err)
	}
	if s.openapi, err = openapi.JSON(doc); err != nil {
		return nil, fmt.Errorf("public: %w", err)
	}
	return s, nil
}

// OpenAPI returns the generated document.
func (s *Server) OpenAPI() []byte { return s.openapi }

// ServeHTTP runs the pipeline for /public/v1 and serves the OpenAPI
// document at /openapi.json.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rid := wire.NewRequestID()
	lw := &statusWriter{ResponseWriter: w}
	lw.Header().Set("Request-Id", rid)
	ctx := wire.WithRequest(r.Context(), rid, apierr.Negotiate(r.Header.Get("Accept-Language")))
	r = r.WithContext(ctx)
	pattern := "unmatched"
	defer func() {
		if rec := recover(); rec != nil {
			s.deps.Logger().ErrorContext(ctx, "panic", "request_id", rid, "panic", fmt.Sprint(rec))
			if !lw.wrote {
				wire.WriteError(lw, r, apierr.New(apierr.InternalError))
			}
		}
		if s.deps.Observe != nil {
			s.deps.Observe(pattern, r.Method, lw.status, time.Since(start))
		}
		s.deps.Logger().LogAttrs(ctx, slog.LevelInfo, "request",
			slog.String("request_id", rid), slog.String("method", r.Method), slog.String("route", pattern),
			slog.Int("status", lw.status), slog.Duration("duration", time.Since(start)))
	}()
	rt, err := s.match(r)
	if err != nil {
		if rt != nil && rt.pattern != "" {
			lw.Header().Set("Allow", rt.pattern)
		}
		wire.WriteError(lw, r, err)
		return
	}
	pattern = rt.pattern
	s.f.Mux.ServeHTTP(lw, r) // to serve, with rt's path values
}

// serve answers the request rt matched (registered by handle on the
// router).
func (s *Server) serve(w http.ResponseWriter, r *http.Request, rt *route) {
	if err := s.pipeline(w, r, rt); err != nil {
		wire.WriteError(w, r, err)
	}
}

// pipeline runs the steps of DESIGN.md in order — auth-failure throttle,
// key, company rate limit, permission layers, body rules, idempotency —
// then calls the route's handler once: with the caller alone on a read
// route, inside the write unit on a write route. A 401 spends no budget;
// a 403 does.
func (s *Server) pipeline(w http.ResponseWriter, r *http.Request, rt *route) error {
	p, err := s.authenticate(w, r)
	if err != nil {
		return err
	}
	if err := s.limit(w, r, p); err != nil {
		return err
	}
	if s.deps.Guard != nil {
		if err := s.deps.Guard.Check(w, r, p); err != nil {
			return err
		}
	}
	if err := rt.access.check(p); err != nil {
		return err
	}
	if err := wire.CheckQuery(r); err != nil {
		return err
	}
	if rt.body {
		if err := wire.CheckBody(w, r); err != nil {
			return err
		}
	}
	if rt.write {
		key, _, err := idempotencyKey(r)
		if err != nil {
			return err
		}
		return s.unit(w, r, p, key, rt)
	}
	ans, err := rt.run(r.Context(), r, p, nil)
	if err != nil {
		return err
	}
	return ans.writeTo(w)
}

func (a access) check(p *tenant.Principal) error {
	switch {
	case a.anyKey:
		return p.RequireAPIAccess()
	case a.perm == "":
		// A route with no declared permission is denied (5.1).
		return apierr.New(apierr.AccessDenied)
	case a.skipMember:
		if !p.HasKeyPermission(a.perm) {
			return apierr.New(apierr.PermissionMissing)
		}
		return p.RequireAPIAccess()
	}
	return p.Require(a.perm)
}

// match finds the route; unknown paths are 404 route_not_found and a known
// path with another method is 405 (with Allow listing the methods). An
// unclean path (//, /./, /../) is no route either: ServeMux would match
// the cleaned path and serve its own bare 307 to it, which a write with an
// Idempotency-Key would store as its answer, burning the key for 24 hours.
func (s *Server) match(r *http.Request) (*route, error) {
	if !clean(r.URL.EscapedPath()) {
		return nil, apierr.New(apierr.RouteNotFound)
	}
	if rt := s.lookup(r); rt != nil {
		return rt, nil
	}
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if s.lookup(probe) != nil {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		return &route{pattern: strings.Join(allow, ", ")}, apierr.New(apierr.MethodNotAllowed)
	}
	return nil, apierr.New(apierr.RouteNotFound)
}

// lookup is the route r calls, or nil. The path of a route without
// wildcards names that route only: GET /service_orders/from_quote is the
// conversion called with the wrong method (405), not an order whose id is
// from_quote (GET /service_orders/{id} would answer 404).
func (s *Server) lookup(r *http.Request) *route {
	_, pattern := s.f.Mux.Handler(r)
	rt := s.routes[pattern]
	if rt != nil && strings.Contains(pattern, "{") && s.literal[r.URL.Path] {
		return nil
	}
	return rt
}

// clean reports whether ServeMux would serve p as it is rather than
// redirect to its cleaned form (net/http's cleanPath: path.Clean, keeping
// a trailing slash). No public route ends in a slash, so ServeMux's other
// redirect (/tree to /tree/) never applies.
func clean(p string) bool {
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

func (s *Server) clientIP(r *http.Request) netip.Addr {
	return wire.ClientAddr(r, s.deps.TrustedProxies)
}
