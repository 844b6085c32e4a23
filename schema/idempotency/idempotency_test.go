package idempotency_test

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/schema/idempotency"
	"oficina/tenant"
)

// docs/api.md: a key is 1 to 255 printable ASCII characters.
func TestValidKey(t *testing.T) {
	t.Parallel()
	for k, ok := range map[string]bool{
		"0b8f5a3e-6f2c-4c1e-9a57-2f5d4c3b2a10": true,
		"order 42 / retry":                     true,
		strings.Repeat("x", 255):               true,
		"":                                     false,
		strings.Repeat("x", 256):               false,
		"tab\there":                            false,
		"ação":                                 false,
	} {
		if got := idempotency.ValidKey(k) == nil; got != ok {
			t.Errorf("%q: valid=%v", k, got)
		}
	}
}

// Spec 4.1 "same request": method, path, query and body as JSON — key order
// and whitespace do not matter, values do.
func TestFingerprintIsTheSameRequest(t *testing.T) {
	t.Parallel()
	q := url.Values{"b": {"2"}, "a": {"1"}}
	base := idempotency.Fingerprint("POST", "/public/v1/sales", q, []byte(`{"a":1,"b":{"c":[1,2]}}`))
	same := []struct {
		name string
		fp   [32]byte
	}{
		{"reordered and spaced", idempotency.Fingerprint("POST", "/public/v1/sales", url.Values{"a": {"1"}, "b": {"2"}}, []byte("{ \"b\": {\"c\": [1, 2]},\n \"a\": 1 }\n"))},
	}
	for _, s := range same {
		if s.fp != base {
			t.Errorf("%s: differs", s.name)
		}
	}
	for name, fp := range map[string][32]byte{
		"method": idempotency.Fingerprint("PATCH", "/public/v1/sales", q, []byte(`{"a":1,"b":{"c":[1,2]}}`)),
		"path":   idempotency.Fingerprint("POST", "/public/v1/leads", q, []byte(`{"a":1,"b":{"c":[1,2]}}`)),
		"query":  idempotency.Fingerprint("POST", "/public/v1/sales", nil, []byte(`{"a":1,"b":{"c":[1,2]}}`)),
		"value":  idempotency.Fingerprint("POST", "/public/v1/sales", q, []byte(`{"a":2,"b":{"c":[1,2]}}`)),
		"order":  idempotency.Fingerprint("POST", "/public/v1/sales", q, []byte(`{"a":1,"b":{"c":[2,1]}}`)),
		"number": idempotency.Fingerprint("POST", "/public/v1/sales", q, []byte(`{"a":1.0,"b":{"c":[1,2]}}`)),
	} {
		if fp == base {
			t.Errorf("%s: a different request has the same fingerprint", name)
		}
	}
	if idempotency.Fingerprint("DELETE", "/x", nil, nil) != idempotency.Fingerprint("DELETE", "/x", nil, []byte("{}")) {
		t.Error("an empty body is not the same as {}")
	}
}

