package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// kase is one hostile request and what it must get back.
type kase struct {
	Category string
	Name     string
	Req      request
	// Raw, when set, is sent as is over a new TCP connection instead of
	// Req (Req still names it in the report).
	Raw    []byte
	Expect expect
	// Watch are the reads that show a write: a refused request must leave
	// every one of them unchanged.
	Watch []probe
	// Asker is the company whose key asks: no id of the other company may
	// appear in the answer.
	Asker *fixtures
	// Lead is the contact of a lead body: a refused capture must leave no
	// client with it (checked by capturing it again after the run).
	Lead *leadContact
	// SameAs groups cases whose error bodies must be byte-identical apart
	// from request_id (authentication failures, spec 5 item 2).
	SameAs string
	// Legit marks a case that should succeed (a lowercase "bearer").
	Legit bool
	// Prime, when set, is sent before the case (and before the reads it
	// watches are taken) with the case's own Idempotency-Key: the earlier
	// request whose stored answer the case must not get (a replay under
	// another API key).
	Prime *request
	// Check, when set, returns what else breaks the bar, once the case and
	// its retry are done: primed is the Prime's answer. It may write (a
	// request on the clean path with an unclean path's key); the reads the
	// case watches are taken again after it.
	Check func(ctx context.Context, r *run, k *kase, primed, a answer) []string

	answer answer        // what came back (set by the run)
	took   time.Duration // how long it took to come back
}

func (k *kase) describe() string {
	s := k.Req.String()
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

type leadContact struct{ email, phone string }

// probe is a read whose answer must not change.
type probe struct {
	admin bool
	path  string // after /public/v1 or /admin/v1
	key   string
}

func (p probe) String() string {
	if p.admin {
		return "admin GET " + p.path
	}
	return "GET " + p.path + " as " + p.key[:min(len(p.key), 12)]
}

// execute runs the cases. Cases that watch the same reads run one after
// the other (another case's accepted write would look like theirs);
// groups run in parallel.
func (r *run) execute(ctx context.Context, cases []*kase) {
	groups := groupCases(cases)
	work := make(chan []*kase)
	var wg sync.WaitGroup
	for range r.t.Concurrency {
		wg.Go(func() {
			for g := range work {
				r.runGroup(ctx, g)
			}
		})
	}
	for _, g := range groups {
		work <- g
	}
	close(work)
	wg.Wait()
}

func groupCases(cases []*kase) [][]*kase {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if parent[x] == "" || parent[x] == x {
			parent[x] = x
			return x
		}
		parent[x] = find(parent[x])
		return parent[x]
	}
	for _, k := range cases {
		for i := 1; i < len(k.Watch); i++ {
			parent[find(k.Watch[i].String())] = find(k.Watch[0].String())
		}
	}
	byRoot := map[string][]*kase{}
	var order []string
	var out [][]*kase
	for _, k := range cases {
		if len(k.Watch) == 0 {
			out = append(out, []*kase{k})
			continue
		}
		root := find(k.Watch[0].String())
		if _, ok := byRoot[root]; !ok {
			order = append(order, root)
		}
		byRoot[root] = append(byRoot[root], k)
	}
	for _, root := range order {
		out = append(out, byRoot[root])
	}
	// Long groups first, so they do not finish the run alone.
	slices.SortStableFunc(out, func(a, b []*kase) int { return len(b) - len(a) })
	return out
}

func (r *run) runGroup(ctx context.Context, g []*kase) {
	seen := map[string]string{}
	for _, k := range g {
		primed, perr := r.prime(ctx, k)
		for _, p := range k.Watch {
			if _, ok := seen[p.String()]; !ok || k.Prime != nil {
				seen[p.String()] = r.fingerprint(ctx, p)
			}
		}
		keyed := withKey(k)
		start := time.Now()
		a, err := r.send(ctx, k)
		k.took = time.Since(start)
		var bar, other []string
		if perr != nil {
			bar = append(bar, perr.Error())
		}
		if err != nil {
			bar = append(bar, "no answer: "+err.Error())
		} else {
			b, o := judge(k, a)
			bar, other = append(bar, b...), o
			bar = append(bar, r.leaks(k, a)...)
		}
		for _, p := range k.Watch {
			now := r.fingerprint(ctx, p)
			if now != seen[p.String()] && (err != nil || a.Status >= 400) {
				bar = append(bar, fmt.Sprintf("refused request changed %s", p))
			}
			seen[p.String()] = now
		}
		if keyed && err == nil && retried(a) {
			bar = append(bar, r.replay(ctx, k, a, seen)...)
		}
		if k.Check != nil && err == nil {
			bar = append(bar, k.Check(ctx, r, k, primed, a)...)
			for _, p := range k.Watch {
				seen[p.String()] = r.fingerprint(ctx, p)
			}
		}
		if k.SameAs != "" && err == nil {
			r.mu.Lock()
			if r.same[k.SameAs] == nil {
				r.same[k.SameAs] = map[string][]string{}
			}
			norm := requestIDValue.ReplaceAllString(string(a.Raw), `"request_id":"…"`)
			r.same[k.SameAs][norm] = append(r.same[k.SameAs][norm], k.Name)
			r.mu.Unlock()
		}
		k.answer = a
		r.record(k, a, bar, other)
	}
}

