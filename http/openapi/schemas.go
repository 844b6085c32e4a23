package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"oficina/schema/apitime"
	"oficina/schema/field"
)

// Direction says whether a type is read from requests or written in
// responses: the two have different rules for required and null.
type Direction int

const (
	// Response: every member is present (required) unless tagged
	// omitempty/omitzero; pointers may be null.
	Response Direction = iota
	// Request: a member is required only when tagged `api:"required"` and
	// takes null only when tagged `api:"nullable"`; unknown members are
	// refused (additionalProperties: false), as the decoder refuses them.
	Request
)

// Enum is implemented by the named string types of closed sets (statuses,
// payment methods, ...): their values become the schema's enum.
type Enum interface{ Values() []string }

// Shaped is implemented by types that keep JSON as written (stored and sent
// byte for byte) while every write checks it against a Go type: Shape
// returns a zero value of that type, which the document shows.
type Shaped interface{ Shape() any }

// Named is implemented by the few types whose component name cannot be
// their Go name (the error envelope is apierr.Body, since apierr.Error is
// the Go error value).
type Named interface{ SchemaName() string }

var (
	enumType        = reflect.TypeFor[Enum]()
	shapedType      = reflect.TypeFor[Shaped]()
	namedType       = reflect.TypeFor[Named]()
	rawJSON         = reflect.TypeFor[json.RawMessage]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
)

// schemas turns Go types into component schemas. A named struct or enum
// becomes one component named after its type; a type read from requests
// and written in responses would need two shapes under one name, so it is
// an error: declare two types.
type schemas struct {
	components openapi3.Schemas
	owner      map[string]reflect.Type // component name → the Go type that claimed it
	dir        map[reflect.Type]Direction
	patterns   map[string]string // named patterns of `pattern:"..."` tags
	errs       []error
}

func newSchemas(patterns map[string]string) *schemas {
	named := map[string]string{"nonblank": field.NonBlankPattern}
	for k, v := range patterns {
		named[k] = v
	}
	return &schemas{components: openapi3.Schemas{}, owner: map[string]reflect.Type{}, dir: map[reflect.Type]Direction{},
		patterns: named}
}

func (s *schemas) fail(format string, args ...any) {
	s.errs = append(s.errs, fmt.Errorf(format, args...))
}

// ref returns the schema of t as used in a document: a $ref for components,
// inline otherwise.
func (s *schemas) ref(t reflect.Type, d Direction) *openapi3.SchemaRef {
	t = deref(t)
	if inner, ok := wrapped(t); ok {
		return s.ref(inner, d)
	}
	if t.Implements(shapedType) {
		if sh, ok := reflect.Zero(t).Interface().(Shaped); ok && sh.Shape() != nil {
			return s.ref(reflect.TypeOf(sh.Shape()), d)
		}
	}
	if ts, date := apitime.IsTimeType(t); ts || date {
		if date {
			return openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("string"), Format: "date", Pattern: apitime.DatePattern})
		}
		return openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("string"), Format: "date-time", Pattern: apitime.TimestampPattern})
	}
	if t == rawJSON || t.Kind() == reflect.Interface {
		return openapi3.NewSchemaRef("", &openapi3.Schema{})
	}
	if t.Implements(enumType) && t.Kind() == reflect.String {
		return s.component(t, d, func() *openapi3.Schema { return enumSchema(t) })
	}
	switch t.Kind() {
	case reflect.String:
		if d == Request {
			// The decoder refuses NUL in every string (field.TextPattern).
			return openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("string"), Pattern: field.TextPattern})
		}
		return openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("string")})
	case reflect.Bool:
		return openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("boolean")})
	case reflect.Int, reflect.Int64, reflect.Uint32, reflect.Uint, reflect.Uint64:
		return openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("integer"), Format: "int64"})
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint8, reflect.Uint16:
		return openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("integer"), Format: "int32"})
	case reflect.Float32, reflect.Float64:
		return openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("number"), Format: "double"})
	case reflect.Slice, reflect.Array:
		return openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("array"), Items: s.ref(t.Elem(), d)})
	case reflect.Map:
		return openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("object"),
			AdditionalProperties: openapi3.AdditionalProperties{Schema: s.ref(t.Elem(), d)}})
	case reflect.Struct:
		if t.Name() == "" {
			return openapi3.NewSchemaRef("", s.object(t, d))
		}
		return s.component(t, d, func() *openapi3.Schema { return s.object(t, d) })
	}
	s.fail("openapi: %s: no schema for kind %s", t, t.Kind())
	return openapi3.NewSchemaRef("", &openapi3.Schema{})
}

