package portal

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	session "oficina/schema/portal"
	"oficina/streams"
	"oficina/tenant"
)

// Cookie names. Behind TLS the session cookie takes the __Host- prefix:
// the browser then keeps it only if Secure, host-only and at Path=/.
const (
	cookieName       = "oficina_portal"
	secureCookieName = "__Host-oficina_portal"
	loginCookieName  = "oficina_portal_login"
	langCookieName   = "oficina_portal_lang"
)

// call is one authenticated request: the session, who it acts as, and
// the company transaction every read and write of the request runs in.
type call struct {
	w       http.ResponseWriter
	r       *http.Request
	tx      bun.Tx
	unit    *streams.Write // the write unit: portal writes record their events on it
	ctx     context.Context
	now     time.Time
	token   string
	session *session.Row
	actor   *session.Actor
	company *tenant.Company
	view    *view
}

// minter is who a portal write is made by: the session's minter.
func (c *call) minter() streams.Actor {
	a := streams.Actor{Kind: streams.ActorDashboard, MemberID: c.actor.Member.ID}
	if c.actor.Principal != nil {
		a.Kind, a.KeyID = streams.ActorAPI, c.actor.Principal.Key.ID
	}
	return a
}

// result is what a handler answers: a page, or a redirect (303).
type result struct {
	status   int
	page     string
	data     any
	redirect string
}

type handler func(c *call) (*result, error)

// errCapability refuses an action the session's capabilities do not allow.
var errCapability = apierr.New(apierr.PermissionMissing)

// page runs h for a session holding need (nil: any session). POST forms
// must carry the session's CSRF token. The session, its minter and h run
// in one company transaction; h's error rolls it back. Events h recorded
// are published after commit.
func (s *Server) page(need *session.Capability, h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lang := s.lang(w, r)
		tok := s.sessionToken(r)
		company, err := session.CompanyOf(r.Context(), s.deps.DB, tok)
		if err != nil {
			s.refuse(w, r, lang, err)
			return
		}
		if r.Method == http.MethodPost && (!sameOrigin(r) || !validCSRF(tok, r.PostFormValue("csrf"))) {
			s.fail(w, r, &view{Lang: lang}, http.StatusForbidden)
			return
		}
		ctx := r.Context()
		c := &call{w: w, r: r, token: tok}
		var res *result
		var herr error // h's own refusal, which may come with a page (a form and its errors)
		err = s.writer.Run(ctx, streams.Unit{CompanyID: company}, func(ctx context.Context, u *streams.Write) error {
			c.ctx, c.tx, c.unit, c.now = ctx, u.Tx, u, u.At
			if err := s.open(c, lang); err != nil {
				return err
			}
			u.Actor = c.minter()
			if need != nil && !c.session.Can(*need) {
				return errCapability
			}
			res, herr = h(c)
			return herr
		})
		if errors.Is(err, session.ErrInvalid) {
			s.refuse(w, r, lang, err)
			return
		}
		if c.view != nil {
			w.Header().Set("Content-Security-Policy", csp(append(s.ancestors, companyAncestors(c.company)...)))
		}
		// A page h made is shown only with h's own refusal: a commit that
		// failed after h succeeded saved nothing, whatever h's page says.
		if err != nil && (res == nil || herr == nil) {
			if e := apierr.As(err); e.Code == apierr.InternalError {
				s.deps.Logger().ErrorContext(ctx, "portal", "path", r.URL.Path, "err", err)
			}
			s.fail(w, r, c.view, statusOf(err))
			return
		}
		if res.redirect != "" {
			http.Redirect(w, r, res.redirect, http.StatusSeeOther)
			return
		}
		s.render(w, c.view, res)
	})
}

// open reads the session, its minter and company in c's transaction.
func (s *Server) open(c *call, lang string) error {
	var err error
	if c.session, err = session.Current(c.ctx, c.tx, c.token, c.now); err != nil {
		return err
	}
	if c.actor, err = session.LoadActor(c.ctx, c.tx, c.session, c.now); err != nil {
		return err
	}
	if c.company, err = tenant.GetCompany(c.ctx, c.tx, c.session.CompanyID); err != nil {
		return err
	}
	if c.company.Status != "active" {
		return session.ErrInvalid
	}
	c.view = s.newView(lang, c)
	return nil
}

// companyAncestors are the origins a company allows to frame its portal
// (settings.portal_frame_ancestors); entries that are not origins are
// ignored.
func companyAncestors(c *tenant.Company) []string {
	if c == nil {
		return nil
	}
	var st struct {
		Ancestors []string `json:"portal_frame_ancestors"`
	}
	_ = json.Unmarshal(c.Settings, &st)
	var out []string
	for _, o := range st.Ancestors {
		if validOrigin(o) {
			out = append(out, o)
		}
	}
	return out
}

// refuse answers a request without a valid session: the page that says
// to open a new link, with the session cookie cleared.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, lang string, err error) {
	if !errors.Is(err, session.ErrInvalid) {
		s.deps.Logger().ErrorContext(r.Context(), "portal session", "err", err)
		s.fail(w, r, &view{Lang: lang}, statusOf(err))
		return
	}
	s.setCookie(w, r, "", time.Unix(0, 0))
	s.render(w, &view{Lang: lang}, &result{status: http.StatusUnauthorized, page: "signedout"})
}

