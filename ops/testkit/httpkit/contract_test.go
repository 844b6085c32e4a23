package httpkit

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"oficina/ops/proving/contract"
)

// recordingTB stands in for the tests the hook reports to.
type recordingTB struct {
	testing.TB
	name string
	mu   sync.Mutex
	errs []string
	logs []string
}

func (r *recordingTB) Helper()      {}
func (r *recordingTB) Name() string { return r.name }
func (r *recordingTB) Error(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprint(args...))
}
func (r *recordingTB) Log(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprint(args...))
}
func (r *recordingTB) Logf(format string, args ...any) { r.Log(fmt.Sprintf(format, args...)) }

const hookDoc = `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/things/{id}":{"get":{
  "responses":{"200":{"description":"ok","content":{"application/json":{"schema":{
    "type":"object","properties":{"id":{"type":"string"}},"required":["id"]}}}}}}}}}`

// hookServer serves {"id": null} at /things/{id}, through the hook.
func hookServer(t *testing.T, owner *recordingTB) (*contractCheck, *httptest.Server) {
	t.Helper()
	doc, err := contract.Load([]byte(hookDoc))
	if err != nil {
		t.Fatal(err)
	}
	c := &contractCheck{owner: owner, doc: doc, tally: &contract.Tally{},
		pending: map[string][]contract.Mismatch{}}
	n := 0
	var mu sync.Mutex
	srv := httptest.NewServer(c.wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		n++
		w.Header().Set("Request-Id", fmt.Sprintf("req_%d", n))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":null}`))
	})))
	t.Cleanup(srv.Close)
	return c, srv
}

func get(t *testing.T, url string) *http.Response {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestAMismatchIsReportedToTheTestThatMadeTheCall(t *testing.T) {
	t.Parallel()
	owner, caller := &recordingTB{name: "Owner"}, &recordingTB{name: "Caller"}
	c, srv := hookServer(t, owner)
	resp := get(t, srv.URL+"/things/1")
	c.claim(caller, resp.Header.Get("Request-Id"))
	if len(caller.errs) != 1 || !strings.Contains(caller.errs[0], `GET /things/{id} → 200 at "/id": got null, want string`) {
		t.Errorf("caller errors %q", caller.errs)
	}
	srv.Close()
	c.finish()
	if len(owner.errs) != 0 {
		t.Errorf("a claimed mismatch also reached the owner: %q", owner.errs)
	}
	if s := c.tally.Summary("x"); !strings.Contains(s, "1 responses checked against the OpenAPI document, 1 mismatched") {
		t.Errorf("tally: %s", s)
	}
}

func TestAnUnclaimedMismatchIsReportedToTheTestThatStartedTheServer(t *testing.T) {
	t.Parallel()
	owner := &recordingTB{name: "Owner"}
	c, srv := hookServer(t, owner)
	get(t, srv.URL+"/things/1") // as a raw client would: nobody claims it
	srv.Close()
	c.finish()
	if len(owner.errs) != 1 || !strings.Contains(owner.errs[0], "answers to requests sent outside API.Do") {
		t.Errorf("owner errors %q", owner.errs)
	}
}
