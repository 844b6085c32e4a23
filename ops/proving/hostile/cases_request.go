package hostile

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

var notFound = expect{Status: 404, Code: "resource_not_found", Refuse: true}

// crossCompanyCases call every route with ids of the other company, both
// ways, and with one id of each company on routes that take two: 404,
// nothing written to either, nothing of the other shown.
func (g *gen) crossCompanyCases(rt route) {
	a, b := g.r.a, g.r.b
	type combo struct {
		name       string
		asker, own *fixtures // whose key asks, whose ids fill the path
		first      *fixtures // when set, the first id is this company's
	}
	combos := []combo{{"ids of company B, key of A", a, b, nil}, {"ids of company A, key of B", b, a, nil}}
	if len(rt.pathParams()) > 1 {
		// A payment of B under a sale of A, and the reverse.
		combos = append(combos, combo{"first id of A, the rest of B, key of A", a, b, a},
			combo{"first id of B, the rest of A, key of A", a, a, b})
	}
	for _, c := range combos {
		var over map[int]string
		if c.first != nil {
			segs := strings.Split(strings.TrimPrefix(rt.Path, "/"), "/")
			for j, s := range segs {
				if strings.HasPrefix(s, "{") {
					over = map[int]string{0: g.id(rt, c.first, segs[j-1])}
					break
				}
			}
		}
		var body []byte
		var lead *leadContact
		if rt.Body != nil {
			var base map[string]any
			base, lead = g.base(rt, c.asker)
			body = encode(base)
		}
		g.cases = append(g.cases, &kase{Category: "other_company_ids", Name: rt.String() + ": " + c.name,
			Req:   jsonRequest(rt.Method, g.path(rt, c.own, over), c.asker.Key, body),
			Watch: append(g.watch(rt, a), g.watch(rt, b)...), Asker: c.asker, Expect: notFound, Lead: lead})
	}
}

// malformedIDCases put ids that are not ids in each path parameter: 404
// (docs/api.md: a malformed id is answered like an unknown one).
func (g *gen) malformedIDCases(rt route) {
	a := g.r.a
	segs := strings.Split(rt.Path, "/")
	pos := 0
	for j, s := range segs {
		if !strings.HasPrefix(s, "{") {
			continue
		}
		real := g.id(rt, a, segs[j-1])
		prefix := real
		if i := strings.LastIndex(real, "_"); i >= 0 {
			prefix = real[:i+1]
		}
		values := []struct{ name, v string }{
			{"x", "x"}, {"0", "0"}, {"-1", "-1"}, {"null", "null"}, {"encoded NUL", "%00"}, {"encoded 0xFF", "%FF"},
			{"encoded é", "%C3%A9"}, {"encoded bidi override", "%E2%80%AE"}, {"encoded space", "%20"},
			{"SQL", url.PathEscape("' OR 1=1--")}, {"4,000 characters", strings.Repeat("a", 4000)},
			{"upper case", strings.ToUpper(real)}, {"one character more", real + "0"}, {"one character less", real[:len(real)-1]},
			{"well-formed, unknown", prefix + strings.Repeat("0", 26)}, {"encoded slash", "a%2Fb"},
			{"percent alone", "%25"}, {"semicolon", real + ";x=1"},
		}
		if other := a.Client; other != real {
			values = append(values, struct{ name, v string }{"id of another kind (a client)", other})
		}
		for _, v := range values {
			var body []byte
			var lead *leadContact
			if rt.Body != nil {
				var base map[string]any
				base, lead = g.base(rt, a)
				body = encode(base)
			}
			g.cases = append(g.cases, &kase{Category: "malformed_ids", Name: fmt.Sprintf("%s: {%s} = %s", rt, strings.Trim(s, "{}"), v.name),
				Req:    jsonRequest(rt.Method, g.path(rt, a, map[int]string{pos: v.v}), a.Key, body),
				Watch:  g.watch(rt, a),
				Asker:  a,
				Expect: expect{Status: 404, Codes: []string{"resource_not_found", "route_not_found"}, Refuse: true}, Lead: lead})
		}
		pos++
	}
}