// component registers t under its name once and returns a $ref to it.
func (s *schemas) component(t reflect.Type, d Direction, build func() *openapi3.Schema) *openapi3.SchemaRef {
	name := Name(t)
	ref := "#/components/schemas/" + name
	if prev, ok := s.owner[name]; ok {
		switch {
		case prev != t:
			s.fail("openapi: component %s is claimed by %s and %s: rename one", name, prev, t)
		case s.dir[t] != d && t.Kind() == reflect.Struct:
			s.fail("openapi: %s is used in requests and in responses: declare a type for each", t)
		}
		return openapi3.NewSchemaRef(ref, nil)
	}
	s.owner[name] = t
	s.dir[t] = d
	s.components[name] = openapi3.NewSchemaRef("", &openapi3.Schema{}) // placeholder: recursive types end here
	s.components[name].Value = build()
	return openapi3.NewSchemaRef(ref, nil)
}

// Name is the component name of a named type: its Go name, its SchemaName,
// or for a generic list page.List[T] "<name of T>List".
func Name(t reflect.Type) string {
	t = deref(t)
	if t.Implements(namedType) {
		if n, ok := reflect.Zero(t).Interface().(Named); ok {
			return n.SchemaName()
		}
	}
	name := t.Name()
	if i := strings.IndexByte(name, '['); i >= 0 && t.Kind() == reflect.Struct {
		// A generic wrapper: name it after its element (ServiceOrderList).
		for f := range t.Fields() {
			if f.Type.Kind() == reflect.Slice {
				return Name(f.Type.Elem()) + name[:i]
			}
		}
		return strings.NewReplacer("[", "_", "]", "", "/", "_", ".", "_").Replace(name)
	}
	return name
}

func enumSchema(t reflect.Type) *openapi3.Schema {
	e, _ := reflect.Zero(t).Interface().(Enum)
	vals := e.Values()
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return &openapi3.Schema{Type: types("string"), Enum: out}
}

// object is the schema of a struct's JSON members.
func (s *schemas) object(t reflect.Type, d Direction) *openapi3.Schema {
	o := &openapi3.Schema{Type: types("object"), Properties: openapi3.Schemas{}}
	if d == Request {
		o.AdditionalProperties = openapi3.AdditionalProperties{Has: new(false)}
	}
	ms, err := members(t)
	if err != nil {
		s.fail("openapi: %s: %w", t, err)
	}
	for _, m := range ms {
		p := s.ref(m.typ, d)
		if m.min != nil || m.max != nil || m.xmin != nil {
			p = s.bounded(t, m, p)
		}
		if m.text != (textRules{}) || m.list != (listRules{}) {
			p = s.constrained(t, m, p)
		}
		if m.constant != "" {
			if m.typ.Kind() != reflect.String {
				s.fail("openapi: %s.%s: const on a %s", t, m.name, m.typ)
			}
			p = openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("string"), Const: m.constant})
		}
		if m.has("summarizable") {
			// Shown as only its kind and id to a caller who may not read it.
			p = openapi3.NewSchemaRef("", &openapi3.Schema{AnyOf: openapi3.SchemaRefs{p, summary(s)}})
		}
		if m.nullable(d) {
			p = nullable(p)
		}
		if m.doc != "" {
			p = describe(p, m.doc)
		}
		o.Properties[m.name] = p
		if m.required(d) {
			o.Required = append(o.Required, m.name)
		}
	}
	slices.Sort(o.Required)
	if a, ok := reflect.Zero(t).Interface().(AnyOfRequired); ok {
		for _, set := range a.RequiredAnyOf() {
			o.AnyOf = append(o.AnyOf, openapi3.NewSchemaRef("", &openapi3.Schema{Required: set}))
		}
	}
	if r, ok := reflect.Zero(t).Interface().(Ruled); ok && d == Request {
		for _, rule := range r.Rules() {
			o.AllOf = append(o.AllOf, s.rule(t, o, rule))
		}
	}
	return o
}

// AnyOfRequired is implemented by request types that need one of several
// members ("email or phone"): each set is one alternative.
type AnyOfRequired interface{ RequiredAnyOf() [][]string }

