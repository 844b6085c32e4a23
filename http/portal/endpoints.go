package portal

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"oficina/schema/apierr"
	"oficina/schema/field"
	"oficina/schema/page"
	session "oficina/schema/portal"
	"oficina/schema/webhooks"
)

func capability(c session.Capability) *session.Capability { return &c }

var (
	manage     = capability(session.ManageEndpoints)
	viewSecret = capability(session.ViewSecret)
	recoverCap = capability(session.Recover)
)

func (s *Server) endpointRoutes() {
	e := Prefix + "endpoints/{id}"
	s.mux.Handle("GET "+Prefix+"endpoints/new", s.page(manage, s.newEndpoint))
	s.mux.Handle("POST "+Prefix+"endpoints", s.page(manage, s.createEndpoint))
	s.mux.Handle("GET "+e, s.page(nil, s.showEndpoint))
	s.mux.Handle("GET "+e+"/edit", s.page(manage, s.editEndpoint))
	s.mux.Handle("POST "+e, s.page(manage, s.updateEndpoint))
	s.mux.Handle("POST "+e+"/enable", s.page(manage, s.enableEndpoint))
	s.mux.Handle("POST "+e+"/disable", s.page(manage, s.disableEndpoint))
	s.mux.Handle("GET "+e+"/delete", s.page(manage, s.confirmDelete))
	s.mux.Handle("POST "+e+"/delete", s.page(manage, s.deleteEndpoint))
	s.mux.Handle("POST "+e+"/rotate", s.page(manage, s.rotateSecret))
	s.mux.Handle("POST "+e+"/reveal", s.page(viewSecret, s.revealSecret))
	s.mux.Handle("POST "+e+"/ping", s.page(manage, s.pingEndpoint))
	s.mux.Handle("POST "+e+"/recover", s.page(recoverCap, s.recoverDeliveries))
	s.mux.Handle("GET "+e+"/recover_tasks/{task}", s.page(nil, s.showTask))
}

// endpointRow is an endpoint with its health, as the pages list it.
type endpointRow struct {
	webhooks.WebhookEndpoint
	Health webhooks.Health
}

func (s *Server) listEndpoints(c *call) (*result, error) {
	l, err := webhooks.List(c.ctx, c.tx, page.Params{Limit: page.MaxLimit}, page.Sync{})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(l.Data))
	for i, e := range l.Data {
		ids[i] = e.ID
	}
	health, err := webhooks.HealthOf(c.ctx, c.tx, ids, c.now)
	if err != nil {
		return nil, err
	}
	rows := make([]endpointRow, len(l.Data))
	for i, e := range l.Data {
		rows[i] = endpointRow{WebhookEndpoint: e, Health: health[e.ID]}
	}
	return &result{page: "endpoints", data: rows}, nil
}

