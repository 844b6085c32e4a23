package hostile

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
)

// rawValue is a JSON value written as is, valid JSON or not.
type rawValue string

// encode writes v as JSON with object members in sorted order (so the
// same case is the same bytes on every run), raw values unchecked.
func encode(v any) []byte {
	var b bytes.Buffer
	writeJSON(&b, v, nil, "")
	return b.Bytes()
}

// encodeWith is encode with member inserted first into the object at
// path; ok is false when the path does not reach an object.
func encodeWith(v any, path []any, member string) (out []byte, ok bool) {
	if !objectAt(v, path) {
		return nil, false
	}
	if path == nil {
		path = []any{} // nil means "not on the way" to writeJSON
	}
	var b bytes.Buffer
	writeJSON(&b, v, path, member)
	return b.Bytes(), true
}

func objectAt(v any, path []any) bool {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return false
			}
			v = l[k]
		}
	}
	_, ok := v.(map[string]any)
	return ok
}

// writeJSON writes v; at is the remaining path to the object that gets
// member first (nil path: this object, when member is set).
func writeJSON(b *bytes.Buffer, v any, at []any, member string) {
	here := at != nil && len(at) == 0 && member != ""
	switch x := v.(type) {
	case rawValue:
		b.WriteString(string(x))
	case map[string]any:
		b.WriteByte('{')
		first := true
		if here {
			b.WriteString(member)
			first = false
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !first {
				b.WriteByte(',')
			}
			first = false
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			var next []any
			if len(at) > 0 && at[0] == any(k) {
				next = at[1:]
			}
			writeJSON(b, x[k], next, member)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			var next []any
			if len(at) > 0 && at[0] == any(i) {
				next = at[1:]
			}
			writeJSON(b, e, next, member)
		}
		b.WriteByte(']')
	default:
		j, _ := json.Marshal(x)
		b.Write(j)
	}
}

// clone deep-copies a decoded JSON value.
func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = clone(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = clone(e)
		}
		return l
	}
	return v
}

// with returns a copy of root with val at path, creating the objects and
// array elements on the way when the base lacks them.
func with(root map[string]any, path []any, val any) map[string]any {
	return setIn(clone(root), path, val).(map[string]any)
}

func setIn(v any, path []any, val any) any {
	if len(path) == 0 {
		return val
	}
	switch k := path[0].(type) {
	case string:
		m, ok := v.(map[string]any)
		if !ok {
			m = map[string]any{}
		}
		m[k] = setIn(m[k], path[1:], val)
		return m
	case int:
		l, _ := v.([]any)
		for len(l) <= k {
			l = append(l, map[string]any{})
		}
		l[k] = setIn(l[k], path[1:], val)
		return l
	}
	return v
}

// get returns the value at path, if any.
func get(v any, path []any) (any, bool) {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[k]; !ok {
				return nil, false
			}
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil, false
			}
			v = l[k]
		}
	}
	return v, true
}

// pathName renders a path as errors[].param does: items[0].quantity.
func pathName(path []any) string {
	var b bytes.Buffer
	for _, p := range path {
		switch k := p.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(k)
		case int:
			b.WriteString("[" + strconv.Itoa(k) + "]")
		}
	}
	return b.String()
}
