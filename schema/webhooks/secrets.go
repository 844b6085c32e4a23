package webhooks

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/secretbox"
	"oficina/tenant"
)

// Signing secrets are sealed at rest (schema/secretbox): each one under the
// key ring's first key, bound to its company, its endpoint and its column,
// so the database never holds a secret in clear and a sealed value copied
// elsewhere does not open. They are opened in Go only: by the dispatcher to
// sign, by a rotation to keep the previous one, and by Reseal.

// Associated-data labels: one per column, so the current and the previous
// secret cannot be swapped either.
const (
	labelSecret   = "webhook_endpoints.sealed_secret"
	labelPrevious = "webhook_endpoints.sealed_previous_secret"
	labelHeaders  = "webhook_endpoints.sealed_headers"
	labelCert     = "webhook_endpoints.sealed_client_certificate"
	labelOAuth2   = "webhook_endpoints.sealed_oauth2_secret"
)

// ErrNotSealed is a row written before secrets were sealed, not yet sealed
// by the start-up step: its bytes are never used as a secret.
var ErrNotSealed = errors.New("webhooks: endpoint secret not sealed yet")

// ErrNoKeyring: a secret is to be sealed or opened without a key ring.
var ErrNoKeyring = errors.New("webhooks: no secret key ring (OFICINA_SECRET_KEYS)")

// Sealed is a sealed secret as stored (bytea). It also reads the text form
// to_jsonb gives a bytea ("\\x…"), as the dispatcher's batched view
// returns it.
type Sealed []byte

// UnmarshalJSON reads null or PostgreSQL's hex form of a bytea.
func (s *Sealed) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*s = nil
		return nil
	}
	h, ok := bytes.CutPrefix(b, []byte(`"\\x`))
	if !ok || len(h) == 0 || h[len(h)-1] != '"' {
		return errors.New("webhooks: sealed secret: want a bytea in hex form")
	}
	out := make([]byte, hex.DecodedLen(len(h)-1))
	if _, err := hex.Decode(out, h[:len(h)-1]); err != nil {
		return fmt.Errorf("webhooks: sealed secret: %w", err)
	}
	*s = out
	return nil
}

// SealedSecrets are an endpoint's secrets as stored: both sealed under the
// key KeyID ("" for a row not sealed yet).
type SealedSecrets struct {
	KeyID          string `bun:"secret_key_id,nullzero" json:"secret_key_id"`
	SealedSecret   Sealed `bun:"sealed_secret" json:"sealed_secret"`
	SealedPrevious Sealed `bun:"sealed_previous_secret" json:"sealed_previous_secret"`
	// SealedHeaders are the custom headers' values, a JSON object sealed
	// like the secrets (nil: none).
	SealedHeaders Sealed `bun:"sealed_headers" json:"sealed_headers"`
	// SealedClientCertificate is the mutual-TLS certificate and key, a
	// JSON ClientCertificate sealed like the secrets (nil: none).
	SealedClientCertificate Sealed `bun:"sealed_client_certificate" json:"sealed_client_certificate"`
	// SealedOAuth2Secret is the OAuth2 client secret (nil: none).
	SealedOAuth2Secret Sealed `bun:"sealed_oauth2_secret" json:"sealed_oauth2_secret"`
}

// Secrets are an endpoint's secrets in clear: in memory only, for signing
// and for the one answer that shows a new secret.
type Secrets struct {
	Current  string
	Previous string            // "" without one
	Headers  map[string]string // the custom headers sent with every delivery (issue 27 item 2)
	// ClientCertificate is presented to receivers that ask for one (nil:
	// none).
	ClientCertificate *ClientCertificate
	// OAuth2ClientSecret is the OAuth2 client secret ("" without one).
	OAuth2ClientSecret string
}

// String hides the secrets, so a value printed by mistake shows none.
func (Secrets) String() string { return "webhooks.Secrets{…}" }

// GoString is String, for %#v.
func (s Secrets) GoString() string { return s.String() }

// SealSecrets seals s for the endpoint companyID/endpointID under the
// ring's first key: each part in its column, under its own label.
func SealSecrets(ring *secretbox.Keyring, companyID, endpointID string, s Secrets) (SealedSecrets, error) {
	if ring == nil {
		return SealedSecrets{}, ErrNoKeyring
	}
	id, cur, err := ring.Seal([]byte(s.Current), secretbox.Bind(labelSecret, companyID, endpointID))
	if err != nil {
		return SealedSecrets{}, fmt.Errorf("webhooks: seal %s: %w", endpointID, err)
	}
	out := SealedSecrets{KeyID: id, SealedSecret: cur}
	seal := func(dst *Sealed, label string, v any, present bool) {
		if err != nil || !present {
			return
		}
		b, ok := v.([]byte)
		if !ok {
			if b, err = json.Marshal(v); err != nil {
				return
			}
		}
		if _, *dst, err = ring.Seal(b, secretbox.Bind(label, companyID, endpointID)); err != nil {
			err = fmt.Errorf("webhooks: seal %s: %w", endpointID, err)
		}
	}
	seal(&out.SealedPrevious, labelPrevious, []byte(s.Previous), s.Previous != "")
	seal(&out.SealedHeaders, labelHeaders, s.Headers, len(s.Headers) > 0)
	seal(&out.SealedOAuth2Secret, labelOAuth2, []byte(s.OAuth2ClientSecret), s.OAuth2ClientSecret != "")
	seal(&out.SealedClientCertificate, labelCert, s.ClientCertificate, s.ClientCertificate != nil)
	if err != nil {
		return SealedSecrets{}, err
	}
	return out, nil
}

