package hostile

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// route returns the route method path of the target's document.
func (r *run) route(method, path string) (route, bool) {
	for _, rt := range r.routes {
		if rt.Method == method && rt.Path == path {
			return rt, true
		}
	}
	return route{}, false
}

// uncleanPathCases send every write to unclean spellings of its path
// (//, /./, /x/.., a trailing /.) with a valid Idempotency-Key (issue 24):
// 404 route_not_found and nothing written; never a bare redirect, which
// the key would keep as its answer for 24 hours. For lead capture the key
// must then work on the clean path: a first answer, not a replay or 422.
func (g *gen) uncleanPathCases() {
	a := g.r.a
	for _, rt := range g.r.routes {
		if !isWrite(rt.Method) {
			continue
		}
		clean := g.path(rt, a, nil)
		rest := strings.TrimPrefix(clean, Prefix)
		for _, u := range []struct{ name, path string }{
			{"//", Prefix + "/" + rest},
			{"/./", Prefix + "/." + rest},
			{"/x/../", Prefix + "/x/.." + rest},
			{"trailing /.", clean + "/."},
		} {
			var body []byte
			var lead *leadContact
			if rt.Body != nil {
				var base map[string]any
				base, lead = g.base(rt, a)
				if rt.Path == "/leads" {
					base["task"] = nil
				}
				body = encode(base)
			}
			k := &kase{Category: "unclean_paths", Name: rt.String() + ": " + u.name + " with an Idempotency-Key",
				Req: jsonRequest(rt.Method, u.path, a.Key, body), Watch: g.watch(rt, a), Asker: a,
				Expect: expect{Status: 404, Code: "route_not_found", Refuse: true}, Lead: lead, Check: uncleanPathKept}
			if rt.Path == "/leads" {
				// The check captures the contact on the clean path itself.
				k.Lead = nil
				k.Check = uncleanPathKeyUnused(clean)
			}
			g.cases = append(g.cases, k)
		}
	}
}

// uncleanPathKept is the bar of an unclean path: no redirect.
func uncleanPathKept(_ context.Context, _ *run, k *kase, _, a answer) []string {
	if a.Status >= 300 && a.Status < 400 {
		return []string{fmt.Sprintf("a bare %d redirect to %q under an Idempotency-Key: the key keeps it as its answer", a.Status, a.Header.Get("Location"))}
	}
	return nil
}

// uncleanPathKeyUnused is uncleanPathKept, then the same request on the
// clean path with the same key: a first answer (201, not a replay), so the
// unclean one stored nothing under the key and wrote nothing.
func uncleanPathKeyUnused(clean string) func(context.Context, *run, *kase, answer, answer) []string {
	return func(ctx context.Context, r *run, k *kase, primed, a answer) []string {
		if out := uncleanPathKept(ctx, r, k, primed, a); len(out) > 0 {
			return out
		}
		req := k.Req
		req.Path = clean
		b, err := r.c.send(ctx, r.c.base, req)
		switch {
		case err != nil:
			return []string{"the clean path with the same key: no answer: " + err.Error()}
		case b.Status != http.StatusCreated || b.Header.Get("Idempotent-Replayed") != "" || b.JSON["deduplicated"] != false:
			return []string{fmt.Sprintf("the clean path with the same key: %d (replayed %q) %s, want a first capture",
				b.Status, b.Header.Get("Idempotent-Replayed"), snippet(b.Raw))}
		}
		return nil
	}
}

// crossKeyCases replay one key's write with another key of the same
// company, same Idempotency-Key and body (issue 24, decision 0010): 422
// idempotency_key_reused, never the stored answer (a lead in full to a
// key that may not read clients); the key's own rotation gets the replay.
// Only writes that create something run here: the earlier request is
// accepted, and a write to a fixture would change the other cases' records.
func (g *gen) crossKeyCases() {
	a := g.r.a
	type other struct {
		name, key string
		replay    bool
	}
	for _, c := range []struct {
		path   string
		others []other
	}{
		{"/leads", []other{{"a key with leads:create only", a.LeadsOnlyKey, false}, {"a twin key (same member and permissions)", a.TwinKey, false}}},
		{"/service_orders", []other{{"a twin key (same member and permissions)", a.TwinKey, false}}},
		{"/sales", []other{{"a twin key (same member and permissions)", a.TwinKey, false}}},
		{"/webhook_endpoints", []other{{"a twin key (same member and permissions)", a.TwinKey, false}}},
		{"/portal_sessions", []other{{"a twin key (same member and permissions)", a.TwinKey, false}}},
	} {
		rt, ok := g.r.route(http.MethodPost, c.path)
		if !ok {
			continue
		}
		for _, o := range c.others {
			base, _ := g.base(rt, a)
			if c.path == "/leads" {
				base["task"] = nil // leads:create alone may capture it
			}
			body := encode(base)
			first := jsonRequest(rt.Method, g.path(rt, a, nil), a.Key, body)
			k := &kase{Category: "idempotency_across_keys", Name: rt.String() + ": replayed by " + o.name,
				Req: jsonRequest(rt.Method, g.path(rt, a, nil), o.key, body), Prime: &first, Watch: g.watch(rt, a), Asker: a,
				Expect: expect{Status: 422, Code: "idempotency_key_reused", Refuse: true}, Check: notReplayedAcrossKeys}
			k.Req.Header.Set(idemHeader, newIdemKey())
			g.cases = append(g.cases, k)
		}
	}
	if rt, ok := g.r.route(http.MethodPost, "/leads"); ok {
		base, _ := g.base(rt, a)
		base["task"] = nil
		body := encode(base)
		first := jsonRequest(rt.Method, g.path(rt, a, nil), a.TwinKey, body)
		k := &kase{Category: "idempotency_across_keys", Name: rt.String() + ": replayed by the rotation of the key that made it",
			Req: jsonRequest(rt.Method, g.path(rt, a, nil), a.TwinRotatedKey, body), Prime: &first, Asker: a, Legit: true,
			Expect: expect{Status: 201}, Check: replayedToItsRotation}
		k.Req.Header.Set(idemHeader, newIdemKey())
		g.cases = append(g.cases, k)
	}
}

// notReplayedAcrossKeys is the bar of a replay under another key: refused
// with idempotency_key_reused, nothing of the stored answer shown.
func notReplayedAcrossKeys(_ context.Context, _ *run, _ *kase, primed, a answer) []string {
	var out []string
	if a.Status != 422 || a.errorField("code") != "idempotency_key_reused" {
		out = append(out, fmt.Sprintf("another key's Idempotency-Key and body: %d %s, want 422 idempotency_key_reused", a.Status, snippet(a.Raw)))
	}
	if a.Header.Get("Idempotent-Replayed") != "" {
		out = append(out, "another key's stored answer replayed")
	}
	for _, id := range idsIn(primed.JSON) {
		if strings.Contains(string(a.Raw), id) {
			out = append(out, "the answer shows "+id+", made for another key")
		}
	}
	return out
}

// replayedToItsRotation is the bar of a replay under a rotation of the key
// that made the answer: the stored answer.
func replayedToItsRotation(_ context.Context, _ *run, _ *kase, primed, a answer) []string {
	if p := replayProblems(primed, a); len(p) > 0 {
		return append([]string{"the rotated key's replay"}, p...)
	}
	return nil
}

// idsIn lists the ids of a JSON answer's objects ("id" members).
func idsIn(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		if id, ok := x["id"].(string); ok && id != "" {
			out = append(out, id)
		}
		for _, e := range x {
			out = append(out, idsIn(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, idsIn(e)...)
		}
	}
	return out
}
