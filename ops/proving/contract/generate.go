package contract

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"oficina/schema/field"
)

// The generator makes requests from the document's schemas (issue 26 item
// 6: request schemas as strict as the server): instances a schema takes,
// and instances that break one of its rules at a time. It reads the subset
// of JSON Schema the document uses — types, enum and const, formats,
// lengths, patterns, bounds, item counts, required and additional
// members, anyOf of required sets, oneOf with null, and the if/then rules
// of allOf — and asks the validator the document is checked with
// (santhosh-tekuri/jsonschema, Draft 2020-12, formats asserted) about
// every instance, so that what it calls valid or invalid is the document's
// word, not its own. It is seeded and deterministic: the same seed and
// document give the same requests.

// Fill gives a value for a member whose valid values depend on the
// server's records rather than on the document: the id of a record that
// exists, a URL the destination guard takes. path names the member, with *
// for an array's items ("items/*/product_id"); ok false leaves it to the
// schema. A generator uses a filled value most of the time, not always, so
// that ids that exist nowhere are sent too.
type Fill func(path string) (v any, ok bool)

// Generator makes instances of the document's schemas.
type Generator struct {
	d    *Document
	rnd  *rand.Rand
	fill Fill
	// FillRate is how often a value Fill gives is used (0.85 by
	// default); 1 makes instances whose references all exist.
	FillRate float64
	// skip are members (paths as for Fill) instances leave out, and
	// always the paths Fill gives always.
	skip, always map[string]bool
}

// Generator returns a generator seeded with seed; fill may be nil.
func (d *Document) Generator(seed uint64, fill Fill) *Generator {
	if fill == nil {
		fill = func(string) (any, bool) { return nil, false }
	}
	return &Generator{d: d, rnd: rand.New(rand.NewPCG(seed, 26)), fill: fill, FillRate: 0.85, skip: map[string]bool{},
		always: map[string]bool{}}
}

// Without returns a generator drawing from the same source that leaves
// the members at paths (as for Fill) out of what it makes, valid or not.
func (g *Generator) Without(paths ...string) *Generator {
	c := *g
	c.skip, c.always = maps.Clone(g.skip), maps.Clone(g.always)
	for _, p := range paths {
		c.skip[p] = true
	}
	return &c
}

// Always makes Fill's value for the members at paths used every time: a
// value the schema cannot make valid by chance (an existing cursor).
func (g *Generator) Always(paths ...string) {
	for _, p := range paths {
		g.always[p] = true
	}
}

// Valid returns an instance the schema at ptr (a JSON pointer of the
// document) accepts.
func (g *Generator) Valid(ptr string) (any, error) { return g.ValidAt(ptr, "") }

// ValidAt is Valid for the member at path (as for Fill): a query
// parameter's name.
func (g *Generator) ValidAt(ptr, path string) (any, error) {
	for range 400 {
		v := g.value(ptr, path, 0)
		if g.Accepts(ptr, v) {
			return v, nil
		}
	}
	return nil, fmt.Errorf("contract: no valid instance of %s in 400 tries", ptr)
}

// Accepts reports whether the schema at ptr takes v.
func (g *Generator) Accepts(ptr string, v any) bool {
	return len(g.Check(ptr, v)) == 0
}

// Types are the types of the schema at ptr, its $ref followed.
func (g *Generator) Types(ptr string) []string {
	n, _ := g.node(ptr)
	return typesOf(n)
}

// Check validates v against the schema at ptr and returns the mismatches
// (none: valid).
func (g *Generator) Check(ptr string, v any) []Mismatch {
	b, err := json.Marshal(v)
	if err != nil {
		return []Mismatch{{Reason: err.Error()}}
	}
	return g.d.validate(ptr, b)
}

func (g *Generator) chance(p float64) bool { return g.rnd.Float64() < p }

func (g *Generator) node(ptr string) (map[string]any, string) {
	return g.d.resolve(g.d.lookup(ptr), ptr)
}