// Ruled is implemented by request types with rules between their members
// (a custom sale item takes a name and a price, a catalog one a product):
// each becomes an if/then in the object's allOf.
type Ruled interface{ Rules() []field.Rule }

// rule is the if/then of r on object o of type t. Each of its schemas
// declares the members it names (an empty schema: any value) and allows
// others explicitly: linters want a required member declared where it is
// required, and example validators that refuse undeclared members by
// default (Redocly's) would otherwise take a condition for false.
func (s *schemas) rule(t reflect.Type, o *openapi3.Schema, r field.Rule) *openapi3.SchemaRef {
	known := func(name string) bool { _, ok := o.Properties[name]; return ok }
	at, inner, nested := strings.Cut(r.If, ".")
	if !known(at) {
		s.fail("openapi: %s: rule on unknown member %s", t, r.If)
	}
	value := &openapi3.Schema{Pattern: r.Like}
	switch len(r.In) {
	case 0:
	case 1:
		value.Const = r.In[0]
	default:
		for _, v := range r.In {
			value.Enum = append(value.Enum, v)
		}
	}
	cond := requiring(map[string]*openapi3.Schema{inner: value})
	if !nested {
		cond = requiring(map[string]*openapi3.Schema{at: value})
	} else {
		cond = requiring(map[string]*openapi3.Schema{at: cond})
	}
	if r.Unless {
		cond = &openapi3.Schema{Not: openapi3.NewSchemaRef("", cond)}
	}
	for _, name := range append(slices.Clone(r.Require), r.Forbid...) {
		if !known(name) {
			s.fail("openapi: %s: rule on unknown member %s", t, name)
		}
	}
	required := map[string]*openapi3.Schema{}
	for _, name := range r.Require {
		required[name] = &openapi3.Schema{Pattern: r.RequireLike}
	}
	then := requiring(required)
	switch len(r.Forbid) {
	case 0:
	case 1:
		then.Not = openapi3.NewSchemaRef("", requiring(map[string]*openapi3.Schema{r.Forbid[0]: {}}))
	default:
		someOf := &openapi3.Schema{}
		for _, name := range r.Forbid {
			someOf.AnyOf = append(someOf.AnyOf, openapi3.NewSchemaRef("", requiring(map[string]*openapi3.Schema{name: {}})))
		}
		then.Not = openapi3.NewSchemaRef("", someOf)
	}
	return openapi3.NewSchemaRef("", &openapi3.Schema{If: openapi3.NewSchemaRef("", cond), Then: openapi3.NewSchemaRef("", then)})
}

// requiring is a schema that requires the members of m, each with its
// schema, and takes any other.
func requiring(m map[string]*openapi3.Schema) *openapi3.Schema {
	out := &openapi3.Schema{Properties: openapi3.Schemas{}, AdditionalProperties: openapi3.AdditionalProperties{Has: new(true)}}
	for name, v := range m {
		out.Properties[name] = openapi3.NewSchemaRef("", v)
		out.Required = append(out.Required, name)
	}
	slices.Sort(out.Required)
	return out
}

// member is one JSON member of a struct.
type member struct {
	name      string
	typ       reflect.Type
	omitempty bool
	tags      []string // of `api:"..."`
	doc       string
	// constant is the one value of a member tagged `const:"..."`: the
	// object member of every resource ("object": "sale").
	constant string
	// min and max are a number's bounds, tagged `min:"0" max:"604800"`
	// where the server checks them; xmin an exclusive lower bound,
	// `exclusiveMin:"0"` (a quantity above zero).
	min, max, xmin *float64
	text           textRules
	list           listRules
}

// textRules are a string's rules, tagged `minLength:"1" maxLength:"200"`
// and `pattern:"<name>"` (a pattern of Spec.Patterns, or "nonblank"); on
// an array they apply to its items.
type textRules struct {
	minLen, maxLen *uint64
	pattern        string
}

// listRules are an array's rules: `minItems`, `maxItems`, `uniqueItems:"true"`,
// `alone:"*"` (a value that may only be the array's one item) and
// `without:"read_only:manage_endpoints,recover"` (a value that may not
// stand beside the others named).
type listRules struct {
	minItems, maxItems *uint64
	unique             bool
	alone, without     string
}

