package public_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"oficina/http/public"
)

// The OpenAPI document is generated from the routes, describes the error
// envelope, and docs/openapi.json is the current one.
func TestOpenAPIDocumentIsGeneratedAndCurrent(t *testing.T) {
	t.Parallel()
	s, err := public.New(public.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(s.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/public/v1/me", "/public/v1/team", "/public/v1/service_order_types"} {
		if _, ok := doc.Paths[p]["get"]; !ok {
			t.Errorf("path %s missing", p)
		}
	}
	if _, ok := doc.Components.Schemas["Body"]; !ok {
		t.Error("error envelope schema missing")
	}
	if clashes := s.SchemaNameClashes(); len(clashes) > 0 {
		t.Errorf("OpenAPI component names shared by several Go types (rename one): %v", clashes)
	}
	onDisk, err := os.ReadFile("../../docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(onDisk), bytes.TrimSpace(s.OpenAPI())) {
		t.Error("docs/openapi.json is stale: run make openapi")
	}
}
