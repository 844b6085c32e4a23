// Package openapi builds the public API's OpenAPI 3.1 document from the
// route table and the Go types the routes decode and answer, so the
// document cannot drift from the server (docs/decisions/0015):
//   - requests: a member is required only when tagged `api:"required"` and
//     takes null only when tagged `api:"nullable"` (the decoder enforces the
//     same tag); unknown members are refused;
//   - responses: every member is present unless omitempty, a pointer may be
//     null, arrays are never null unless tagged;
//   - closed sets are named string types with Values() (an enum component),
//     a member tagged `const:"sale"` has that one value (every resource's
//     object member); timestamps and dates come from apitime's types,
//     integers are int64; JSON kept as written is shown as its Shape;
//   - requests say what the validators check (issue 26 item 6): `min`/`max`
//     on numbers, `minLength`/`maxLength`/`pattern` on strings (on an array,
//     its items), `minItems`/`maxItems`/`uniqueItems`/`alone` on arrays,
//     rules between members as if/then (Ruled), and no NUL in any string;
//   - components are named after the Go types, which carry the API's nouns.
package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Spec is everything the document is built from.
type Spec struct {
	Info     *openapi3.Info
	Servers  openapi3.Servers
	Tags     openapi3.Tags
	Routes   []Route
	Webhooks []Webhook
	// Errors lists the catalogue's codes for the error envelope's enums.
	Errors ErrorCodes
	// Patterns are the named patterns request members refer to with a
	// `pattern:"<name>"` tag (e-mail, phone), each the validator's own
	// constant; "nonblank" is field.NonBlankPattern.
	Patterns map[string]string
}

// Route is one operation.
type Route struct {
	Method, Path string // Path with {params}
	ID           string // operationId, a verb: createServiceOrder
	Tag          string
	Summary      string
	Description  string
	// Request is the body type (nil: no body); RequestOptional marks a body
	// that may be left out.
	Request         reflect.Type
	RequestOptional bool
	// Example is a request body that the schema accepts (checked by a test).
	Example string
	// Response is the answer's type (nil: no body) and Status its status.
	Response reflect.Type
	Status   int
	Query    []Param
	// Write routes take Idempotency-Key.
	Write bool
	// Stream answers server-sent events (text/event-stream) instead of JSON.
	Stream bool
}

// Param is a query parameter.
type Param struct {
	Name, Description string
	Type              reflect.Type // string, int, apitime.Time/Date, bool or an Enum type
	// Schema, when set, is used instead of Type's (bounds).
	Schema *openapi3.Schema
}

// Webhook is one event type of the webhooks section.
type Webhook struct {
	Name    string
	Summary string
	// Object is data.object's type; Updated events carry changed_fields.
	Object  reflect.Type
	Updated bool
	// Example is a body of this event as the server sends it (the
	// envelope's JSON); a test checks it against the schema.
	Example []byte
}

// Build returns the document.
func Build(spec Spec) (*openapi3.T, error) {
	s := newSchemas(spec.Patterns)
	doc := &openapi3.T{
		OpenAPI:    "3.1.0",
		Info:       spec.Info,
		Servers:    spec.Servers,
		Tags:       spec.Tags,
		Paths:      openapi3.NewPaths(),
		Security:   openapi3.SecurityRequirements{{"apiKey": {}}},
		Components: &openapi3.Components{Schemas: s.components},
	}
	doc.Components.SecuritySchemes = openapi3.SecuritySchemes{"apiKey": &openapi3.SecuritySchemeRef{Value: &openapi3.SecurityScheme{
		Type: "http", Scheme: "bearer",
		Description: "An API key of the company: `Authorization: Bearer ofk_…`. Keys are created in the dashboard.",
	}}}
	doc.Components.Headers = headers()
	doc.Components.Responses = errorResponses(s, spec.Errors)
	doc.Components.Parameters = openapi3.ParametersMap{"IdempotencyKey": &openapi3.ParameterRef{Value: idempotencyKey()}}
	seen := map[string]bool{}
	for _, r := range spec.Routes {
		if seen[r.ID] {
			return nil, fmt.Errorf("openapi: operationId %s used twice", r.ID)
		}
		seen[r.ID] = true
		op, err := operation(s, r)
		if err != nil {
			return nil, err
		}
		doc.AddOperation(r.Path, r.Method, op)
	}
	if len(spec.Webhooks) > 0 {
		doc.Webhooks = map[string]*openapi3.PathItem{}
		for _, w := range spec.Webhooks {
			item, err := webhook(s, w)
			if err != nil {
				return nil, err
			}
			doc.Webhooks[w.Name] = item
		}
	}
	if len(s.errs) > 0 {
		return nil, errors.Join(s.errs...)
	}
	return doc, nil
}

