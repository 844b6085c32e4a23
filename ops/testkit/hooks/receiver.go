// Package hooks is the one local webhook receiver of the tests and the
// proving harness (bench, chaos, scale-out): an HTTPS server that answers
// as told and notes what arrived — each request, each webhook-id's first
// and last arrival and count, the requests in flight and their peaks —
// and verifies bodies and signatures with the Standard Webhooks library.
// It does not import testing, so the bench and chaos binaries use it too;
// ops/testkit wraps it for tests.
package hooks

import (
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Options says how a Receiver answers and what it keeps.
type Options struct {
	// Answer answers each request after it is noted; nil answers 204. It
	// may block to hold a request in flight.
	Answer http.HandlerFunc
	// Check, when set, is called with every body (the tests check it
	// against the OpenAPI webhooks section).
	Check func(body []byte)
	// OnArrival, when set, is called with every request before it is
	// answered (Status 0), so an answer may wait for the test to see it.
	OnArrival func(Arrival)
	// Record keeps every Arrival with its header and body (Arrivals). A
	// long run (bench) leaves it off: counts by webhook-id are kept always.
	Record bool
	// HTTP2 offers HTTP/2 as most HTTPS receivers do (the bench): the
	// dispatcher's client then multiplexes its sends on few connections.
	HTTP2 bool
}

// Arrival is one request as the receiver saw and answered it.
type Arrival struct {
	Path      string
	WebhookID string
	Header    http.Header
	Body      []byte
	At        time.Time
	Status    int // what the receiver answered
}

// Key names a delivery: one webhook-id at one endpoint path.
type Key struct{ Path, WebhookID string }

// Delivery is what arrived for one Key.
type Delivery struct {
	First, Last time.Time
	N           int // requests; above 1, duplicates
}

// Receiver is a local HTTPS webhook receiver (an httptest TLS server).
type Receiver struct {
	srv  *httptest.Server
	opts Options

	mu         sync.Mutex
	answer     http.HandlerFunc
	requests   int
	arrivals   []Arrival
	deliveries map[Key]*Delivery
	first      map[string]time.Time // by webhook-id, at any path
	watch      map[string]chan time.Time
	mismatched []string
	inflight   map[string]int // by path and by Group(path)
	peak       map[string]int
	changed    chan struct{} // closed and replaced on every arrival
}

// New starts a receiver; Close stops it.
func New(o Options) *Receiver {
	r := &Receiver{opts: o, answer: o.Answer, deliveries: map[Key]*Delivery{}, first: map[string]time.Time{},
		watch: map[string]chan time.Time{}, inflight: map[string]int{}, peak: map[string]int{}, changed: make(chan struct{})}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	// Many companies' endpoints point here at once, as at a big
	// integrator: a slow header must not hold a connection forever.
	r.srv.Config.ReadHeaderTimeout = 10 * time.Second
	r.srv.EnableHTTP2 = o.HTTP2
	r.srv.StartTLS()
	return r
}

// Group is the first segment of an endpoint path, the company in the
// /<company id>/<name> layout, as an in-flight key ("company:<id>").
func Group(path string) string {
	co, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return "company:" + co
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if r.opts.Check != nil {
		r.opts.Check(body)
	}
	a := Arrival{Path: req.URL.Path, WebhookID: req.Header.Get("webhook-id"), At: time.Now()}
	if r.opts.Record || r.opts.OnArrival != nil {
		a.Header, a.Body = req.Header.Clone(), body
	}
	var env struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &env)
	keys := []string{a.Path, Group(a.Path)}
	r.mu.Lock()
	r.requests++
	if env.ID != a.WebhookID {
		r.mismatched = append(r.mismatched, a.WebhookID+" != "+env.ID)
	}
	for _, k := range keys {
		r.inflight[k]++
		r.peak[k] = max(r.peak[k], r.inflight[k])
	}
	answer := r.answer
	r.mu.Unlock()
	if r.opts.OnArrival != nil {
		r.opts.OnArrival(a)
	}

	rec := &status{ResponseWriter: w}
	if answer != nil {
		answer(rec, req)
	}
	if rec.code == 0 {
		rec.WriteHeader(http.StatusNoContent)
	}
	a.Status = rec.code

	r.mu.Lock()
	for _, k := range keys {
		r.inflight[k]--
	}
	r.note(a)
	r.mu.Unlock()
}

// note records a; r.mu is held.
func (r *Receiver) note(a Arrival) {
	if r.opts.Record {
		r.arrivals = append(r.arrivals, a)
	}
	if a.WebhookID != "" {
		k := Key{a.Path, a.WebhookID}
		d := r.deliveries[k]
		if d == nil {
			d = &Delivery{First: a.At}
			r.deliveries[k] = d
		}
		d.N++
		d.Last = a.At
		if _, seen := r.first[a.WebhookID]; !seen && a.Status/100 == 2 {
			r.first[a.WebhookID] = a.At
			if c := r.watch[a.WebhookID]; c != nil {
				c <- a.At
				delete(r.watch, a.WebhookID)
			}
		}
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

// status keeps the answer's status code.
type status struct {
	http.ResponseWriter
	code int
}

func (s *status) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *status) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (s *status) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// URL is the receiver's base URL (https://127.0.0.1:port).
func (r *Receiver) URL() string { return r.srv.URL }

// Server is the underlying test server (its certificate is what the
// dispatcher must trust).
func (r *Receiver) Server() *httptest.Server { return r.srv }

// CAPEM is the receiver's certificate in PEM, for OFICINA_EXTRA_CA_FILE.
func (r *Receiver) CAPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw})
}

// Close stops the receiver.
func (r *Receiver) Close() { r.srv.Close() }

// SetAnswer replaces how the receiver answers.
func (r *Receiver) SetAnswer(f http.HandlerFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answer = f
}