// queryCases send hostile query parameters to the lists: limits out of
// range (400), cursors and filters with the other company's ids (nothing
// of it shown), broken dates and encodings.
func (g *gen) queryCases(rt route) {
	a, b := g.r.a, g.r.b
	path := g.path(rt, a, nil)
	add := func(name, query string, e expect) {
		g.cases = append(g.cases, &kase{Category: "query", Name: rt.String() + "?" + name,
			Req: jsonRequest(http.MethodGet, path+"?"+query, a.Key, nil), Asker: a, Expect: e})
	}
	for _, p := range rt.Query {
		switch {
		case p.Name == "limit":
			for _, v := range []string{"-1", "0", "101", "abc", "1e3", "99999999999999999999", "", "1.5", "%00", "%FF", "0x10", " 5"} {
				add(fmt.Sprintf("limit=%q", v), "limit="+url.QueryEscape(v), badRequest)
			}
			add("limit twice", "limit=1&limit=2", badRequest)
		case p.Name == "starting_after":
			segs := strings.Split(strings.TrimPrefix(rt.Path, "/"), "/")
			if id, ok := b.pathID(segs[len(segs)-1]); ok && id != "" {
				add("starting_after=<id of company B>", "starting_after="+id, anyAnswer)
			}
			add("starting_after=<client of company B>", "starting_after="+b.Client, anyAnswer)
			add("starting_after empty", "starting_after=", badRequest)
			for _, v := range []string{"x", strings.Repeat("z", 4000), "\x00", "\xff"} {
				add("starting_after="+short(v), "starting_after="+url.QueryEscape(v), anyAnswer)
			}
		case strings.HasSuffix(p.Name, "_id"):
			if id, ok := b.bodyID(p.Name); ok {
				add(p.Name+"=<id of company B>", p.Name+"="+id, anyAnswer)
			}
			for _, v := range []string{"\x00", strings.Repeat("z", 4000), "'; DROP TABLE sales; --"} {
				add(p.Name+"="+short(v), p.Name+"="+url.QueryEscape(v), anyAnswer)
			}
		case strings.HasSuffix(p.Name, "_after") || strings.HasSuffix(p.Name, "_before"):
			for _, v := range []string{"2026-13-45T99:99:99Z", "yesterday", "\x00", "2026-01-01T00:00:00+03:00", "99999-01-01", "-1"} {
				add(p.Name+"="+short(v), p.Name+"="+url.QueryEscape(v), refused)
			}
		default:
			for _, v := range []string{"bogus", "\x00", strings.Repeat("z", 4000), "\xff"} {
				add(p.Name+"="+short(v), p.Name+"="+url.QueryEscape(v), anyAnswer)
			}
		}
	}
	if len(rt.Query) > 0 {
		add("undeclared parameter", "hostile=1", anyAnswer)
		add("broken escape", "limit=%zz", anyAnswer)
		add("10,000 parameters", strings.Repeat("a=1&", 10_000), anyAnswer)
	}
}

func short(s string) string {
	q := fmt.Sprintf("%q", s)
	if len(q) > 24 {
		q = q[:20] + fmt.Sprintf("…(%d)", len(s))
	}
	return q
}

// methodCases call every path with the methods it does not have: 405
// with Allow.
func (g *gen) methodCases() {
	a := g.r.a
	has := map[string][]string{}
	var paths []string
	tpl := map[string]route{}
	for _, rt := range g.r.routes {
		if _, ok := has[rt.Path]; !ok {
			paths = append(paths, rt.Path)
			tpl[rt.Path] = rt
		}
		has[rt.Path] = append(has[rt.Path], rt.Method)
	}
	for _, p := range paths {
		rt := tpl[p]
		for _, m := range []string{"GET", "POST", "PATCH", "PUT", "DELETE", "OPTIONS", "TRACE", "FOO", "get"} {
			if slices.Contains(has[p], m) {
				continue
			}
			w := rt
			w.Method = "POST" // what a write through the wrong method would change
			// A literal path names its own route only: GET
			// /service_orders/from_quote is the conversion with the wrong
			// method, not an order whose id is from_quote.
			e := expect{Status: 405, Code: "method_not_allowed", Refuse: true}
			g.cases = append(g.cases, &kase{Category: "methods", Name: m + " " + p,
				Req: jsonRequest(m, g.path(rt, a, nil), a.Key, nil), Watch: g.watch(w, a), Asker: a, Expect: e})
		}
	}
}

// pathCases are paths that are not routes.
func (g *gen) pathCases() {
	a := g.r.a
	for _, p := range []string{"/public/v1/nope", "/public/v1/sales/x/y/z/w", "/public/v1/me/", "/public/v1//me",
		"/PUBLIC/V1/me", "/public/v2/me", "/public/v1/%2e%2e/%2e%2e/etc/passwd", "/public/v1/me%00", "/public/v1/me;x=1",
		"/public/v1/" + strings.Repeat("a/", 2000), "/public/v1/%FF%FE", "/", "/admin/v1/companies", "/public", "/public/v1",
		"/public/v1/./me", "/public/v1/sales/../me", "/openapi.json/x", "/docs/../../etc/passwd"} {
		g.cases = append(g.cases, &kase{Category: "paths", Name: p, Req: jsonRequest("GET", p, a.Key, nil), Asker: a,
			Expect: anyAnswer})
	}
}