// value makes an instance of the schema at ptr for the member at path.
func (g *Generator) value(ptr, path string, depth int) any {
	n, ptr := g.node(ptr)
	if path != "" {
		if v, ok := g.fill(path); ok && (g.always[path] || g.chance(g.FillRate)) {
			return v
		}
	}
	if inner, ok := wrapper(n); ok {
		return g.value(ptr+"/allOf/"+strconv.Itoa(inner), path, depth)
	}
	if alts, ok := n["oneOf"].([]any); ok && len(alts) > 0 {
		i := g.rnd.IntN(len(alts))
		if null := nullIndex(alts); null >= 0 && len(alts) == 2 {
			i = 1 - null // mostly the value, null now and then
			if g.chance(0.1) {
				i = null
			}
		}
		return g.value(ptr+"/oneOf/"+strconv.Itoa(i), path, depth)
	}
	if c, ok := n["const"]; ok {
		return c
	}
	if e, ok := n["enum"].([]any); ok && len(e) > 0 {
		vals := slices.DeleteFunc(slices.Clone(e), func(v any) bool { return v == nil })
		if len(vals) == 0 || len(vals) < len(e) && g.chance(0.1) {
			return nil
		}
		return vals[g.rnd.IntN(len(vals))]
	}
	ts := typesOf(n)
	if len(ts) == 0 {
		return "any"
	}
	t := ts[0]
	if slices.Contains(ts, "null") && len(ts) > 1 {
		t = ts[slices.IndexFunc(ts, func(s string) bool { return s != "null" })]
		if g.chance(0.1) {
			return nil
		}
	}
	switch t {
	case "object":
		return g.object(n, ptr, path, depth)
	case "array":
		return g.array(n, ptr, path, depth)
	case "string":
		return g.str(n)
	case "integer":
		return g.integer(n)
	case "number":
		return g.number(n)
	case "boolean":
		return g.chance(0.5)
	case "null":
		return nil
	}
	return nil
}

// wrapper finds the one schema of an allOf that only adds a description
// beside a $ref (the builder's describe); rules (if/then) do not count.
func wrapper(n map[string]any) (int, bool) {
	all, ok := n["allOf"].([]any)
	if !ok || n["type"] != nil || n["properties"] != nil {
		return 0, false
	}
	for i, a := range all {
		if m, _ := a.(map[string]any); m["if"] == nil {
			return i, true
		}
	}
	return 0, false
}

func nullIndex(alts []any) int {
	for i, a := range alts {
		if m, _ := a.(map[string]any); len(typesOf(m)) == 1 && typesOf(m)[0] == "null" {
			return i
		}
	}
	return -1
}

func typesOf(n map[string]any) []string {
	switch t := n["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, v := range t {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func strs(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "/" + name
}

// object makes the required members, some of the others, one alternative
// of an anyOf of required sets, and then applies the if/then rules: a rule
// whose if holds adds the members it requires and drops those it forbids.
func (g *Generator) object(n map[string]any, ptr, path string, depth int) map[string]any {
	props, _ := n["properties"].(map[string]any)
	req := map[string]bool{}
	for _, r := range strs(n["required"]) {
		req[r] = true
	}
	if alts, ok := n["anyOf"].([]any); ok && len(alts) > 0 {
		alt, _ := alts[g.rnd.IntN(len(alts))].(map[string]any)
		for _, r := range strs(alt["required"]) {
			req[r] = true
		}
	}
	out := map[string]any{}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	member := func(name string) any {
		return g.value(ptr+"/properties/"+escape(name), join(path, name), depth+1)
	}
	for _, name := range names {
		if req[name] || !g.skip[join(path, name)] && g.chance(0.55) {
			out[name] = member(name)
		}
	}
	if extra, ok := n["additionalProperties"].(map[string]any); ok && extra != nil {
		for i := range g.rnd.IntN(3) {
			out[fmt.Sprintf("X-Oficina-%d", i)] = g.value(ptr+"/additionalProperties", join(path, "*"), depth+1)
		}
	}
	rules, _ := n["allOf"].([]any)
	for range 3 {
		for i, r := range rules {
			rule, _ := r.(map[string]any)
			if rule["if"] == nil || !g.Accepts(ptr+"/allOf/"+strconv.Itoa(i)+"/if", out) {
				continue
			}
			then, _ := rule["then"].(map[string]any)
			for _, name := range strs(then["required"]) {
				if _, ok := out[name]; !ok && props[name] != nil {
					out[name] = member(name)
				}
			}
			for _, name := range forbidden(then) {
				delete(out, name)
			}
		}
	}
	return out
}

// forbidden are the members a then forbids: not {required: [...]} or not
// {anyOf: [{required: [...]}, ...]}.
func forbidden(then map[string]any) []string {
	not, _ := then["not"].(map[string]any)
	out := strs(not["required"])
	alts, _ := not["anyOf"].([]any)
	for _, a := range alts {
		m, _ := a.(map[string]any)
		out = append(out, strs(m["required"])...)
	}
	return out
}

func count(v any) (int, bool) {
	f, ok := number(v)
	return int(f), ok
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	}
	return 0, false
}

