// Package portal serves the company webhook portal at /portal/ on the
// public listener (issue 18, docs/portal.md): server-rendered pages for the
// people who own a company's receiving end — endpoints and their health,
// the event catalogue, the delivery log with each attempt as sent and got,
// resend, recover and ping. A one-time link minted by the dashboard or the
// API opens a short-lived session (schema/portal) whose capabilities are
// enforced here on every request; each request runs in the session
// company's transaction (tenant.Tx) and every action calls the same schema
// functions the API calls. Pages work without JavaScript; the one small
// embedded script only auto-submits the login form and asks before
// destructive actions. Strict Content-Security-Policy, a CSRF token on
// every form, an HttpOnly SameSite=Strict session cookie (Secure behind
// TLS), pt-BR by default with en and es.
package portal

import (
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"net/netip"
	"strings"

	"github.com/uptrace/bun"

	"oficina/dispatch/destguard"
	"oficina/schema/secretbox"
	"oficina/schema/service"
	"oficina/schema/webhooks"
	"oficina/streams"
)

// Prefix of every portal page.
const Prefix = "/portal/"

// maxForm bounds a form post.
const maxForm = 64 << 10

//go:embed assets
var assets embed.FS

// Deps are what the portal needs.
type Deps struct {
	DB *bun.DB // the request role's pool
	// Secrets seals new and rotated secrets and opens one to reveal it.
	Secrets *secretbox.Keyring
	// Destinations checks endpoint URLs (spec 6.5), as the API does.
	Destinations webhooks.URLChecker
	// Publisher publishes pings and resends after commit (nil: the relay).
	Publisher streams.AfterCommitter
	// OpenAPI is the public API's document: the event catalogue is its
	// webhooks section.
	OpenAPI []byte
	// Base: Log receives panics and render failures; the business clock
	// (Now) is what sessions and the schema rules read.
	service.Base
	// TrustedProxies: X-Forwarded-Proto is believed from these peers only
	// (the cookie is Secure behind TLS).
	TrustedProxies []netip.Prefix
	// FrameAncestors are the origins allowed to embed the portal
	// (Content-Security-Policy frame-ancestors), for every company; a
	// company adds its own in its settings (portal_frame_ancestors). Empty:
	// nobody may frame it.
	FrameAncestors []string
}

// Server is the portal's handler.
type Server struct {
	deps      Deps
	writer    *streams.Writer
	mux       *http.ServeMux
	views     *views
	catalogue []family
	ancestors []string
}

// New checks d and builds the portal.
func New(d Deps) (*Server, error) {
	if d.DB == nil {
		return nil, fmt.Errorf("portal: DB is required")
	}
	if d.Destinations == nil {
		g, err := destguard.New(destguard.Config{})
		if err != nil {
			return nil, fmt.Errorf("portal: destination guard: %w", err)
		}
		d.Destinations = g
	}
	anc, err := Origins(d.FrameAncestors)
	if err != nil {
		return nil, err
	}
	cat, err := loadCatalogue(d.OpenAPI)
	if err != nil {
		return nil, err
	}
	v, err := parseViews()
	if err != nil {
		return nil, err
	}
	s := &Server{deps: d, mux: http.NewServeMux(), views: v, catalogue: cat, ancestors: anc,
		writer: &streams.Writer{DB: d.DB, Publisher: d.Publisher, Now: d.BusinessNow, Wall: d.WallNow}}
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	s.mux.Handle("GET "+Prefix+"assets/", s.assets())
	s.mux.HandleFunc("GET "+Prefix+"login", s.loginPage)
	s.mux.HandleFunc("POST "+Prefix+"login", s.login)
	s.mux.Handle("POST "+Prefix+"logout", s.page(nil, s.logout))
	s.mux.Handle("GET "+Prefix+"{$}", s.page(nil, s.listEndpoints))
	s.mux.Handle("GET "+Prefix+"events", s.page(nil, s.events))
	s.endpointRoutes()
	s.deliveryRoutes()
	s.eventLogRoutes()
	s.mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, nil, http.StatusNotFound)
	})
}

// assets serves the embedded files, and nothing else: a directory is the
// portal's 404, never a listing.
func (s *Server) assets() http.Handler {
	sub, _ := fs.Sub(assets, "assets") // the embedded directory exists
	files := http.StripPrefix(Prefix+"assets/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, Prefix+"assets/")
		if fi, err := fs.Stat(sub, name); err != nil || !fi.Mode().IsRegular() {
			s.fail(w, r, nil, http.StatusNotFound)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}

// ServeHTTP serves the portal with its security headers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp(s.ancestors))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	if len(s.ancestors) == 0 {
		h.Set("X-Frame-Options", "DENY")
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm) // forms are small
	}
	defer func() {
		if rec := recover(); rec != nil {
			s.deps.Logger().Error("portal panic", "panic", fmt.Sprint(rec), "path", r.URL.Path)
			s.fail(w, r, nil, http.StatusInternalServerError)
		}
	}()
	s.mux.ServeHTTP(w, r)
}

// csp is the Content-Security-Policy of every portal answer: this origin's
// stylesheet and script only, forms posting here only, framed only by the
// allowed origins.
func csp(ancestors []string) string {
	fa := "'none'"
	if len(ancestors) > 0 {
		fa = strings.Join(ancestors, " ")
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'none'; " +
		"form-action 'self'; base-uri 'none'; frame-ancestors " + fa
}

// Origins checks a frame-ancestors list: each entry is 'self' or an
// origin (https://host[:port]; http only for localhost).
func Origins(list []string) ([]string, error) {
	var out []string
	for _, o := range list {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		if !validOrigin(o) {
			return nil, fmt.Errorf("portal: frame ancestor %q is not 'self' or an origin like https://app.example.com", o)
		}
		out = append(out, o)
	}
	return out, nil
}

func validOrigin(o string) bool {
	if o == "'self'" {
		return true
	}
	rest, ok := strings.CutPrefix(o, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(o, "http://localhost")
		if ok && (rest == "" || rest[0] == ':') {
			rest = "localhost" + rest
		} else {
			return false
		}
	}
	if rest == "" || strings.ContainsAny(rest, "/?#@ ;,'\"") {
		return false
	}
	return true
}
