package scaleout_test

import (
	"net/http"
	"testing"

	"oficina/ops/testkit"
	"oficina/ops/testkit/hooks"
)

// newReceiver is the kit's webhook receiver for endpoints at
// /<company id>/<name>, keeping every arrival: it counts the requests in
// flight per endpoint path and per company (hooks.Group), keeping maxima,
// so the caps are observed here, where they matter.
func newReceiver(t *testing.T) *hooks.Receiver {
	t.Helper()
	return testkit.NewReceiver(t, hooks.Options{Record: true})
}

// hookURL is the endpoint URL for company's endpoint name.
func hookURL(rc *hooks.Receiver, companyID, name string) string {
	return rc.URL() + "/" + companyID + "/" + name
}

// answerWith answers with the status f returns (f may block to hold a
// request in flight).
func answerWith(f func(r *http.Request) int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(f(r)) }
}

// dispatcherOf is the tagged transport's id on an arrival.
func dispatcherOf(a hooks.Arrival) string { return a.Header.Get(dispatcherHeader) }
