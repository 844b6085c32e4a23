package openapi_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"oficina/http/openapi"
	"oficina/schema/field"
)

type color string

func (color) Values() []string { return []string{"red", "blue"} }

type shape struct {
	Sides int `json:"sides"`
}

type rawShape json.RawMessage

func (rawShape) Shape() any { return shape{} }

type thing struct {
	Object string    `json:"object" const:"thing"`
	Color  color     `json:"color"`
	Shape  rawShape  `json:"shape" api:"nullable"`
	Size   int64     `json:"size" min:"1" max:"10"`
	Maybe  *rawShape `json:"maybe,omitempty"`
}

// The conventions of the package: a named string type with Values is an
// enum component, `const` gives a member its one value, `min`/`max` bound
// a number, and JSON kept as written shows its Shape.
func TestSchemasFollowTheTypesConventions(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Build(spec[thing]())
	if err != nil {
		t.Fatal(err)
	}
	b, err := openapi.JSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	props, _ := d.Components.Schemas["thing"]["properties"].(map[string]any)
	for name, want := range map[string]string{
		"object": `{"const":"thing","type":"string"}`,
		"color":  `{"$ref":"#/components/schemas/color"}`,
		"shape":  `{"oneOf":[{"$ref":"#/components/schemas/shape"},{"type":"null"}]}`,
		"size":   `{"format":"int64","maximum":10,"minimum":1,"type":"integer"}`,
		"maybe":  `{"$ref":"#/components/schemas/shape"}`,
	} {
		got, _ := json.Marshal(props[name])
		if string(got) != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	if got, _ := json.Marshal(d.Components.Schemas["color"]["enum"]); string(got) != `["red","blue"]` {
		t.Errorf("color enum %s", got)
	}
}

type errBody struct {
	Message string `json:"message"`
}

// spec is a document of one GET answering T.
func spec[T any]() openapi.Spec {
	return openapi.Spec{Info: &openapi3.Info{Title: "t", Version: "1"},
		Errors: openapi.ErrorCodes{Envelope: reflect.TypeFor[errBody]()},
		Routes: []openapi.Route{{Method: http.MethodGet, Path: "/x", ID: "getX", Tag: "t", Status: 200,
			Response: reflect.TypeFor[T]()}}}
}

type badBound struct {
	Name string `json:"name" min:"1"`
}

// A bound on a member that is not a number is a build error, not a silent
// schema.
func TestABoundOnANonNumberFailsTheBuild(t *testing.T) {
	t.Parallel()
	_, err := openapi.Build(spec[badBound]())
	if err == nil {
		t.Error("built a document with min on a string")
	}
}

type order struct {
	Kind   string   `json:"kind" api:"required"`
	Name   *string  `json:"name" minLength:"1" maxLength:"200" pattern:"nonblank"`
	Phone  *string  `json:"phone" pattern:"phone" maxLength:"40"`
	Note   string   `json:"note"`
	IDs    []string `json:"ids" maxItems:"20" uniqueItems:"true" minLength:"1" maxLength:"64"`
	Events []string `json:"events" minItems:"1" alone:"*"`
	Caps   []string `json:"caps" without:"ro:rw,admin"`
	Qty    float64  `json:"qty" exclusiveMin:"0" max:"10"`
}

func (order) Rules() []field.Rule {
	return append([]field.Rule{{If: "kind", In: []string{"named"}, Require: []string{"name"}, Forbid: []string{"phone", "ids"}},
		field.Exclusive("note", "phone"), {If: "kind", Like: "^a", Unless: true, Require: []string{"phone"}, RequireLike: "^b"}},
		field.Together("name", "note")...)
}

// Request members carry what the validators check: lengths and a named
// pattern on strings (on an array, its items), counts on arrays, a value
// that stands alone or not beside others, an exclusive lower bound, rules
// between members as if/then, and no NUL in any other string.
func TestRequestSchemasCarryTheValidatorsRules(t *testing.T) {
	t.Parallel()
	s := openapi.Spec{Info: &openapi3.Info{Title: "t", Version: "1"}, Errors: openapi.ErrorCodes{Envelope: reflect.TypeFor[errBody]()},
		Patterns: map[string]string{"phone": `^[0-9]+$`},
		Routes: []openapi.Route{{Method: http.MethodPost, Path: "/x", ID: "postX", Tag: "t", Status: 201,
			Request: reflect.TypeFor[order]()}}}
	doc, err := openapi.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(doc.Components.Schemas["order"].Value)
	nonBlank, _ := json.Marshal(field.NonBlankPattern)
	// obj requires names, declared as props, and takes other members.
	obj := func(props string, names ...string) string {
		return `{"additionalProperties":true,"properties":{` + props + `},"required":["` + strings.Join(names, `","`) + `"]}`
	}
	then := func(not, props string, names ...string) string {
		return `{"additionalProperties":true,` + not + `"properties":{` + props + `},"required":["` + strings.Join(names, `","`) + `"]}`
	}
	want := `{"additionalProperties":false,"allOf":[` +
		`{"if":` + obj(`"kind":{"const":"named"}`, "kind") + `,"then":` + then(`"not":{"anyOf":[`+obj(`"phone":{}`, "phone")+`,`+
		obj(`"ids":{}`, "ids")+`]},`, `"name":{}`, "name") + `},` +
		`{"if":` + obj(`"note":{}`, "note") + `,"then":{"additionalProperties":true,"not":` + obj(`"phone":{}`, "phone") + `}},` +
		`{"if":{"not":` + obj(`"kind":{"pattern":"^a"}`, "kind") + `},"then":` + obj(`"phone":{"pattern":"^b"}`, "phone") + `},` +
		`{"if":` + obj(`"name":{}`, "name") + `,"then":` + obj(`"note":{}`, "note") + `},` +
		`{"if":` + obj(`"note":{}`, "note") + `,"then":` + obj(`"name":{}`, "name") + `}],` +
		`"properties":{"caps":{"items":{"pattern":"^[^\\x00]*$","type":"string"},"not":{"allOf":[{"contains":{"const":"ro"}},{"contains":{"enum":["rw","admin"]}}]},"type":"array"},` +
		`"events":{"items":{"pattern":"^[^\\x00]*$","type":"string"},"minItems":1,"not":{"contains":{"const":"*"},"minItems":2},"type":"array"},` +
		`"ids":{"items":{"maxLength":64,"minLength":1,"pattern":"^[^\\x00]*$","type":"string"},"maxItems":20,"type":"array","uniqueItems":true},` +
		`"kind":{"pattern":"^[^\\x00]*$","type":"string"},` +
		`"name":{"maxLength":200,"minLength":1,"pattern":` + string(nonBlank) + `,"type":"string"},` +
		`"note":{"pattern":"^[^\\x00]*$","type":"string"},` +
		`"phone":{"maxLength":40,"pattern":"^[0-9]+$","type":"string"},` +
		`"qty":{"exclusiveMinimum":0,"format":"double","maximum":10,"type":"number"}},"required":["kind"],"type":"object"}`
	if string(got) != want {
		t.Errorf("schema\n%s\nwant\n%s", got, want)
	}
}

type badText struct {
	Count int64 `json:"count" maxLength:"3"`
}

type badPattern struct {
	Name string `json:"name" pattern:"nowhere"`
}

type badRule struct {
	Name string `json:"name"`
}

func (badRule) Rules() []field.Rule { return []field.Rule{field.Exclusive("name", "nickname")} }

// A rule the builder cannot state is a build error, not a silent schema: a
// length on a number, a pattern nobody named, a rule on a member the type
// does not have.
func TestARuleTheBuilderCannotStateFailsTheBuild(t *testing.T) {
	t.Parallel()
	for _, typ := range []reflect.Type{reflect.TypeFor[badText](), reflect.TypeFor[badPattern](), reflect.TypeFor[badRule]()} {
		s := openapi.Spec{Info: &openapi3.Info{Title: "t", Version: "1"}, Errors: openapi.ErrorCodes{Envelope: reflect.TypeFor[errBody]()},
			Routes: []openapi.Route{{Method: http.MethodPost, Path: "/x", ID: "postX", Tag: "t", Status: 201, Request: typ}}}
		if _, err := openapi.Build(s); err == nil {
			t.Errorf("%s: built", typ.Name())
		}
	}
}