// The key is claimed for the transaction: a second transaction cannot
// claim it until the first ends; a live record in the way of Save is
// ErrLive (the transaction stays usable, Find returns it), and an expired
// one is replaced.
func TestClaimSaveAndExpiry(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	rec := func(at time.Time, status int) *idempotency.Record {
		return &idempotency.Record{CompanyID: co.Company.ID, Key: "k", RequestHash: make([]byte, 32), Method: "POST",
			Path: "/x", Status: status, Body: []byte("{}"), CreatedAt: at, ExpiresAt: at.Add(idempotency.TTL)}
	}
	claim := func(tx bun.Tx) bool {
		locked, err := idempotency.Claim(ctx, tx, co.Company.ID, "k")
		if err != nil {
			t.Fatal(err)
		}
		return locked
	}
	txA, err := co.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer txA.Rollback()
	if _, err := txA.ExecContext(ctx, "SELECT set_config('app.company_id', ?, true)", co.Company.ID); err != nil {
		t.Fatal(err)
	}
	if !claim(txA) {
		t.Fatal("A could not claim a free key")
	}
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		if claim(tx) {
			t.Error("B claimed a key A holds")
		}
		return nil
	})
	// A failed statement is forgiven by Undo, and the claim survives it.
	if _, err := txA.ExecContext(ctx, "SELECT 1/0"); err == nil {
		t.Fatal("1/0 succeeded")
	}
	if err := idempotency.Undo(ctx, txA); err != nil {
		t.Fatal(err)
	}
	if err := idempotency.Save(ctx, txA, rec(now, 201)); err != nil {
		t.Fatal(err)
	}
	if err := txA.Commit(); err != nil {
		t.Fatal(err)
	}
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		if !claim(tx) {
			t.Error("the key is still claimed after A committed")
		}
		if err := idempotency.Save(ctx, tx, rec(now.Add(time.Hour), 200)); !errors.Is(err, idempotency.ErrLive) {
			t.Errorf("save over a live record: %v", err)
		}
		r, err := idempotency.Find(ctx, tx, co.Company.ID, "k", now.Add(idempotency.TTL-time.Second))
		if err != nil || r == nil || r.Status != 201 {
			t.Errorf("find live: %+v %v", r, err)
		}
		if r, err := idempotency.Find(ctx, tx, co.Company.ID, "k", now.Add(idempotency.TTL)); err != nil || r != nil {
			t.Errorf("find expired: %+v %v", r, err)
		}
		return nil
	})
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		claim(tx)
		return idempotency.Save(ctx, tx, rec(now.Add(idempotency.TTL), 202))
	})
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		if r, _ := idempotency.Find(ctx, tx, co.Company.ID, "k", now.Add(idempotency.TTL)); r == nil || r.Status != 202 {
			t.Errorf("expired record not replaced: %+v", r)
		}
		return nil
	})
}

// Keep stores the record with the write's COMMIT; over a live record it
// fails the commit with the error Answered recognises, and nothing of that
// transaction is kept; over an expired one it replaces it. Both on a pool
// that sends it with COMMIT and inside another transaction (a statement of
// its own).
func TestKeepRefusesALiveRecordAtCommit(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	for _, nested := range []bool{false, true} {
		key := "keep-" + strconv.FormatBool(nested)
		rec := func(at time.Time, status int) *idempotency.Record {
			return &idempotency.Record{CompanyID: co.Company.ID, Key: key, RequestHash: make([]byte, 32), Method: "POST",
				Path: "/x", Status: status, Body: []byte("{}"), CreatedAt: at, ExpiresAt: at.Add(idempotency.TTL)}
		}
		keep := func(r *idempotency.Record) error {
			run := func(idb bun.IDB) error {
				return tenant.TxAround(ctx, idb, co.Company.ID, "", func(ctx context.Context, tx bun.Tx) (string, error) {
					if _, err := tx.ExecContext(ctx, "SELECT set_config('app.probe', 'x', true)"); err != nil {
						return "", err
					}
					b, err := idempotency.Keep(r).AppendQuery(co.DB.QueryGen(), nil)
					return string(b), err
				})
			}
			if !nested {
				return run(co.DB)
			}
			return co.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return run(tx) })
		}
		status := func() int {
			var got int
			co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
				r, err := idempotency.Find(ctx, tx, co.Company.ID, key, now.Add(idempotency.TTL))
				if r != nil {
					got = r.Status
				}
				return err
			})
			return got
		}
		if err := keep(rec(now, 201)); err != nil {
			t.Fatalf("nested=%v: first keep: %v", nested, err)
		}
		if err := keep(rec(now.Add(time.Hour), 200)); !idempotency.Answered(err) {
			t.Errorf("nested=%v: keep over a live record: %v", nested, err)
		}
		if err := keep(rec(now.Add(idempotency.TTL), 202)); err != nil {
			t.Errorf("nested=%v: keep over an expired record: %v", nested, err)
		}
		if got := status(); got != 202 {
			t.Errorf("nested=%v: stored status %d, want 202", nested, got)
		}
	}
}
