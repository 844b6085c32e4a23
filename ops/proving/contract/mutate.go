package contract

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"oficina/schema/field"
)

// Mutation is an instance that breaks one rule of its schema: a valid
// instance with one member changed, removed or added.
type Mutation struct {
	Value any
	// Rule is the rule broken: the keyword (maxLength, required, …), with
	// the member's path.
	Rule string
	// Path is where: JSON pointer tokens of the member ("items", "0",
	// "name"); Also are further members the refusal may name instead
	// (the other alternative of "email or phone").
	Path []string
	Also [][]string
}

// Names are the members a refusal may name, as params: Path's and Also's.
func (m Mutation) Names() []string {
	out := []string{Param(m.Path)}
	for _, a := range m.Also {
		out = append(out, Param(a))
	}
	return out
}

// Param is the member as the API's errors name it: items[0].name.
func Param(path []string) string {
	var sb strings.Builder
	for _, tok := range path {
		if _, err := strconv.Atoi(tok); err == nil {
			sb.WriteString("[" + tok + "]")
			continue
		}
		if sb.Len() > 0 {
			sb.WriteString(".")
		}
		sb.WriteString(tok)
	}
	return sb.String()
}

// Invalid returns instances of the schema at ptr that each break one rule
// where valid (an instance the schema takes) keeps them all; each is
// refused by the validator (a change it would take is left out). A member
// valid leaves out is added with a valid value first, so that its rules
// are broken too (not those the generator is told to leave out).
func (g *Generator) Invalid(ptr string, valid any) []Mutation {
	m := &mutator{g: g, ptr: ptr}
	m.walk(valid, ptr, valid, nil)
	return m.out
}

// mutator collects the mutations of the instances of the schema at ptr.
type mutator struct {
	g   *Generator
	ptr string
	out []Mutation
}

// emitter is the emitFn that changes root.
func (m *mutator) emitter(root any) emitFn {
	return func(at []string, rule string, change func(any) any, names ...[]string) {
		v := edit(root, at, change)
		if len(m.g.Check(m.ptr, v)) == 0 {
			return
		}
		if len(names) == 0 {
			names = [][]string{at}
		}
		m.out = append(m.out, Mutation{Value: v, Rule: rule + " at /" + strings.Join(names[0], "/"), Path: names[0], Also: names[1:]})
	}
}

// fillPath is path as Fill names members: * for an index.
func fillPath(path []string) string {
	out := make([]string, len(path))
	for i, tok := range path {
		if _, err := strconv.Atoi(tok); err == nil {
			tok = "*"
		}
		out[i] = tok
	}
	return strings.Join(out, "/")
}

// deleted marks a member to remove in edit.
type deleted struct{}

// edit returns a copy of root with the value at path replaced by
// change(old) (deleted{}: removed; old is nil when absent).
func edit(root any, path []string, change func(any) any) any {
	if len(path) == 0 {
		return change(root)
	}
	switch c := root.(type) {
	case map[string]any:
		out := make(map[string]any, len(c)+1)
		for k, v := range c {
			out[k] = v
		}
		v := edit(c[path[0]], path[1:], change)
		if _, ok := v.(deleted); ok {
			delete(out, path[0])
		} else {
			out[path[0]] = v
		}
		return out
	case []any:
		i, _ := strconv.Atoi(path[0])
		out := slices.Clone(c)
		out[i] = edit(c[i], path[1:], change)
		return out
	}
	return root
}

func to(v any) func(any) any { return func(any) any { return v } }

// emitFn offers a mutation: change replaces the value at at; names are the
// members the refusal may name (default: at).
type emitFn func(at []string, rule string, change func(any) any, names ...[]string)

func child(path []string, tok string) []string { return append(slices.Clone(path), tok) }

// walk offers the mutations of the value v of the schema at ptr, and of
// its members.
func (m *mutator) walk(root any, ptr string, v any, path []string) {
	g, emit := m.g, m.emitter(root)
	n, ptr := g.node(ptr)
	if inner, ok := wrapper(n); ok {
		m.walk(root, ptr+"/allOf/"+strconv.Itoa(inner), v, path)
		return
	}
	if alts, ok := n["oneOf"].([]any); ok {
		if v == nil {
			return
		}
		for i := range alts {
			if p := ptr + "/oneOf/" + strconv.Itoa(i); g.Accepts(p, v) {
				m.walk(root, p, v, path)
				return
			}
		}
		return
	}
	if v == nil {
		return
	}
	enum, _ := n["enum"].([]any)
	if !slices.Contains(typesOf(n), "null") && !slices.Contains(enum, nil) && len(path) > 0 {
		emit(path, "type (null)", to(nil))
	}
	if _, ok := n["enum"].([]any); ok {
		if _, isStr := v.(string); isStr {
			emit(path, "enum", to("zz_not_a_value"))
		}
		emit(path, "type", to(json.Number("7")))
		return
	}
	switch x := v.(type) {
	case map[string]any:
		m.objectMutations(root, n, ptr, x, path)
		emit(path, "type", to([]any{}))
	case []any:
		m.arrayMutations(root, n, ptr, x, path)
		emit(path, "type", to(map[string]any{}))
	case string:
		g.stringMutations(n, x, path, emit)
		emit(path, "type", to(json.Number("12345")))
	case json.Number:
		g.numberMutations(n, x, path, emit)
		emit(path, "type", to(x.String()))
	case bool:
		emit(path, "type", to(strconv.FormatBool(x)))
	}
}

