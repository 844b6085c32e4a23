package public

import (
	"net/http"
	"reflect"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-fuego/fuego"

	"oficina/schema/apierr"
	"oficina/tenant"
)

func openAPIInfo() *openapi3.Info {
	return &openapi3.Info{
		Title:   "Oficina public API",
		Version: "v1",
		Description: "Service orders, sales and payments, lead capture and signed webhooks. " +
			"All paths are under /public/v1; every request sends Authorization: Bearer <API key>. " +
			"Errors share one envelope (see components.schemas.Body and docs/errors.md).",
	}
}

func bearerScheme() openapi3.SecuritySchemes {
	return openapi3.SecuritySchemes{"apiKey": &openapi3.SecuritySchemeRef{Value: openapi3.NewSecurityScheme().WithType("http").WithScheme("bearer").
		WithDescription("API key: Authorization: Bearer ofk_…")}}
}

// errorResponses documents the envelope for the statuses every route can
// answer.
func errorResponses() []func(*fuego.BaseRoute) {
	env := fuego.Response{Type: apierr.Body{}}
	var out []func(*fuego.BaseRoute)
	for _, c := range []struct {
		code int
		desc string
	}{
		{400, "invalid_request: malformed request or query parameter"},
		{401, "api_key_invalid: any authentication failure"},
		{403, "permission_missing, member_permission_denied, plan_feature_unavailable, plan_limit_reached, subscription_inactive, access_denied"},
		{404, "resource_not_found or route_not_found"},
		{429, "rate_limit_exceeded (Retry-After)"},
		{500, "internal_error"},
	} {
		out = append(out, fuego.OptionAddResponse(c.code, c.desc, env))
	}
	out = append(out, fuego.OptionSecurity(openapi3.SecurityRequirement{"apiKey": {}}))
	return out
}

// bodyResponses documents the statuses of routes that take a body.
func bodyResponses() []func(*fuego.BaseRoute) {
	env := fuego.Response{Type: apierr.Body{}}
	return []func(*fuego.BaseRoute){
		fuego.OptionAddResponse(409, "conflict, idempotency_in_progress", env),
		fuego.OptionAddResponse(413, "request_too_large: body above 1 MB", env),
		fuego.OptionAddResponse(415, "unsupported_media_type: body not JSON", env),
		fuego.OptionAddResponse(422, "validation_failed (errors[]), idempotency_key_reused", env),
	}
}

// handle registers one route with its declared access.
func handle[T, B any](s *Server, method, path string, acc access, h func(fuego.Context[B, any]) (T, error), opts ...func(*fuego.BaseRoute)) {
	full := Prefix + path
	pattern := method + " " + full
	hasBody := method == http.MethodPost || method == http.MethodPatch || method == http.MethodPut
	s.routes[pattern] = &route{pattern: pattern, access: acc, body: hasBody, write: method != http.MethodGet}
	s.schemaTypes.note(reflect.TypeFor[T](), reflect.TypeFor[B]())
	desc := "Permission: any valid key."
	if !acc.anyKey {
		desc = "Permission: `" + string(acc.perm) + "`."
	}
	opts = append(opts, fuego.OptionDescription(desc))
	if hasBody {
		opts = append(opts, bodyResponses()...)
	}
	if method != http.MethodGet {
		opts = append(opts, fuego.OptionHeader("Idempotency-Key",
			"1 to 255 printable ASCII characters; the same key with the same request replays the stored answer for 24 hours"))
	}
	switch method {
	case http.MethodGet:
		fuego.Get(s.f, full, h, opts...)
	case http.MethodPost:
		fuego.Post(s.f, full, h, opts...)
	case http.MethodPatch:
		fuego.Patch(s.f, full, h, opts...)
	case http.MethodDelete:
		fuego.Delete(s.f, full, h, opts...)
	}
}

func need(perm tenant.Permission) access { return access{perm: perm} }

func tag(name string) func(*fuego.BaseRoute) { return fuego.OptionTags(name) }

func summary(s string) func(*fuego.BaseRoute) { return fuego.OptionSummary(s) }

func operationID(method, path string) func(*fuego.BaseRoute) {
	id := strings.ToLower(method) + strings.NewReplacer("/", "_", "{", "", "}", "").Replace(path)
	return fuego.OptionOperationID(id)
}

// register lists every public route.
func (s *Server) register() {
	handle(s, http.MethodGet, "/me", access{anyKey: true}, s.getMe, tag("identity"), summary("Key context"))
	handle(s, http.MethodGet, "/team", access{perm: "team:read", skipMember: true}, s.listTeam,
		tag("service_orders"), summary("Team members, filtered by the member's permissions"), pageParams())
	handle(s, http.MethodGet, "/service_order_types", need("service_orders:read"), s.listServiceOrderTypes,
		tag("service_orders"), summary("Service order types"), pageParams())
	handle(s, http.MethodGet, "/clients/{id}", need("clients:read"), s.getClient, tag("clients"), summary("Read a client record"))
	s.orderRoutes()
	s.leadRoutes()
	s.webhookRoutes()
	s.saleRoutes()
}

func pageParams() func(*fuego.BaseRoute) {
	return fuego.GroupOptions(
		fuego.OptionQueryInt("limit", "Page size, 1 to 100 (default 100)"),
		fuego.OptionQuery("starting_after", "Cursor: the id of the last item of the previous page"),
	)
}
