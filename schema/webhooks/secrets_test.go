package webhooks_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/schema/secretbox"
	"oficina/schema/signing"
	"oficina/schema/webhooks"
	"oficina/tenant"
)

func allow([]string) error { return nil }

func newEndpoint(t *testing.T, co *testkit.Company, ring *secretbox.Keyring) *webhooks.Row {
	t.Helper()
	var e *webhooks.Row
	co.Tx(t, func(ctx context.Context, tx bun.Tx) (err error) {
		e, err = webhooks.Create(ctx, tx, co.Company.ID, webhooks.WebhookEndpointCreate{URL: "https://hooks.example.com/in",
			Events: []webhooks.EventName{"*"}}, webhooks.Subscriber{MemberID: co.Owner.ID}, allow, testkit.AnyURL{}, ring, time.Now())
		return err
	})
	return e
}

func rotate(t *testing.T, co *testkit.Company, id string, grace time.Duration, ring *secretbox.Keyring) (*webhooks.Row, error) {
	t.Helper()
	var e *webhooks.Row
	err := tenant.Tx(context.Background(), co.DB, co.Company.ID, func(ctx context.Context, tx bun.Tx) (err error) {
		e, err = webhooks.RotateSecret(ctx, tx, id, grace, allow, ring, time.Now())
		return err
	})
	return e, err
}

func stored(t *testing.T, co *testkit.Company, id string) webhooks.Row {
	t.Helper()
	var e webhooks.Row
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model(&e).Where("id = ?", id).Scan(ctx)
	})
	return e
}

func open(t *testing.T, e webhooks.Row, ring *secretbox.Keyring) (webhooks.Secrets, error) {
	t.Helper()
	return e.SealedSecrets.Open(ring, e.CompanyID, e.ID)
}

// owner runs statements as the database owner: what a backup, a replica
// or an injected statement sees and can change, below row-level security.
func owner(t *testing.T, query string, args ...any) {
	t.Helper()
	if _, err := testkit.OwnerDB(t).ExecContext(context.Background(), query, args...); err != nil {
		t.Fatal(err)
	}
}

// legacy turns e into a row as the sealing migration leaves one written
// before it: the secrets' text as bytes, no key id.
func legacy(t *testing.T, e *webhooks.Row, secret, previous string) {
	t.Helper()
	var prev any
	if previous != "" {
		prev = previous
	}
	owner(t, "UPDATE webhook_endpoints SET sealed_secret = convert_to(?, 'UTF8'), sealed_previous_secret = convert_to(?, 'UTF8'), secret_key_id = NULL WHERE id = ?",
		secret, prev, e.ID)
}

// secretForms are the ways a secret's bytes could show in a column: the
// whole secret, its base64, its raw key (bytea) and that key's hex.
func secretForms(t *testing.T, secret string) [][]byte {
	t.Helper()
	key, err := signing.ParseSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	return [][]byte{[]byte(secret), []byte(strings.TrimPrefix(secret, signing.SecretPrefix)), key,
		[]byte(base64.RawStdEncoding.EncodeToString(key))}
}

// The secret is shown by the creation answer only and stored sealed under
// the ring's first key: the row holds neither it nor its key bytes.
func TestSecretIsStoredSealedAndShownOnlyOnCreation(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	e := newEndpoint(t, co, testkit.Keyring(t))
	secret := e.ViewWithSecret().Secret
	row := stored(t, co, e.ID)
	if row.KeyID != "test" || row.SealedSecret[0] != secretbox.Version1 || row.SealedPrevious != nil {
		t.Fatalf("stored: key %q, %d bytes, previous %v", row.KeyID, len(row.SealedSecret), row.SealedPrevious)
	}
	for _, f := range secretForms(t, secret) {
		if bytes.Contains(row.SealedSecret, f) {
			t.Fatalf("the stored value holds the secret's bytes")
		}
	}
	if got := row.ViewWithSecret().Secret; got != "" {
		t.Errorf("a stored row shows a secret: %q", got)
	}
	if s, err := open(t, row, testkit.Keyring(t)); err != nil || s.Current != secret || s.Previous != "" {
		t.Fatalf("opened: %v", err)
	}
}

