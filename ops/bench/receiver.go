package bench

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Receiver is the local HTTPS webhook receiver of a run. It answers 204,
// or 503 under /fail (a failing endpoint), and notes when each webhook-id
// first arrived, for the delivery scenarios.
type Receiver struct {
	srv *httptest.Server

	mu      sync.Mutex
	arrived map[string]time.Time
	watch   map[string]chan time.Time
	count   int
}

// NewReceiver starts a receiver; Close stops it.
func NewReceiver() *Receiver {
	r := &Receiver{arrived: map[string]time.Time{}, watch: map[string]chan time.Time{}}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	// Many companies' endpoints point here at once, as at a big
	// integrator; don't let the accept backlog or keep-alives be the limit.
	r.srv.Config.ReadHeaderTimeout = 10 * time.Second
	// Offer HTTP/2, as most HTTPS receivers do: the dispatcher's client
	// then multiplexes its sends on few connections (issue 16).
	r.srv.EnableHTTP2 = true
	r.srv.StartTLS()
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	if strings.HasPrefix(req.URL.Path, "/fail") {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	now := time.Now()
	if id := req.Header.Get("webhook-id"); id != "" {
		r.mu.Lock()
		if _, dup := r.arrived[id]; !dup {
			r.arrived[id] = now
			r.count++
			if c := r.watch[id]; c != nil {
				c <- now
				delete(r.watch, id)
			}
		}
		r.mu.Unlock()
	}
	w.WriteHeader(http.StatusNoContent)
}

// URL is the receiver's base URL (https://127.0.0.1:port).
func (r *Receiver) URL() string { return r.srv.URL }

// Server is the underlying test server (its certificate is what the
// dispatcher must trust).
func (r *Receiver) Server() *httptest.Server { return r.srv }

// Close stops the receiver.
func (r *Receiver) Close() { r.srv.Close() }

// Count is how many distinct webhook-ids have arrived.
func (r *Receiver) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// Expect returns a channel that gets id's arrival time.
func (r *Receiver) Expect(id string) <-chan time.Time {
	c := make(chan time.Time, 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if at, ok := r.arrived[id]; ok {
		c <- at
		return c
	}
	r.watch[id] = c
	return c
}

// At is when id first arrived.
func (r *Receiver) At(id string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.arrived[id]
	return at, ok
}

// Forget drops what the receiver noted, between runs.
func (r *Receiver) Forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.arrived)
	clear(r.watch)
	r.count = 0
}
