// Package admin is the operators' API: everything the spec says happens "in
// the dashboard" (companies, plans, members, keys, service order types, …),
// on its own listener and behind an operator token, so every rule can be
// driven and tested. docs/admin-api.md describes it; `oficina admin` calls it.
package admin

import (
	"context"
	"crypto/subtle"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"oficina/http/wire"
	"oficina/schema/apierr"
	"oficina/schema/secretbox"
	"oficina/schema/service"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
	"oficina/tenant/ratelimit"
)

// Prefix of every admin route.
const Prefix = "/admin/v1"

// MinTokenLen is the shortest operator token accepted: 32 bytes, so it
// cannot be guessed in any number of throttled attempts.
const MinTokenLen = 32

// Deps are what the admin handlers need.
type Deps struct {
	DB *bun.DB
	// Workers runs the cross-company routines an operator may start
	// (the worker role's pool); nil: DB.
	Workers *bun.DB
	// Token is the operator token, at least MinTokenLen bytes: with a
	// shorter one every request is refused.
	Token string
	Bus   *tenant.Bus
	// Base: Log receives panics and operator warnings; the business clock
	// (Now) is what the rules and the token throttle read.
	service.Base
	// Destinations checks webhook URLs (nil: the production guard).
	Destinations webhooks.URLChecker
	// Secrets seals the webhook signing secrets (OFICINA_SECRET_KEYS) and
	// re-seals them under its first key (POST /secrets/rekey).
	Secrets *secretbox.Keyring
	// Publisher publishes the events of a dashboard write after commit
	// (nil: the relay publishes them).
	Publisher streams.AfterCommitter
	// AuthFailuresPerMinute is the per-address ceiling of token failures,
	// as on the public listener: 0 means ratelimit.DefaultAuthFailures.
	AuthFailuresPerMinute int
	// TrustedProxies: the client address is read from X-Forwarded-For only
	// when the peer is one of them (wire.ClientAddr).
	TrustedProxies []netip.Prefix
	// PortalURL is the base URL of the company portal on the public
	// listener, for the one-time links of portal sessions; nil or "": the
	// links are paths (/portal/login?token=…).
	PortalURL func() string
}

// Server is the admin API handler.
type Server struct {
	deps   Deps
	writer *streams.Writer
	mux    *http.ServeMux
	gate   *Gate
}

// Gate checks the operator token, throttling failures per client address
// like the public API does: the admin API's check, and that of a
// /metrics put behind the token on a listener of its own.
type Gate struct {
	token    string
	trusted  []netip.Prefix
	throttle *ratelimit.Throttle
}

// NewGate returns the check of token; a token shorter than MinTokenLen
// refuses every request. failuresPerMinute <= 0 means
// ratelimit.DefaultAuthFailures; now nil means time.Now.
func NewGate(token string, trusted []netip.Prefix, failuresPerMinute int, now func() time.Time) *Gate {
	if failuresPerMinute <= 0 {
		failuresPerMinute = ratelimit.DefaultAuthFailures
	}
	return &Gate{token: token, trusted: trusted, throttle: ratelimit.NewThrottle(failuresPerMinute, time.Minute, now)}
}

// New builds the admin API.
func New(d Deps) *Server {
	if d.Workers == nil {
		d.Workers = d.DB
	}
	s := &Server{deps: d, mux: http.NewServeMux(), gate: NewGate(d.Token, d.TrustedProxies, d.AuthFailuresPerMinute, d.BusinessNow),
		writer: &streams.Writer{DB: d.DB, Publisher: d.Publisher, Now: d.BusinessNow, Wall: d.WallNow}}
	s.routes()
	return s
}

// Authorize checks the operator token of r, throttling failures per client
// address like the public API does (an address that failed too often is
// refused before its token is looked at). It writes the refusal and
// reports false. /metrics uses it when it is put behind the token.
func (s *Server) Authorize(w http.ResponseWriter, r *http.Request) bool {
	return s.gate.Authorize(w, r)
}

// Authorize checks the operator token of r; it writes the refusal (401,
// or 429 to an address that failed too often) and reports false.
func (g *Gate) Authorize(w http.ResponseWriter, r *http.Request) bool {
	ip := wire.ClientAddr(r, g.trusted)
	if wait, ok := g.throttle.Check(ip); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		wire.WriteError(w, r, apierr.New(apierr.RateLimitExceeded))
		return false
	}
	auth := r.Header.Values("Authorization")
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if len(g.token) < MinTokenLen || len(auth) != 1 ||
		subtle.ConstantTimeCompare([]byte(tok), []byte(g.token)) != 1 {
		g.throttle.Failed(ip)
		wire.WriteError(w, r, apierr.New(apierr.APIKeyInvalid))
		return false
	}
	return true
}

// Handle registers an extra admin route (later modules add theirs).
func (s *Server) Handle(pattern string, h http.HandlerFunc) { s.mux.HandleFunc(pattern, h) }

// ServeHTTP checks the operator token and dispatches.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r = wire.WithLanguage(r)
	if !s.Authorize(w, r) {
		return
	}
	if wire.Unrouted(w, r, s.mux) {
		return
	}
	if err := wire.CheckBody(w, r); err != nil {
		wire.WriteError(w, r, err)
		return
	}
	defer func() {
		if rec := recover(); rec != nil {
			s.deps.Logger().Error("admin panic", "panic", rec)
			wire.WriteError(w, r, apierr.New(apierr.InternalError))
		}
	}()
	s.mux.ServeHTTP(w, r)
}

// op is one admin operation: a write unit of the path's company, made in
// the dashboard.
type op func(ctx context.Context, w *streams.Write, r *http.Request) (status int, body any, err error)

// company runs fn as a write unit of the path's {company}, answers, and —
// when changesAccess — invalidates cached principals in every process
// before answering, so the change applies to the very next request.
func (s *Server) company(changesAccess bool, fn op) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		companyID := r.PathValue("company")
		var status int
		var body any
		unit := streams.Unit{CompanyID: companyID, Actor: streams.Actor{Kind: streams.ActorDashboard}}
		err := s.writer.Run(r.Context(), unit, func(ctx context.Context, u *streams.Write) error {
			// Row-level security hides other companies: a missing row here
			// means no such company, answered 404 before any write.
			if _, err := tenant.GetCompany(ctx, u.Tx, companyID); err != nil {
				return err
			}
			var err error
			status, body, err = fn(ctx, u, r)
			return err
		})
		if err == nil && changesAccess && s.deps.Bus != nil {
			err = s.deps.Bus.Changed(r.Context(), companyID)
		}
		if err != nil {
			wire.WriteError(w, r, err)
			return
		}
		wire.WriteJSON(w, status, body)
	}
}

// decode reads a JSON body into v.
func decode[T any](r *http.Request) (T, error) {
	var v T
	err := wire.Decode(r, &v)
	return v, err
}
