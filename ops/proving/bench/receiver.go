package bench

import (
	"net/http"
	"strings"

	"oficina/ops/testkit/hooks"
)

// NewReceiver starts the run's local HTTPS webhook receiver (the kit's
// hooks.Receiver): it answers 204, or 503 under /fail (a failing
// endpoint), and notes when each webhook-id first succeeded, for the
// delivery scenarios. It keeps counts only, not bodies: runs are long. It
// offers HTTP/2, as most HTTPS receivers do (issue 16).
func NewReceiver() *hooks.Receiver {
	return hooks.New(hooks.Options{HTTP2: true, Answer: func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/fail") {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}})
}
