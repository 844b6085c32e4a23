package hostile

import (
	"bytes"
	"context"
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
			for _, v := range hugeNumerals {
				e := invalidField(name)
				e.ParamCode = "out_of_range"
				base, lead := g.base(rt, g.r.a)
				g.own(rt, "huge_numerals", name+" = "+v.name, encode(with(base, f.path, rawValue(v.json))), e, lead)
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

// hugeNumerals fill most of the 1 MB body with one number (issue 24: read
// exactly, a million digits cost seconds of CPU): 422 out_of_range, and
// the run notes the slowest answer.
var hugeNumerals = []struct{ name, json string }{
	{"900,000 digits", strings.Repeat("9", 900_000)},
	{"-1.<400,000 digits>e<400,000 digits>", "-1." + strings.Repeat("0", 400_000) + "1e" + strings.Repeat("9", 400_000)},
}

// lookAlikeCases capture leads whose e-mail looks like the known lead's
// (issue 24, docs/api.md "E-mail addresses"): with an invisible or
// bidirectional character, 422 naming email and nothing written (the
// case's phone is captured again after the run and must be new); spelled
// in NFD, fullwidth or upper case, the known lead's record, deduplicated.
func (g *gen) lookAlikeCases() {
	rt, ok := g.r.route("POST", "/leads")
	if !ok {
		return
	}
	f := g.r.a
	local, domain, _ := strings.Cut(f.LookAlike, "@")
	for _, c := range []struct{ name, char string }{
		{"zero-width space", "\u200b"}, {"zero-width non-joiner", "\u200c"}, {"zero-width joiner", "\u200d"},
		{"word joiner", "\u2060"}, {"BOM", "\ufeff"}, {"soft hyphen", "\u00ad"}, {"left-to-right mark", "\u200e"},
		{"right-to-left mark", "\u200f"}, {"Arabic letter mark", "\u061c"}, {"right-to-left override", "\u202e"},
		{"left-to-right embedding", "\u202a"}, {"pop directional formatting", "\u202c"}, {"right-to-left isolate", "\u2067"},
		{"pop directional isolate", "\u2069"}, {"variation selector", "\ufe0f"}, {"Hangul filler", "\u3164"},
		{"tag", "\U000e0041"}, {"no-break space", "\u00a0"}, {"ideographic space", "\u3000"},
	} {
		for _, at := range []struct{ where, email string }{
			{"in the local part", local + c.char + "@" + domain},
			{"in the domain", local + "@" + strings.Replace(domain, ".", c.char+".", 1)},
		} {
			base, lc := g.base(rt, f)
			base["email"], base["task"] = at.email, nil
			g.own(rt, "lookalike_emails", c.name+" "+at.where, encode(base), invalidField("email"),
				&leadContact{phone: lc.phone}).Check = lookAlikeRefused
		}
	}
	for _, v := range []struct{ name, email string }{
		{"decomposed (NFD)", "jose\u0301" + local[len("jos\u00e9"):] + "@" + domain},
		{"fullwidth letters", "\uff4a\uff4f\uff53\u00e9" + local[len("jos\u00e9"):] + "@" + domain},
		{"upper case", strings.ToUpper(f.LookAlike)},
	} {
		base, _ := g.base(rt, f)
		delete(base, "phone")
		base["email"], base["task"] = v.email, nil
		k := g.own(rt, "lookalike_emails", v.name, encode(base), expect{Status: 201}, nil)
		k.Legit, k.Check = true, lookAlikeFound
	}
}

// lookAlikeRefused is the bar of a refused look-alike: 422 on email.
func lookAlikeRefused(_ context.Context, _ *run, _ *kase, _, a answer) []string {
	if a.Status != 422 || fieldCode(a, "email") != "invalid_value" {
		return []string{fmt.Sprintf("a look-alike e-mail answered %d %s, want 422 email invalid_value", a.Status, snippet(a.Raw))}
	}
	return nil
}

// lookAlikeFound is the bar of another spelling of the known address: its
// record, not a new one.
func lookAlikeFound(_ context.Context, r *run, _ *kase, _, a answer) []string {
	lead, _ := a.JSON["lead"].(map[string]any)
	if a.Status != 201 || a.JSON["deduplicated"] != true || lead["id"] != r.a.LookAlikeClient {
		return []string{fmt.Sprintf("another spelling of %+q is not its record %s: %d %s", r.a.LookAlike, r.a.LookAlikeClient, a.Status, snippet(a.Raw))}
	}
	return nil
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