// authCases send broken credentials: 401 api_key_invalid, the same body
// every time (spec 5 item 2); a lowercase scheme is fine (docs/api.md).
func (g *gen) authCases() {
	a, b := g.r.a, g.r.b
	last := a.Key[len(a.Key)-1]
	flip := "A"
	if last == 'A' {
		flip = "B"
	}
	bad := []struct {
		name string
		vals []string
	}{
		{"absent", nil}, {"empty", []string{""}}, {"scheme only", []string{"Bearer"}}, {"scheme and space", []string{"Bearer "}},
		{"Basic", []string{"Basic dXNlcjpwYXNz"}}, {"Token scheme", []string{"Token " + a.Key}},
		{"key and one more character", []string{"Bearer " + a.Key + "x"}}, {"key without its last character", []string{"Bearer " + a.Key[:len(a.Key)-1]}},
		{"checksum off by one character", []string{"Bearer " + a.Key[:len(a.Key)-1] + flip}},
		{"8,000-character key", []string{"Bearer ofk_" + strings.Repeat("A", 8000)}},
		{"50,000-character header", []string{"Bearer " + strings.Repeat("x", 50_000)}},
		{"key twice", []string{"Bearer " + a.Key + " " + a.Key}}, {"non-ASCII", []string{"Bearer ofk_çãé"}},
		{"key in lower case", []string{"Bearer " + strings.ToLower(a.Key)}}, {"other key reversed", []string{"Bearer " + reverse(b.Key)}},
		{"SQL", []string{"Bearer ' OR 1=1 --"}}, {"path", []string{"Bearer ../../etc/passwd"}}, {"encoded NUL", []string{"Bearer %00"}},
		{"two headers", []string{"Bearer " + a.Key, "Bearer " + b.Key}}, {"prefix only", []string{"Bearer ofk_"}},
	}
	targets := []struct {
		rt   route
		body bool
	}{
		{route{Method: "GET", Path: "/me"}, false},
		{route{Method: "POST", Path: "/service_orders"}, true},
		{route{Method: "GET", Path: "/sales/{id}"}, false},
	}
	skipped := 0
	for _, t := range targets {
		for _, v := range bad {
			src, ok := g.r.src.take()
			if !ok {
				skipped++
				continue
			}
			var body []byte
			if t.body {
				base, _ := g.base(t.rt, a)
				body = encode(base)
			}
			req := jsonRequest(t.rt.Method, g.path(t.rt, a, nil), "", body)
			req.Source = src
			if v.vals != nil {
				req.Header["Authorization"] = v.vals
			}
			g.cases = append(g.cases, &kase{Category: "authorization", Name: t.rt.String() + ": " + v.name, Req: req,
				Watch: g.watch(route{Method: t.rt.Method, Path: t.rt.Path}, a), SameAs: "authorization",
				Expect: expect{Status: 401, Code: "api_key_invalid", Refuse: true}})
		}
	}
	if skipped > 0 {
		g.r.note("%d authentication cases skipped: no source address left under the per-address throttle", skipped)
	}
	for _, v := range []string{"bearer " + a.Key, "BEARER " + a.Key, "Bearer " + a.Key + "  "} {
		req := jsonRequest("GET", Prefix+"/me", "", nil)
		req.Header.Set("Authorization", v)
		g.cases = append(g.cases, &kase{Category: "authorization", Name: "GET /me: scheme " + strings.Fields(v)[0], Req: req, Asker: a,
			Legit: true, Expect: expect{Status: 200}})
	}
}

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

// languageCases send broken Accept-Language values: the answer is the
// same, in some language.
func (g *gen) languageCases() {
	a, b := g.r.a, g.r.b
	for _, v := range []string{"", "*", "xx-YY", "en;q=abc", "en;q=1e999", "es;q=-1", "en;q=0", strings.Repeat("en-US,", 2000),
		",,,,,", "pt-BR;q=0.5, en;q=0.9", "zz;q=1, es;q=0.5", "\xff\xfe", "en-" + strings.Repeat("a", 10_000), "*;q=0",
		"en;q=0.5;q=0.9", "q=1", ";;;", "es-MX", "EN"} {
		req := jsonRequest("GET", Prefix+"/service_orders/"+b.Order, a.Key, nil)
		req.Header.Set("Accept-Language", v)
		g.cases = append(g.cases, &kase{Category: "accept_language", Name: "error answer, Accept-Language " + short(v), Req: req, Asker: a,
			Expect: notFound})
		req = jsonRequest("GET", Prefix+"/me", a.Key, nil)
		req.Header.Set("Accept-Language", v)
		g.cases = append(g.cases, &kase{Category: "accept_language", Name: "GET /me, Accept-Language " + short(v), Req: req, Asker: a,
			Legit: true, Expect: expect{Status: 200}})
	}
}
