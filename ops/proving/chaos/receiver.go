package chaos

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

// receiver is the webhook receiver of the run: an httptest TLS server
// answering 204 to everything under /hooks/<company id>, noting each
// delivery by company and webhook-id — when it first arrived and how many
// times.
type receiver struct {
	srv *httptest.Server

	mu         sync.Mutex
	got        map[string]*arrival // "<company>/<webhook-id>"
	requests   int
	mismatched []string // webhook-id header differing from the body's id
}

type arrival struct {
	first, last time.Time
	n           int
}

func newReceiver() *receiver {
	r := &receiver{got: map[string]*arrival{}}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	r.srv.Config.ReadHeaderTimeout = 10 * time.Second
	r.srv.StartTLS()
	return r
}

func deliveryKey(companyID, webhookID string) string { return companyID + "/" + webhookID }

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	now := time.Now()
	id := req.Header.Get("webhook-id")
	var env struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &env)
	co := strings.TrimPrefix(req.URL.Path, "/hooks/")
	r.mu.Lock()
	r.requests++
	if env.ID != id {
		r.mismatched = append(r.mismatched, id+" != "+env.ID)
	}
	k := deliveryKey(co, id)
	a := r.got[k]
	if a == nil {
		a = &arrival{first: now}
		r.got[k] = a
	}
	a.n++
	a.last = now
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// hookURL is the endpoint URL of a company.
func (r *receiver) hookURL(companyID string) string { return r.srv.URL + "/hooks/" + companyID }

// caPEM is the receiver's certificate, for OFICINA_EXTRA_CA_FILE.
func (r *receiver) caPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw})
}

// arrived returns the first arrival and the count of a delivery.
func (r *receiver) arrived(companyID, webhookID string) (time.Time, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a := r.got[deliveryKey(companyID, webhookID)]; a != nil {
		return a.first, a.n
	}
	return time.Time{}, 0
}

// snapshot copies what arrived so far.
func (r *receiver) snapshot() (got map[string]arrival, requests int, mismatched []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	got = make(map[string]arrival, len(r.got))
	for k, a := range r.got {
		got[k] = *a
	}
	return got, r.requests, append([]string(nil), r.mismatched...)
}

func (r *receiver) close() { r.srv.Close() }
