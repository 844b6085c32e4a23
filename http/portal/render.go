package portal

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"oficina/http/wire"
	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/db"
	session "oficina/schema/portal"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed texts.json
var textsJSON []byte

// Pages, each a template file defining "content" inside layout.html.
var pages = []string{"login", "signedout", "error", "endpoints", "endpoint", "endpoint_form", "endpoint_delete",
	"secret", "recover_confirm", "task", "deliveries", "delivery", "events", "eventlog", "event"}

// views are the parsed pages and the messages in every language.
type views struct {
	pages map[string]*template.Template
	texts map[string]map[string]string // key → language → text
}

func parseViews() (*views, error) {
	v := &views{pages: map[string]*template.Template{}}
	if err := json.Unmarshal(textsJSON, &v.texts); err != nil {
		return nil, fmt.Errorf("portal: texts: %w", err)
	}
	base, err := template.New("layout.html").Funcs(stubFuncs).ParseFS(templateFiles, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("portal: layout: %w", err)
	}
	for _, p := range pages {
		t, err := template.Must(base.Clone()).ParseFS(templateFiles, "templates/"+p+".html")
		if err != nil {
			return nil, fmt.Errorf("portal: page %s: %w", p, err)
		}
		v.pages[p] = t
	}
	return v, nil
}

// stubFuncs declare the functions templates call; each render binds them
// to its language, time zone and session (view.funcs).
var stubFuncs = template.FuncMap{
	"t": func(string, ...any) string { return "" }, "when": func(any) string { return "" },
	"can": func(string) bool { return false }, "pct": func(float64) string { return "" },
	"field": func(string) string { return "" }, "str": str, "dict": dict, "dots": dots, "join": strings.Join,
}

// doneKinds are what ?done= may say an action did (done.* texts).
var doneKinds = []string{"saved", "enabled", "disabled", "deleted", "ping", "resent"}

// view is what every page shows around its content: language, company,
// session and the CSRF token of its forms.
type view struct {
	Lang      string
	Languages []string
	Company   string
	CSRF      string
	Expires   time.Time
	Done      string // what the previous action did (?done=…)
	Path      string
	Errors    map[string]string // form field → message
	loc       *time.Location
	caps      []session.Capability
}

func (s *Server) newView(lang string, c *call) *view {
	v := &view{Lang: lang, Company: c.company.Name, CSRF: csrfToken(c.token), Expires: c.session.ExpiresAt,
		caps: c.session.Capabilities, Path: c.r.URL.Path}
	if d := c.r.URL.Query().Get("done"); slices.Contains(doneKinds, d) {
		v.Done = d
	}
	if loc, err := time.LoadLocation(c.company.Timezone); err == nil {
		v.loc = loc
	}
	return v
}

// fieldErrors turns a validation error's fields into messages in lang.
func (v *view) fieldErrors(err error) {
	e := apierr.As(err)
	if e.Code != apierr.ValidationFailed {
		return
	}
	v.Errors = map[string]string{}
	for _, f := range e.Fields {
		msg := string(f.Code)
		if fe, ok := apierr.Default.Field(f.Code); ok {
			msg = fe.Messages[v.Lang]
		}
		v.Errors[f.Param] = msg
	}
}

func (s *Server) text(lang, key string, args ...any) string {
	m, ok := s.views.texts[key]
	if !ok {
		return "⟦" + key + "⟧" // a test looks for these
	}
	t := m[lang]
	if len(args) > 0 {
		return fmt.Sprintf(t, args...)
	}
	return t
}

func (s *Server) funcs(v *view) template.FuncMap {
	loc := v.loc
	if loc == nil {
		loc = time.UTC
	}
	return template.FuncMap{
		"t": func(key string, args ...any) string { return s.text(v.Lang, key, args...) },
		"when": func(t any) string {
			tm, ok := timeOf(t)
			if !ok {
				return "—"
			}
			return tm.In(loc).Format("2006-01-02 15:04:05 MST")
		},
		"can":   func(c string) bool { return slices.Contains(v.caps, session.Capability(c)) },
		"pct":   func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) },
		"field": func(name string) string { return v.Errors[name] },
		"str":   str,
		"dict":  dict,
		"dots":  dots,
		"join":  strings.Join,
	}
}

