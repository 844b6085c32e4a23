package httpkit

import (
	"testing"

	"oficina/ops/testkit"
	"oficina/tenant"
)

// Env is a test company with an owner key on an API of its own: the
// common start of the API tests.
type Env struct {
	API *API
	Co  *testkit.Company
	Key string // the owner's key, holding the permissions NewEnv was given
}

// NewEnv starts an API with o and makes a company whose owner key holds
// perms.
func NewEnv(t testing.TB, o APIOptions, perms ...string) *Env {
	t.Helper()
	api := NewAPI(t, o)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	return &Env{API: api, Co: co, Key: co.OwnerKey(t, perms...)}
}

// Do sends a request to the public API with the env's key.
func (e *Env) Do(t testing.TB, method, path string, body any) *Response {
	t.Helper()
	return e.As(t, e.Key, method, path, body)
}

// As sends a request to the public API with key.
func (e *Env) As(t testing.TB, key, method, path string, body any) *Response {
	t.Helper()
	return e.API.Do(t, Req{Method: method, Path: path, Key: key, Body: body})
}

// Admin calls the admin API under the company's path and fails the test
// unless it succeeds.
func (e *Env) Admin(t testing.TB, method, path string, body any) *Response {
	t.Helper()
	r := e.API.Admin(t, method, "/companies/"+e.Co.Company.ID+path, body)
	if r.Status >= 300 {
		t.Fatalf("admin %s %s: %d %s", method, path, r.Status, r.Raw)
	}
	return r
}
