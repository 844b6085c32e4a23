package portal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/events"
	"oficina/schema/webhooks"
	"oficina/tenant"
)

// ErrInvalid is every refusal of a link or a session: unknown, used,
// expired, revoked, or minted by someone who may no longer act. Like a
// refused API key, the portal does not say which.
var ErrInvalid = errors.New("portal: invalid or expired link or session")

// seenEvery spaces the writes of last_seen_at.
const seenEvery = time.Minute

// CompanyOf finds the company of a link or session token through the one
// door (oficina_portal_company); ErrInvalid when none.
func CompanyOf(ctx context.Context, db bun.IDB, token string) (string, error) {
	if !strings.HasPrefix(token, LinkPrefix) && !strings.HasPrefix(token, TokenPrefix) || len(token) > 100 {
		return "", ErrInvalid
	}
	var company sql.NullString
	if err := db.NewRaw("SELECT oficina_portal_company(?)", hash(token)).Scan(ctx, &company); err != nil {
		return "", fmt.Errorf("portal: find session: %w", err)
	}
	if !company.Valid {
		return "", ErrInvalid
	}
	return company.String, nil
}

// Exchange uses a one-time link in its company's transaction: the session
// starts and its token (the cookie) is returned. A link works once.
func Exchange(ctx context.Context, tx bun.IDB, link string, now time.Time) (*Row, string, error) {
	r := new(Row)
	err := tx.NewSelect().Model(r).Where("link_hash = ?", hash(link)).For("UPDATE").Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) || err == nil && r.Status(now) != StatusUnused {
		return nil, "", ErrInvalid
	}
	if err != nil {
		return nil, "", fmt.Errorf("portal: open link: %w", err)
	}
	tok, h, err := newToken(TokenPrefix)
	if err != nil {
		return nil, "", err
	}
	r.SessionHash, r.LinkUsedAt, r.LastSeenAt = h, &now, &now
	if _, err := tx.NewUpdate().Model(r).Column("session_hash", "link_used_at", "last_seen_at").WherePK().Exec(ctx); err != nil {
		return nil, "", fmt.Errorf("portal: open link: %w", err)
	}
	return r, tok, nil
}

// Current reads the active session of a session token in its company's
// transaction, refusing it once expired or revoked.
func Current(ctx context.Context, tx bun.IDB, token string, now time.Time) (*Row, error) {
	if !strings.HasPrefix(token, TokenPrefix) {
		return nil, ErrInvalid
	}
	r := new(Row)
	err := tx.NewSelect().Model(r).Where("session_hash = ?", hash(token)).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) || err == nil && r.Status(now) != StatusActive {
		return nil, ErrInvalid
	}
	if err != nil {
		return nil, fmt.Errorf("portal: session: %w", err)
	}
	if r.LastSeenAt == nil || now.Sub(*r.LastSeenAt) >= seenEvery {
		r.LastSeenAt = &now
		if _, err := tx.NewUpdate().Model(r).Column("last_seen_at").WherePK().Exec(ctx); err != nil {
			return nil, fmt.Errorf("portal: session: %w", err)
		}
	}
	return r, nil
}

// Actor is who a session acts as, read at each request: the member who
// minted it and, when an API key minted it, that key (as a principal).
type Actor struct {
	Member tenant.Member
	// Principal is the minting key's, nil for a dashboard session.
	Principal *tenant.Principal
}

// LoadActor reads the session's minter as it stands now. A member no
// longer active or no longer an owner or admin (spec 4.6), or a key no
// longer active, ends the session's power: ErrInvalid.
func LoadActor(ctx context.Context, tx bun.IDB, r *Row, now time.Time) (*Actor, error) {
	a := new(Actor)
	err := tx.NewSelect().Model(&a.Member).Where("id = ?", r.CreatedByMemberID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrInvalid
	}
	if err != nil {
		return nil, fmt.Errorf("portal: minter: %w", err)
	}
	if a.Member.Status != "active" || !a.Member.Role.IsManager() {
		return nil, ErrInvalid
	}
	if r.CreatedByKeyID == nil {
		return a, nil
	}
	p := &tenant.Principal{Member: a.Member, CreatorRole: a.Member.Role}
	if err := tx.NewSelect().Model(&p.Key).Where("id = ?", *r.CreatedByKeyID).Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrInvalid
		}
		return nil, fmt.Errorf("portal: minter key: %w", err)
	}
	if !p.Key.Active(now) {
		return nil, ErrInvalid
	}
	if p.Key.CreatedBy != a.Member.ID {
		creator, err := tenant.GetMember(ctx, tx, p.Key.CreatedBy)
		if err != nil {
			return nil, ErrInvalid
		}
		p.CreatorRole = creator.Role
	}
	if err := tx.NewSelect().Model(&p.Company).Where("id = ?", r.CompanyID).Scan(ctx); err != nil {
		return nil, fmt.Errorf("portal: minter company: %w", err)
	}
	if webhooks.RequireManager(p) != nil {
		return nil, ErrInvalid
	}
	a.Principal = p
	return a, nil
}

// Subscriber is who endpoints the session creates or edits are subscribed
// as: the minter (with its key when a key minted the session).
func (a *Actor) Subscriber() webhooks.Subscriber {
	s := webhooks.Subscriber{MemberID: a.Member.ID}
	if a.Principal != nil {
		s.KeyID = a.Principal.Key.ID
	}
	return s
}

// Reads reports whether the minter may read module's events (the portal's
// event log): as for the subscriptions it makes (Access), a key's
// <module>:read and its member's access, or a dashboard owner or admin.
func (a *Actor) Reads(module string) bool {
	if a.Principal != nil {
		return events.PrincipalReads(a.Principal)(module)
	}
	return a.Member.Status == "active" && a.Member.Role.IsManager()
}

// Access authorizes subscribing to events as the API would for the
// minting key, or as the dashboard would for the minting member.
func (a *Actor) Access() webhooks.Access {
	if a.Principal != nil {
		return webhooks.PrincipalAccess(a.Principal)
	}
	return webhooks.MemberAccess(&a.Member)
}
