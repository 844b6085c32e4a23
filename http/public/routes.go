package public

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-fuego/fuego"

	"oficina/http/openapi"
	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/clients"
	"oficina/schema/events"
	"oficina/schema/field"
	"oficina/schema/ids"
	"oficina/schema/page"
	"oficina/streams"
	"oficina/streams/envelope"
	"oficina/tenant"
)

// op describes a route for integrators: its operationId (a verb), what it
// does, and what the OpenAPI document cannot read from the handler's types.
type op struct {
	id      string
	tag     string
	summary string
	desc    string // more, for integrators (markdown)
	status  int    // success status; 200 when unset
	query   []openapi.Param
	example string // a request body the schema accepts
	// optionalBody: the body may be left out (defaults apply).
	optionalBody bool
	// stream: the answer is server-sent events (text/event-stream).
	stream bool
}

// handle registers one route: in the route table the OpenAPI document is
// built from, and on fuego's router, which matches the path (its
// wildcards become the Call's Path) and hands the request to the pipeline
// with the route. B is the body type the handler decodes (any: no body)
// and T the answer (any: no body).
func handle[T, B any](s *Server, method, path string, acc access, o op, h func(ctx context.Context, c *Call[B]) (T, error)) {
	full := Prefix + path
	pattern := method + " " + full
	hasBody := method == http.MethodPost || method == http.MethodPatch || method == http.MethodPut
	if o.status == 0 {
		o.status = http.StatusOK
	}
	rt := &route{pattern: pattern, access: acc, body: hasBody, write: method != http.MethodGet, run: typed(o.status, h)}
	s.routes[pattern] = rt
	if !strings.Contains(full, "{") {
		s.literal[full] = true
	}
	r := openapi.Route{
		Method: method, Path: full, ID: o.id, Tag: o.tag, Summary: o.summary,
		Description: permissionText(acc) + o.desc, Status: o.status, Query: o.query, Write: rt.write,
		Example: o.example, RequestOptional: o.optionalBody, Stream: o.stream,
	}
	if t := reflect.TypeFor[B](); t.Kind() != reflect.Interface {
		r.Request = t
	}
	if t := reflect.TypeFor[T](); t.Kind() != reflect.Interface {
		r.Response = t
	}
	s.spec.Routes = append(s.spec.Routes, r)
	serve := func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, rt) }
	switch method {
	case http.MethodGet:
		fuego.GetStd(s.f, full, serve)
	case http.MethodPost:
		fuego.PostStd(s.f, full, serve)
	case http.MethodPatch:
		fuego.PatchStd(s.f, full, serve)
	case http.MethodDelete:
		fuego.DeleteStd(s.f, full, serve)
	}
}

func permissionText(acc access) string {
	if acc.anyKey {
		return "**Permission:** any valid key.\n\n"
	}
	return "**Permission:** `" + string(acc.perm) + "`.\n\n"
}

func need(perm tenant.Permission) access { return access{perm: perm} }

// register lists every public route.
func (s *Server) register() {
	handle(s, http.MethodGet, "/me", access{anyKey: true}, op{id: "getMe", tag: "identity", summary: "Read the key's context",
		desc: "The company, the calling key (exactly its permissions) and the company's rate limit (part 2.2)."}, s.getMe)
	handle(s, http.MethodGet, "/team", access{perm: "team:read", skipMember: true}, op{id: "listTeamMembers", tag: "service_orders",
		summary: "List team members",
		desc: "Active members, trimmed by the member's permissions: technicians with the technicians permission, sellers " +
			"with sales, panel members and assistants with tasks; owners and admins see everyone. Missing permissions trim " +
			"the list, never refuse it.", query: pageParams(syncParams()...)}, s.listTeam)
	handle(s, http.MethodGet, "/service_order_types", need("service_orders:read"), op{id: "listServiceOrderTypes",
		tag: "service_orders", summary: "List service order types", query: pageParams(syncParams()...),
		desc: "The `id` of a type is the `type_id` of an order; when `required_on_create` is true the company requires a type."},
		s.listServiceOrderTypes)
	handle(s, http.MethodGet, "/clients/{id}", need("clients:read"), op{id: "getClient", tag: "clients",
		summary: "Read a client record", desc: "Also the record a lead capture created or reused."}, s.getClient)
	s.orderRoutes()
	s.leadRoutes()
	s.webhookRoutes()
	s.saleRoutes()
	s.eventRoutes()
}