// array makes minItems to a few more items, sometimes maxItems of them,
// and sometimes, when the schema sets no maximum, more than any list of
// the API takes: what a fuzzer would send.
func (g *Generator) array(n map[string]any, ptr, path string, depth int) []any {
	lo, _ := count(n["minItems"])
	hi, bounded := count(n["maxItems"])
	k := lo + g.rnd.IntN(3)
	switch {
	case bounded && g.chance(0.08):
		k = hi
	case !bounded && depth < 2 && g.chance(0.15):
		k = 250
	}
	if bounded && k > hi {
		k = hi
	}
	out := make([]any, 0, k)
	unique, _ := n["uniqueItems"].(bool)
	for tries := 0; len(out) < k && tries < 4*k+8; tries++ {
		v := g.value(ptr+"/items", join(path, "*"), depth+1)
		if unique && slices.ContainsFunc(out, func(o any) bool { return same(o, v) }) {
			continue
		}
		out = append(out, v)
	}
	return out
}

func same(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// integer makes a value at a bound, next to one, or in between; without a
// bound, the bound is the format's (int32, int64): a fuzzer's extremes.
func (g *Generator) integer(n map[string]any) json.Number {
	lo, hi := float64(math.MinInt64), float64(math.MaxInt64)
	if f, _ := n["format"].(string); f == "int32" {
		lo, hi = math.MinInt32, math.MaxInt32
	}
	if v, ok := number(n["minimum"]); ok {
		lo = v
	}
	if v, ok := number(n["maximum"]); ok {
		hi = v
	}
	a, b := int64(lo), int64(hi)
	if hi >= math.MaxInt64 {
		b = math.MaxInt64
	}
	var v int64
	switch g.rnd.IntN(8) {
	case 0:
		v = a
	case 1:
		v = b
	case 2:
		v = a + min(1, b-a)
	default:
		// Mostly small numbers inside the bounds.
		base, top := max(a, -1000), min(b, 100_000)
		if top < base {
			base, top = a, b
		}
		v = base + g.rnd.Int64N(top-base+1)
	}
	return json.Number(strconv.FormatInt(v, 10))
}

func (g *Generator) number(n map[string]any) json.Number {
	lo, hi := -1e15, 1e15
	if v, ok := number(n["minimum"]); ok {
		lo = v
	}
	if v, ok := number(n["maximum"]); ok {
		hi = v
	}
	if v, ok := number(n["exclusiveMinimum"]); ok {
		lo = v + 0.25
	}
	if v, ok := number(n["exclusiveMaximum"]); ok {
		hi = v - 0.25
	}
	var v float64
	switch g.rnd.IntN(6) {
	case 0:
		v = lo
	case 1:
		v = hi
	default:
		v = math.Round((max(lo, -100)+g.rnd.Float64()*(min(hi, 1000)-max(lo, -100)))*4) / 4
	}
	return json.Number(strconv.FormatFloat(v, 'f', -1, 64))
}

// text are strings a fuzzer tries: plain and accented words, scripts
// beyond Latin, characters outside the Basic Multilingual Plane, white
// space around and alone, invisible and control characters.
var text = []string{
	"Ana Souza", "Conserto do ar-condicionado", "ção", "São Paulo — Zona Sul", "日本語のテキスト", "emoji 😀 fim",
	"  espaços em volta  ", " ", "", "\t", "linha\nquebrada", "zero\u200bwidth", "x", "a.b", "0", "-1", "null", "<b>html</b>",
	`aspas "duplas" e \barras\`, "\u00a0", "e\u0301", "ﬁ", "\u202eRTL",
}

// str makes a string of the schema: a time or date of the format, one
// made from its pattern, or one of text; lengths at the bounds now and
// then, and, without a maximum, now and then a string longer than any
// text of the API takes.
func (g *Generator) str(n map[string]any) string {
	minL, _ := count(n["minLength"])
	maxL, bounded := count(n["maxLength"])
	fits := func(s string) bool {
		l := utf8.RuneCountInString(s)
		return l >= minL && (!bounded || l <= maxL)
	}
	switch f, _ := n["format"].(string); f {
	case "date-time":
		return g.instant().Format("2006-01-02T15:04:05Z")
	case "date":
		return g.instant().Format("2006-01-02")
	}
	pat, _ := n["pattern"].(string)
	if pat != "" && pat != field.TextPattern {
		re, gen := compilePattern(pat)
		if gen == nil {
			return ""
		}
		if bounded && g.chance(0.1) {
			if s := strings.Repeat("x", maxL); re.MatchString(s) {
				return s
			}
		}
		for range 200 {
			s := g.generate(gen, 0)
			if !fits(s) || !re.MatchString(s) {
				continue
			}
			// Without a maximum, now and then a text longer than any the
			// API takes, if the pattern allows one.
			if long := longer(s, 20_000); !bounded && g.chance(0.2) && re.MatchString(long) {
				return long
			}
			return s
		}
		return ""
	}
	switch {
	case bounded && g.chance(0.1):
		return strings.Repeat("é", maxL)
	case !bounded && g.chance(0.2):
		return strings.Repeat("Texto longo. ", 2000)
	}
	for range 50 {
		if s := text[g.rnd.IntN(len(text))]; fits(s) {
			return s
		}
	}
	return strings.Repeat("x", minL)
}

func (g *Generator) instant() time.Time {
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	return start.Add(time.Duration(g.rnd.Int64N(int64(15*365*24*time.Hour))) / time.Second * time.Second)
}

var patterns sync.Map // pattern → *compiled

type compiled struct {
	re  *regexp.Regexp
	gen *syntax.Regexp
}

// compilePattern compiles a document pattern for matching and for making
// strings (Go's syntax reads the subset of ECMA-262 the document uses).
func compilePattern(p string) (*regexp.Regexp, *syntax.Regexp) {
	if c, ok := patterns.Load(p); ok {
		return c.(*compiled).re, c.(*compiled).gen
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return regexp.MustCompile(`$^`), nil
	}
	tree, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return re, nil
	}
	c := &compiled{re: re, gen: tree.Simplify()}
	patterns.Store(p, c)
	return c.re, c.gen
}

// generate makes a string matching the regular expression r (anchors
// aside): each repetition a few times, each class a character of it,
// printable ASCII most of the time.
func (g *Generator) generate(r *syntax.Regexp, depth int) string {
	var sb strings.Builder
	g.emit(&sb, r, depth)
	return sb.String()
}

func (g *Generator) emit(sb *strings.Builder, r *syntax.Regexp, depth int) {
	switch r.Op {
	case syntax.OpLiteral:
		for _, c := range r.Rune {
			sb.WriteRune(c)
		}
	case syntax.OpCharClass:
		sb.WriteRune(g.pick(r.Rune))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		sb.WriteRune(rune('a' + g.rnd.IntN(26)))
	case syntax.OpCapture:
		g.emit(sb, r.Sub[0], depth)
	case syntax.OpConcat:
		for _, s := range r.Sub {
			g.emit(sb, s, depth)
		}
	case syntax.OpAlternate:
		g.emit(sb, r.Sub[g.rnd.IntN(len(r.Sub))], depth)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 6
		switch r.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = r.Min, r.Max
			if hi < 0 {
				hi = lo + 6
			}
		}
		if depth > 3 {
			hi = lo
		}
		for range lo + g.rnd.IntN(hi-lo+1) {
			g.emit(sb, r.Sub[0], depth+1)
		}
	}
}

// pick chooses a character of a class (pairs of range bounds): printable
// ASCII when the class has some, three times in four.
func (g *Generator) pick(ranges []rune) rune {
	var ascii []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		for c := max(ranges[i], 0x21); c <= min(ranges[i+1], 0x7e); c++ {
			ascii = append(ascii, c)
		}
	}
	if len(ascii) > 0 && g.chance(0.75) {
		return ascii[g.rnd.IntN(len(ascii))]
	}
	for range 20 {
		i := 2 * g.rnd.IntN(len(ranges)/2)
		lo, hi := ranges[i], min(ranges[i+1], 0x2FFFF)
		if hi < lo {
			continue
		}
		c := lo + rune(g.rnd.Int64N(int64(hi-lo+1)))
		if utf8.ValidRune(c) {
			return c
		}
	}
	return ranges[0]
}