// JSON renders the document, indented, keys sorted.
func JSON(doc *openapi3.T) ([]byte, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return json.MarshalIndent(v, "", "  ")
}

func operation(s *schemas, r Route) (*openapi3.Operation, error) {
	op := &openapi3.Operation{
		OperationID: r.ID, Summary: r.Summary, Description: r.Description, Tags: []string{r.Tag},
		Responses: openapi3.NewResponses(),
	}
	for _, name := range pathParams(r.Path) {
		op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Value: &openapi3.Parameter{
			Name: name, In: "path", Required: true, Description: "Id of the " + strings.TrimSuffix(name, "_id") + ".",
			Schema: openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("string")}),
		}})
	}
	for _, q := range r.Query {
		schema := openapi3.NewSchemaRef("", q.Schema)
		if q.Schema == nil {
			schema = s.ref(q.Type, Request)
		}
		op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Value: &openapi3.Parameter{
			Name: q.Name, In: "query", Description: q.Description, Schema: schema,
		}})
	}
	if r.Write {
		op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Ref: "#/components/parameters/IdempotencyKey"})
	}
	if r.Request != nil {
		mt := &openapi3.MediaType{Schema: s.ref(r.Request, Request)}
		if r.Example != "" {
			var ex any
			if err := json.Unmarshal([]byte(r.Example), &ex); err != nil {
				return nil, fmt.Errorf("openapi: %s: example: %w", r.ID, err)
			}
			mt.Examples = openapi3.Examples{"example": &openapi3.ExampleRef{Value: openapi3.NewExample(ex)}}
		}
		op.RequestBody = &openapi3.RequestBodyRef{Value: &openapi3.RequestBody{
			Required: !r.RequestOptional, Content: openapi3.Content{"application/json": mt},
		}}
	}
	ok := &openapi3.Response{Description: new(http.StatusText(r.Status)), Headers: successHeaders()}
	if r.Response != nil {
		ok.Content = openapi3.Content{"application/json": &openapi3.MediaType{Schema: s.ref(r.Response, Response)}}
	}
	if r.Stream {
		ok.Content = openapi3.Content{"text/event-stream": &openapi3.MediaType{Schema: openapi3.NewSchemaRef("",
			&openapi3.Schema{Type: types("string"), Description: "Messages of `id: <position>`, `event: <type>` and " +
				"`data: <envelope JSON>` lines, each ended by a blank line; comment lines (`:`) keep the connection alive."})}}
	}
	op.Responses.Set(strconv.Itoa(r.Status), &openapi3.ResponseRef{Value: ok})
	for _, st := range errorStatuses(r) {
		op.Responses.Set(strconv.Itoa(st), &openapi3.ResponseRef{Ref: "#/components/responses/" + errorResponseName(st)})
	}
	return op, nil
}

// errorStatuses are the error statuses route r can answer.
func errorStatuses(r Route) []int {
	st := []int{400, 401, 403, 405, 429, 500, 503}
	if len(pathParams(r.Path)) > 0 || r.Request != nil {
		st = append(st, 404) // an id in the path or in the body (client_id, technician_id…) of another company
	}
	if r.Write {
		st = append(st, 409, 422) // idempotency_in_progress, idempotency_key_reused
	}
	if r.Method == http.MethodPost || r.Method == http.MethodPatch || r.Method == http.MethodPut {
		st = append(st, 413, 415, 422)
	}
	slices.Sort(st)
	return slices.Compact(st)
}

func pathParams(path string) []string {
	var out []string
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			out = append(out, seg[1:len(seg)-1])
		}
	}
	return out
}
