package contract_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"oficina/dispatch/destguard"
	"oficina/ops/proving/contract"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/tenant"
)

// seed is the generator's; OFICINA_REQUESTS_SEED replays another.
func seed(t *testing.T) uint64 {
	if s := os.Getenv("OFICINA_REQUESTS_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("OFICINA_REQUESTS_SEED: %v", err)
		}
		return n
	}
	return 26
}

// validPerOp is how many valid requests each operation gets.
const validPerOp = 14

// Issue 26 item 6: requests generated from the document are answered as
// the document says. For every operation with a body, and every list's
// query, valid instances of its schema (confirmed by the validator) are
// sent to a live server with a key holding every permission: none is
// refused with 400 or 422 except for a reason no schema can state, listed
// per operation with why (a total that must add up, a record's state or
// settings); and each instance that breaks one rule of the schema (below a
// minimum, over a maximum, an empty or blank required text, a bad pattern,
// a missing required member, an unknown one, a value outside the enum, a
// rule between members) is refused with 400 or 422 in the error envelope,
// the refusal naming that member.
func TestGeneratedRequestsAreAnsweredAsTheDocumentSays(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(document)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := contract.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	e := newRequestEnv(t)
	s := seed(t)
	t.Logf("seed %d (OFICINA_REQUESTS_SEED)", s)
	var ops []operation
	for path, item := range root.Paths {
		for method, rawOp := range item {
			var o struct {
				ID          string `json:"operationId"`
				RequestBody *struct {
					Content map[string]struct {
						Schema json.RawMessage `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
				Parameters []struct {
					Name string `json:"name"`
					In   string `json:"in"`
				} `json:"parameters"`
			}
			if err := json.Unmarshal(rawOp, &o); err != nil {
				continue
			}
			op := operation{id: o.ID, method: strings.ToUpper(method), path: path,
				ptr: "/paths/" + escape(path) + "/" + method}
			op.body = o.RequestBody != nil
			for i, p := range o.Parameters {
				if p.In == "query" {
					op.query = append(op.query, param{name: p.Name, ptr: op.ptr + "/parameters/" + strconv.Itoa(i) + "/schema"})
				}
			}
			if op.body || len(op.query) > 0 {
				ops = append(ops, op)
			}
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].id < ops[j].id })
	total := 0
	for _, op := range ops {
		c, ok := cases[op.id]
		if !ok {
			t.Errorf("%s %s (%s) has a body or a query and no case here: add one", op.method, op.path, op.id)
			continue
		}
		if c.off != "" {
			t.Logf("%s: not generated: %s", op.id, c.off)
			continue
		}
		t.Run(op.id, func(t *testing.T) {
			total += e.run(t, doc, op, c, s)
		})
	}
	t.Logf("%d requests", total)
}

type param struct{ name, ptr string }

type operation struct {
	id, method, path, ptr string
	body                  bool
	query                 []param
}

func escape(tok string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(tok) }

// refusal is a refusal of a valid request that no schema can state: the
// member it names (* for any index) and its code.
type refusal struct{ param, code string }

// opCase is how an operation is exercised.
type opCase struct {
	// fixture makes what one request needs: path parameters and the
	// values Fill gives (ids of its records). nil: the env's alone.
	fixture func(t *testing.T, e *requestEnv) map[string]any
	// allow are the refusals of valid requests no schema can state;
	// excused, when set, excuses a refusal (400 carries no member) by the
	// request's query, saying why.
	allow   []refusal
	excused func(q url.Values, r *httpkit.Response) bool
	// leave are members half the valid requests leave out, and lean
	// values they give members, so that these may succeed (a sum the
	// generator cannot hit by chance); skip are members never generated,
	// and why; always are members whose fixture value is always used (see
	// Generator.Always).
	leave, always []string
	lean          map[string]any
	skip          map[string]string
	// off, when set, says why the operation is not generated.
	off string
	// after runs after a request that succeeded (to undo what would
	// stop the next: an endpoint counts against the plan's).
	after func(t *testing.T, e *requestEnv, r *httpkit.Response)
}

// requestEnv is a live API, a company with a key holding every
// permission, and the records valid requests refer to.
type requestEnv struct {
	*httpkit.Env
	fills    map[string][]any // member path → values that exist
	rnd      *rand.Rand
	endpoint string // the endpoint of the routes on one (see endpoint)
}

// hookHost resolves to a public address in the test resolver, so the
// destination guard takes it; nothing is delivered there (no dispatcher).
const hookHost = "hooks.example.com"

func newRequestEnv(t *testing.T) *requestEnv {
	t.Helper()
	guard, err := destguard.New(destguard.Config{Resolver: testkit.DNS{hookHost: {"93.184.215.14"}}})
	if err != nil {
		t.Fatal(err)
	}
	e := &requestEnv{Env: httpkit.NewEnv(t, httpkit.APIOptions{Destinations: guard}, tenant.AllPermissions()...),
		rnd: rand.New(rand.NewPCG(26, 6))}
	id := func(r *httpkit.Response) any { return r.Body["id"] }
	member := func(typ string) any {
		return e.Co.Member(t, tenant.MemberInput{Name: testkit.Ptr(typ), Type: testkit.Ptr(typ)}).ID
	}
	plain := e.Admin(t, "POST", "/products", map[string]any{"name": "Cabo", "price_cents": 1500, "stock_quantity": 1_000_000})
	varied := e.Admin(t, "POST", "/products", map[string]any{"name": "Camisa", "price_cents": 5000,
		"variations": []map[string]any{{"name": "M", "stock_quantity": 1_000_000}}})
	variations, _ := varied.Body["variations"].([]any)
	variation, _ := variations[0].(map[string]any)
	techs := []any{member(tenant.TypeTechnician), member(tenant.TypeTechnician), member(tenant.TypeTechnician)}
	e.fills = map[string][]any{
		"client_id":                {id(e.Admin(t, "POST", "/clients", map[string]any{"name": "Cliente"}))},
		"technician_id":            techs,
		"support_technician_ids/*": techs,
		"seller_id":                {member(tenant.TypeSeller)},
		"task/assignee_id":         {e.Co.Owner.ID},
		"items/*/product_id":       {id(plain), id(varied)},
		"items/*/variation_id":     {variation["id"]},
		"account_id":               {id(e.Admin(t, "POST", "/finance_accounts", map[string]any{"name": "Caixa"}))},
		"type_id":                  {id(e.Admin(t, "POST", "/service_order_types", map[string]any{"name": "Instalação"}))},
		"url":                      {"https://" + hookHost + "/oficina"},
	}
	e.fills["payment_plan/account_id"] = e.fills["account_id"]
	// An event the key reads, for the cursor of GET /events.
	e.ok(t, "POST", "/leads", map[string]any{"name": "Lead", "phone": "+55 11 91234-5678"})
	evs, _ := e.ok(t, "GET", "/events?limit=1", nil)["data"].([]any)
	if len(evs) == 0 {
		t.Fatal("no event to page from")
	}
	ev, _ := evs[0].(map[string]any)
	e.fills["starting_after"] = []any{ev["id"]}
	return e
}

// fill is the Fill of one request: the fixture's values, then the env's.
func (e *requestEnv) fill(fx map[string]any) contract.Fill {
	return func(path string) (any, bool) {
		if v, ok := fx[path]; ok {
			return v, true
		}
		if vs, ok := e.fills[path]; ok {
			return vs[e.rnd.IntN(len(vs))], true
		}
		return nil, false
	}
}

// ok sends a request that must succeed and returns the body.
func (e *requestEnv) ok(t *testing.T, method, path string, body any) map[string]any {
	t.Helper()
	r := e.Do(t, method, path, body)
	if r.Status >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Raw)
	}
	return r.Body
}

// run sends the operation's valid requests and its mutations and returns
// how many it sent.
func (e *requestEnv) run(t *testing.T, doc *contract.Document, op operation, c opCase, s uint64) int {
	fx := map[string]any{}
	fixture := func() {
		fx = map[string]any{}
		if c.fixture != nil {
			fx = c.fixture(t, e)
		}
	}
	sum := 0
	for _, b := range op.id {
		sum = sum*31 + int(b)
	}
	g := doc.Generator(s^uint64(sum), func(path string) (any, bool) { return e.fill(fx)(path) })
	g.Always(c.always...)
	for path, why := range c.skip {
		t.Logf("%s: never generated: %s", path, why)
		g = g.Without(path)
	}
	sent, succeeded := 0, 0
	for i := range validPerOp {
		fixture()
		gv := g
		if i%2 == 0 {
			gv = g.Without(c.leave...)
			for k, v := range c.lean {
				fx[k] = v
				gv.Always(k)
			}
		}
		body, q := e.validRequest(t, gv, op)
		r := e.send(t, op, fx, body, q)
		sent++
		switch {
		case r.Status >= 500:
			t.Errorf("valid request %d: %d %s\nbody %s\nquery %s", i, r.Status, r.Raw, text(body), short(q.Encode()))
		case r.Status == 400 || r.Status == 422:
			if bad := unexpected(r, c.allow); len(bad) > 0 && (c.excused == nil || !c.excused(q, r)) {
				t.Errorf("valid request %d refused (%d) for %s, which the schema could say\nbody %s\nquery %s",
					i, r.Status, strings.Join(bad, ", "), text(body), short(q.Encode()))
			}
		case r.Status < 300:
			succeeded++
			if c.after != nil {
				c.after(t, e, r)
			}
		}
	}
	if succeeded == 0 {
		t.Errorf("none of %d valid requests succeeded: the operation was not reached", validPerOp)
	}
	// The mutations break one rule of a valid body whose references all
	// exist, on one fixture: the server refuses them before it changes
	// anything (one it takes fails the test anyway).
	fixture()
	exact := *g
	exact.FillRate = 1
	base, _ := e.validRequest(t, &exact, op)
	if op.body {
		ptr := op.ptr + "/requestBody/content/application~1json/schema"
		for _, m := range g.Invalid(ptr, base) {
			sent++
			if r := e.expectRefusal(t, op, fx, m, m.Value, nil); r.Status < 300 && c.after != nil {
				c.after(t, e, r)
			}
		}
	}
	for _, p := range op.query {
		v, err := exact.ValidAt(p.ptr, p.name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range g.Invalid(p.ptr, v) {
			vals, ok := queryValues(m.Value)
			if !ok || len(g.Check(p.ptr, reparse(g, p.ptr, vals))) == 0 {
				continue // a URL carries no null or type, only text: as sent it is valid
			}
			q := url.Values{p.name: vals}
			sent++
			m.Path = []string{p.name}
			if r := e.expectRefusal(t, op, fx, m, base, q); r.Status < 300 && c.after != nil {
				c.after(t, e, r)
			}
		}
	}
	t.Logf("%d requests: %d valid (%d succeeded), %d breaking one rule", sent, validPerOp, succeeded, sent-validPerOp)
	return sent
}

// validRequest is a valid body (nil without one) and query: each
// parameter present half the time.
func (e *requestEnv) validRequest(t *testing.T, g *contract.Generator, op operation) (any, url.Values) {
	t.Helper()
	var body any
	if op.body {
		var err error
		if body, err = g.Valid(op.ptr + "/requestBody/content/application~1json/schema"); err != nil {
			t.Fatal(err)
		}
	}
	q := url.Values{}
	for _, p := range op.query {
		if e.rnd.IntN(2) == 0 {
			continue
		}
		v, err := g.ValidAt(p.ptr, p.name)
		if err != nil {
			t.Fatal(err)
		}
		if vals, ok := queryValues(v); ok {
			q[p.name] = vals
		}
	}
	return body, q
}

// expectRefusal sends a request that breaks m and wants 400 or 422 in the
// error envelope (the kit checks every answer against the document), a
// 422 naming the member m broke.
func (e *requestEnv) expectRefusal(t *testing.T, op operation, fx map[string]any, m contract.Mutation, body any, q url.Values) *httpkit.Response {
	t.Helper()
	r := e.send(t, op, fx, body, q)
	code := r.ErrorCode()
	switch {
	case r.Status == 400 && code == "invalid_request":
	case r.Status == 422 && code == "validation_failed":
		if !names(r, m.Names()) {
			t.Errorf("%s: refused for another member: %s\nbody %s", m.Rule, r.Raw, text(body))
		}
	default:
		t.Errorf("%s: %d %s, want 400 or 422\nbody %s\nquery %s", m.Rule, r.Status, r.Raw, text(body), short(q.Encode()))
	}
	return r
}

// send sends one request with the fixture's path parameters.
func (e *requestEnv) send(t *testing.T, op operation, fx map[string]any, body any, q url.Values) *httpkit.Response {
	t.Helper()
	path := strings.TrimPrefix(op.path, "/public/v1")
	for k, v := range fx {
		if s, ok := v.(string); ok {
			path = strings.ReplaceAll(path, "{"+k+"}", url.PathEscape(s))
		}
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	req := httpkit.Req{Method: op.method, Path: path, Key: e.Key}
	if op.body {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		req.Body = b
	}
	return e.API.Do(t, req)
}

// fieldErrors are errors[] of an envelope as "param code".
func fieldErrors(r *httpkit.Response) [][2]string {
	env, _ := r.Body["error"].(map[string]any)
	list, _ := env["errors"].([]any)
	var out [][2]string
	for _, x := range list {
		m, _ := x.(map[string]any)
		p, _ := m["param"].(string)
		c, _ := m["code"].(string)
		out = append(out, [2]string{p, c})
	}
	return out
}

// unexpected are the refusals of r no entry of allow explains.
func unexpected(r *httpkit.Response, allow []refusal) []string {
	errs := fieldErrors(r)
	if len(errs) == 0 {
		errs = [][2]string{{"", r.ErrorCode()}}
	}
	var out []string
	for _, fe := range errs {
		if !slices.Contains(allow, refusal{anyIndex(fe[0]), fe[1]}) {
			out = append(out, fmt.Sprintf("%s %s", fe[0], fe[1]))
		}
	}
	return out
}

// anyIndex is param with every index as [*]: items[*].name.
func anyIndex(s string) string {
	var sb strings.Builder
	in := false
	for _, c := range s {
		switch {
		case c == '[':
			in = true
			sb.WriteString("[*]")
		case c == ']':
			in = false
		case !in:
			sb.WriteRune(c)
		}
	}
	return sb.String()
}

// names reports whether a refusal names one of params, a member inside it,
// or, for an item, its list ("events" for events[0]); not another member
// holding it: a total that does not add up, refused on installments, does
// not explain a broken installments[0].amount_cents.
func names(r *httpkit.Response, params []string) bool {
	for _, fe := range fieldErrors(r) {
		for _, p := range params {
			list := p
			for strings.HasSuffix(list, "]") {
				list = list[:strings.LastIndexByte(list, '[')]
			}
			if fe[0] == p || fe[0] == list || strings.HasPrefix(fe[0], p) && (fe[0][len(p)] == '.' || fe[0][len(p)] == '[') {
				return true
			}
		}
	}
	return false
}

// queryValues is v as a query parameter's values (false: a URL cannot say
// it, as null or an object).
func queryValues(v any) ([]string, bool) {
	switch x := v.(type) {
	case string:
		return []string{x}, true
	case json.Number:
		return []string{x.String()}, true
	case bool:
		return []string{strconv.FormatBool(x)}, true
	case []any:
		var out []string
		for _, e := range x {
			s, ok := queryValues(e)
			if !ok || len(s) != 1 {
				return nil, false
			}
			out = append(out, s...)
		}
		return out, true
	}
	return nil, false
}

// reparse reads query values back as the parameter's schema types them,
// as the server does: several values, a number, a boolean or a text.
func reparse(g *contract.Generator, ptr string, vals []string) any {
	ts := g.Types(ptr)
	switch {
	case slices.Contains(ts, "array"):
		out := make([]any, len(vals))
		for i, s := range vals {
			out[i] = s
		}
		return out
	case len(vals) != 1:
		return vals
	case slices.Contains(ts, "integer"):
		if _, err := strconv.ParseInt(vals[0], 10, 64); err == nil {
			return json.Number(vals[0])
		}
	case slices.Contains(ts, "boolean"):
		if b, err := strconv.ParseBool(vals[0]); err == nil && (vals[0] == "true" || vals[0] == "false") {
			return b
		}
	}
	return vals[0]
}

// short cuts a long query for messages.
func short(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func text(v any) string {
	if v == nil {
		return "(none)"
	}
	b, _ := json.Marshal(v)
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}