func (s *Server) showEndpoint(c *call) (*result, error) {
	e, err := webhooks.Get(c.ctx, c.tx, c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	health, err := webhooks.HealthOf(c.ctx, c.tx, []string{e.ID}, c.now)
	if err != nil {
		return nil, err
	}
	tasks, err := webhooks.RecoverTasks(c.ctx, c.tx, e.ID, 5)
	if err != nil {
		return nil, err
	}
	recent, err := webhooks.DeliveryLogRows(c.ctx, c.tx, e.ID, webhooks.DeliveryFilter{}, page.Params{Limit: 10})
	if err != nil {
		return nil, err
	}
	return &result{page: "endpoint", data: map[string]any{
		"E": endpointRow{WebhookEndpoint: e.View(), Health: health[e.ID]}, "Tasks": tasks, "Recent": logRows(recent.Data),
		// Until left empty means now: a minute-precise "now" would leave out
		// what arrived this minute.
		"Since": c.localInput(c.now.Add(-24 * time.Hour)),
	}}, nil
}

// endpointForm is the create and edit form's state.
type endpointForm struct {
	ID           string // "" on create
	URL          string
	Description  string
	Payload      string
	Ordering     string
	HeaderNames  []string // the custom headers the endpoint has (their values are never shown)
	CertSubject  string   // the client certificate's subject, if it has one
	OAuth2Client string   // the OAuth2 client id, if it has credentials
	Events       map[string]bool
	Families     []family
}

// howSent is how an endpoint's deliveries are sent: its payload and
// ordering.
type howSent struct{ payload, ordering string }

func (s *Server) form(id, url, desc string, how howSent, events []string) endpointForm {
	f := endpointForm{ID: id, URL: url, Description: desc, Payload: how.payload, Ordering: how.ordering, Events: map[string]bool{},
		Families: s.subscribable()}
	for _, e := range events {
		f.Events[e] = true
	}
	return f
}

// newEndpoint starts with no event ticked: what to receive is a choice,
// and a ticked * beside another name is refused.
func (s *Server) newEndpoint(c *call) (*result, error) {
	return &result{page: "endpoint_form", data: s.form("", "https://", "", howSent{webhooks.PayloadFull, webhooks.OrderingNone}, nil)}, nil
}

func (s *Server) editEndpoint(c *call) (*result, error) {
	e, err := webhooks.Get(c.ctx, c.tx, c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	f := s.form(e.ID, e.URL, e.Description, howSent{e.Payload, e.Ordering}, e.Events)
	f.HeaderNames = e.HeaderNames
	if c := e.View().ClientCertificate; c != nil {
		f.CertSubject = c.Subject
	}
	if o := e.View().OAuth2; o != nil {
		f.OAuth2Client = o.ClientID
	}
	return &result{page: "endpoint_form", data: f}, nil
}

func formEvents(r *http.Request) []webhooks.EventName {
	var out []webhooks.EventName
	for _, e := range r.PostForm["events"] {
		out = append(out, webhooks.EventName(e))
	}
	return out
}

// formHeaders reads the custom headers box: one "Name: value" a line
// (nil when empty); a line without a colon is a field error on headers.
func formHeaders(r *http.Request) (map[string]string, error) {
	var out map[string]string
	for line := range strings.SplitSeq(r.PostFormValue("headers"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, apierr.Invalid("headers", apierr.InvalidValue)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[strings.TrimSpace(name)] = strings.TrimSpace(value)
	}
	return out, nil
}

// formCertificate is the client certificate the form sets (nil: none sent).
func formCertificate(r *http.Request) *webhooks.WebhookClientCertificateInput {
	cert, key := strings.TrimSpace(r.PostFormValue("client_certificate")), strings.TrimSpace(r.PostFormValue("client_key"))
	if cert == "" && key == "" {
		return nil
	}
	return &webhooks.WebhookClientCertificateInput{Certificate: cert, PrivateKey: key}
}

// formOAuth2 is the OAuth2 client credentials the form sets (nil: none
// sent; all of them are needed, the rules say which is missing).
func formOAuth2(r *http.Request) *webhooks.WebhookOAuth2Input {
	in := webhooks.WebhookOAuth2Input{TokenURL: strings.TrimSpace(r.PostFormValue("oauth2_token_url")),
		ClientID: strings.TrimSpace(r.PostFormValue("oauth2_client_id")), ClientSecret: r.PostFormValue("oauth2_client_secret")}
	if scope := strings.TrimSpace(r.PostFormValue("oauth2_scope")); scope != "" {
		in.Scope = &scope
	}
	if in.TokenURL == "" && in.ClientID == "" && in.ClientSecret == "" && in.Scope == nil {
		return nil
	}
	return &in
}

// formHowSent is the form's payload and ordering; full and none when
// not sent.
func formHowSent(r *http.Request) howSent {
	h := howSent{webhooks.PayloadFull, webhooks.OrderingNone}
	if v := r.PostFormValue("payload"); v != "" {
		h.payload = v
	}
	if v := r.PostFormValue("ordering"); v != "" {
		h.ordering = v
	}
	return h
}

// invalid re-shows the form with the error's fields (422), or passes a
// refusal of another kind through.
func (s *Server) invalid(c *call, err error, f endpointForm) (*result, error) {
	if apierr.As(err).Code != apierr.ValidationFailed {
		return nil, err
	}
	err = s.withURLError(c, err, f.URL)
	c.view.fieldErrors(err)
	return &result{status: http.StatusUnprocessableEntity, page: "endpoint_form", data: f}, err
}

// withURLError adds the URL's own refusal to a validation error that does
// not name it: the schema checks the destination only once the other
// fields are valid, and a form shows every error at once, not one a try.
func (s *Server) withURLError(c *call, err error, url string) error {
	e := apierr.As(err)
	if slices.ContainsFunc(e.Fields, func(f apierr.FieldError) bool { return f.Param == "url" }) {
		return err
	}
	ue := apierr.As(webhooks.CheckURL(c.ctx, s.deps.Destinations, url))
	if ue.Code != apierr.ValidationFailed {
		return err // accepted, or not a verdict on the URL (the resolver failed)
	}
	return &apierr.Error{Code: apierr.ValidationFailed, Fields: append(slices.Clone(e.Fields), ue.Fields...), Cause: err}
}

func (s *Server) createEndpoint(c *call) (*result, error) {
	url, desc := strings.TrimSpace(c.r.PostFormValue("url")), c.r.PostFormValue("description")
	how := formHowSent(c.r)
	payload, ordering := webhooks.WebhookPayload(how.payload), webhooks.WebhookOrdering(how.ordering)
	headers, herr := formHeaders(c.r)
	in := webhooks.WebhookEndpointCreate{URL: url, Description: &desc, Events: formEvents(c.r), Payload: &payload, Ordering: &ordering, Headers: headers,
		ClientCertificate: formCertificate(c.r), OAuth2: formOAuth2(c.r)}
	if herr != nil {
		return s.invalid(c, herr, s.form("", url, desc, how, c.r.PostForm["events"]))
	}
	e, err := webhooks.Create(c.ctx, c.tx, c.company.ID, in, c.actor.Subscriber(), c.actor.Access(), s.deps.Destinations, s.deps.Secrets, c.now)
	if err != nil {
		return s.invalid(c, err, s.form("", url, desc, how, c.r.PostForm["events"]))
	}
	return &result{page: "secret", data: map[string]any{"E": e.ViewWithSecret(), "Created": true}}, nil
}

func (s *Server) updateEndpoint(c *call) (*result, error) {
	id := c.r.PathValue("id")
	url, desc := strings.TrimSpace(c.r.PostFormValue("url")), c.r.PostFormValue("description")
	events, how := formEvents(c.r), formHowSent(c.r)
	in := webhooks.WebhookEndpointUpdate{URL: field.Opt[string]{Set: true, Value: url},
		Description: field.Opt[string]{Set: true, Value: desc}, Events: field.Opt[[]webhooks.EventName]{Set: true, Value: events},
		Payload:  field.Opt[webhooks.WebhookPayload]{Set: true, Value: webhooks.WebhookPayload(how.payload)},
		Ordering: field.Opt[webhooks.WebhookOrdering]{Set: true, Value: webhooks.WebhookOrdering(how.ordering)}}
	// Values are never shown, so an empty box keeps the endpoint's headers;
	// new lines replace them, and the box ticked removes them.
	headers, herr := formHeaders(c.r)
	switch {
	case herr != nil:
		return s.invalid(c, herr, s.form(id, url, desc, how, c.r.PostForm["events"]))
	case headers != nil:
		in.Headers = field.Opt[map[string]string]{Set: true, Value: headers}
	case c.r.PostFormValue("clear_headers") != "":
		in.Headers = field.Opt[map[string]string]{Set: true, Null: true}
	}
	// The same for the client certificate: new PEM replaces it, the box
	// ticked removes it, nothing keeps it.
	switch cert := formCertificate(c.r); {
	case cert != nil:
		in.ClientCertificate = field.Opt[webhooks.WebhookClientCertificateInput]{Set: true, Value: *cert}
	case c.r.PostFormValue("clear_client_certificate") != "":
		in.ClientCertificate = field.Opt[webhooks.WebhookClientCertificateInput]{Set: true, Null: true}
	}
	switch o := formOAuth2(c.r); {
	case o != nil:
		in.OAuth2 = field.Opt[webhooks.WebhookOAuth2Input]{Set: true, Value: *o}
	case c.r.PostFormValue("clear_oauth2") != "":
		in.OAuth2 = field.Opt[webhooks.WebhookOAuth2Input]{Set: true, Null: true}
	}
	if _, err := webhooks.Update(c.ctx, c.tx, id, in, c.actor.Subscriber(), c.actor.Access(), s.deps.Destinations, s.deps.Secrets, c.now); err != nil {
		return s.invalid(c, err, s.form(id, url, desc, how, c.r.PostForm["events"]))
	}
	return done(id, "saved"), nil
}

// done redirects to the endpoint's page, saying what was done.
func done(id, what string) *result {
	return &result{redirect: Prefix + "endpoints/" + id + "?done=" + what}
}

func (s *Server) enableEndpoint(c *call) (*result, error) {
	e, err := webhooks.Enable(c.ctx, c.unit, c.r.PathValue("id"), c.actor.Subscriber(), c.actor.Access())
	if err != nil {
		return nil, err
	}
	return done(e.ID, "enabled"), nil
}

func (s *Server) disableEndpoint(c *call) (*result, error) {
	e, err := webhooks.Disable(c.ctx, c.unit, c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return done(e.ID, "disabled"), nil
}

func (s *Server) confirmDelete(c *call) (*result, error) {
	e, err := webhooks.Get(c.ctx, c.tx, c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return &result{page: "endpoint_delete", data: e.View()}, nil
}

func (s *Server) deleteEndpoint(c *call) (*result, error) {
	if _, err := webhooks.Delete(c.ctx, c.tx, c.r.PathValue("id")); err != nil {
		return nil, err
	}
	return &result{redirect: Prefix + "?done=deleted"}, nil
}

func (s *Server) rotateSecret(c *call) (*result, error) {
	grace, err := formGrace(c.r.PostFormValue("grace"))
	if err != nil {
		return nil, err
	}
	e, err := webhooks.RotateSecret(c.ctx, c.tx, c.r.PathValue("id"), grace, c.actor.Access(), s.deps.Secrets, c.now)
	if err != nil {
		return nil, err
	}
	return &result{page: "secret", data: map[string]any{"E": e.ViewWithSecret(), "Rotated": true}}, nil
}

// formGrace reads the rotate form's grace period in seconds (empty: the
// default) under the API's bounds (422 out_of_range).
func formGrace(v string) (time.Duration, error) {
	if v == "" {
		return webhooks.DefaultSecretGrace, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, apierr.Invalid("grace_period_seconds", apierr.InvalidType)
	}
	return webhooks.SecretGrace(n) // beyond int64, n is its bound: out of range too
}

func (s *Server) revealSecret(c *call) (*result, error) {
	id := c.r.PathValue("id")
	secret, err := webhooks.RevealSecret(c.ctx, c.tx, id, s.deps.Secrets)
	if err != nil {
		return nil, err
	}
	e, err := webhooks.Get(c.ctx, c.tx, id)
	if err != nil {
		return nil, err
	}
	v := e.View()
	v.Secret = secret
	return &result{page: "secret", data: map[string]any{"E": v}}, nil
}

func (s *Server) pingEndpoint(c *call) (*result, error) {
	id := c.r.PathValue("id")
	if _, err := webhooks.Ping(c.ctx, c.unit, id, c.actor.Access()); err != nil {
		return nil, err
	}
	return done(id, "ping"), nil
}

// localInput renders t for a datetime-local input in the company's zone.
func (c *call) localInput(t time.Time) string {
	return t.In(c.view.location()).Format("2006-01-02T15:04")
}

func (v *view) location() *time.Location {
	if v.loc == nil {
		return time.UTC
	}
	return v.loc
}