// pageParams are the list parameters (docs/api.md, "Lists and pagination").
func pageParams(more ...openapi.Param) []openapi.Param {
	return append([]openapi.Param{limitParam(),
		text("starting_after", "Cursor: the `id` of the last item of the previous page.", 1, page.MaxCursor),
	}, more...)
}

func limitParam() openapi.Param {
	return openapi.Param{Name: "limit", Description: "Page size, 1 to 100 (default 100).",
		Schema: &openapi3.Schema{Type: &openapi3.Types{"integer"}, Format: "int32", Min: new(1.0), Max: new(float64(page.MaxLimit))}}
}

// text is a query parameter of free text: minLen to maxLen characters (0:
// no bound), never a NUL (wire.CheckQuery).
func text(name, desc string, minLen, maxLen uint64) openapi.Param {
	s := &openapi3.Schema{Type: &openapi3.Types{"string"}, MinLength: minLen, Pattern: field.TextPattern}
	if maxLen > 0 {
		s.MaxLength = &maxLen
	}
	return openapi.Param{Name: name, Description: desc, Schema: s}
}

// patterned is a query parameter that must match pattern.
func patterned(name, desc, pattern string) openapi.Param {
	return openapi.Param{Name: name, Description: desc, Schema: &openapi3.Schema{Type: &openapi3.Types{"string"}, Pattern: pattern}}
}

// idQuery is a filter by the id of a record with prefix (an id of any
// other shape is 400; one that names nothing matches nothing).
func idQuery(name, desc, prefix string) openapi.Param {
	return patterned(name, desc, ids.Pattern(prefix))
}

// syncParams are the time window of a sync loop (page.Sync; docs/api.md,
// "Keeping a copy in sync"), on the lists whose records have both times.
func syncParams() []openapi.Param {
	return []openapi.Param{
		timestampQuery("created_after", "Created after this time."),
		timestampQuery("created_before", "Created before this time."),
		timestampQuery("updated_after", "Changed after this time: with the page cursor, what a sync loop reads."),
		timestampQuery("updated_before", "Changed before this time."),
	}
}

func query[T any](name, desc string) openapi.Param {
	return openapi.Param{Name: name, Description: desc, Type: reflect.TypeFor[T]()}
}

// timestampQuery and dateQuery are filters in the formats of part 2.1.
func timestampQuery(name, desc string) openapi.Param { return query[apitime.Time](name, desc) }
func dateQuery(name, desc string) openapi.Param      { return query[apitime.Date](name, desc) }

// webhookSection is one entry per event type of the catalogue, and ping,
// each with an example built by the envelope builder the server sends with
// from the table's example object.
func webhookSection() ([]openapi.Webhook, error) {
	var out []openapi.Webhook
	for _, t := range append(events.Catalogue(), events.Ping) {
		ex, err := webhookExample(t)
		if err != nil {
			return nil, err
		}
		out = append(out, openapi.Webhook{Name: t.Name, Summary: t.Summary, Object: reflect.TypeOf(t.Object),
			Updated: envelope.IsUpdate(t.Name), Example: ex})
	}
	return out, nil
}

// webhookExample is the body of an event of type t whose data.object is
// the table's example, with a fixed event id (evt_ + the first 32 hex
// digits of the name's SHA-256) and time, so the document is the same on
// every build.
func webhookExample(t streams.EventType) ([]byte, error) {
	obj, err := json.Marshal(t.Object)
	if err != nil {
		return nil, fmt.Errorf("public: %s example: %w", t.Name, err)
	}
	sum := sha256.Sum256([]byte(t.Name))
	_, body, err := envelope.Build(envelope.Params{ID: "evt_" + hex.EncodeToString(sum[:16]), Type: t.Name,
		OrganizationID: ids.Example("co", 1), OccurredAt: time.Date(2026, 3, 14, 13, 5, 9, 0, time.UTC),
		Object: obj, ChangedFields: t.ChangedFields})
	if err != nil {
		return nil, fmt.Errorf("public: %s example: %w", t.Name, err)
	}
	return body, nil
}