func (m *mutator) objectMutations(root any, n map[string]any, ptr string, v map[string]any, path []string) {
	g, emit := m.g, m.emitter(root)
	props, _ := n["properties"].(map[string]any)
	required := strs(n["required"])
	for _, name := range required {
		if _, ok := v[name]; ok {
			emit(child(path, name), "required", to(deleted{}))
		}
	}
	if extra, ok := n["additionalProperties"].(bool); ok && !extra {
		emit(child(path, "zz_unknown"), "additionalProperties", to(true))
	}
	if alts, ok := n["anyOf"].([]any); ok {
		// Remove every member of every alternative: none is left.
		var names [][]string
		var drop []string
		for _, a := range alts {
			alt, _ := a.(map[string]any)
			for _, name := range strs(alt["required"]) {
				names, drop = append(names, child(path, name)), append(drop, name)
			}
		}
		if len(names) > 0 {
			emit(path, "anyOf", func(old any) any {
				obj, _ := old.(map[string]any)
				out := make(map[string]any, len(obj))
				for k, x := range obj {
					if !slices.Contains(drop, k) {
						out[k] = x
					}
				}
				return out
			}, names...)
		}
	}
	rules, _ := n["allOf"].([]any)
	for i, r := range rules {
		rule, _ := r.(map[string]any)
		if rule["if"] == nil || !g.Accepts(ptr+"/allOf/"+strconv.Itoa(i)+"/if", v) {
			continue
		}
		then, _ := rule["then"].(map[string]any)
		for _, name := range strs(then["required"]) {
			if _, ok := v[name]; ok && !slices.Contains(required, name) {
				emit(child(path, name), "if/then required", to(deleted{}))
			}
		}
		for _, name := range forbidden(then) {
			if _, ok := v[name]; !ok && props[name] != nil {
				emit(child(path, name), "if/then forbidden", to(g.instanceOf(ptr+"/properties/"+escape(name))))
			}
		}
	}
	names := make([]string, 0, len(v))
	for name := range v {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if props[name] != nil {
			m.walk(root, ptr+"/properties/"+escape(name), v[name], child(path, name))
		} else if extra, ok := n["additionalProperties"].(map[string]any); ok && extra != nil {
			m.walk(root, ptr+"/additionalProperties", v[name], child(path, name))
		}
	}
	// The members left out: added with a valid value, then broken.
	absent := make([]string, 0, len(props))
	for name := range props {
		if _, ok := v[name]; !ok && !g.skip[fillPath(child(path, name))] {
			absent = append(absent, name)
		}
	}
	slices.Sort(absent)
	for _, name := range absent {
		at, p := child(path, name), ptr+"/properties/"+escape(name)
		for range 20 {
			x := g.value(p, fillPath(at), len(at))
			if wider := edit(root, at, to(x)); g.Accepts(p, x) && g.Accepts(m.ptr, wider) {
				m.walk(wider, p, x, at)
				break
			}
		}
	}
}

// instanceOf is a valid instance of the schema at ptr (nil if none).
func (g *Generator) instanceOf(ptr string) any {
	v, err := g.Valid(ptr)
	if err != nil {
		return nil
	}
	return v
}

func (m *mutator) arrayMutations(root any, n map[string]any, ptr string, v []any, path []string) {
	g, emit := m.g, m.emitter(root)
	if lo, ok := count(n["minItems"]); ok && lo > 0 && len(v) >= lo {
		emit(path, "minItems", to(slices.Clone(v[:lo-1])))
	}
	unique, _ := n["uniqueItems"].(bool)
	if hi, ok := count(n["maxItems"]); ok && hi < 1000 {
		// One item more than the maximum, the smallest kind at hand, so
		// that the body stays within the server's 1 MB.
		more := slices.Clone(v)
		small := smallest(v)
		for tries := 0; len(more) <= hi && tries < 8*hi; tries++ {
			item := small
			if item == nil || unique {
				item = g.instanceOf(ptr + "/items")
			}
			if unique && slices.ContainsFunc(more, func(o any) bool { return same(o, item) }) {
				continue
			}
			more = append(more, item)
		}
		if b, _ := json.Marshal(more); len(b) < 512<<10 {
			emit(path, "maxItems", to(more))
		}
	}
	if unique && len(v) > 0 {
		emit(path, "uniqueItems", to(append(slices.Clone(v), v[0])))
	}
	if not, ok := n["not"].(map[string]any); ok {
		// not (contains A and contains one of B…): A beside B.
		if all, ok := not["allOf"].([]any); ok && len(all) == 2 {
			a, _ := all[0].(map[string]any)
			b, _ := all[1].(map[string]any)
			ca, _ := a["contains"].(map[string]any)
			cb, _ := b["contains"].(map[string]any)
			if others, _ := cb["enum"].([]any); ca["const"] != nil && len(others) > 0 {
				emit(path, "not (beside)", to([]any{ca["const"], others[0]}))
			}
		}
		if c, ok := not["contains"].(map[string]any); ok && c["const"] != nil {
			alone := c["const"]
			for range 20 {
				if other := g.instanceOf(ptr + "/items"); other != nil && !same(other, alone) {
					emit(path, "not (alone)", to([]any{alone, other}))
					break
				}
			}
		}
	}
	if len(v) > 0 {
		m.walk(root, ptr+"/items", v[0], child(path, "0"))
	}
}

