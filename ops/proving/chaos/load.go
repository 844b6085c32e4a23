package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"oficina/ops/proving/pace"
	"oficina/ops/testkit/hooks"
	"strings"
	"sync"
	"time"
)

// api is the HTTP client of the run: the operator's admin calls and the
// companies' public calls.
type api struct {
	client     *http.Client
	adminToken string
}

// call sends a JSON request and decodes a JSON answer into out when the
// status is want.
func (a *api) call(ctx context.Context, method, url, bearer string, body, out any, want int) error {
	status, raw, err := a.do(ctx, method, url, bearer, body)
	if err != nil {
		return err
	}
	if status != want {
		return fmt.Errorf("%s %s: %d %s", method, url, status, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

func (a *api) do(ctx context.Context, method, url, bearer string, body any) (int, []byte, error) {
	ans, err := a.send(ctx, method, url, bearer, body)
	return ans.status, ans.body, err
}

// answer is a response as the run keeps it.
type answer struct {
	status int
	body   []byte
	header http.Header
}

func (a *api) send(ctx context.Context, method, url, bearer string, body any) (answer, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return answer{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, raw, resp.Header}, err
}

// loadCeiling is the rate ceiling of the load's companies: far above what
// they send (10 a second), so it never refuses, but every write goes
// through the limiter as a real company's does.
const loadCeiling = 100_000

// company is a tenant of the run: a Supra company with a rate ceiling, an
// owner key, and (recv set) one endpoint subscribed to client.created at
// the receiver — so each lead captured records exactly one delivery.
type company struct {
	id, key string
	// ordered: its endpoint orders by object, and its writes create a few
	// service orders and then update them again and again (each a chain of
	// service_order.updated events); their ids are kept here.
	ordered bool
	orders  *orderPool
}

// orderPool is the service orders an ordered company's writes update.
type orderPool struct {
	mu  sync.Mutex
	ids []string
}

// orderedObjects is how many service orders an ordered company's load
// updates in turn, once it has made them.
const orderedObjects = 3

func (p *orderPool) add(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ids) < orderedObjects {
		p.ids = append(p.ids, id)
	}
}

// pick is the order the n-th write updates, or "" while there are too few
// (and for the writes outside the load, n < 0, which create).
func (p *orderPool) pick(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ids) < orderedObjects || n < 0 {
		return ""
	}
	return p.ids[n%len(p.ids)]
}

// newCompany makes a company with an owner and a key and, when recv is
// set, an endpoint at recv for its client events — for its service order
// events, ordered by object, when ordered.
func (a *api) newCompany(ctx context.Context, adminBase, publicBase string, recv *hooks.Receiver, i, ceiling int, ordered bool) (company, error) {
	var co, m struct{ ID string }
	if err := a.call(ctx, "POST", adminBase+"/admin/v1/companies", a.adminToken,
		map[string]any{"name": fmt.Sprintf("Chaos %d", i), "plan": "supra", "rate_limit_override": ceiling}, &co, 201); err != nil {
		return company{}, err
	}
	if err := a.call(ctx, "POST", adminBase+"/admin/v1/companies/"+co.ID+"/members", a.adminToken,
		map[string]any{"name": "Owner", "role": "OWNER"}, &m, 201); err != nil {
		return company{}, err
	}
	var k struct{ Secret string }
	if err := a.call(ctx, "POST", adminBase+"/admin/v1/companies/"+co.ID+"/api_keys", a.adminToken,
		map[string]any{"member_id": m.ID, "name": "chaos", "permissions": []string{"leads:create", "clients:read",
			"service_orders:create", "service_orders:read", "service_orders:update", "webhooks:create", "webhooks:read"}}, &k, 201); err != nil {
		return company{}, err
	}
	if recv == nil {
		return company{id: co.ID, key: k.Secret}, nil
	}
	endpoint := map[string]any{"url": hookURL(recv, co.ID), "events": []string{"client.created"}}
	if ordered {
		endpoint["events"], endpoint["ordering"] = []string{"service_order.*"}, "object"
	}
	if err := a.call(ctx, "POST", publicBase+"/public/v1/webhook_endpoints", k.Secret, endpoint, nil, 201); err != nil {
		return company{}, err
	}
	return company{id: co.ID, key: k.Secret, ordered: ordered, orders: &orderPool{}}, nil
}

// captureLead is one POST /leads without a task: one client.created (one
// POST /service_orders, one service_order.created, for an ordered
// company).
func (a *api) captureLead(ctx context.Context, publicBase string, co company, n int) (int, []byte, error) {
	ans, err := a.write(ctx, publicBase, co, n)
	return ans.status, ans.body, err
}

// write is the n-th write of co: a lead capture; for an ordered company a
// new service order until it has orderedObjects, then a PATCH of one of
// them (one service_order.updated: the notes change every time). Each is
// one delivery.
func (a *api) write(ctx context.Context, publicBase string, co company, n int) (answer, error) {
	if !co.ordered {
		return a.lead(ctx, publicBase, co, n)
	}
	if id := co.orders.pick(n); id != "" {
		return a.send(ctx, "PATCH", publicBase+"/public/v1/service_orders/"+id, co.key,
			map[string]any{"internal_notes": fmt.Sprintf("write %d", n)})
	}
	ans, err := a.send(ctx, "POST", publicBase+"/public/v1/service_orders", co.key,
		map[string]any{"client_name": fmt.Sprintf("Chaos client %d", n)})
	if err == nil && ans.status == http.StatusCreated {
		var o struct{ ID string }
		if json.Unmarshal(ans.body, &o) == nil && o.ID != "" {
			co.orders.add(o.ID)
		}
	}
	return ans, err
}

func (a *api) lead(ctx context.Context, publicBase string, co company, n int) (answer, error) {
	return a.send(ctx, "POST", publicBase+"/public/v1/leads", co.key, map[string]any{
		"name": fmt.Sprintf("Lead %d", n), "email": fmt.Sprintf("lead-%d@%s.example.com", n, co.id), "task": nil})
}

// Writes counts the load's requests.
type Writes struct {
	Attempted int
	Committed int            // 201 (a capture) or 200 (an ordered company's PATCH)
	Refused   map[int]int    // other answers, by status
	Failed    int            // no answer (connection refused, reset, time-out)
	Errors    map[string]int // Failed by kind of error
	// Problems are the refused and failed writes with their time, to lay
	// them against the faults.
	Problems []WriteProblem
	// Latencies are the answered writes' times (sent, and how long the
	// answer took), to compare outages with steady running.
	Latencies []Latency
	// NoLimitHeaders counts answers through the rate limit (201, 429)
	// without RateLimit-Limit.
	NoLimitHeaders int
}

// Latency is one answered write.
type Latency struct {
	At time.Time
	D  time.Duration
}

// WriteProblem is a write that did not answer 201.
type WriteProblem struct {
	At     time.Time
	Status int    // 0: no answer
	Err    string // the kind of error without an answer
	Body   string // the start of the answer
}

// load writes leads at a steady pace, one writer per company, spread over
// the API processes, until stopped.
type load struct {
	driver *pace.Driver

	mu sync.Mutex
	w  Writes
}

func startLoad(ctx context.Context, a *api, bases []string, cos []company, perSecond float64) *load {
	l := &load{w: Writes{Refused: map[int]int{}, Errors: map[string]int{}}}
	every := time.Duration(float64(time.Second) * float64(len(cos)) / perSecond)
	l.driver = pace.Start(ctx, len(cos), every, func(ctx context.Context, i, n int) {
		sent := time.Now()
		ans, err := a.write(ctx, bases[(i+n)%len(bases)], cos[i], n)
		l.note(sent, ans, err)
	})
	return l
}

func (l *load) note(sent time.Time, ans answer, err error) {
	now := time.Now()
	status, body := ans.status, ans.body
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Attempted++
	if err == nil {
		l.w.Latencies = append(l.w.Latencies, Latency{At: sent, D: now.Sub(sent)})
		if (status == http.StatusCreated || status == http.StatusOK || status == http.StatusTooManyRequests) && ans.header.Get("RateLimit-Limit") == "" {
			l.w.NoLimitHeaders++
		}
	}
	switch {
	case err != nil:
		l.w.Failed++
		l.w.Errors[errKind(err)]++
		l.w.Problems = append(l.w.Problems, WriteProblem{At: now, Err: errKind(err)})
	case status == http.StatusCreated || status == http.StatusOK: // a capture, or an ordered company's PATCH
		l.w.Committed++
	default:
		l.w.Refused[status]++
		l.w.Problems = append(l.w.Problems, WriteProblem{At: now, Status: status, Body: string(body[:min(len(body), 300)])})
	}
}

// errKind shortens an error to its class, for counting.
func errKind(err error) string {
	s := err.Error()
	for _, k := range []string{"connection refused", "connection reset", "EOF", "Client.Timeout", "context deadline exceeded"} {
		if strings.Contains(s, k) {
			return k
		}
	}
	return s
}

// stop ends the load once the requests in flight are answered (a request
// cut off could commit unseen) and returns the counts.
func (l *load) stop() Writes {
	l.driver.Stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w
}