// render writes res's page in v's language.
func (s *Server) render(w http.ResponseWriter, v *view, res *result) {
	if v == nil {
		v = &view{Lang: apierr.Languages[0]}
	}
	v.Languages = apierr.Languages
	t, ok := s.views.pages[res.page]
	if !ok {
		s.deps.Logger().Error("portal: no page", "page", res.page)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	t, err := t.Clone()
	if err == nil {
		var buf bytes.Buffer
		if err = t.Funcs(s.funcs(v)).ExecuteTemplate(&buf, "layout.html", map[string]any{"V": v, "D": res.data, "Page": res.page}); err == nil {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			status := res.status
			if status == 0 {
				status = http.StatusOK
			}
			w.WriteHeader(status)
			_, _ = w.Write(buf.Bytes())
			return
		}
	}
	s.deps.Logger().Error("portal: render", "page", res.page, "err", err)
	http.Error(w, "internal error", http.StatusInternalServerError)
}

// fail shows the error page of status. A 503 says when to come back, as
// the API's does.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, v *view, status int) {
	if v == nil {
		v = &view{Lang: s.lang(w, r)}
	}
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", wire.RetryAfterUnavailable)
	}
	s.render(w, v, &result{status: status, page: "error", data: map[string]any{"Status": status}})
}

// statusOf is the status of the page that answers err. A database out of
// reach is 503, worth retrying once it is back, as the API answers it
// (http/wire); any other unexpected error stays 500.
func statusOf(err error) int {
	if db.Unreachable(err) {
		return http.StatusServiceUnavailable
	}
	return apierr.As(err).Status()
}

// lang is the page language: ?lang= (remembered in a cookie), the cookie,
// else Accept-Language as the API negotiates it (pt-BR by default).
func (s *Server) lang(w http.ResponseWriter, r *http.Request) string {
	if q := r.URL.Query().Get("lang"); q != "" && slices.Contains(apierr.Languages, q) {
		http.SetCookie(w, &http.Cookie{Name: langCookieName, Value: q, Path: Prefix, MaxAge: 365 * 24 * 3600,
			HttpOnly: true, Secure: s.secure(r), SameSite: http.SameSiteStrictMode})
		return q
	}
	if ck, err := r.Cookie(langCookieName); err == nil && slices.Contains(apierr.Languages, ck.Value) {
		return ck.Value
	}
	return apierr.Negotiate(r.Header.Get("Accept-Language"))
}

// timeOf reads the times templates show: time.Time, apitime.Time and
// pointers to them (nil: none).
func timeOf(t any) (time.Time, bool) {
	switch x := t.(type) {
	case time.Time:
		return x, true
	case *time.Time:
		if x != nil {
			return *x, true
		}
	case apitime.Time:
		return x.Time, true
	case *apitime.Time:
		if x != nil {
			return x.Time, true
		}
	}
	return time.Time{}, false
}

// str prints v, through a pointer ("" for nil).
func str(v any) string {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return ""
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return ""
	}
	return fmt.Sprint(rv.Interface())
}

// dots prints a dotted name (an event type) that a narrow column may wrap
// after a dot rather than mid-word.
func dots(v any) template.HTML {
	parts := strings.Split(str(v), ".")
	for i, p := range parts {
		parts[i] = template.HTMLEscapeString(p)
	}
	return template.HTML(strings.Join(parts, ".<wbr>"))
}

// dict builds a map from key, value pairs (a partial's arguments).
func dict(kv ...any) map[string]any {
	m := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[fmt.Sprint(kv[i])] = kv[i+1]
	}
	return m
}
