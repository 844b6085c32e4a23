package portal

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"oficina/streams"
)

// The event catalogue page reads the OpenAPI document's webhooks section
// (http/public builds it from schema/events): each event type with its
// summary, the fields of its body and an example made from its schema.

// family is one event family (the name before the dot) and its types.
type family struct {
	Name   string
	Events []eventDoc
}

// eventDoc is one event type.
type eventDoc struct {
	Name    string
	Summary string
	Fields  []fieldDoc
	Example string
}

// fieldDoc is one member of the body, at its path (data.object.total_cents).
type fieldDoc struct {
	Path, Type, Description string
	Required                bool
}

// maxDepth bounds how deep the field list and the example go.
const maxDepth = 12

type openapiDoc struct {
	Webhooks map[string]struct {
		Post struct {
			Description string `json:"description"`
			RequestBody struct {
				Content map[string]struct {
					Schema map[string]any `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"post"`
	} `json:"webhooks"`
	Components struct {
		Schemas map[string]map[string]any `json:"schemas"`
	} `json:"components"`
}

// loadCatalogue reads the webhooks section of doc, grouped by family in
// name order (ping last, in a family of its own).
func loadCatalogue(doc []byte) ([]family, error) {
	if len(doc) == 0 {
		return nil, nil
	}
	var d openapiDoc
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("portal: event catalogue: %w", err)
	}
	c := cat{schemas: d.Components.Schemas}
	byFamily := map[string][]eventDoc{}
	for name, w := range d.Webhooks {
		schema := w.Post.RequestBody.Content["application/json"].Schema
		ex, _ := json.MarshalIndent(c.example(schema, "", 0), "", "  ")
		ev := eventDoc{Name: name, Summary: w.Post.Description, Fields: c.fields(schema, "", true, 0), Example: string(ex)}
		fam, _, _ := strings.Cut(name, ".")
		byFamily[fam] = append(byFamily[fam], ev)
	}
	var out []family
	for name, evs := range byFamily {
		slices.SortFunc(evs, func(a, b eventDoc) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, family{Name: name, Events: evs})
	}
	slices.SortFunc(out, func(a, b family) int {
		if (a.Name == streams.PingType) != (b.Name == streams.PingType) {
			if a.Name == streams.PingType {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// subscribable is the catalogue without ping (every endpoint gets pings).
func (s *Server) subscribable() []family {
	var out []family
	for _, f := range s.catalogue {
		if f.Name != streams.PingType {
			out = append(out, f)
		}
	}
	return out
}

// eventTypes lists every event type name (ping included).
func (s *Server) eventTypes() []string {
	var out []string
	for _, f := range s.catalogue {
		for _, e := range f.Events {
			out = append(out, e.Name)
		}
	}
	return out
}

type cat struct{ schemas map[string]map[string]any }

// resolve follows a local $ref, and a lone allOf.
func (c cat) resolve(s map[string]any) map[string]any {
	for range maxDepth {
		// A member that documents a referenced schema wraps it in a
		// one-element allOf (http/openapi): that schema.
		if all := asSlice(s["allOf"]); len(all) == 1 {
			s = asMap(all[0])
			continue
		}
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		s = c.schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
	}
	return s
}

// alternative picks the schema to show of an anyOf/oneOf: the first that
// is not null (a full object rather than its summary).
func (c cat) alternative(s map[string]any) map[string]any {
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			for _, a := range alts {
				m := c.resolve(asMap(a))
				if !slices.Equal(types(m), []string{"null"}) {
					return m
				}
			}
		}
	}
	return s
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func types(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

// typeName describes s: "string (date-time)", "array of object",
// "one of: a, b", "… or null".
func (c cat) typeName(s map[string]any) string {
	s = c.alternative(c.resolve(s))
	ts := types(s)
	nullable := slices.Contains(ts, "null")
	ts = slices.DeleteFunc(ts, func(t string) bool { return t == "null" })
	name := strings.Join(ts, " | ")
	if f, ok := s["format"].(string); ok {
		name += " (" + f + ")"
	}
	if name == "array" {
		name = "array of " + c.typeName(asMap(s["items"]))
	}
	if e, ok := s["enum"].([]any); ok {
		var vs []string
		for _, v := range e {
			vs = append(vs, fmt.Sprint(v))
		}
		name += ": " + strings.Join(vs, ", ")
	}
	if v, ok := s["const"]; ok {
		name += " = " + fmt.Sprint(v)
	}
	if name == "" {
		name = "any"
	}
	if nullable {
		name += " | null"
	}
	return name
}

// fields lists the members of s under prefix, depth first.
func (c cat) fields(s map[string]any, prefix string, required bool, depth int) []fieldDoc {
	s = c.alternative(c.resolve(s))
	if depth >= maxDepth {
		return nil
	}
	if slices.Contains(types(s), "array") {
		items := c.alternative(c.resolve(asMap(s["items"])))
		if slices.Contains(types(items), "object") {
			return c.fields(items, prefix+"[]", required, depth+1)
		}
		return nil
	}
	props := asMap(s["properties"])
	req := map[string]bool{}
	for _, r := range asSlice(s["required"]) {
		req[fmt.Sprint(r)] = true
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []fieldDoc
	for _, n := range names {
		p := asMap(props[n])
		path := n
		if prefix != "" {
			path = prefix + "." + n
		}
		desc, _ := p["description"].(string)
		if desc == "" {
			desc, _ = c.resolve(p)["description"].(string)
		}
		out = append(out, fieldDoc{Path: path, Type: c.typeName(p), Description: desc, Required: req[n]})
		out = append(out, c.fields(p, path, req[n], depth+1)...)
	}
	return out
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// example builds a value s accepts: its const or first enum value, a
// plausible value of its type, objects with their required members.
func (c cat) example(s map[string]any, name string, depth int) any {
	s = c.alternative(c.resolve(s))
	if v, ok := s["const"]; ok {
		return v
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	ts := slices.DeleteFunc(types(s), func(t string) bool { return t == "null" })
	if len(ts) == 0 || depth >= maxDepth {
		return nil
	}
	switch ts[0] {
	case "string":
		return exampleString(s, name)
	case "integer":
		if strings.HasSuffix(name, "_cents") {
			return 15000
		}
		return 1
	case "number":
		return 1.5
	case "boolean":
		return false
	case "array":
		if item := c.example(asMap(s["items"]), name, depth+1); item != nil {
			return []any{item}
		}
		return []any{}
	case "object":
		out := map[string]any{}
		props := asMap(s["properties"])
		for _, r := range asSlice(s["required"]) {
			n := fmt.Sprint(r)
			out[n] = c.example(asMap(props[n]), n, depth+1)
		}
		return out
	}
	return nil
}

func exampleString(s map[string]any, name string) string {
	switch s["format"] {
	case "date-time":
		return "2026-03-01T12:00:00Z"
	case "date":
		return "2026-03-01"
	}
	switch {
	case name == "id" && s["description"] != nil && strings.Contains(fmt.Sprint(s["description"]), "evt_"):
		return "evt_0f8e3c5a9b7d4e2f8a1c6b3d5e7f9a2c"
	case name == "id" || strings.HasSuffix(name, "_id"):
		return strings.TrimSuffix(name, "_id") + "_01jq9x7w3k2m5n8p4r6t0v1y3z"
	case strings.Contains(name, "email"):
		return "contato@example.com"
	case name == "organization_id":
		return "co_01jq9x7w3k2m5n8p4r6t0v1y3z"
	}
	return "…"
}
