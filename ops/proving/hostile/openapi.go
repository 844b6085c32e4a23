package hostile

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Prefix is where the public routes live.
const Prefix = "/public/v1"

// route is one operation of the target's OpenAPI document.
type route struct {
	Method string
	Path   string // template relative to Prefix: "/sales/{id}"
	Body   *schema
	Query  []param
}

func (r route) String() string { return r.Method + " " + r.Path }

// pathParams lists the {names} of the template in order.
func (r route) pathParams() []string {
	var out []string
	for _, seg := range strings.Split(r.Path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			out = append(out, strings.Trim(seg, "{}"))
		}
	}
	return out
}

type param struct {
	Name, Type string
}

// schema is the part of a JSON schema the cases are built from. Type is
// "" when the document does not say (timestamps, optional wrappers).
type schema struct {
	Name     string // component name, "" inline
	Type     string // integer, number, string, boolean, array, object or ""
	Props    map[string]*schema
	Items    *schema
	Nullable bool
}

// propNames returns the property names sorted, so case order is stable.
func (s *schema) propNames() []string {
	if s == nil {
		return nil
	}
	out := make([]string, 0, len(s.Props))
	for k := range s.Props {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// parseOpenAPI reads the routes under Prefix from an OpenAPI 3 document.
func parseOpenAPI(doc []byte) ([]route, error) {
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("hostile: openapi: %w", err)
	}
	r := resolver{components: d.Components.Schemas, done: map[string]*schema{}}
	var out []route
	for path, ops := range d.Paths {
		rel, ok := strings.CutPrefix(path, Prefix)
		if !ok {
			continue
		}
		for method, raw := range ops {
			var op struct {
				Parameters []struct {
					In     string         `json:"in"`
					Name   string         `json:"name"`
					Schema map[string]any `json:"schema"`
				} `json:"parameters"`
				RequestBody *struct {
					Content map[string]struct {
						Schema map[string]any `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				continue // not an operation (summary, parameters shared by the path)
			}
			rt := route{Method: strings.ToUpper(method), Path: rel}
			for _, p := range op.Parameters {
				if p.In == "query" {
					rt.Query = append(rt.Query, param{Name: p.Name, Type: typeOf(p.Schema)})
				}
			}
			if op.RequestBody != nil {
				for _, c := range op.RequestBody.Content {
					rt.Body = r.schema(c.Schema)
					break
				}
				if rt.Body == nil {
					rt.Body = &schema{Type: "object"}
				}
			}
			out = append(out, rt)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("hostile: openapi: no route under %s", Prefix)
	}
	slices.SortFunc(out, func(a, b route) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	return out, nil
}

type resolver struct {
	components map[string]map[string]any
	done       map[string]*schema
}

func (r *resolver) schema(m map[string]any) *schema {
	if ref, ok := m["$ref"].(string); ok {
		name := ref[strings.LastIndex(ref, "/")+1:]
		if s, ok := r.done[name]; ok {
			return s // also breaks cycles: the entry is stored before its properties
		}
		c, ok := r.components[name]
		if !ok {
			return &schema{Name: name}
		}
		s := &schema{Name: name}
		r.done[name] = s
		r.fill(s, c)
		return s
	}
	s := &schema{}
	r.fill(s, m)
	return s
}

func (r *resolver) fill(s *schema, m map[string]any) {
	s.Type = typeOf(m)
	s.Nullable, _ = m["nullable"].(bool)
	if t, ok := m["type"].([]any); ok && slices.Contains(t, any("null")) {
		s.Nullable = true
	}
	// OpenAPI 3.1 spells a nullable reference oneOf [$ref, {type: null}]
	// and a described one allOf [$ref]: the member is what the first
	// non-null alternative is.
	for _, key := range []string{"oneOf", "anyOf", "allOf"} {
		alts, _ := m[key].([]any)
		for _, a := range alts {
			am, _ := a.(map[string]any)
			if am["type"] == "null" {
				s.Nullable = true
				continue
			}
			if s.Type == "" && am != nil {
				inner := r.schema(am)
				s.Type, s.Props, s.Items = inner.Type, inner.Props, inner.Items
			}
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		s.Props = map[string]*schema{}
		for k, v := range props {
			if pm, ok := v.(map[string]any); ok {
				s.Props[k] = r.schema(pm)
			}
		}
		if s.Type == "" {
			s.Type = "object"
		}
	}
	if it, ok := m["items"].(map[string]any); ok {
		s.Items = r.schema(it)
	}
}

// typeOf reads "type", which is a string or a list with "null".
func typeOf(m map[string]any) string {
	switch t := m["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
	}
	if _, ok := m["$ref"]; ok {
		return "object"
	}
	return ""
}