// Open returns the secrets of the endpoint companyID/endpointID. A row not
// sealed yet is ErrNotSealed; a key the ring lacks is
// secretbox.ErrUnknownKey; a value of another row is secretbox.ErrOpen.
func (s SealedSecrets) Open(ring *secretbox.Keyring, companyID, endpointID string) (Secrets, error) {
	if ring == nil {
		return Secrets{}, ErrNoKeyring
	}
	if s.KeyID == "" {
		return Secrets{}, fmt.Errorf("%w: %s", ErrNotSealed, endpointID)
	}
	if s.SealedSecret == nil {
		return Secrets{}, fmt.Errorf("%w: %s has no secret", secretbox.ErrFormat, endpointID)
	}
	var out Secrets
	var err error
	// open opens sealed (nil: nothing to open) into the string or, as
	// JSON, the value dst points at.
	open := func(sealed Sealed, label, what string, dst any) {
		if err != nil || sealed == nil {
			return
		}
		var b []byte
		if b, err = ring.Open(s.KeyID, sealed, secretbox.Bind(label, companyID, endpointID)); err != nil {
			err = fmt.Errorf("webhooks: open %s of %s: %w", what, endpointID, err)
			return
		}
		if str, ok := dst.(*string); ok {
			*str = string(b)
		} else if err = json.Unmarshal(b, dst); err != nil {
			err = fmt.Errorf("webhooks: %s of %s: %w", what, endpointID, err)
		}
	}
	open(s.SealedSecret, labelSecret, "secret", &out.Current)
	open(s.SealedPrevious, labelPrevious, "previous secret", &out.Previous)
	open(s.SealedHeaders, labelHeaders, "headers", &out.Headers)
	open(s.SealedOAuth2Secret, labelOAuth2, "OAuth2 secret", &out.OAuth2ClientSecret)
	if s.SealedClientCertificate != nil {
		out.ClientCertificate = &ClientCertificate{}
		open(s.SealedClientCertificate, labelCert, "client certificate", out.ClientCertificate)
	}
	if err != nil {
		return Secrets{}, err
	}
	return out, nil
}

// Signing are the secrets a delivery attempted at `at` is signed with: the
// current one, and the previous one while its rotation grace lasts.
func (s Secrets) Signing(previousExpiresAt *time.Time, at time.Time) []string {
	out := []string{s.Current}
	if s.Previous != "" && previousExpiresAt != nil && at.Before(*previousExpiresAt) {
		out = append(out, s.Previous)
	}
	return out
}

// ResealOptions choose what Reseal does.
type ResealOptions struct {
	Ring *secretbox.Keyring
	// UnsealedOnly seals the rows written before sealing and leaves the
	// sealed ones (the start-up step); otherwise every row not under the
	// ring's first key is re-sealed under it (rekey).
	UnsealedOnly bool
	// Companies confines the pass to these companies; empty: every company
	// with such rows.
	Companies []string
	// After and Limit page through the companies in id order (Limit 0: all
	// of them); ResealResult.Next continues.
	After string
	Limit int
}

// ResealResult counts what a pass re-sealed.
type ResealResult struct {
	Companies int    // companies whose rows were re-sealed
	Endpoints int    // endpoints re-sealed
	Next      string // the last company visited (the next page's After)
	More      bool   // Limit was reached: there may be more companies
	// Failed are the rows left as they were because they do not open
	// (the first maxFailures of them).
	Failed []ResealFailure
}

// ResealFailure is a row Reseal could not open: under a key the ring
// lacks (put the key back after the first and run again), or a value that
// does not open under its key (moved or damaged: rotate its secret).
type ResealFailure struct {
	CompanyID  string `json:"company_id"`
	EndpointID string `json:"endpoint_id"`
	KeyID      string `json:"key_id"`
	Reason     string `json:"reason"` // unknown_key, does_not_open, malformed
}

const maxFailures = 100

func failureReason(err error) string {
	switch {
	case errors.Is(err, secretbox.ErrUnknownKey):
		return "unknown_key"
	case errors.Is(err, secretbox.ErrOpen):
		return "does_not_open"
	default:
		return "malformed"
	}
}

