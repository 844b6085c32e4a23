package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// RawJSON is a request body already encoded.
type RawJSON []byte

// Call sends a request and decodes a JSON answer into out (when non-nil);
// a status other than want is an error.
func (e *Env) Call(ctx context.Context, method, url, bearer string, body, out any, want int) error {
	return e.CallWith(ctx, method, url, bearer, nil, body, out, want)
}

// CallWith is Call with extra request headers.
func (e *Env) CallWith(ctx context.Context, method, url, bearer string, headers map[string]string, body, out any, want int) error {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case RawJSON:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := e.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// Admin calls the admin API.
func (e *Env) Admin(ctx context.Context, method, path string, body, out any, want int) error {
	return e.Call(ctx, method, e.AdminURL+"/admin/v1"+path, e.AdminToken, body, out, want)
}

// Public calls the public API with key.
func (e *Env) Public(ctx context.Context, method, path, key string, body, out any, want int) error {
	return e.Call(ctx, method, e.BaseURL+"/public/v1"+path, key, body, out, want)
}

// Create is a public write as integrators send it: POST with a fresh
// Idempotency-Key (a random UUID) on every request, answered 201.
func (e *Env) Create(ctx context.Context, path, key string, body, out any) error {
	return e.CallWith(ctx, "POST", e.BaseURL+"/public/v1"+path, key, map[string]string{"Idempotency-Key": NewUUID()}, body, out, 201)
}

// NewUUID is a random (version 4) UUID.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Tenant is a benchmark company with an owner key holding every permission.
type Tenant struct {
	CompanyID string
	OwnerID   string
	Key       string
}

// NewTenant creates a Supra company without a rate ceiling (the limiter is
// measured by its own scenario), its owner and a key.
func (e *Env) NewTenant(ctx context.Context, name string, perms []string) (*Tenant, error) {
	var co struct{ ID string }
	if err := e.Admin(ctx, "POST", "/companies", map[string]any{"name": name, "plan": "supra", "rate_limit_unlimited": true}, &co, 201); err != nil {
		return nil, err
	}
	var m struct{ ID string }
	if err := e.Admin(ctx, "POST", "/companies/"+co.ID+"/members", map[string]any{"name": "Owner", "role": "OWNER"}, &m, 201); err != nil {
		return nil, err
	}
	var k struct{ Secret string }
	if err := e.Admin(ctx, "POST", "/companies/"+co.ID+"/api_keys", map[string]any{"member_id": m.ID, "name": "bench", "permissions": perms}, &k, 201); err != nil {
		return nil, err
	}
	return &Tenant{CompanyID: co.ID, OwnerID: m.ID, Key: k.Secret}, nil
}

// Subscribe registers an endpoint of t for events. Benchmarks that only
// need the delivery rows written point it at a receiver that need not
// answer; Env.HookURL must be allowed by the stack's destination settings.
func (e *Env) Subscribe(ctx context.Context, t *Tenant, events ...string) error {
	if e.HookURL == "" {
		return nil
	}
	return e.Public(ctx, "POST", "/webhook_endpoints", t.Key, map[string]any{"url": e.HookURL, "events": events}, nil, 201)
}
