package wire

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"oficina/schema/apierr"
)

// scan walks the tokens of buf once, before decoding, for what
// encoding/json would let through:
//   - a member twice in one object (invalid_value): JSON leaves duplicates
//     undefined and encoding/json keeps the last, so a proxy and this
//     server could read different requests;
//   - a member that is no field of the struct its object decodes into
//     (unknown_field), named by its path: encoding/json reports an unknown
//     field by its name alone ("quantity", not "items[1].quantity"), and
//     matches names case-insensitively, so "NOTES" (or "ſeller_id") would
//     fill notes (seller_id) and a typo would pass;
//   - a NUL character in a string, escaped as \u0000 (invalid_value):
//     PostgreSQL text and jsonb cannot hold one, so it would fail at the
//     database as a 500;
//   - null for a member not tagged `api:"nullable"`, or as an array element
//     (invalid_value): encoding/json would read it as "omitted", so a
//     client that sends null to clear a field would silently change
//     nothing; the OpenAPI document marks the same members nullable.
//
// Errors name the member's path: items[0].quantity.
func scan(buf []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(buf))
	type frame struct {
		obj   bool
		keys  map[string]struct{}
		key   string // current member
		want  bool   // next string token is a key
		index int    // current element of an array
		path  string
		t     reflect.Type // what this object or array decodes into (nil: anything)
	}
	var stack []*frame
	childPath := func(f *frame) string {
		if f == nil {
			return ""
		}
		if f.obj {
			if f.path == "" {
				return f.key
			}
			return f.path + "." + f.key
		}
		return f.path + "[" + strconv.Itoa(f.index) + "]"
	}
	childType := func(f *frame) reflect.Type {
		if f == nil {
			return t
		}
		return memberType(f.t, f.obj, f.key)
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // broken JSON is the decoder's to report
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				stack = append(stack, &frame{obj: v == '{', keys: map[string]struct{}{}, want: v == '{',
					path: childPath(top), t: unwrap(deref(childType(top)))})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case nil:
			if top != nil && !nullAllowed(top.t, top.obj, top.key) {
				return apierr.Invalid(childPath(top), apierr.InvalidValue)
			}
		case string:
			if top != nil && top.obj && top.want {
				top.key = v
				path := childPath(top)
				if v == "" {
					// A member without a name is pointed at through its object.
					path = cmp.Or(top.path, "body")
				}
				if _, dup := top.keys[v]; dup {
					return apierr.Invalid(path, apierr.InvalidValue)
				}
				if strings.IndexByte(v, 0) >= 0 {
					return apierr.Invalid(cmp.Or(top.path, "body"), apierr.InvalidValue)
				}
				if unknownMember(top.t, v) {
					return apierr.Invalid(path, apierr.UnknownField)
				}
				top.keys[v] = struct{}{}
				top.want = false
				continue
			}
			if strings.IndexByte(v, 0) >= 0 {
				return apierr.Invalid(cmp.Or(childPath(top), "body"), apierr.InvalidValue)
			}
		}
		// A value completed: the enclosing object expects a key next, the
		// enclosing array its next element.
		if len(stack) > 0 {
			if f := stack[len(stack)-1]; f.obj {
				f.want = true
			} else {
				f.index++
			}
		}
	}
}

// memberType is the type a member (or array element) of t decodes into;
// nil when unknown.
func memberType(t reflect.Type, obj bool, key string) reflect.Type {
	if t == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if !obj {
			return deref(t.Elem())
		}
	case reflect.Map:
		if obj {
			return deref(t.Elem())
		}
	case reflect.Struct:
		if fs := fieldsOf(t); obj && fs != nil {
			return fs.types[key]
		}
	}
	return nil
}

// nullAllowed reports whether null may stand for a member (obj) or an
// element of what t decodes into; unknown shapes (any) take it.
func nullAllowed(t reflect.Type, obj bool, key string) bool {
	if t == nil {
		return true
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return obj
	case reflect.Struct:
		if fs := fieldsOf(t); obj && fs != nil {
			_, known := fs.types[key]
			return !known || fs.nullable[key] // an unknown member is refused by the decoder
		}
	}
	return true
}

// unknownMember reports whether key is no member of struct type t, in
// this exact case (a name matching a field in another case is unknown
// too, although encoding/json would take it). Types that decode
// themselves without tagged fields are their own business.
func unknownMember(t reflect.Type, key string) bool {
	if t == nil || t.Kind() != reflect.Struct {
		return false
	}
	fs := fieldsOf(t)
	if fs == nil {
		return false
	}
	_, ok := fs.types[key]
	return !ok
}

// unwrap looks through an optional wrapper — a type that decodes itself
// and keeps the decoded value in a field named Value (field.Opt[T],
// leads.TaskField) — to the struct the JSON object fills.
func unwrap(t reflect.Type) reflect.Type {
	for depth := 0; t != nil && t.Kind() == reflect.Struct && fieldsOf(t) == nil && depth < 4; depth++ {
		f, ok := t.FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, "value") })
		if !ok {
			return t
		}
		t = deref(f.Type)
	}
	return t
}

func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// fieldSet is the JSON member names of a struct and their types.
type fieldSet struct {
	types    map[string]reflect.Type
	nullable map[string]bool // tagged `api:"nullable"`
}

var fieldSets sync.Map // reflect.Type → *fieldSet (nil: opaque)

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// fieldsOf returns the members of struct type t, or nil when t decodes
// itself without json-tagged fields (an optional wrapper, a timestamp):
// its members are its own business.
func fieldsOf(t reflect.Type) *fieldSet {
	if v, ok := fieldSets.Load(t); ok {
		fs, _ := v.(*fieldSet)
		return fs
	}
	fs := &fieldSet{types: map[string]reflect.Type{}, nullable: map[string]bool{}}
	tagged := collect(t, fs, 0)
	custom := reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)
	if custom && !tagged {
		fs = nil
	}
	fieldSets.Store(t, fs)
	return fs
}

// collect adds the members of t as encoding/json sees them (embedded
// structs promote theirs, "-" hides one) and reports whether any carries
// a json tag.
func collect(t reflect.Type, fs *fieldSet, depth int) bool {
	tagged := false
	for i := range t.NumField() {
		f := t.Field(i)
		tag, hasTag := f.Tag.Lookup("json")
		name, _, _ := strings.Cut(tag, ",")
		if tag == "-" {
			continue
		}
		hasTag = hasTag && name != ""
		tagged = tagged || hasTag
		if f.Anonymous && !hasTag {
			if et := deref(f.Type); et.Kind() == reflect.Struct && depth < 8 {
				tagged = collect(et, fs, depth+1) || tagged
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, seen := fs.types[name]; !seen {
			fs.types[name] = deref(f.Type)
			fs.nullable[name] = slices.Contains(strings.Split(f.Tag.Get("api"), ","), "nullable")
		}
	}
	return tagged
}
