package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/streams"
	"oficina/tenant"
)

// Company is a test company with its owner.
type Company struct {
	DB      *bun.DB
	Company *tenant.Company
	Owner   *tenant.Member
}

// NewCompany creates a company (plan supra unless in says otherwise) and
// its owner.
func NewCompany(t testing.TB, in tenant.CompanyInput) *Company {
	t.Helper()
	return NewCompanyIn(t, DB(t), in)
}

// NewCompanyIn is NewCompany in the database of d, a request-role pool
// (ScratchPools).
func NewCompanyIn(t testing.TB, d *bun.DB, in tenant.CompanyInput) *Company {
	t.Helper()
	if in.Name == nil {
		in.Name = new("Test Co " + t.Name())
	}
	if in.Plan == nil {
		in.Plan = new(tenant.PlanSupra)
	}
	ctx := context.Background()
	c, err := tenant.CreateCompany(ctx, d, in, time.Now())
	if err != nil {
		t.Fatalf("testkit: company: %v", err)
	}
	tc := &Company{DB: d, Company: c}
	tc.Owner = tc.Member(t, tenant.MemberInput{Name: new("Owner"), Role: new(tenant.RoleOwner)})
	return tc
}

// Tx runs fn in the company's transaction, failing the test on error.
func (c *Company) Tx(t testing.TB, fn func(ctx context.Context, tx bun.Tx) error) {
	t.Helper()
	if err := tenant.Tx(context.Background(), c.DB, c.Company.ID, fn); err != nil {
		t.Fatalf("testkit: tx: %v", err)
	}
}

// Write runs fn as a write unit of the company made in the dashboard by
// its owner, failing the test on error. No publisher vouches for it: the
// events fn records wait in the backlog for a relay.
func (c *Company) Write(t testing.TB, fn func(ctx context.Context, w *streams.Write) error) {
	t.Helper()
	wr := &streams.Writer{DB: c.DB}
	u := streams.Unit{CompanyID: c.Company.ID, Actor: streams.Actor{Kind: streams.ActorDashboard, MemberID: c.Owner.ID}}
	if err := wr.Run(context.Background(), u, fn); err != nil {
		t.Fatalf("testkit: write: %v", err)
	}
}

// Member adds a member.
func (c *Company) Member(t testing.TB, in tenant.MemberInput) *tenant.Member {
	t.Helper()
	if in.Name == nil {
		in.Name = new("Member")
	}
	var m *tenant.Member
	c.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		m, err = tenant.CreateMember(ctx, tx, c.Company.ID, in, time.Now())
		return err
	})
	return m
}

// Key creates a key acting as member (created by the member itself) with
// perms and returns it with its secret.
func (c *Company) Key(t testing.TB, member *tenant.Member, perms ...string) *tenant.NewKey {
	t.Helper()
	return c.KeyWith(t, tenant.KeyInput{MemberID: member.ID, Permissions: perms})
}

// KeyWith creates a key from a full input.
func (c *Company) KeyWith(t testing.TB, in tenant.KeyInput) *tenant.NewKey {
	t.Helper()
	var k *tenant.NewKey
	c.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		k, err = tenant.CreateKey(ctx, tx, c.Company.ID, in, time.Now())
		return err
	})
	return k
}

// OwnerKey is a key of the owner with perms.
func (c *Company) OwnerKey(t testing.TB, perms ...string) string {
	t.Helper()
	return c.Key(t, c.Owner, perms...).Secret
}

// Ptr returns a pointer to v (for input structs); new(v) says the same.
func Ptr[T any](v T) *T { return &v }
