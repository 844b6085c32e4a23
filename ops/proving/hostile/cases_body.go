package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// maxBody is the spec's body ceiling (part 8).
const maxBody = 1 << 20

var (
	badRequest = expect{Status: 400, Code: "invalid_request", Refuse: true}
	invalid    = expect{Status: 422, Code: "validation_failed", Refuse: true}
	anyAnswer  = expect{}
	refused    = expect{Refuse: true}
)

func invalidField(param string) expect {
	e := invalid
	e.Param = param
	return e
}

// malformed are bodies that are not one JSON object: 400.
var malformed = []struct{ name, body string }{
	{"open brace", `{`}, {"close brace", `}`}, {"key without value", `{"a"}`}, {"colon without value", `{"a":}`},
	{"trailing comma", `{"a":1,}`}, {"lone comma", `{,}`}, {"single quotes", `{'a':1}`}, {"bare key", `{a:1}`},
	{"leading zero", `{"a":01}`}, {"NaN", `{"a":NaN}`}, {"Infinity", `{"a":Infinity}`}, {"minus alone", `{"a":-}`},
	{"bare fraction", `{"a":.5}`}, {"bad exponent", `{"a":1e}`}, {"bad escape", `{"a":"\x"}`}, {"short unicode escape", `{"a":"\u12"}`},
	{"truncated literal", `{"a":tru}`}, {"unterminated string", `{"a":"abc}`}, {"array", `[]`}, {"array of object", `[{}]`},
	{"null", `null`}, {"true", `true`}, {"string", `"{}"`}, {"number", `123`}, {"two objects", `{} {}`},
	{"trailing garbage", `{}x`}, {"extra close", `{"a":1}}`}, {"byte order mark", "\xef\xbb\xbf{}"}, {"comment", `/*c*/{}`},
	{"comment inside", `{"a":1 /*c*/}`}, {"control character in string", "{\"a\":\"x\ny\"}"},
	{"nesting 20,000 deep", `{"a":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`},
}

// decodeCases are the cases that break the JSON itself or its shape:
// malformed, truncated, invalid UTF-8, raw NUL bytes, duplicate and
// unknown keys. They need no valid rest: decoding comes first.
func (g *gen) decodeCases(rt route) {
	for _, m := range malformed {
		g.own(rt, "malformed_json", m.name, []byte(m.body), badRequest, nil)
	}
	shape, _ := g.base(rt, g.r.a) // for the paths and keys; each case gets its own copy
	n := len(encode(shape))
	cuts := map[int]bool{}
	for _, c := range []int{1, n / 4, n / 2, 3 * n / 4, n - 1} {
		if c > 0 && c < n && !cuts[c] {
			cuts[c] = true
			base, lead := g.base(rt, g.r.a)
			full := encode(base)
			g.own(rt, "truncated_json", fmt.Sprintf("cut at byte %d of %d", c, len(full)), full[:min(c, len(full)-1)], badRequest, lead)
		}
	}
	// Raw bytes that are not UTF-8, in a value and in a key: 400 before
	// any field is looked at.
	for _, bad := range []struct{ name, b string }{
		{"0xFF", "\xff"}, {"overlong slash", "\xc0\xaf"}, {"surrogate half", "\xed\xa0\x80"},
		{"truncated sequence", "\xe2\x82"}, {"5-byte sequence", "\xf8\x88\x80\x80\x80"}, {"latin-1 é", "\xe9"},
	} {
		base, lead := g.base(rt, g.r.a)
		g.own(rt, "invalid_utf8", "in a value: "+bad.name, withMember(base, `"hostile":"a`+bad.b+`b"`), badRequest, lead)
	}
	base, lead := g.base(rt, g.r.a)
	g.own(rt, "invalid_utf8", "in a key", withMember(base, "\"k\xffey\":1"), badRequest, lead)
	base, lead = g.base(rt, g.r.a)
	g.own(rt, "nul_bytes", "raw NUL inside a string", withMember(base, "\"hostile\":\"a\x00b\""), badRequest, lead)
	base, lead = g.base(rt, g.r.a)
	g.own(rt, "nul_bytes", "raw NUL between tokens", append([]byte("{\x00"), encode(base)[1:]...), badRequest, lead)
	base, lead = g.base(rt, g.r.a)
	g.own(rt, "nul_bytes", "escaped NUL as a key", withMember(base, `"\u0000":1`), invalid, lead)

	// Duplicate keys: JSON leaves them undefined and a proxy may read the
	// first where the server reads the last (docs/api.md: 422).
	for _, obj := range objectsIn(shape, nil) {
		m, _ := get(shape, obj)
		keys := sortedMapKeys(m.(map[string]any))
		if len(keys) == 0 {
			continue
		}
		dup := keys[:1]
		if len(obj) == 0 {
			dup = keys
		}
		for _, k := range dup {
			base, lead := g.base(rt, g.r.a)
			v, _ := get(base, append(slices.Clone(obj), k))
			vb, _ := json.Marshal(v)
			b, _ := encodeWith(base, obj, quote(k)+":"+string(vb))
			g.own(rt, "duplicate_keys", "twice"+where(obj)+": "+k, b, invalidField(joinName(obj, k)), lead)
		}
		// The same member in another case: encoding/json matches names
		// case-insensitively, so without a check the two would collide.
		k := keys[0]
		if up := strings.ToUpper(k); up != k {
			base, lead := g.base(rt, g.r.a)
			v, _ := get(base, append(slices.Clone(obj), k))
			vb, _ := json.Marshal(v)
			b, _ := encodeWith(base, obj, quote(up)+":"+string(vb))
			g.own(rt, "duplicate_keys", "again in upper case"+where(obj)+": "+up, b, invalid, lead)
		}
	}

	// Unknown members at every depth the base has, and names that only
	// differ from a known one in case.
	for _, obj := range objectsIn(shape, nil) {
		for _, u := range []string{"hostile_unknown", "__proto__", "constructor"} {
			base, lead := g.base(rt, g.r.a)
			b, _ := encodeWith(base, obj, quote(u)+":{}")
			g.own(rt, "unknown_fields", u+where(obj), b, invalidField(joinName(obj, u)), lead)
		}
	}
	base, lead = g.base(rt, g.r.a)
	g.own(rt, "unknown_fields", "empty name", withMember(base, `"":1`), invalid, lead)
	for _, k := range sortedMapKeys(shape) {
		up := strings.ToUpper(k)
		if up == k {
			continue
		}
		rest, lead := g.base(rt, g.r.a)
		vb, _ := json.Marshal(rest[k])
		delete(rest, k)
		g.own(rt, "unknown_fields", "name in upper case: "+up, withMember(rest, quote(up)+":"+string(vb)), invalidField(up), lead)
	}
}

