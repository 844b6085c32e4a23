package wire

import (
	"net/http"
	"strings"

	"oficina/schema/apierr"
)

// WithLanguage returns r carrying the language its Accept-Language asks
// for (and no request id: outside /public/v1 errors have none, spec 7),
// unless a handler before set one.
func WithLanguage(r *http.Request) *http.Request {
	if _, ok := r.Context().Value(keyLang).(string); ok {
		return r
	}
	return r.WithContext(WithRequest(r.Context(), "", apierr.Negotiate(r.Header.Get("Accept-Language"))))
}

// Unrouted answers a request mux has no route for, in the envelope and the
// request's language, and reports whether it did: 405 method_not_allowed
// with Allow when the path has routes for other methods, else 404
// route_not_found. ServeMux's own answers to both are plain English text.
func Unrouted(w http.ResponseWriter, r *http.Request, mux *http.ServeMux) bool {
	if _, pattern := mux.Handler(r); pattern != "" {
		return false
	}
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := mux.Handler(probe); p != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		WriteError(w, r, apierr.New(apierr.MethodNotAllowed))
		return true
	}
	WriteError(w, r, apierr.New(apierr.RouteNotFound))
	return true
}

// Envelope serves mux so that every error it gives is the envelope in the
// caller's language: the request carries the negotiated language, and an
// unknown path or method is answered by Unrouted rather than by ServeMux.
// The listeners wrap their muxes in it (the public API negotiates itself).
func Envelope(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = WithLanguage(r)
		if Unrouted(w, r, mux) {
			return
		}
		mux.ServeHTTP(w, r)
	})
}