// Bound to its row: a sealed secret copied to another endpoint, another
// company's endpoint or the other column does not open.
func TestSealedSecretMovedToAnotherRowDoesNotOpen(t *testing.T) {
	t.Parallel()
	ring := testkit.Keyring(t)
	co, other := testkit.NewCompany(t, tenant.CompanyInput{}), testkit.NewCompany(t, tenant.CompanyInput{})
	a, b, c := newEndpoint(t, co, ring), newEndpoint(t, co, ring), newEndpoint(t, other, ring)
	for _, dst := range []string{b.ID, c.ID} {
		owner(t, "UPDATE webhook_endpoints d SET sealed_secret = s.sealed_secret, secret_key_id = s.secret_key_id FROM webhook_endpoints s WHERE s.id = ? AND d.id = ?", a.ID, dst)
	}
	for name, row := range map[string]webhooks.Row{"same company": stored(t, co, b.ID), "another company": stored(t, other, c.ID)} {
		if s, err := open(t, row, ring); !errors.Is(err, secretbox.ErrOpen) || s.Current != "" {
			t.Errorf("%s: %v, want ErrOpen", name, err)
		}
	}
	// Current into previous, in its own row: the column is bound too.
	owner(t, "UPDATE webhook_endpoints SET sealed_previous_secret = sealed_secret WHERE id = ?", a.ID)
	if _, err := open(t, stored(t, co, a.ID), ring); !errors.Is(err, secretbox.ErrOpen) {
		t.Errorf("current copied into previous: %v, want ErrOpen", err)
	}
	if _, err := rotate(t, co, b.ID, time.Hour, ring); !errors.Is(err, secretbox.ErrOpen) {
		t.Errorf("rotating with a moved secret: %v, want ErrOpen", err)
	}
	// The company is bound apart from the endpoint id: the same row moved
	// to another company does not open either.
	sealed, err := webhooks.SealSecrets(ring, co.Company.ID, a.ID, webhooks.Secrets{Current: a.ViewWithSecret().Secret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sealed.Open(ring, other.Company.ID, a.ID); !errors.Is(err, secretbox.ErrOpen) {
		t.Errorf("same endpoint id, another company: %v, want ErrOpen", err)
	}
}

// A key id the ring lacks is an error: opening, and a rotation that keeps
// the previous secret, fail; nothing falls back to the stored bytes. A row
// not sealed yet is an error too until the start-up step seals it.
func TestUnknownKeyIDIsAnError(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	e := newEndpoint(t, co, testkit.Keyring(t))
	other, _ := testkit.NewKeyring(t, "other", "")
	row := stored(t, co, e.ID)
	if s, err := open(t, row, other); !errors.Is(err, secretbox.ErrUnknownKey) || s.Current != "" {
		t.Errorf("open: %v, want ErrUnknownKey", err)
	}
	if _, err := rotate(t, co, e.ID, time.Hour, other); !errors.Is(err, secretbox.ErrUnknownKey) {
		t.Errorf("rotate with grace: %v, want ErrUnknownKey", err)
	}
	if stored(t, co, e.ID).KeyID != "test" {
		t.Error("a failed rotation changed the row")
	}
	if _, err := open(t, row, nil); !errors.Is(err, webhooks.ErrNoKeyring) {
		t.Errorf("no ring: %v", err)
	}
	legacy(t, e, e.ViewWithSecret().Secret, "")
	if _, err := open(t, stored(t, co, e.ID), testkit.Keyring(t)); !errors.Is(err, webhooks.ErrNotSealed) {
		t.Errorf("row not sealed yet: %v, want ErrNotSealed", err)
	}
}

// Key rotation: with the ring [new, old] rows sealed under either key
// open; new secrets, and a rotation's previous one, are sealed under the
// first.
func TestKeyringOfTwoKeysOpensBothAndSealsWithTheFirst(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	old := newEndpoint(t, co, testkit.Keyring(t))
	ring, _ := testkit.NewKeyring(t, "new", testkit.SecretKeys)
	if s, err := open(t, stored(t, co, old.ID), ring); err != nil || s.Current != old.ViewWithSecret().Secret {
		t.Fatalf("old row under the two-key ring: %v", err)
	}
	fresh := newEndpoint(t, co, ring)
	if row := stored(t, co, fresh.ID); row.KeyID != "new" {
		t.Errorf("created under %q, want new", row.KeyID)
	}
	rotated, err := rotate(t, co, old.ID, time.Hour, ring)
	if err != nil {
		t.Fatal(err)
	}
	row := stored(t, co, old.ID)
	s, err := open(t, row, ring)
	if err != nil || row.KeyID != "new" || s.Current != rotated.ViewWithSecret().Secret || s.Previous != old.ViewWithSecret().Secret {
		t.Fatalf("rotated under %q: %v", row.KeyID, err)
	}
	if got := s.Signing(row.PreviousSecretExpiresAt, time.Now()); len(got) != 2 {
		t.Errorf("signing secrets during the grace: %d, want 2", len(got))
	}
}

// oficina admin secrets rekey: every row not under the ring's first key
// (sealed under another, or not sealed yet) is sealed under it, secrets
// unchanged, the previous one kept; the old key can then go. Running it
// again re-seals nothing; other companies are left alone when confined.
func TestRekeyResealsEveryRowUnderTheFirstKey(t *testing.T) {
	t.Parallel()
	co, other := testkit.NewCompany(t, tenant.CompanyInput{}), testkit.NewCompany(t, tenant.CompanyInput{})
	ring := testkit.Keyring(t)
	plain, rotated, old := newEndpoint(t, co, ring), newEndpoint(t, co, ring), newEndpoint(t, co, ring)
	first := rotated.ViewWithSecret().Secret
	rotated, err := rotate(t, co, rotated.ID, time.Hour, ring)
	if err != nil {
		t.Fatal(err)
	}
	legacy(t, old, old.ViewWithSecret().Secret, "")
	moved := newEndpoint(t, other, ring)
	outside := testkit.NewCompany(t, tenant.CompanyInput{})
	untouched := newEndpoint(t, outside, ring)

	next, text := testkit.NewKeyring(t, "k2", testkit.SecretKeys)
	o := webhooks.ResealOptions{Ring: next, Companies: []string{co.Company.ID, other.Company.ID}}
	page, err := webhooks.Reseal(context.Background(), co.DB, webhooks.ResealOptions{Ring: next, Companies: o.Companies, Limit: 1})
	if err != nil || !page.More || page.Companies != 1 || page.Next != co.Company.ID {
		t.Fatalf("first page: %+v, %v", page, err)
	}
	o.After = page.Next
	res, err := webhooks.Reseal(context.Background(), co.DB, o)
	if err != nil || res.More || res.Companies != 1 || res.Endpoints != 1 || len(res.Failed) != 0 {
		t.Fatalf("rest: %+v, %v", res, err)
	}
	if page.Endpoints != 3 {
		t.Errorf("first page re-sealed %d endpoints, want 3", page.Endpoints)
	}
	// The old key dropped: the ring of the new key alone opens every row.
	onlyNew, err := secretbox.ParseKeyring(strings.Split(text, ",")[0])
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]webhooks.Secrets{plain.ID: {Current: plain.ViewWithSecret().Secret},
		rotated.ID: {Current: rotated.ViewWithSecret().Secret, Previous: first}, old.ID: {Current: old.ViewWithSecret().Secret}}
	for id, w := range want {
		row := stored(t, co, id)
		s, err := open(t, row, onlyNew)
		if err != nil || row.KeyID != "k2" || s.Current != w.Current || s.Previous != w.Previous || len(s.Headers) != 0 {
			t.Errorf("%s: key %q, %v", id, row.KeyID, err)
		}
	}
	if s, err := open(t, stored(t, other, moved.ID), onlyNew); err != nil || s.Current != moved.ViewWithSecret().Secret {
		t.Errorf("second company: %v", err)
	}
	if row := stored(t, outside, untouched.ID); row.KeyID != "test" {
		t.Errorf("a company outside the pass was re-sealed under %q", row.KeyID)
	}
	o.After = ""
	if again, err := webhooks.Reseal(context.Background(), co.DB, o); err != nil || again.Endpoints != 0 || again.Companies != 0 {
		t.Errorf("second run: %+v, %v", again, err)
	}
}

// A rekey leaves a row it cannot open as it is and reports it (company,
// endpoint, key id, reason), re-sealing the others.
func TestRekeyReportsRowsUnderAKeyTheRingLacks(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	gone, _ := testkit.NewKeyring(t, "gone", "")
	lost, kept := newEndpoint(t, co, gone), newEndpoint(t, co, testkit.Keyring(t))
	next, _ := testkit.NewKeyring(t, "k2", testkit.SecretKeys)
	res, err := webhooks.Reseal(context.Background(), co.DB, webhooks.ResealOptions{Ring: next, Companies: []string{co.Company.ID}})
	want := []webhooks.ResealFailure{{CompanyID: co.Company.ID, EndpointID: lost.ID, KeyID: "gone", Reason: "unknown_key"}}
	if err != nil || res.Endpoints != 1 || len(res.Failed) != 1 || res.Failed[0] != want[0] {
		t.Fatalf("rekey: %+v, %v", res, err)
	}
	if stored(t, co, lost.ID).KeyID != "gone" || stored(t, co, kept.ID).KeyID != "k2" {
		t.Error("rows after the pass")
	}
}

// The migration's one-time step: rows written before sealing (their text
// as bytes, no key id) are sealed at start by every process, idempotently
// and safely when several run it at once; then the row holds no trace of
// the secret, which opens as it was.
func TestRowsWrittenBeforeSealingAreSealedAtStart(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	ring := testkit.Keyring(t)
	e := newEndpoint(t, co, ring)
	secret, previous := e.ViewWithSecret().Secret, newEndpoint(t, co, ring).ViewWithSecret().Secret
	legacy(t, e, secret, previous)
	// Several processes starting at once, through the worker's door over
	// every company (the tests' ring is every test's, so sealing another
	// test's row here is harmless).
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Go(func() {
			_, err := webhooks.Reseal(context.Background(), testkit.WorkerDB(t), webhooks.ResealOptions{Ring: ring, UnsealedOnly: true})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	row := stored(t, co, e.ID)
	s, err := open(t, row, ring)
	if err != nil || row.KeyID != "test" || s.Current != secret || s.Previous != previous {
		t.Fatalf("sealed row: key %q, %v", row.KeyID, err)
	}
	var raw string
	if err := testkit.OwnerDB(t).NewRaw("SELECT row_to_json(w)::text FROM webhook_endpoints w WHERE id = ?", e.ID).Scan(context.Background(), &raw); err != nil {
		t.Fatal(err)
	}
	for _, sec := range []string{secret, previous} {
		for _, f := range secretForms(t, sec) {
			if strings.Contains(raw, string(f)) || strings.Contains(raw, hexOf(f)) {
				t.Fatalf("the row still holds a secret: %s", raw)
			}
		}
	}
}

func hexOf(b []byte) string { return fmt.Sprintf("%x", b) }
