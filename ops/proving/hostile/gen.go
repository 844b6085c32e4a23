package hostile

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// gen builds the cases from the route table.
type gen struct {
	r     *run
	cases []*kase
	nonce uint32 // keeps lead contacts of one run apart from another's
	leads int
	noted map[string]bool
}

// generate lists every case of the run.
func (r *run) generate() []*kase {
	var n [4]byte
	_, _ = rand.Read(n[:])
	g := &gen{r: r, nonce: binary.BigEndian.Uint32(n[:]) % 1000, noted: map[string]bool{}}
	// Cases of one record run in this order: those that must be refused
	// first, the field cases last, since some of those are accepted and
	// change the record (a cancellation note with odd characters cancels).
	for _, rt := range r.routes {
		if len(rt.pathParams()) > 0 {
			g.crossCompanyCases(rt)
			g.malformedIDCases(rt)
		}
		if rt.Body != nil {
			g.bodyIDCases(rt)
			g.decodeCases(rt)
			g.sizeCases(rt)
			g.contentTypeCases(rt)
			g.idempotencyCases(rt)
		}
		if rt.Method == http.MethodGet {
			g.queryCases(rt)
		}
	}
	g.methodCases()
	g.pathCases()
	g.authCases()
	g.languageCases()
	g.protocolCases()
	g.manyHeaderCases()
	g.uncleanPathCases()
	g.crossKeyCases()
	g.lookAlikeCases()
	for _, rt := range r.routes {
		if rt.Body != nil {
			g.fieldCases(rt)
		}
	}
	return g.cases
}

func (g *gen) noteOnce(key, format string, args ...any) {
	if !g.noted[key] {
		g.noted[key] = true
		g.r.note(format, args...)
	}
}

// path fills the template with f's ids; over, when set, replaces the
// parameter at that position.
func (g *gen) path(rt route, f *fixtures, over map[int]string) string {
	segs := strings.Split(rt.Path, "/")
	n := 0
	for i, s := range segs {
		if !strings.HasPrefix(s, "{") {
			continue
		}
		if v, ok := over[n]; ok {
			segs[i] = v
		} else {
			segs[i] = g.id(rt, f, segs[i-1])
		}
		n++
	}
	return Prefix + strings.Join(segs, "/")
}

func (g *gen) id(rt route, f *fixtures, collection string) string {
	if id, ok := f.pathID(collection); ok {
		return id
	}
	g.noteOnce("id "+collection, "no record of %q to point at (route %s): its cases use an unknown id", collection, rt)
	return "zz_" + strings.Repeat("0", 26)
}

// base returns a valid body of rt for f, with a contact of its own when
// rt captures leads.
func (g *gen) base(rt route, f *fixtures) (map[string]any, *leadContact) {
	mk, ok := bases[rt.String()]
	if !ok {
		if len(rt.Body.Props) > 0 {
			g.noteOnce("base "+rt.String(), "no valid body known for %s: its field cases judge decoding only", rt)
		}
		return map[string]any{}, nil
	}
	b := mk(f)
	if rt.Path != "/leads" {
		return b, nil
	}
	g.leads++
	lc := &leadContact{email: fmt.Sprintf("lead-%d-%d@hostile.test", g.nonce, g.leads),
		phone: fmt.Sprintf("+55 11 9%03d%05d", g.nonce, g.leads)}
	b["email"], b["phone"] = lc.email, lc.phone
	return b, lc
}

