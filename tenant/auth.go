package tenant

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/service"
)

// ErrInvalidKey is every authentication failure; the transport answers all
// of them with the same 401.
var ErrInvalidKey = errors.New("tenant: invalid API key")

// AuthConfig tunes the authenticator.
type AuthConfig struct {
	// CacheTTL bounds how long a principal is reused without a reload, in
	// case an invalidation is lost; changes made through the admin API
	// invalidate at once (see Invalidate). Default 5s; negative disables.
	CacheTTL time.Duration
	// Base: its business clock (Now) decides whether a key is active and
	// when a cached principal is reloaded.
	service.Base
}

// Authenticator resolves API keys to principals, with a cache that admin
// changes invalidate per company, in this process and (through a Bus) in
// every other.
type Authenticator struct {
	db  bun.IDB
	cfg AuthConfig

	mu        sync.RWMutex
	byHash    map[[32]byte]cached
	byCompany map[string]map[[32]byte]struct{}
	gen       map[string]uint64 // per-company generation, bumped by Invalidate
}

type cached struct {
	p       *Principal
	expires time.Time
}

// NewAuthenticator returns an authenticator over db (the app role).
func NewAuthenticator(db bun.IDB, cfg AuthConfig) *Authenticator {
	if cfg.CacheTTL == 0 {
		cfg.CacheTTL = 5 * time.Second
	}
	return &Authenticator{
		db: db, cfg: cfg,
		byHash:    map[[32]byte]cached{},
		byCompany: map[string]map[[32]byte]struct{}{},
		gen:       map[string]uint64{},
	}
}

// Now is the authenticator's clock.
func (a *Authenticator) Now() time.Time { return a.cfg.BusinessNow() }

// Authenticate returns the principal of token calling from ip, or
// ErrInvalidKey whatever the cause.
func (a *Authenticator) Authenticate(ctx context.Context, token string, ip netip.Addr) (*Principal, error) {
	if err := CheckKeyFormat(token); err != nil {
		return nil, ErrInvalidKey
	}
	var h [32]byte
	copy(h[:], HashKey(token))
	now := a.cfg.BusinessNow()
	a.mu.RLock()
	c, ok := a.byHash[h]
	a.mu.RUnlock()
	if !ok || !now.Before(c.expires) {
		p, err := a.load(ctx, h[:])
		if err != nil {
			return nil, err
		}
		c = cached{p: p, expires: now.Add(a.cfg.CacheTTL)}
		if a.cfg.CacheTTL > 0 {
			a.store(h, c)
		}
	}
	if !c.p.usable(now, ip) {
		return nil, ErrInvalidKey
	}
	return c.p, nil
}

func (a *Authenticator) store(h [32]byte, c cached) {
	a.mu.Lock()
	defer a.mu.Unlock()
	// An invalidation that raced with the load wins: only cache a principal
	// loaded under the current generation.
	if c.p.gen != a.gen[c.p.Company.ID] {
		return
	}
	a.byHash[h] = c
	set := a.byCompany[c.p.Company.ID]
	if set == nil {
		set = map[[32]byte]struct{}{}
		a.byCompany[c.p.Company.ID] = set
	}
	set[h] = struct{}{}
}

// Invalidate drops the cached principals of a company in this process.
func (a *Authenticator) Invalidate(companyID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen[companyID]++
	for h := range a.byCompany[companyID] {
		delete(a.byHash, h)
	}
	delete(a.byCompany, companyID)
}

func (a *Authenticator) generation(companyID string) uint64 {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.gen[companyID]
}

func (a *Authenticator) load(ctx context.Context, hash []byte) (*Principal, error) {
	var companyID sql.NullString
	if err := a.db.NewRaw("SELECT oficina_key_company(?)", hash).Scan(ctx, &companyID); err != nil {
		return nil, fmt.Errorf("tenant: find key: %w", err)
	}
	if !companyID.Valid {
		return nil, ErrInvalidKey
	}
	gen := a.generation(companyID.String)
	p := &Principal{gen: gen}
	err := Tx(ctx, a.db, companyID.String, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewSelect().Model(&p.Key).Where("secret_hash = ?", hash).Scan(ctx); err != nil {
			return err
		}
		if err := tx.NewSelect().Model(&p.Company).Where("id = ?", p.Key.CompanyID).Scan(ctx); err != nil {
			return err
		}
		var members []Member
		if err := tx.NewSelect().Model(&members).Where("id IN (?, ?)", p.Key.MemberID, p.Key.CreatedBy).Scan(ctx); err != nil {
			return err
		}
		for _, m := range members {
			if m.ID == p.Key.MemberID {
				p.Member = m
			}
			if m.ID == p.Key.CreatedBy {
				p.CreatorRole = m.Role
			}
		}
		return nil
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrInvalidKey
	}
	if err != nil {
		return nil, fmt.Errorf("tenant: load key: %w", err)
	}
	if p.Member.ID == "" {
		p.Member.Status = "removed"
	}
	for _, c := range p.Key.AllowedCIDRs {
		if pfx, err := netip.ParsePrefix(c); err == nil {
			p.cidrs = append(p.cidrs, pfx.Masked())
		}
	}
	return p, nil
}
