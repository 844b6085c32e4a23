package public

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
)

// fuego names OpenAPI components by bare Go type name, so two types called
// View in different packages would silently share one schema and the
// document would lie. schemaTypes collects every named struct reachable from
// the routes' bodies and responses; SchemaNameClashes reports names used by
// more than one type.
type schemaTypes map[reflect.Type]bool

func (st schemaTypes) note(ts ...reflect.Type) {
	for _, t := range ts {
		st.walk(t, 6)
	}
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

func (st schemaTypes) walk(t reflect.Type, depth int) {
	if t == nil || depth == 0 || t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
		return // types that render themselves (timestamps, raw JSON) are leaves
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		st.walk(t.Elem(), depth-1)
		return
	case reflect.Struct:
	default:
		return
	}
	if t.Name() != "" {
		if st[t] {
			return
		}
		st[t] = true
	}
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() {
			st.walk(f.Type, depth-1)
		}
	}
}

// SchemaNameClashes lists OpenAPI component names claimed by several Go
// types (empty when the document is truthful).
func (s *Server) SchemaNameClashes() []string {
	by := map[string][]string{}
	for t := range s.schemaTypes {
		by[t.Name()] = append(by[t.Name()], t.PkgPath()+"."+t.Name())
	}
	var out []string
	for name, ts := range by {
		if len(ts) > 1 {
			sort.Strings(ts)
			out = append(out, fmt.Sprintf("%s: %v", name, ts))
		}
	}
	sort.Strings(out)
	return out
}
