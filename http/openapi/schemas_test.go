package openapi_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"oficina/http/openapi"
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
