package openapi

import (
	"encoding/json"
	"fmt"
	"oficina/schema/apitime"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// webhook is the webhooks entry of one event type: a POST whose body is
// the envelope of spec 6.2 with data.object typed as the resource's GET
// (or, summarized, only its object and id: rules 4 and 5 of 6.3).
func webhook(s *schemas, w Webhook) (*openapi3.PathItem, error) {
	name := eventSchemaName(w.Name)
	s.components[name] = openapi3.NewSchemaRef("", eventSchema(s, w))
	str := func(desc string) *openapi3.SchemaRef {
		return openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("string"), Description: desc})
	}
	hdr := func(desc string, schema *openapi3.SchemaRef) *openapi3.ParameterRef {
		return &openapi3.ParameterRef{Value: &openapi3.Parameter{In: "header", Required: true, Description: desc, Schema: schema}}
	}
	params := openapi3.Parameters{
		hdr("The event id (`evt_` + 32 hex characters), the same as the body's `id` on every attempt and resend.",
			str("")),
		hdr("Unix seconds of this attempt; changes per attempt.", str("")),
		hdr("`v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` under the endpoint's secret "+
			"(base64 after `whsec_`), following Standard Webhooks. Several space-separated signatures while a "+
			"rotated secret is in its grace period.", str("")),
	}
	for i, n := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		params[i].Value.Name = n
	}
	ok := "Any 2xx acknowledges the delivery; anything else, a time-out or a redirect is retried for about 3 days."
	body := &openapi3.MediaType{Schema: openapi3.NewSchemaRef("#/components/schemas/"+name, nil)}
	if w.Example != nil {
		var ex any
		if err := json.Unmarshal(w.Example, &ex); err != nil {
			return nil, fmt.Errorf("openapi: webhook %s: example: %w", w.Name, err)
		}
		body.Examples = openapi3.Examples{"example": &openapi3.ExampleRef{Value: openapi3.NewExample(ex)}}
	}
	return &openapi3.PathItem{Post: &openapi3.Operation{
		OperationID: "on" + camelUpper(w.Name),
		Summary:     w.Name,
		Description: w.Summary,
		Tags:        []string{"events"},
		Parameters:  params,
		RequestBody: &openapi3.RequestBodyRef{Value: &openapi3.RequestBody{Required: true,
			Content: openapi3.Content{"application/json": body}}},
		Responses: openapi3.NewResponses(openapi3.WithName("2XX", &openapi3.Response{Description: &ok})),
		Security:  &openapi3.SecurityRequirements{},
	}}, nil
}

// eventSchema is the body of one event type.
func eventSchema(s *schemas, w Webhook) *openapi3.Schema {
	object := s.ref(w.Object, Response)
	if w.Name != "ping" {
		// An object that did not fit, or written by an automation, comes
		// summarized (object_truncated: true).
		object = openapi3.NewSchemaRef("", &openapi3.Schema{AnyOf: openapi3.SchemaRefs{object, summary(s)}})
	}
	data := &openapi3.Schema{Type: types("object"), Properties: openapi3.Schemas{
		"object": object,
		"object_truncated": openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("boolean"), Enum: []any{true},
			Description: "Present, and true, only when data.object has only `object` and `id`: fetch it through the API."}),
	}, Required: []string{"object"}}
	if w.Updated {
		data.Properties["changed_fields"] = openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("array"),
			Items:       openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("string")}),
			Description: "The fields this write changed, in alphabetical order; never `updated_at`."})
		data.Required = append(data.Required, "changed_fields")
	}
	str := func(desc string) *openapi3.SchemaRef {
		return openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("string"), Description: desc})
	}
	return &openapi3.Schema{
		Type:        types("object"),
		Description: w.Summary,
		Properties: openapi3.Schemas{
			"id":              str("Event id: `evt_` + 32 hex characters; the same on every attempt and resend."),
			"type":            openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("string"), Const: w.Name}),
			"api_version":     openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("string"), Const: "v1"}),
			"timestamp":       openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("string"), Format: "date-time", Pattern: apitime.TimestampPattern, Description: "When the fact happened (UTC); unchanged between attempts: order by it."}),
			"organization_id": str("The company the event belongs to (for ping, the endpoint's own company)."),
			"data":            openapi3.NewSchemaRef("", data),
		},
		Required: []string{"api_version", "data", "id", "organization_id", "timestamp", "type"},
	}
}

// summary is a summarized object: only its kind and id.
func summary(s *schemas) *openapi3.SchemaRef {
	const name = "ObjectSummary"
	if _, ok := s.components[name]; !ok {
		s.components[name] = openapi3.NewSchemaRef("", &openapi3.Schema{
			Type:        types("object"),
			Description: "A summarized object: only its kind and id (`data.object_truncated` is true).",
			Properties: openapi3.Schemas{
				"object": openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("string")}),
				"id":     openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("string")}),
			},
			Required:             []string{"id", "object"},
			AdditionalProperties: openapi3.AdditionalProperties{Has: new(false)},
		})
	}
	return openapi3.NewSchemaRef("#/components/schemas/"+name, nil)
}

// eventSchemaName: sale.payment_registered → SalePaymentRegisteredEvent.
func eventSchemaName(event string) string { return camelUpper(event) + "Event" }

func camelUpper(s string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}