// spec is the document's frame: info, servers, tags, the webhooks section
// and the error envelope.
func spec() (openapi.Spec, error) {
	hooks, err := webhookSection()
	if err != nil {
		return openapi.Spec{}, err
	}
	return openapi.Spec{
		Info: &openapi3.Info{
			Title:   "Oficina public API",
			Version: "v1",
			Description: "Service orders, sales and payments, lead capture and signed webhooks for one company, through " +
				"an API key of that company.\n\n" +
				"- Every request sends `Authorization: Bearer <API key>`; bodies are JSON (`application/json`).\n" +
				"- Every answer carries `Request-Id`; errors share one envelope (`Error`), whose `message` follows " +
				"`Accept-Language` (pt-BR by default, en, es).\n" +
				"- Writes take `Idempotency-Key`: retry a write with the same key and it happens once.\n" +
				"- In a PATCH, an omitted member keeps its value; `null` clears a member whose schema allows null and " +
				"is refused (422 `invalid_value`) elsewhere.\n" +
				"- Timestamps are UTC `YYYY-MM-DDThh:mm:ssZ`, dates `YYYY-MM-DD`, money integer cents in `_cents` members.\n" +
				"- Events arrive as signed webhooks (the `webhooks` section) and on NATS JetStream for internal consumers.",
			License: &openapi3.License{Name: "Apache License 2.0", Identifier: "Apache-2.0"},
			Contact: &openapi3.Contact{Name: "Oficina", URL: "https://docs.oficina.dev/public/v1"},
		},
		// The defaults are make run's: a client generated from this document
		// calls them unless told otherwise.
		Servers: openapi3.Servers{{
			URL: "{scheme}://{host}",
			Description: "Your Oficina server. The defaults are what `make run` serves, http://localhost:8080, so a " +
				"generated client works against it as generated; in production use `https` and your API's host.",
			Variables: map[string]*openapi3.ServerVariable{
				"scheme": {Enum: []string{"http", "https"}, Default: "http",
					Description: "`http` for `make run` on your machine; `https` in production."},
				"host": {Default: "localhost:8080", Description: "Host and port of the API."},
			},
		}},
		Tags: openapi3.Tags{
			{Name: "identity", Description: "The calling key and its company."},
			{Name: "service_orders", Description: "Service orders, their types and the team (part 4.3)."},
			{Name: "sales", Description: "Sales, payments, installments and versions (part 4.4)."},
			{Name: "quotes", Description: "Quote conversions (part 4.4)."},
			{Name: "leads", Description: "Lead capture: a client record and a follow-up task (part 4.5)."},
			{Name: "clients", Description: "Client records."},
			{Name: "webhooks", Description: "Webhook endpoints and their delivery log (part 4.6). Owners and admins only."},
			{Name: "events", Description: "The events of the company: sent to webhook endpoints (part 6) and kept 30 days for `GET /events`."},
		},
		Webhooks: hooks,
		Patterns: map[string]string{"email": clients.EmailPattern, "phone": clients.PhonePattern},
		Errors: openapi.ErrorCodes{Envelope: reflect.TypeFor[apierr.Body](), Meaning: map[int]string{
			400: "`invalid_request` (malformed request, broken JSON, invalid query parameter or Idempotency-Key) or `request_failed`.",
			401: "`api_key_invalid`: any authentication failure, always the same answer.",
			403: "`permission_missing`, `member_permission_denied`, `plan_feature_unavailable`, `plan_limit_reached`, " +
				"`subscription_inactive` or `access_denied`.",
			404: "`resource_not_found` (an id missing or of another company) or `route_not_found`.",
			405: "`method_not_allowed`: the path exists, the method does not (`Allow` lists the methods).",
			409: "`conflict` with the current state, or `idempotency_in_progress`.",
			413: "`request_too_large`: body above 1 MB.",
			415: "`unsupported_media_type`: the body is not JSON.",
			422: "`validation_failed` (every invalid field in `errors`) or `idempotency_key_reused`.",
			429: "`rate_limit_exceeded`: wait `Retry-After` seconds.",
			500: "`internal_error`: retry later with the same `Idempotency-Key`.",
			503: "`service_unavailable`: retry after `Retry-After` seconds with the same `Idempotency-Key`.",
		}},
	}, nil
}
