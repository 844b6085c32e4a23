package portal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/db"
	"oficina/schema/ids"
	"oficina/schema/page"
	"oficina/tenant"
)

// Session lifetimes (docs/portal.md).
const (
	DefaultTTL = time.Hour
	MinTTL     = time.Minute
	MaxTTL     = 7 * 24 * time.Hour
)

// IDPrefix starts every session id; LinkPrefix and TokenPrefix start the
// one-time link token and the session (cookie) token.
const (
	IDPrefix    = "ps"
	LinkPrefix  = "opl_"
	TokenPrefix = "ops_"
)

// PortalSessionCreate is the body that mints a session.
type PortalSessionCreate struct {
	Capabilities []Capability `json:"capabilities" without:"read_only:manage_endpoints,recover" doc:"What the session may do besides reading: manage_endpoints, view_secret, recover (resend and recover); read_only (the default) alone or with view_secret."`
	TTLSeconds   *int64       `json:"ttl_seconds" min:"60" max:"604800" doc:"Lifetime from now, 60 to 604800 seconds (default 3600). The link works once, until then."`
}

// PortalSessionStatus is a session's state.
type PortalSessionStatus string

// Session states.
const (
	StatusUnused  = "unused" // the link was not opened yet
	StatusActive  = "active"
	StatusExpired = "expired"
	StatusRevoked = "revoked"
)

// Values are the states.
func (PortalSessionStatus) Values() []string {
	return []string{StatusUnused, StatusActive, StatusExpired, StatusRevoked}
}

// PortalSession is a session as the APIs return it. URL, the one-time
// link, is present only in the answer that minted it.
type PortalSession struct {
	Object            string              `json:"object" const:"portal_session"`
	ID                string              `json:"id"`
	URL               string              `json:"url,omitempty" doc:"The one-time link; only in the answer that mints the session. Opening it starts the session in that browser."`
	Status            PortalSessionStatus `json:"status"`
	Capabilities      []Capability        `json:"capabilities"`
	ExpiresAt         apitime.Time        `json:"expires_at"`
	LinkUsedAt        *apitime.Time       `json:"link_used_at"`
	RevokedAt         *apitime.Time       `json:"revoked_at"`
	LastSeenAt        *apitime.Time       `json:"last_seen_at"`
	CreatedByMemberID string              `json:"created_by_member_id"`
	CreatedByAPIKeyID *string             `json:"created_by_api_key_id"`
	CreatedAt         apitime.Time        `json:"created_at"`
}

// Row is a row of portal_sessions.
type Row struct {
	bun.BaseModel `bun:"table:portal_sessions"`

	ID                string       `bun:"id,pk"`
	CompanyID         string       `bun:"company_id"`
	LinkHash          []byte       `bun:"link_hash"`
	LinkUsedAt        *time.Time   `bun:"link_used_at"`
	SessionHash       []byte       `bun:"session_hash"`
	Capabilities      []Capability `bun:"capabilities,array"`
	CreatedByMemberID string       `bun:"created_by_member_id"`
	CreatedByKeyID    *string      `bun:"created_by_key_id"`
	ExpiresAt         time.Time    `bun:"expires_at"`
	RevokedAt         *time.Time   `bun:"revoked_at"`
	LastSeenAt        *time.Time   `bun:"last_seen_at"`
	CreatedAt         time.Time    `bun:"created_at"`
}

// Status is the session's state at now.
func (r *Row) Status(now time.Time) string {
	switch {
	case r.RevokedAt != nil:
		return StatusRevoked
	case !now.Before(r.ExpiresAt):
		return StatusExpired
	case r.LinkUsedAt == nil:
		return StatusUnused
	}
	return StatusActive
}

// Can reports whether the session holds capability c.
func (r *Row) Can(c Capability) bool {
	for _, have := range r.Capabilities {
		if have == c {
			return true
		}
	}
	return false
}