func where(obj []any) string {
	if len(obj) == 0 {
		return ""
	}
	return " inside " + pathName(obj)
}

func joinName(obj []any, name string) string {
	if len(obj) == 0 {
		return name
	}
	return pathName(obj) + "." + name
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func sortedMapKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// withMember is base encoded with member first at the top level.
func withMember(base map[string]any, member string) []byte {
	b, _ := encodeWith(base, []any{}, member)
	return b
}

// wrongTypes are values of every other JSON type, per declared type.
var wrongTypes = map[string][]string{
	"integer": {`"1"`, `true`, `1.5`, `[]`, `{}`},
	"number":  {`"1"`, `true`, `[]`, `{}`},
	"string":  {`1`, `true`, `[]`, `{}`},
	"boolean": {`"true"`, `1`, `[]`, `{}`},
	"array":   {`"x"`, `1`, `{}`},
	"object":  {`"x"`, `1`, `[]`},
	"":        {`true`, `[]`, `{}`}, // timestamps, dates and optional fields
}

// fieldCases change one field of a valid body: wrong types, null, huge
// and negative numbers, odd strings and NUL.
func (g *gen) fieldCases(rt route) {
	for _, f := range fields(rt.Body, nil, 0) {
		name := f.name()
		for _, v := range wrongTypes[f.s.Type] {
			base, lead := g.base(rt, g.r.a)
			g.own(rt, "wrong_types", name+" = "+v, encode(with(base, f.path, rawValue(v))), invalidField(name), lead)
		}
		if f.s.Type == "array" && f.s.Items != nil && f.s.Items.Type == "string" {
			base, lead := g.base(rt, g.r.a)
			g.own(rt, "wrong_types", name+" = [1]", encode(with(base, f.path, rawValue(`[1]`))), invalid, lead)
		}
		base, lead := g.base(rt, g.r.a)
		g.own(rt, "nulls", name+" = null", encode(with(base, f.path, nil)), anyAnswer, lead)

		switch f.s.Type {
		case "integer", "number":
			for _, v := range []string{"1e400", "-1e400", "99999999999999999999", "-99999999999999999999"} {
				e := invalidField(name)
				if f.s.Type == "number" && !strings.Contains(v, "e") {
					e = anyAnswer // fits a float
				}
				base, lead := g.base(rt, g.r.a)
				g.own(rt, "numbers", name+" = "+v, encode(with(base, f.path, rawValue(v))), e, lead)
			}
			for _, v := range []string{"9223372036854775807", "-9223372036854775808", "2147483648", "-2147483649",
				"4294967296", "-1", "0", "-0", "1e2", "1.0", "0.0000001"} {
				base, lead := g.base(rt, g.r.a)
				g.own(rt, "numbers", name+" = "+v, encode(with(base, f.path, rawValue(v))), anyAnswer, lead)
			}
		case "string", "":
			for _, v := range []struct{ name, json string }{
				{"100,000 characters", quote(strings.Repeat("x", 100_000))},
				{"bidi override, zero width and emoji", `"\u202e\u200b\ud83d\ude42"`},
				{"lone surrogate escape", `"\ud800"`},
				{"SQL", quote("' OR 1=1 --")},
				{"blank", `"   "`},
				{"empty", `""`},
			} {
				base, lead := g.base(rt, g.r.a)
				g.own(rt, "strings", name+" = "+v.name, encode(with(base, f.path, rawValue(v.json))), anyAnswer, lead)
			}
			base, lead := g.base(rt, g.r.a)
			g.own(rt, "nul_bytes", name+" with an escaped NUL", encode(with(base, f.path, rawValue(`"a\u0000b"`))), anyAnswer, lead)
		}
	}
}

// sizeCases are bodies around the 1 MB ceiling, with a declared length
// and chunked, and lengths declared but never sent.
func (g *gen) sizeCases(rt route) {
	f := g.r.a
	path := g.path(rt, f, nil)
	pad := func(n int) []byte { // {"notes":"xxx…"} of exactly n bytes
		return []byte(`{"notes":"` + strings.Repeat("x", n-len(`{"notes":""}`)) + `"}`)
	}
	tooLarge := expect{Status: 413, Code: "request_too_large", Refuse: true}
	over := pad(maxBody + 1)
	k := g.own(rt, "body_size", "1 MB + 1, declared length", nil, tooLarge, nil)
	k.Req.Body = over
	k.Raw = rawRequest(rt.Method, path, f.Key, strconv.Itoa(len(over)), over)
	k = g.own(rt, "body_size", "1 MB + 1, chunked", over, tooLarge, nil)
	k.Req.Chunked = true
	for _, declared := range []string{strconv.Itoa(maxBody + 1), "10737418240"} {
		k = g.own(rt, "body_size", "declares "+declared+" bytes, sends none", nil, tooLarge, nil)
		k.Raw = rawRequest(rt.Method, path, f.Key, declared, nil)
	}
	g.own(rt, "body_size", "exactly 1 MB", pad(maxBody), expect{Not: 413}, nil)
}

// rawRequest is an HTTP/1.1 request with the given Content-Length.
func rawRequest(method, path, key, length string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: hostile\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %s\r\nConnection: close\r\n\r\n",
		method, path, key, length)
	b.Write(body)
	return b.Bytes()
}

