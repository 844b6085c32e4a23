package scaleout_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// arrival is one webhook request as the receiver saw it.
type arrival struct {
	path       string // /<company id>/<endpoint name>
	webhookID  string
	dispatcher string // the tagged transport's id
	at         time.Time
	status     int // what the receiver answered
}

// receiver is a local HTTPS webhook receiver (httptest TLS) for endpoints
// at /<company id>/<name>. It notes every request, and counts the
// requests in flight per endpoint path and per company, keeping maxima:
// the caps are observed here, where they matter.
type receiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	answer   func(r *http.Request) int // may block; default 204
	arrivals []arrival
	inflight map[string]int // by path and by "company:<id>"
	peak     map[string]int
	changed  chan struct{} // closed and replaced on every arrival
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{inflight: map[string]int{}, peak: map[string]int{}, changed: make(chan struct{})}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	rc.srv.Config.ReadHeaderTimeout = 10 * time.Second
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) caPEM() []byte { return certPEM(rc.srv.Certificate().Raw) }

// url is the endpoint URL for company's endpoint name.
func (rc *receiver) url(companyID, name string) string {
	return rc.srv.URL + "/" + companyID + "/" + name
}

// setAnswer replaces how the receiver answers (it may block to hold a
// request in flight).
func (rc *receiver) setAnswer(f func(r *http.Request) int) {
	rc.mu.Lock()
	rc.answer = f
	rc.mu.Unlock()
}

func companyKey(path string) string {
	co, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return "company:" + co
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	path := r.URL.Path
	rc.mu.Lock()
	for _, k := range []string{path, companyKey(path)} {
		rc.inflight[k]++
		rc.peak[k] = max(rc.peak[k], rc.inflight[k])
	}
	answer := rc.answer
	rc.mu.Unlock()

	status := http.StatusNoContent
	if answer != nil {
		status = answer(r)
	}

	rc.mu.Lock()
	for _, k := range []string{path, companyKey(path)} {
		rc.inflight[k]--
	}
	rc.arrivals = append(rc.arrivals, arrival{path: path, webhookID: r.Header.Get("webhook-id"),
		dispatcher: r.Header.Get(dispatcherHeader), at: time.Now(), status: status})
	close(rc.changed)
	rc.changed = make(chan struct{})
	rc.mu.Unlock()
	w.WriteHeader(status)
}

// inFlight is what is in flight now for a path or "company:<id>".
func (rc *receiver) inFlight(key string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.inflight[key]
}

// peakOf is the most requests ever in flight at once for key.
func (rc *receiver) peakOf(key string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.peak[key]
}

// resetPeak restarts key's maximum from what is in flight now.
func (rc *receiver) resetPeak(key string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.peak[key] = rc.inflight[key]
}

// snapshot copies the arrivals so far.
func (rc *receiver) snapshot() []arrival {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]arrival(nil), rc.arrivals...)
}

// succeeded counts the 2xx answers, all or those in [from, to).
func (rc *receiver) succeeded(from, to time.Time) int {
	n := 0
	for _, a := range rc.snapshot() {
		if a.status/100 == 2 && !a.at.Before(from) && (to.IsZero() || a.at.Before(to)) {
			n++
		}
	}
	return n
}

// waitFor waits until cond (called under no lock) holds, re-checking on
// every arrival and at least every 200 ms.
func (rc *receiver) waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		rc.mu.Lock()
		changed := rc.changed
		rc.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-changed:
		case <-time.After(200 * time.Millisecond):
		case <-deadline.C:
			return cond()
		}
	}
}