// constrained adds a member's text and list rules to its schema p.
func (s *schemas) constrained(t reflect.Type, m member, p *openapi3.SchemaRef) *openapi3.SchemaRef {
	if p.Ref != "" || p.Value.Type == nil {
		s.fail("openapi: %s.%s: length, pattern or item rules on a %s", t, m.name, m.typ)
		return p
	}
	v := *p.Value
	str := &v
	if v.Type.Includes("array") {
		if v.Items == nil || v.Items.Ref != "" && m.text != (textRules{}) {
			s.fail("openapi: %s.%s: text rules on items that are not plain strings", t, m.name)
			return p
		}
		v.MinItems, v.MaxItems, v.UniqueItems = value(m.list.minItems), m.list.maxItems, m.list.unique
		switch {
		case m.list.alone != "" && m.list.without != "":
			s.fail("openapi: %s.%s: alone and without on one member", t, m.name)
		case m.list.alone != "":
			// Not (contains it and has two items or more).
			v.Not = openapi3.NewSchemaRef("", &openapi3.Schema{Contains: openapi3.NewSchemaRef("", &openapi3.Schema{Const: m.list.alone}),
				MinItems: 2})
		case m.list.without != "":
			// Not (contains it and contains one of the others).
			one, others, ok := strings.Cut(m.list.without, ":")
			if !ok || one == "" || others == "" {
				s.fail("openapi: %s.%s: without:%q, want \"value:other,other\"", t, m.name, m.list.without)
				break
			}
			var enum []any
			for _, o := range strings.Split(others, ",") {
				enum = append(enum, o)
			}
			v.Not = openapi3.NewSchemaRef("", &openapi3.Schema{AllOf: openapi3.SchemaRefs{
				openapi3.NewSchemaRef("", &openapi3.Schema{Contains: openapi3.NewSchemaRef("", &openapi3.Schema{Const: one})}),
				openapi3.NewSchemaRef("", &openapi3.Schema{Contains: openapi3.NewSchemaRef("", &openapi3.Schema{Enum: enum})}),
			}})
		}
		if m.text == (textRules{}) {
			return openapi3.NewSchemaRef("", &v)
		}
		items := *v.Items.Value
		str, v.Items = &items, openapi3.NewSchemaRef("", &items)
	} else if m.list != (listRules{}) {
		s.fail("openapi: %s.%s: item rules on a non-array", t, m.name)
		return p
	}
	if !str.Type.Includes("string") {
		s.fail("openapi: %s.%s: length or pattern on a non-string", t, m.name)
		return p
	}
	str.MinLength, str.MaxLength = value(m.text.minLen), m.text.maxLen
	if m.text.pattern != "" {
		pat, ok := s.patterns[m.text.pattern]
		if !ok {
			s.fail("openapi: %s.%s: no pattern named %q", t, m.name, m.text.pattern)
		}
		str.Pattern = pat
	}
	return openapi3.NewSchemaRef("", &v)
}

