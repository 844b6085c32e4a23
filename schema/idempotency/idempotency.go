// Package idempotency stores the responses of writes sent with an
// Idempotency-Key (spec 4.1): per company, bound to the API key that made
// them, for 24 hours, committed in the same transaction as the write they
// answer. The transport decides what a
// response is; this package keeps the rules of keys, fingerprints, the
// in-progress lock and expiry, testable without HTTP.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// TTL is how long a stored response is replayed (part 8).
const TTL = 24 * time.Hour

// MaxKeyLen bounds a key; the spec leaves it open (docs/api.md).
const MaxKeyLen = 255

// What a request with a key met besides a first run (metrics count them;
// the transport reports them).
const (
	// Replayed: an earlier request with the key and the same fingerprint
	// stored an answer, which is sent again.
	Replayed = "replayed"
	// KeyReused: the key's stored answer is another request's (422
	// idempotency_key_reused).
	KeyReused = "key_reused"
	// KeyInProgress: another request with the key is running (409
	// idempotency_in_progress).
	KeyInProgress = "in_progress"
)

// ErrInvalidKey is a key that is empty, too long or not printable ASCII.
var ErrInvalidKey = errors.New("idempotency: invalid key")

// ValidKey reports whether k can be an Idempotency-Key: 1 to 255 printable
// ASCII characters (space included). A UUID fits; so does any opaque token.
func ValidKey(k string) error {
	if len(k) == 0 || len(k) > MaxKeyLen {
		return ErrInvalidKey
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return ErrInvalidKey
		}
	}
	return nil
}

// Fingerprint identifies "the same request": method, path, query and the
// body as canonical JSON (objects' keys sorted, insignificant whitespace
// dropped, numbers as written), so a retry that re-serialises the same
// object matches. A body that is not JSON is taken byte for byte; an empty
// body is the same as {}.
func Fingerprint(method, path string, query url.Values, body []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write([]byte(query.Encode()))
	h.Write([]byte{0})
	h.Write(canonical(body))
	var out [32]byte
	h.Sum(out[:0])
	return out
}

func canonical(body []byte) []byte {
	t := bytes.TrimSpace(body)
	if len(t) == 0 {
		return []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return body
	}
	b, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return b
}

// Record is a stored response.
type Record struct {
	bun.BaseModel `bun:"table:idempotency_records,alias:idempotency_record"`

	CompanyID   string      `bun:"company_id,pk"`
	Key         string      `bun:"idempotency_key,pk"`
	RequestHash []byte      `bun:"request_hash"`
	Method      string      `bun:"method"`
	Path        string      `bun:"path"`
	Status      int         `bun:"status"`
	Header      http.Header `bun:"headers,type:jsonb"`
	Body        []byte      `bun:"body"`
	CreatedAt   time.Time   `bun:"created_at"`
	ExpiresAt   time.Time   `bun:"expires_at"`
	// APIKeyID is the API key whose request made the record: its answer is
	// replayed to that key only (or a rotation of it). Empty on records
	// made before records were bound to keys: replayed to no key.
	APIKeyID string `bun:"api_key_id,nullzero"`
}

// Live reports whether the record is still replayed at now.
func (r *Record) Live(now time.Time) bool { return now.Before(r.ExpiresAt) }

// Matches reports whether a request with fingerprint fp is the one stored.
func (r *Record) Matches(fp [32]byte) bool { return bytes.Equal(r.RequestHash, fp[:]) }

// MadeBy reports whether the record was made by the API key keyID itself
// (a rotation of it is the caller's to recognise: tenant.SameCredential).
func (r *Record) MadeBy(keyID string) bool { return r.APIKeyID != "" && r.APIKeyID == keyID }

// lockID is the advisory lock of (company, key): 64 bits of a hash, so two
// keys share a lock only by a collision nobody will meet, and then they
// only see a spurious 409 while both run.
func lockID(companyID, key string) int64 {
	h := sha256.New()
	h.Write([]byte("oficina.idempotency\x00"))
	h.Write([]byte(companyID))
	h.Write([]byte{0})
	h.Write([]byte(key))
	return int64(binary.BigEndian.Uint64(h.Sum(nil)))
}

// savepoint is where Undo rolls a write back to.
const savepoint = "oficina_idempotent_write"

// Claim takes key for the rest of tx (the write's company transaction) and
// sets the savepoint Undo returns to, in one round trip that touches no
// table (two statements in one simple-protocol message; the savepoint
// comes after the lock, so rolling back to it keeps the key claimed).
// false means another request with the key is running (409
// idempotency_in_progress).
//
// Claim does not read the stored record: the write runs on the bet that
// the key is new (the common case), and Save reports when it was not; the
// transaction then rolls back and the stored answer is replayed.
func Claim(ctx context.Context, tx bun.IDB, companyID, key string) (bool, error) {
	var locked bool
	err := tx.NewRaw("SELECT pg_try_advisory_xact_lock(?); SAVEPOINT "+savepoint, lockID(companyID, key)).Scan(ctx, &locked)
	if err != nil {
		return false, fmt.Errorf("idempotency: claim: %w", err)
	}
	return locked, nil
}