// smallest is the item of v that is shortest in JSON (nil: none).
func smallest(v []any) any {
	var out any
	size := -1
	for _, x := range v {
		if b, _ := json.Marshal(x); size < 0 || len(b) < size {
			out, size = x, len(b)
		}
	}
	return out
}

// badStrings are what a pattern may refuse: empty, blank, NUL, one odd
// character, and near misses of e-mail addresses and phones.
var badStrings = []string{
	"", " ", "\u3000", "x", "@", "a b", "0", "+", "é", "1-2", "ana@", "@example.com", "ana@@example.com",
	"ana@exemplo", ".ana@example.com", "ana..souza@example.com", "ana souza@example.com", "Ana <ana@example.com>",
	"(11) 9", "+55 11 99999-9999 ramal 2", "123", "00 11 2", "+", "11 3333-444a",
}

func (g *Generator) stringMutations(n map[string]any, v string, path []string, emit emitFn) {
	minL, hasMin := count(n["minLength"])
	maxL, hasMax := count(n["maxLength"])
	if hasMin && minL > 0 {
		r := []rune(v)
		emit(path, "minLength", to(string(r[:min(len(r), minL-1)])))
	}
	if hasMax && maxL < 100_000 {
		// Without white space around: the server trims some texts before
		// counting, the document counts it (stricter, never refusing what
		// the server takes).
		emit(path, "maxLength", to(longer(strings.TrimSpace(v), maxL+1)))
	}
	switch f, _ := n["format"].(string); f {
	case "date-time":
		emit(path, "format", to("2026-02-30T10:00:00Z"))
		emit(path, "pattern", to("2026-01-02T03:04:05.5Z"))
		emit(path, "pattern", to("2026-01-02T03:04:05+00:00"))
		return
	case "date":
		emit(path, "format", to("2026-02-30"))
		emit(path, "pattern", to("2026-1-2"))
		return
	}
	pat, _ := n["pattern"].(string)
	switch {
	case pat == field.TextPattern:
		emit(path, "pattern (NUL)", to(v+"\x00"))
	case pat != "":
		re, _ := compilePattern(pat)
		tried := 0
		for _, s := range append([]string{v + "\x00"}, badStrings...) {
			l := utf8.RuneCountInString(s)
			if re.MatchString(s) || hasMin && l < minL || hasMax && l > maxL {
				continue
			}
			emit(path, "pattern", to(s))
			if tried++; tried == 4 {
				break
			}
		}
	}
}

// longer is v grown to n characters by repeating one of its inner
// characters where it stands (so a pattern that takes v takes it too):
// the first that is not white space, else x.
func longer(v string, n int) string {
	r := []rune(v)
	at := slices.IndexFunc(r, func(c rune) bool { return !strings.ContainsRune(" \t\n", c) })
	if at < 0 || len(r) == 0 {
		return strings.Repeat("x", n)
	}
	if len(r) >= n {
		return v
	}
	grown := append(slices.Clone(r[:at+1]), []rune(strings.Repeat(string(r[at]), n-len(r)))...)
	return string(append(grown, r[at+1:]...))
}

func (g *Generator) numberMutations(n map[string]any, v json.Number, path []string, emit emitFn) {
	integer := slices.Contains(typesOf(n), "integer")
	step := 1.0
	if !integer {
		step = 0.5
	}
	format := func(f float64) json.Number {
		if integer {
			return json.Number(strconv.FormatInt(int64(f), 10))
		}
		return json.Number(strconv.FormatFloat(f, 'f', -1, 64))
	}
	if lo, ok := number(n["minimum"]); ok {
		emit(path, "minimum", to(format(lo-step)))
	}
	if hi, ok := number(n["maximum"]); ok {
		emit(path, "maximum", to(format(hi+step)))
	}
	if lo, ok := number(n["exclusiveMinimum"]); ok {
		emit(path, "exclusiveMinimum", to(format(lo)))
	}
	if hi, ok := number(n["exclusiveMaximum"]); ok {
		emit(path, "exclusiveMaximum", to(format(hi)))
	}
	if integer {
		emit(path, "type (fraction)", to(json.Number("1.5")))
		if _, ok := n["maximum"]; !ok {
			emit(path, "format (int64)", to(json.Number("9223372036854775808")))
		}
	}
}