// resealPage is how many companies are listed per round trip.
const resealPage = 100

// Reseal seals, under the ring's first key, every endpoint secret that is
// not: each company in its own transaction with its rows locked, so it is
// idempotent and safe while other processes run it or rotate secrets. A row
// that does not open is left as it is and reported in Failed; nothing is
// read as plaintext but the rows not sealed yet. Without o.Companies it
// finds the companies through a cross-company function: idb must then be
// the worker role's pool.
func Reseal(ctx context.Context, idb *bun.DB, o ResealOptions) (ResealResult, error) {
	var res ResealResult
	if o.Ring == nil {
		return res, ErrNoKeyring
	}
	var keyID *string // NULL: only rows not sealed at all
	if !o.UnsealedOnly {
		k := o.Ring.Primary()
		keyID = &k
	}
	after, visited := o.After, 0
	for {
		page := resealPage
		if o.Limit > 0 {
			page = min(page, o.Limit-visited)
		}
		companies, err := resealCompanies(ctx, idb, o.Companies, keyID, after, page)
		if err != nil {
			return res, err
		}
		for _, c := range companies {
			n, err := resealCompany(ctx, idb, o.Ring, c, o.UnsealedOnly, &res.Failed)
			if err != nil {
				return res, err
			}
			after, res.Next = c, c
			visited++
			if n > 0 {
				res.Companies++
				res.Endpoints += n
			}
		}
		if len(companies) < page {
			return res, nil
		}
		if o.Limit > 0 && visited >= o.Limit {
			res.More = true
			return res, nil
		}
	}
}

// resealCompanies lists up to limit companies after `after` with rows to
// re-seal: from only when given, else through the definer door.
func resealCompanies(ctx context.Context, idb *bun.DB, only []string, keyID *string, after string, limit int) ([]string, error) {
	if len(only) > 0 {
		var out []string
		for _, c := range slices.Sorted(slices.Values(only)) {
			if c > after && len(out) < limit {
				out = append(out, c)
			}
		}
		return out, nil
	}
	var out []string
	if err := idb.NewRaw("SELECT oficina_secret_companies(?, ?, ?)", keyID, after, limit).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("webhooks: reseal: list companies: %w", err)
	}
	return out, nil
}

// resealCompany re-seals one company's rows in its own transaction and
// adds the rows that do not open to failed.
func resealCompany(ctx context.Context, idb *bun.DB, ring *secretbox.Keyring, companyID string, unsealedOnly bool, failed *[]ResealFailure) (int, error) {
	n := 0
	err := tenant.Tx(ctx, idb, companyID, func(ctx context.Context, tx bun.Tx) error {
		var rows []Row
		q := tx.NewSelect().Model(&rows).Column("id", "company_id", "secret_key_id", "sealed_secret", "sealed_previous_secret", "sealed_headers",
			"sealed_client_certificate", "sealed_oauth2_secret").OrderExpr("id").For("UPDATE")
		if unsealedOnly {
			q = q.Where("secret_key_id IS NULL")
		} else {
			q = q.Where("secret_key_id IS NULL OR secret_key_id <> ?", ring.Primary())
		}
		if err := q.Scan(ctx); err != nil {
			return fmt.Errorf("webhooks: reseal %s: %w", companyID, err)
		}
		for i := range rows {
			e := &rows[i]
			s, err := e.openForReseal(ring)
			if err != nil {
				if len(*failed) < maxFailures {
					*failed = append(*failed, ResealFailure{CompanyID: e.CompanyID, EndpointID: e.ID, KeyID: e.KeyID,
						Reason: failureReason(err)})
				}
				continue
			}
			if e.SealedSecrets, err = SealSecrets(ring, e.CompanyID, e.ID, s); err != nil {
				return err
			}
			if _, err := tx.NewUpdate().Model(e).Column("secret_key_id", "sealed_secret", "sealed_previous_secret", "sealed_headers",
				"sealed_client_certificate", "sealed_oauth2_secret").WherePK().Exec(ctx); err != nil {
				return fmt.Errorf("webhooks: reseal %s: %w", e.ID, err)
			}
			n++
		}
		return nil
	})
	return n, err
}

// openForReseal opens a row's secrets; a row not sealed yet holds them as
// written before sealing (the one place they are read so).
func (e *Row) openForReseal(ring *secretbox.Keyring) (Secrets, error) {
	if e.KeyID != "" {
		return e.SealedSecrets.Open(ring, e.CompanyID, e.ID)
	}
	if len(e.SealedSecret) == 0 {
		return Secrets{}, fmt.Errorf("%w: %s has no secret", secretbox.ErrFormat, e.ID)
	}
	return Secrets{Current: string(e.SealedSecret), Previous: string(e.SealedPrevious)}, nil
}