// watch lists the reads that show a write of rt to f's records: the GET
// routes under the route's first record ("/sales/{id}" for anything
// under a sale), or the collection it creates into, plus known effects
// elsewhere (a converted quote makes a sale).
func (g *gen) watch(rt route, f *fixtures) []probe {
	if rt.Method == http.MethodGet {
		return nil
	}
	segs := strings.Split(strings.TrimPrefix(rt.Path, "/"), "/")
	root := "/" + segs[0]
	for i, s := range segs {
		if strings.HasPrefix(s, "{") {
			root = "/" + strings.Join(segs[:i+1], "/")
			break
		}
	}
	if slices.Contains(appendedByEveryWrite, strings.Split(root+"/", "/")[1]) {
		return nil // its reads change with the other cases' writes
	}
	var out []probe
	add := func(tpl route) {
		path := strings.TrimPrefix(g.path(tpl, f, nil), Prefix)
		if len(tpl.Query) > 0 {
			path += "?limit=100"
		}
		out = append(out, probe{path: path, key: f.Key})
	}
	for _, o := range g.r.routes {
		if o.Method != http.MethodGet {
			continue
		}
		if o.Path == root || (strings.Contains(root, "{") && strings.HasPrefix(o.Path, root+"/")) {
			add(o)
		}
	}
	for _, extra := range sideEffects[rt.String()] {
		for _, o := range g.r.routes {
			if o.Method == http.MethodGet && o.Path == extra {
				add(o)
			}
		}
	}
	if len(out) == 0 && rt.Path != "/leads" {
		g.noteOnce("watch "+rt.String(), "no read shows a write of %s: its refused requests are not checked for writes", rt)
	}
	return out
}

// appendedByEveryWrite are the roots of reads that any write of the
// company changes (the events log, GET /events): they cannot tell whether
// one refused request wrote. Their routes are reads only.
var appendedByEveryWrite = []string{"events"}

// sideEffects are writes a route makes outside its own path.
var sideEffects = map[string][]string{
	"POST /quotes/{id}/convert_to_sale": {"/sales"},
}

// adminProbes adds the quotes a conversion consumes, read as the dashboard.
func (g *gen) adminProbes(rt route, f *fixtures) []probe {
	switch rt.String() {
	case "POST /quotes/{id}/convert_to_sale":
		return []probe{{admin: true, path: "/companies/" + f.ID + "/quotes/" + f.ConvertQuote}}
	case "POST /service_orders/from_quote":
		return []probe{{admin: true, path: "/companies/" + f.ID + "/quotes/" + f.FromQuote}}
	}
	return nil
}

// jsonRequest is a request of f with a JSON body.
func jsonRequest(method, path, key string, body []byte) request {
	h := http.Header{}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		h.Set("Content-Type", "application/json")
	}
	return request{Method: method, Path: path, Header: h, Body: body}
}

// own adds a case of company A on its own records of rt.
func (g *gen) own(rt route, category, name string, body []byte, e expect, lead *leadContact) *kase {
	f := g.r.a
	k := &kase{Category: category, Name: rt.String() + ": " + name,
		Req:   jsonRequest(rt.Method, g.path(rt, f, nil), f.Key, body),
		Watch: append(g.watch(rt, f), g.adminProbes(rt, f)...), Asker: f, Expect: e, Lead: lead}
	g.cases = append(g.cases, k)
	return k
}

// fieldRef is a field of a body schema and where it sits.
type fieldRef struct {
	path []any
	s    *schema
}

func (f fieldRef) name() string { return pathName(f.path) }

// fields lists the properties of s, and of the objects and array
// elements inside it, two levels down.
func fields(s *schema, path []any, depth int) []fieldRef {
	var out []fieldRef
	for _, name := range s.propNames() {
		ps := s.Props[name]
		p := append(slices.Clone(path), name)
		out = append(out, fieldRef{p, ps})
		if depth >= 2 {
			continue
		}
		switch {
		case ps.Type == "object" && len(ps.Props) > 0:
			out = append(out, fields(ps, p, depth+1)...)
		case ps.Type == "array" && ps.Items != nil && len(ps.Items.Props) > 0:
			out = append(out, fields(ps.Items, append(p, 0), depth+1)...)
		}
	}
	return out
}

// objectsIn lists the paths of the objects a base body holds (itself
// first), for the cases that add members inside them.
func objectsIn(v any, path []any) [][]any {
	var out [][]any
	switch x := v.(type) {
	case map[string]any:
		out = append(out, path)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, objectsIn(x[k], append(slices.Clone(path), k))...)
		}
	case []any:
		if len(x) > 0 {
			out = append(out, objectsIn(x[0], append(slices.Clone(path), 0))...)
		}
	}
	return out
}
