package portal_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/schema/portal"
	"oficina/tenant"
)

var allow = func([]tenant.Permission) error { return nil }

func mint(t *testing.T, co *testkit.Company, by portal.Minter, in portal.PortalSessionCreate, now time.Time) (*portal.Row, string) {
	t.Helper()
	var r *portal.Row
	var link string
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		r, link, err = portal.Mint(ctx, tx, co.Company.ID, in, by, allow, now)
		return err
	})
	return r, link
}

// exchange opens a link the way the portal does: the door finds the
// company, the rest runs in its transaction.
func exchange(t *testing.T, link string, now time.Time) (string, error) {
	t.Helper()
	ctx := context.Background()
	company, err := portal.CompanyOf(ctx, testkit.DB(t), link)
	if err != nil {
		return "", err
	}
	var tok string
	err = tenant.Tx(ctx, testkit.DB(t), company, func(ctx context.Context, tx bun.Tx) error {
		_, tok, err = portal.Exchange(ctx, tx, link, now)
		return err
	})
	return tok, err
}

// current reads the session of tok in company's transaction.
func current(t *testing.T, company, tok string, now time.Time) (*portal.Row, error) {
	t.Helper()
	var r *portal.Row
	err := tenant.Tx(context.Background(), testkit.DB(t), company, func(ctx context.Context, tx bun.Tx) error {
		var err error
		r, err = portal.Current(ctx, tx, tok, now)
		return err
	})
	return r, err
}

// Issue 18 item 1: a one-time link works once and becomes a session, which
// lasts until its expiry (default one hour); only hashes are stored.
func TestALinkOpensOnceAndTheSessionLastsItsLifetime(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	now := time.Now().UTC()
	r, link := mint(t, co, portal.Minter{MemberID: co.Owner.ID}, portal.PortalSessionCreate{}, now)
	if !r.ExpiresAt.Equal(now.Add(portal.DefaultTTL)) || len(r.Capabilities) != 1 || r.Capabilities[0] != portal.ReadOnly {
		t.Fatalf("session %+v, want one hour, read_only", r)
	}
	tok, err := exchange(t, link, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exchange(t, link, now.Add(2*time.Minute)); !errors.Is(err, portal.ErrInvalid) {
		t.Errorf("second use of the link: %v, want ErrInvalid", err)
	}
	if s, err := current(t, co.Company.ID, tok, now.Add(59*time.Minute)); err != nil || s.ID != r.ID {
		t.Errorf("session before expiry: %v", err)
	}
	if _, err := current(t, co.Company.ID, tok, now.Add(time.Hour)); !errors.Is(err, portal.ErrInvalid) {
		t.Errorf("session at expiry: %v, want ErrInvalid", err)
	}
	var stored int
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw("SELECT count(*) FROM portal_sessions WHERE link_hash = convert_to(?, 'UTF8') OR session_hash = convert_to(?, 'UTF8')",
			link, tok).Scan(ctx, &stored)
	})
	if stored != 0 {
		t.Error("a token is stored as it is")
	}
}

// Issue 18 item 1: a link opened after its session expired, a revoked
// session's next request, and tokens nobody minted are refused alike.
func TestExpiredRevokedAndUnknownAreRefused(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	now := time.Now().UTC()
	_, late := mint(t, co, portal.Minter{MemberID: co.Owner.ID}, portal.PortalSessionCreate{TTLSeconds: testkit.Ptr[int64](60)}, now)
	if _, err := exchange(t, late, now.Add(time.Minute)); !errors.Is(err, portal.ErrInvalid) {
		t.Errorf("expired link: %v, want ErrInvalid", err)
	}
	r, link := mint(t, co, portal.Minter{MemberID: co.Owner.ID}, portal.PortalSessionCreate{}, now)
	tok, err := exchange(t, link, now)
	if err != nil {
		t.Fatal(err)
	}
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := portal.Revoke(ctx, tx, r.ID, now)
		return err
	})
	if _, err := current(t, co.Company.ID, tok, now); !errors.Is(err, portal.ErrInvalid) {
		t.Errorf("revoked session: %v, want ErrInvalid", err)
	}
	for _, bad := range []string{"", "ops_nobody", "opl_nobody", "something else", tok + "x"} {
		if _, err := portal.CompanyOf(context.Background(), testkit.DB(t), bad); !errors.Is(err, portal.ErrInvalid) {
			t.Errorf("token %q: %v, want ErrInvalid", bad, err)
		}
	}
}

// Issue 18 item 1: a session is its company's: in another company's
// transaction neither the session nor its token exist (row-level security).
func TestASessionIsInvisibleToAnotherCompany(t *testing.T) {
	t.Parallel()
	a := testkit.NewCompany(t, tenant.CompanyInput{})
	b := testkit.NewCompany(t, tenant.CompanyInput{})
	now := time.Now().UTC()
	r, link := mint(t, a, portal.Minter{MemberID: a.Owner.ID}, portal.PortalSessionCreate{}, now)
	tok, err := exchange(t, link, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := current(t, b.Company.ID, tok, now); !errors.Is(err, portal.ErrInvalid) {
		t.Errorf("A's token in B's transaction: %v, want ErrInvalid", err)
	}
	b.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		if _, err := portal.Get(ctx, tx, r.ID); err == nil {
			t.Error("B reads A's session")
		}
		if _, err := portal.Revoke(ctx, tx, r.ID, now); err == nil {
			t.Error("B revokes A's session")
		}
		return nil
	})
}

// Issue 18 item 1: a session acts as whoever minted it, as they stand at
// each request: a revoked key, or a member no longer owner or admin (spec
// 4.6), ends what the session may do.
func TestASessionActsAsItsMinterAsTheyStand(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	admin := co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleAdmin)})
	key := co.Key(t, co.Owner, "webhooks:read")
	now := time.Now().UTC()
	byKey, _ := mint(t, co, portal.Minter{MemberID: co.Owner.ID, KeyID: key.ID}, portal.PortalSessionCreate{}, now)
	byAdmin, _ := mint(t, co, portal.Minter{MemberID: admin.ID}, portal.PortalSessionCreate{}, now)
	actor := func(r *portal.Row) (*portal.Actor, error) {
		var a *portal.Actor
		err := tenant.Tx(context.Background(), testkit.DB(t), co.Company.ID, func(ctx context.Context, tx bun.Tx) error {
			var err error
			a, err = portal.LoadActor(ctx, tx, r, now)
			return err
		})
		return a, err
	}
	if a, err := actor(byKey); err != nil || a.Principal == nil || a.Subscriber().KeyID != key.ID {
		t.Fatalf("key-minted actor: %+v, %v", a, err)
	}
	if a, err := actor(byAdmin); err != nil || a.Principal != nil || a.Subscriber().MemberID != admin.ID {
		t.Fatalf("dashboard actor: %+v, %v", a, err)
	}
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tenant.RevokeKey(ctx, tx, key.ID, "", now.Add(-time.Second)); err != nil {
			return err
		}
		_, err := tenant.UpdateMember(ctx, tx, admin.ID, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember)}, now)
		return err
	})
	for name, r := range map[string]*portal.Row{"revoked key": byKey, "demoted admin": byAdmin} {
		if _, err := actor(r); !errors.Is(err, portal.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}
