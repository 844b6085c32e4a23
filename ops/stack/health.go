package stack

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"oficina/http/wire"
	"oficina/schema/apierr"
)

// Health statuses and dependency states (docs/operating.md).
const (
	healthOK          = "ok"          // every dependency up
	healthDegraded    = "degraded"    // NATS down: requests are served, events wait, limits count in process
	healthUnavailable = "unavailable" // the database down: requests answer 503
	healthStarting    = "starting"
	healthStopping    = "stopping"
	depUp             = "up"
	depDown           = "down"
)

// healthBody is what /healthz and /readyz answer: the process's status and
// each dependency's state, never a driver's message (it names the role,
// the database and the host); that goes to the log. A 503 also carries
// the error envelope (service_unavailable, in the request's language),
// like every error of every listener.
type healthBody struct {
	Status string                `json:"status"`
	Checks map[string]string     `json:"checks,omitempty"`
	Error  *apierr.EnvelopeError `json:"error,omitempty"`
}

// health registers /healthz (liveness: 200 while the process runs, even
// with a dependency down — restarting it would not bring one back) and
// /readyz (readiness: 503 while the database is down, since no request can
// be served; NATS down only degrades, since writes and limits go on
// without it).
func (s *Stack) health(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if st := s.phase(); st != "" {
			writeHealth(w, r, http.StatusServiceUnavailable, healthBody{Status: st})
			return
		}
		b := s.checks(r.Context(), 500*time.Millisecond)
		writeHealth(w, r, http.StatusOK, b)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if st := s.phase(); st != "" {
			writeHealth(w, r, http.StatusServiceUnavailable, healthBody{Status: st})
			return
		}
		b := s.checks(r.Context(), 2*time.Second)
		status := http.StatusOK
		if b.Status == healthUnavailable {
			status = http.StatusServiceUnavailable
		}
		writeHealth(w, r, status, b)
	})
}

// phase is "starting" or "stopping" while the process does not serve.
func (s *Stack) phase() string {
	switch {
	case s.stopping.Load():
		return healthStopping
	case !s.ready.Load():
		return healthStarting
	}
	return ""
}

// checks pings the database (bounded by within) and reads the NATS
// connection's state; a change of either is logged with its detail.
func (s *Stack) checks(ctx context.Context, within time.Duration) healthBody {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	b := healthBody{Status: healthOK, Checks: map[string]string{}}
	err := s.db.PingContext(ctx)
	b.Checks["database"] = s.note("database", err)
	if s.nc != nil {
		var nerr error
		if !s.nc.IsConnected() {
			nerr = natsDown{s.nc.Status().String(), s.nc.LastError()}
		}
		b.Checks["nats"] = s.note("nats", nerr)
	}
	switch {
	case b.Checks["database"] == depDown:
		b.Status = healthUnavailable
	case b.Checks["nats"] == depDown:
		b.Status = healthDegraded
	}
	return b
}

type natsDown struct {
	status string
	last   error
}

func (e natsDown) Error() string {
	if e.last != nil {
		return "nats " + e.status + ": " + e.last.Error()
	}
	return "nats " + e.status
}

// depStates remembers each dependency's last state, so the log says when
// one goes down (with the error) and when it is back, not every probe.
type depStates struct {
	mu  sync.Mutex
	was map[string]string
}

// note records name's state after a check that gave err.
func (s *Stack) note(name string, err error) string {
	state := depUp
	if err != nil {
		state = depDown
	}
	d := &s.deps
	d.mu.Lock()
	if d.was == nil {
		d.was = map[string]string{}
	}
	prev := d.was[name]
	d.was[name] = state
	d.mu.Unlock()
	switch {
	case state == depDown && prev != depDown:
		s.log.Warn("health: dependency down", "dependency", name, "error", err)
	case state == depUp && prev == depDown:
		s.log.Info("health: dependency up again", "dependency", name)
	}
	return state
}

func writeHealth(w http.ResponseWriter, r *http.Request, status int, b healthBody) {
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", wire.RetryAfterUnavailable)
		_, env := apierr.Default.Envelope(apierr.New(apierr.ServiceUnavailable), wire.Lang(wire.WithLanguage(r).Context()), "")
		b.Error = &env.Error
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(b)
}