func value(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

// bounded adds a member's minimum and maximum to its number schema p.
func (s *schemas) bounded(t reflect.Type, m member, p *openapi3.SchemaRef) *openapi3.SchemaRef {
	if p.Ref != "" || p.Value.Type == nil || !(p.Value.Type.Includes("integer") || p.Value.Type.Includes("number")) {
		s.fail("openapi: %s.%s: min/max on a non-number", t, m.name)
		return p
	}
	v := *p.Value
	v.Min, v.Max = m.min, m.max
	if m.xmin != nil {
		v.ExclusiveMin = openapi3.ExclusiveBound{Value: m.xmin}
	}
	return openapi3.NewSchemaRef("", &v)
}

// count parses a length or item count tag (nil when absent).
func count(tag reflect.StructTag, key string) (*uint64, error) {
	v, ok := tag.Lookup(key)
	if !ok {
		return nil, nil
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("openapi: %s:%q: %w", key, v, err)
	}
	return &n, nil
}

// bound parses a min or max tag (nil when absent).
func bound(tag reflect.StructTag, key string) (*float64, error) {
	v, ok := tag.Lookup(key)
	if !ok {
		return nil, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return nil, fmt.Errorf("openapi: %s:%q: %w", key, v, err)
	}
	return &f, nil
}

func (m member) has(tag string) bool { return slices.Contains(m.tags, tag) }

func (m member) required(d Direction) bool {
	if d == Request {
		return m.has("required")
	}
	return !m.omitempty
}

// nullable: in responses a pointer may be null (and a member tagged
// nullable, for a slice sent as null), except that omitempty spends the
// first pointer on presence (a nil pointer is left out, never null); in
// requests only tagged members take null, which the decoder enforces with
// the same tag.
func (m member) nullable(d Direction) bool {
	if m.has("nullable") {
		return true
	}
	if d == Request || m.typ.Kind() != reflect.Pointer {
		return false
	}
	return !m.omitempty || m.typ.Elem().Kind() == reflect.Pointer
}

// members lists the JSON members of struct t as encoding/json sees them:
// embedded structs without a tag promote theirs, "-" hides one.
func members(t reflect.Type) ([]member, error) {
	var out []member
	for f := range t.Fields() {
		tag, hasTag := f.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && (!hasTag || name == "") && deref(f.Type).Kind() == reflect.Struct {
			inner, err := members(deref(f.Type))
			if err != nil {
				return nil, err
			}
			out = append(out, inner...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		var api []string
		if v := f.Tag.Get("api"); v != "" {
			api = strings.Split(v, ",")
		}
		optional := slices.ContainsFunc(strings.Split(opts, ","), func(o string) bool { return o == "omitempty" || o == "omitzero" })
		m := member{name: name, typ: f.Type, omitempty: optional, tags: api, doc: f.Tag.Get("doc"), constant: f.Tag.Get("const")}
		var err error
		if m.min, err = bound(f.Tag, "min"); err != nil {
			return nil, err
		}
		if m.max, err = bound(f.Tag, "max"); err != nil {
			return nil, err
		}
		if m.xmin, err = bound(f.Tag, "exclusiveMin"); err != nil {
			return nil, err
		}
		for key, dst := range map[string]**uint64{"minLength": &m.text.minLen, "maxLength": &m.text.maxLen,
			"minItems": &m.list.minItems, "maxItems": &m.list.maxItems} {
			if *dst, err = count(f.Tag, key); err != nil {
				return nil, err
			}
		}
		m.text.pattern, m.list.alone, m.list.without = f.Tag.Get("pattern"), f.Tag.Get("alone"), f.Tag.Get("without")
		m.list.unique = f.Tag.Get("uniqueItems") == "true"
		out = append(out, m)
	}
	return out, nil
}

// wrapped looks through an optional-field wrapper (field.Opt[T] and the
// like: a struct that decodes itself and keeps the value in a field named
// Value) to the type of its value.
func wrapped(t reflect.Type) (reflect.Type, bool) {
	if t.Kind() != reflect.Struct || !reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return nil, false
	}
	if _, ts := apitime.IsTimeType(t); ts {
		return nil, false
	}
	f, ok := t.FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, "value") })
	if !ok {
		return nil, false
	}
	return f.Type, true
}

func nullable(p *openapi3.SchemaRef) *openapi3.SchemaRef {
	if p.Ref != "" {
		return openapi3.NewSchemaRef("", &openapi3.Schema{OneOf: openapi3.SchemaRefs{p,
			openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("null")})}})
	}
	v := *p.Value
	null := openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("null")})
	switch {
	case v.Type == nil && v.AnyOf != nil: // a choice: null is one more alternative
		v.AnyOf = append(slices.Clone(v.AnyOf), null)
		return openapi3.NewSchemaRef("", &v)
	case v.Type == nil:
		return openapi3.NewSchemaRef("", &openapi3.Schema{OneOf: openapi3.SchemaRefs{p, null}})
	case !v.Type.Includes("null"):
		v.Type = types(append(v.Type.Slice(), "null")...)
	}
	if v.Enum != nil {
		v.Enum = append(slices.Clone(v.Enum), nil)
	}
	return openapi3.NewSchemaRef("", &v)
}

// describe adds a description; a $ref gets it beside itself (allowed in 3.1).
func describe(p *openapi3.SchemaRef, doc string) *openapi3.SchemaRef {
	if p.Ref != "" {
		return openapi3.NewSchemaRef("", &openapi3.Schema{Description: doc, AllOf: openapi3.SchemaRefs{p}})
	}
	v := *p.Value
	v.Description = doc
	return openapi3.NewSchemaRef("", &v)
}

func types(ts ...string) *openapi3.Types {
	t := openapi3.Types(ts)
	return &t
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}
