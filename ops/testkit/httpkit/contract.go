package httpkit

import (
	"bytes"
	"net/http"
	"sync"
	"testing"

	"oficina/http/public"
	"oficina/ops/proving/contract"
	"oficina/ops/testkit"
)

// Every answer of a test's public server is checked against the OpenAPI
// document that server serves (ops/proving/contract). A mismatch is reported to
// the test that made the call: the server side records it under the
// answer's Request-Id and API.Do claims it; answers to requests sent some
// other way (a raw http.Client, a generated client) are reported to the
// test that started the server when it ends. A mismatch fails that test;
// every checked answer is counted, and the counts are written for make
// test to print (contract.ReportEnv).

// responses counts this test binary's checked responses.
var responses contract.Tally

type contractCheck struct {
	owner  testing.TB
	doc    *contract.Document
	tally  *contract.Tally
	report string // name of the binary's summary ("": none)

	mu      sync.Mutex
	pending map[string][]contract.Mismatch // by Request-Id, until claimed
}

// newContractCheck prepares the checks for one public server; nil for
// benchmarks, whose figures should not carry the validator's cost.
func newContractCheck(t testing.TB, pub *public.Server) *contractCheck {
	t.Helper()
	if _, bench := t.(*testing.B); bench {
		return nil
	}
	doc, err := testkit.Document(pub.OpenAPI())
	if err != nil {
		t.Fatalf("httpkit: contract: %v", err)
	}
	c := &contractCheck{owner: t, doc: doc, tally: &responses,
		report: contract.PackageName(), pending: map[string][]contract.Mismatch{}}
	t.Cleanup(c.finish)
	return c
}

// wrap checks each answer of next once it is written.
func (c *contractCheck) wrap(next http.Handler) http.Handler {
	if c == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.header == nil {
			rec.snapshot(http.StatusOK)
		}
		res := c.doc.Check(contract.Response{Method: r.Method, Path: r.URL.Path, Status: rec.status,
			Header: rec.header, Body: rec.body.Bytes()})
		c.tally.Add(c.owner.Name(), res)
		if len(res.Mismatches) == 0 {
			return
		}
		id := rec.header.Get("Request-Id")
		if id == "" {
			testkit.ReportMismatches(c.owner, res.Mismatches, "an answer without Request-Id")
			return
		}
		c.mu.Lock()
		c.pending[id] = append(c.pending[id], res.Mismatches...)
		c.mu.Unlock()
	})
}

// claim reports the mismatches of the answer with this Request-Id to t,
// the test that made the call.
func (c *contractCheck) claim(t testing.TB, requestID string) {
	if c == nil || requestID == "" {
		return
	}
	c.mu.Lock()
	ms := c.pending[requestID]
	delete(c.pending, requestID)
	c.mu.Unlock()
	if len(ms) > 0 {
		t.Helper()
		testkit.ReportMismatches(t, ms, "")
	}
}

// finish runs after the server has closed: unclaimed mismatches belong to
// requests sent outside API.Do, and the binary's counts are rewritten.
func (c *contractCheck) finish() {
	c.mu.Lock()
	var ms []contract.Mismatch
	for _, m := range c.pending {
		ms = append(ms, m...)
	}
	c.pending = nil
	c.mu.Unlock()
	if len(ms) > 0 {
		testkit.ReportMismatches(c.owner, ms, "answers to requests sent outside API.Do")
	}
	if c.report == "" {
		return
	}
	if err := contract.WriteReport(c.report, c.tally.Summary(c.report)); err != nil {
		c.owner.Logf("httpkit: %v", err)
	}
	if testing.Verbose() {
		c.owner.Logf("httpkit: contract: %d responses checked so far in this binary", c.tally.Checked())
	}
}

// recorder passes the answer through and keeps a copy of what was sent.
type recorder struct {
	http.ResponseWriter
	status int
	header http.Header // as sent, taken at the first write
	body   bytes.Buffer
}

func (r *recorder) snapshot(status int) {
	r.status, r.header = status, r.ResponseWriter.Header().Clone()
}

func (r *recorder) WriteHeader(status int) {
	if r.header == nil {
		r.snapshot(status)
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.header == nil {
		r.snapshot(http.StatusOK)
	}
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