// View renders the session at now (without its link).
func (r *Row) View(now time.Time) PortalSession {
	at := func(t *time.Time) *apitime.Time {
		if t == nil {
			return nil
		}
		v := apitime.At(*t)
		return &v
	}
	return PortalSession{Object: "portal_session", ID: r.ID, Status: PortalSessionStatus(r.Status(now)),
		Capabilities: r.Capabilities, ExpiresAt: apitime.At(r.ExpiresAt), LinkUsedAt: at(r.LinkUsedAt),
		RevokedAt: at(r.RevokedAt), LastSeenAt: at(r.LastSeenAt), CreatedByMemberID: r.CreatedByMemberID,
		CreatedByAPIKeyID: r.CreatedByKeyID, CreatedAt: apitime.At(r.CreatedAt)}
}

// Minter is who mints a session: a member (the dashboard), or an API key
// and the member it acts as.
type Minter struct {
	MemberID string
	KeyID    string // "" from the dashboard
}

// Allow authorizes minting a session that needs perms (Permissions):
// the API checks them on the key with the owner/admin rule of 4.6, the
// dashboard checks the member's role.
type Allow func(perms []tenant.Permission) error

// Mint creates a session of companyID and returns it with its one-time
// link token, shown only now. Order: the body's rules (422), then allow
// (403).
func Mint(ctx context.Context, tx bun.IDB, companyID string, in PortalSessionCreate, by Minter, allow Allow, now time.Time) (*Row, string, error) {
	var f apierr.Fields
	caps, err := normalize(in.Capabilities)
	if err != nil {
		f = append(f, apierr.As(err).Fields...)
	}
	ttl := DefaultTTL
	if in.TTLSeconds != nil {
		ttl = time.Duration(*in.TTLSeconds) * time.Second
		if *in.TTLSeconds < int64(MinTTL/time.Second) || *in.TTLSeconds > int64(MaxTTL/time.Second) {
			f.Add("ttl_seconds", apierr.OutOfRange)
		}
	}
	if err := f.Err(); err != nil {
		return nil, "", err
	}
	if err := allow(Permissions(caps)); err != nil {
		return nil, "", err
	}
	link, linkHash, err := newToken(LinkPrefix)
	if err != nil {
		return nil, "", err
	}
	r := &Row{ID: ids.New(IDPrefix), CompanyID: companyID, LinkHash: linkHash, Capabilities: caps,
		CreatedByMemberID: by.MemberID, ExpiresAt: now.Add(ttl), CreatedAt: now}
	if by.KeyID != "" {
		k := by.KeyID
		r.CreatedByKeyID = &k
	}
	if _, err := tx.NewInsert().Model(r).Exec(ctx); err != nil {
		return nil, "", fmt.Errorf("portal: mint: %w", err)
	}
	return r, link, nil
}

// List pages through the company's sessions, newest first.
func List(ctx context.Context, tx bun.IDB, p page.Params, now time.Time) (page.List[PortalSession], error) {
	var rows []Row
	if err := p.Apply(tx.NewSelect().Model(&rows), "id").Scan(ctx); err != nil {
		return page.List[PortalSession]{}, fmt.Errorf("portal: list: %w", err)
	}
	vs := make([]PortalSession, len(rows))
	for i := range rows {
		vs[i] = rows[i].View(now)
	}
	return page.Wrap(p, vs), nil
}

// Get reads a session of the transaction's company (404 otherwise).
func Get(ctx context.Context, tx bun.IDB, id string) (*Row, error) {
	return db.ByID[Row](ctx, tx, IDPrefix, id, false)
}

// Revoke ends a session: its next request is refused. Revoking a revoked
// session changes nothing.
func Revoke(ctx context.Context, tx bun.IDB, id string, now time.Time) (*Row, error) {
	r, err := Get(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if r.RevokedAt != nil {
		return r, nil
	}
	r.RevokedAt = &now
	if _, err := tx.NewUpdate().Model(r).Column("revoked_at").WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("portal: revoke %s: %w", id, err)
	}
	return r, nil
}

// newToken returns prefix + 43 characters of base64url (32 random bytes)
// and its hash.
func newToken(prefix string) (string, []byte, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", nil, fmt.Errorf("portal: token: %w", err)
	}
	tok := prefix + base64.RawURLEncoding.EncodeToString(b[:])
	return tok, hash(tok), nil
}

func hash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}