// loginPage shows the form that uses a one-time link. Opening a link
// changes nothing (mail scanners open links): the form's POST does, sent
// at once by the embedded script, or by the button without JavaScript. A
// login cookie, echoed in the form, protects that POST from other sites.
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	lang := s.lang(w, r)
	link := r.URL.Query().Get("token")
	nonce := randomToken()
	http.SetCookie(w, &http.Cookie{Name: loginCookieName, Value: nonce, Path: Prefix + "login", MaxAge: 600,
		HttpOnly: true, Secure: s.secure(r), SameSite: http.SameSiteStrictMode})
	if company, err := session.CompanyOf(r.Context(), s.deps.DB, link); err == nil {
		_ = tenant.Tx(r.Context(), s.deps.DB, company, func(ctx context.Context, tx bun.Tx) error {
			co, err := tenant.GetCompany(ctx, tx, company)
			if err == nil {
				w.Header().Set("Content-Security-Policy", csp(append(s.ancestors, companyAncestors(co)...)))
			}
			return err
		})
	}
	s.render(w, &view{Lang: lang}, &result{page: "login", data: map[string]string{"Token": link, "Nonce": nonce}})
}

// login uses a one-time link: the session starts and its cookie is set.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	lang := s.lang(w, r)
	nonce, err := r.Cookie(loginCookieName)
	if err != nil || !sameOrigin(r) || subtle.ConstantTimeCompare([]byte(nonce.Value), []byte(r.PostFormValue("nonce"))) != 1 {
		s.fail(w, r, &view{Lang: lang}, http.StatusForbidden)
		return
	}
	link := r.PostFormValue("token")
	company, err := session.CompanyOf(r.Context(), s.deps.DB, link)
	if err != nil {
		s.refuse(w, r, lang, err)
		return
	}
	var tok string
	var row *session.Row
	err = tenant.Tx(r.Context(), s.deps.DB, company, func(ctx context.Context, tx bun.Tx) error {
		row, tok, err = session.Exchange(ctx, tx, link, s.deps.BusinessNow())
		return err
	})
	if err != nil {
		s.refuse(w, r, lang, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: loginCookieName, Path: Prefix + "login", MaxAge: -1, HttpOnly: true,
		Secure: s.secure(r), SameSite: http.SameSiteStrictMode})
	s.setCookie(w, r, tok, row.ExpiresAt)
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}

// logout ends the session (revoked: the link cannot bring it back).
func (s *Server) logout(c *call) (*result, error) {
	if _, err := session.Revoke(c.ctx, c.tx, c.session.ID, c.now); err != nil {
		return nil, err
	}
	s.setCookie(c.w, c.r, "", time.Unix(0, 0))
	c.view = &view{Lang: c.view.Lang} // signed out: no session around the page
	return &result{page: "signedout", status: http.StatusOK, data: map[string]bool{"LoggedOut": true}}, nil
}

// setCookie sets (or, empty, clears) the session cookie: HttpOnly,
// SameSite=Strict, Secure behind TLS, until the session expires.
func (s *Server) setCookie(w http.ResponseWriter, r *http.Request, tok string, expires time.Time) {
	secure := s.secure(r)
	name := cookieName
	if secure {
		name = secureCookieName
	}
	ck := &http.Cookie{Name: name, Value: tok, Path: "/", Expires: expires, HttpOnly: true, Secure: secure,
		SameSite: http.SameSiteStrictMode}
	if tok == "" {
		ck.MaxAge = -1
	}
	http.SetCookie(w, ck)
}

// sessionToken reads the session cookie of the request's transport only.
// Behind TLS that is the __Host- one: the browser keeps it only if this
// host set it Secure at Path=/, while an unprefixed cookie may have been
// planted by a sibling subdomain or a plain-HTTP answer, so it is ignored.
func (s *Server) sessionToken(r *http.Request) string {
	name := cookieName
	if s.secure(r) {
		name = secureCookieName
	}
	if ck, err := r.Cookie(name); err == nil {
		return ck.Value
	}
	return ""
}

// secure reports a request that came over TLS: to this server, or to a
// trusted proxy that says so in X-Forwarded-Proto.
func (s *Server) secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	for _, p := range s.deps.TrustedProxies {
		if p.Contains(peer.Unmap()) {
			return r.Header.Get("X-Forwarded-Proto") == "https"
		}
	}
	return false
}

// csrfToken is the session's CSRF token: an HMAC of the session token,
// which the HttpOnly cookie keeps from scripts and other sites.
func csrfToken(sessionToken string) string {
	m := hmac.New(sha256.New, []byte(sessionToken))
	m.Write([]byte("oficina portal csrf"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func validCSRF(sessionToken, got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(csrfToken(sessionToken)), []byte(got)) == 1
}

// sameOrigin refuses a POST a browser says came from another site
// (Sec-Fetch-Site, else Origin); the CSRF token is checked as well.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin" || site == "none"
	}
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		u, err := url.Parse(o)
		return err == nil && u.Host == r.Host
	}
	return true
}

func randomToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