// prime sends the case's Prime with the case's Idempotency-Key.
func (r *run) prime(ctx context.Context, k *kase) (answer, error) {
	if k.Prime == nil {
		return answer{}, nil
	}
	p := *k.Prime
	p.Header = p.Header.Clone()
	p.Header.Set(idemHeader, k.Req.Header.Get(idemHeader))
	a, err := r.c.send(ctx, r.c.base, p)
	if err != nil {
		return a, fmt.Errorf("the earlier request: no answer: %w", err)
	}
	if a.Status >= 300 {
		return a, fmt.Errorf("the earlier request: %d %s", a.Status, snippet(a.Raw))
	}
	return a, nil
}

var requestIDValue = regexp.MustCompile(`"request_id":"[^"]*"`)

func (r *run) send(ctx context.Context, k *kase) (answer, error) {
	if k.Raw != nil {
		return r.c.raw(ctx, k.Req.Source, k.Raw, 20*time.Second)
	}
	return r.c.send(ctx, r.c.base, k.Req)
}

// leaks reports ids of the other company in an answer to the asker.
func (r *run) leaks(k *kase, a answer) []string {
	if k.Asker == nil || k.Asker.other == nil {
		return nil
	}
	body := string(a.Raw)
	var out []string
	for _, id := range k.Asker.other.ids() {
		if strings.Contains(body, id) {
			out = append(out, fmt.Sprintf("answer carries %s of company %s", id, k.Asker.other.Label))
		}
	}
	return out
}

// fingerprint reads p and reduces the answer to what a write would change:
// a list to its ids (its entries have their own probes), an object to
// itself; the fields the dispatcher updates on its own are left out.
func (r *run) fingerprint(ctx context.Context, p probe) string {
	var a answer
	var err error
	if p.admin {
		a, err = r.c.adminCall(ctx, "GET", p.path, nil)
	} else {
		a, err = r.c.public(ctx, "GET", p.path, p.key, nil)
	}
	if err != nil {
		return "error: " + err.Error()
	}
	if a.JSON == nil {
		return fmt.Sprintf("%d %s", a.Status, a.Raw)
	}
	if a.JSON["object"] == "list" {
		var ids []string
		for _, it := range asList(a.JSON["data"]) {
			id, _ := it["id"].(string)
			ids = append(ids, id)
		}
		return fmt.Sprintf("%d list %v", a.Status, ids)
	}
	b, _ := json.Marshal(a.JSON) // maps marshal in key order
	return fmt.Sprintf("%d %s", a.Status, b)
}

// probeLeads captures again the contact of every refused lead case: the
// capture must be a new record, or the refused one was written.
func (r *run) probeLeads(ctx context.Context, cases []*kase) {
	for _, k := range cases {
		if k.Lead == nil || k.answer.Status < 400 {
			continue
		}
		body := map[string]any{"name": "Lead probe", "task": nil}
		if k.Lead.email != "" {
			body["email"] = k.Lead.email
		}
		if k.Lead.phone != "" {
			body["phone"] = k.Lead.phone
		}
		a, err := r.c.public(ctx, "POST", "/leads", r.a.Key, body)
		switch {
		case err != nil:
			r.fail(k, a, []string{"lead probe: " + err.Error()}, true)
		case a.Status != 201:
			r.fail(k, a, []string{fmt.Sprintf("lead probe answered %d", a.Status)}, true)
		case a.JSON["deduplicated"] != false:
			r.fail(k, a, []string{"refused lead capture wrote a client: capturing its contact again deduplicated"}, true)
		}
	}
}

// checkSame compares the bodies of each SameAs group.
func (r *run) checkSame() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for group, bodies := range r.same {
		if len(bodies) <= 1 {
			continue
		}
		var shapes []string
		for b, names := range bodies {
			shapes = append(shapes, fmt.Sprintf("%d× %s (e.g. %s)", len(names), snippet([]byte(b)), names[0]))
		}
		r.mismatches = append(r.mismatches, Failure{Category: group, Case: "identical answers",
			Problems: append([]string{fmt.Sprintf("%d different bodies", len(bodies))}, shapes...)})
	}
}

// authBudget is how many authentication failures one source address may
// cause: the server's throttle refuses an address after 20 a minute.
const authBudget = 15

// sources hands out loopback source addresses for requests that fail
// authentication, authBudget each.
type sources struct {
	mu   sync.Mutex
	ok   bool
	next int
	used int
}

func newSources(ctx context.Context, c *client) *sources {
	s := &sources{}
	host, _, err := net.SplitHostPort(c.host)
	if err != nil {
		return s
	}
	ip := net.ParseIP(host)
	if host == "localhost" {
		ip = net.IPv4(127, 0, 0, 1)
	}
	if ip == nil || !ip.IsLoopback() || ip.To4() == nil {
		return s
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 2 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", c.host)
	if err != nil {
		return s
	}
	conn.Close()
	s.ok, s.next = true, 2
	return s
}

func (s *sources) spread() bool { return s.ok }

// take returns the source for one more authentication failure; ok is
// false when no address is left for it.
func (s *sources) take() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ok {
		if s.used >= authBudget {
			return "", false
		}
		s.used++
		return "", true
	}
	if s.used >= authBudget {
		s.next++
		s.used = 0
	}
	if s.next > 250 {
		return "", false
	}
	s.used++
	return fmt.Sprintf("127.0.0.%d", s.next), true
}

// fresh returns a source address nobody used (for the throttle case).
func (s *sources) fresh() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ok || s.next >= 250 {
		return "", false
	}
	s.next++
	s.used = authBudget // the next take moves on too
	return fmt.Sprintf("127.0.0.%d", s.next), true
}