// contentTypeCases send a valid body under other media types: 415.
func (g *gen) contentTypeCases(rt route) {
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
		"application/json; charset=latin1", "", "application/jsonx", "application/json;;;", "json", "application/xml",
		"text/json", "application/json; charset=utf-16"} {
		base, lead := g.base(rt, g.r.a)
		k := g.own(rt, "content_type", fmt.Sprintf("Content-Type %q", ct), encode(base),
			expect{Status: 415, Code: "unsupported_media_type", Refuse: true}, lead)
		if ct == "" {
			k.Req.Header.Del("Content-Type")
		} else {
			k.Req.Header.Set("Content-Type", ct)
		}
	}
}

// idempotencyCases send a valid body with keys the server must refuse.
func (g *gen) idempotencyCases(rt route) {
	for _, v := range []struct {
		name string
		vals []string
	}{
		{"empty", []string{""}}, {"256 characters", []string{strings.Repeat("k", 256)}}, {"non-ASCII", []string{"chave-é"}},
		{"tab inside", []string{"a\tb"}}, {"blank", []string{"   "}}, {"twice", []string{"k1", "k2"}},
	} {
		base, lead := g.base(rt, g.r.a)
		k := g.own(rt, "idempotency_key", "Idempotency-Key "+v.name, encode(base), badRequest, lead)
		k.Req.Header["Idempotency-Key"] = v.vals
	}
}

// bodyIDCases put ids of the other company in the body's reference
// fields: refused (404 or 422), nothing written, nothing of it shown.
func (g *gen) bodyIDCases(rt route) {
	for _, f := range fields(rt.Body, nil, 0) {
		leaf := f.path[len(f.path)-1]
		name, _ := leaf.(string)
		id, ok := g.r.b.bodyID(name)
		if !ok || id == "" {
			continue
		}
		var v any = id
		if f.s.Type == "array" {
			v = []any{id}
		}
		base, lead := g.base(rt, g.r.a)
		g.own(rt, "other_company_ids", "body "+f.name()+" of company B", encode(with(base, f.path, v)),
			expect{Refuse: true, Codes: []string{"resource_not_found", "validation_failed", "conflict"}}, lead)
	}
}