// ClaimFirst is Claim as the first statements of the write's transaction
// (tenant.TxWith), sent with its BEGIN: no round trip of its own. When
// another request holds the key the statements fail, the transaction ends
// before it did anything, and InProgress reports the error.
func ClaimFirst(companyID, key string) string {
	return "SELECT oficina_idempotency_claim(" + strconv.FormatInt(lockID(companyID, key), 10) + ");\nSAVEPOINT " + savepoint
}

// inProgressCode is the SQLSTATE oficina_idempotency_claim raises.
const inProgressCode = "OF409"

// InProgress reports whether err is ClaimFirst's refusal: another request
// with the key is running (409 idempotency_in_progress).
func InProgress(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == inProgressCode
}

// Undo rolls tx back to the savepoint Claim set: what the write did is
// gone, the key stays claimed, and tx is usable again even after a failed
// statement.
func Undo(ctx context.Context, tx bun.IDB) error {
	if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+savepoint); err != nil {
		return fmt.Errorf("idempotency: undo: %w", err)
	}
	return nil
}

// ErrLive means a live record already answers for the key: an earlier
// request with it finished.
var ErrLive = errors.New("idempotency: the key already has a stored answer")

// Save stores rec in tx, replacing an expired record of the same key (its
// 24 hours are over, so the key creates again). A live record in the way
// is ErrLive, and tx stays usable. It runs on every idempotent write, so its
// statement is a function whose plan PostgreSQL keeps
// (sql/oficina_idempotency_save.sql).
func Save(ctx context.Context, tx bun.IDB, rec *Record) error {
	headers, body, err := stored(rec)
	if err != nil {
		return err
	}
	var saved bool
	err = tx.NewRaw("SELECT oficina_idempotency_save(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rec.CompanyID, rec.Key, rec.RequestHash,
		rec.Method, rec.Path, rec.Status, string(headers), body, rec.CreatedAt, rec.ExpiresAt, apiKey(rec)).Scan(ctx, &saved)
	if err != nil {
		return fmt.Errorf("idempotency: save: %w", err)
	}
	if !saved {
		return ErrLive
	}
	return nil
}

// Keep is Save as a statement to send with the write's COMMIT
// (streams.Write.Later): no round trip of its own. A live record in the
// way fails the statement, which rolls the write back; Answered reports
// that error, and the caller finds the earlier answer (Find) in a new
// transaction.
func Keep(rec *Record) schema.QueryAppender { return keep{rec} }

type keep struct{ rec *Record }

func (k keep) AppendQuery(gen schema.QueryGen, b []byte) ([]byte, error) {
	rec := k.rec
	headers, body, err := stored(rec)
	if err != nil {
		return nil, err
	}
	return gen.AppendQuery(b, "SELECT oficina_idempotency_keep(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rec.CompanyID, rec.Key,
		rec.RequestHash, rec.Method, rec.Path, rec.Status, string(headers), body, rec.CreatedAt, rec.ExpiresAt, apiKey(rec)), nil
}

// apiKey is rec's API key as a statement argument: NULL when it has none.
func apiKey(rec *Record) *string {
	if rec.APIKeyID == "" {
		return nil
	}
	return &rec.APIKeyID
}

// answeredCode is the SQLSTATE oficina_idempotency_keep raises.
const answeredCode = "OF208"

// Answered reports whether err is Keep's refusal: a live record already
// answers for the key (an earlier request with it finished).
func Answered(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == answeredCode
}

// stored returns rec's headers as JSON and its body, empty rather than nil.
func stored(rec *Record) (headers, body []byte, err error) {
	if rec.Header == nil {
		rec.Header = http.Header{}
	}
	body = rec.Body
	if body == nil {
		body = []byte{} // an empty body, not NULL
	}
	headers, err = json.Marshal(rec.Header)
	if err != nil {
		return nil, nil, fmt.Errorf("idempotency: save: %w", err)
	}
	return headers, body, nil
}

// Find returns the record of key still live at now, or nil.
func Find(ctx context.Context, tx bun.IDB, companyID, key string, now time.Time) (*Record, error) {
	var rs []Record
	err := tx.NewSelect().Model(&rs).Where("company_id = ? AND idempotency_key = ? AND expires_at > ?", companyID, key, now.UTC()).
		Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("idempotency: find: %w", err)
	}
	if len(rs) == 0 {
		return nil, nil
	}
	return &rs[0], nil
}

// ExpiredCompanies lists up to limit companies that have records expired at
// now; it reads across companies through a definer function, and the
// deleting is done per company (DeleteExpired) under row-level security.
func ExpiredCompanies(ctx context.Context, db bun.IDB, now time.Time, limit int) ([]string, error) {
	var ids []string
	if err := db.NewRaw("SELECT oficina_idempotency_expired(?, ?)", now.UTC(), limit).Scan(ctx, &ids); err != nil {
		return nil, fmt.Errorf("idempotency: expired companies: %w", err)
	}
	return ids, nil
}

// DeleteExpired deletes the company's records expired at now, inside tx
// (the company transaction), and returns how many.
func DeleteExpired(ctx context.Context, tx bun.IDB, now time.Time) (int, error) {
	res, err := tx.NewDelete().Model((*Record)(nil)).Where("expires_at <= ?", now.UTC()).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("idempotency: delete expired: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
