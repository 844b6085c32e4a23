package mail_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/mail"
	"oficina/ops/testkit"
	outbox "oficina/schema/mail"
	"oficina/schema/service"
	"oficina/tenant"
)

// capture is a transport that records what it sends, or fails.
type capture struct {
	mu   sync.Mutex
	sent []*outbox.Message
	fail bool
}

func (c *capture) Send(_ context.Context, m *outbox.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail {
		return errors.New("smtp down")
	}
	c.sent = append(c.sent, m)
	return nil
}

func messages(t *testing.T, co *testkit.Company) []outbox.Message {
	t.Helper()
	var ms []outbox.Message
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		ms, err = outbox.List(ctx, tx, 100)
		return err
	})
	return ms
}

// Spec 6.7: mail to "the owner and admins" goes to the active owners and
// admins with an address, never to members, viewers or suspended people;
// the sender delivers it once, after commit.
func TestMailToManagersIsSentOnce(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	co.Member(t, tenant.MemberInput{Email: testkit.Ptr("admin@example.com"), Role: testkit.Ptr(tenant.RoleAdmin)})
	co.Member(t, tenant.MemberInput{Email: testkit.Ptr("boss@example.com"), Role: testkit.Ptr(tenant.RoleOwner)})
	co.Member(t, tenant.MemberInput{Email: testkit.Ptr("member@example.com"), Role: testkit.Ptr(tenant.RoleMember)})
	gone := co.Member(t, tenant.MemberInput{Email: testkit.Ptr("gone@example.com"), Role: testkit.Ptr(tenant.RoleAdmin)})
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := tenant.UpdateMember(ctx, tx, gone.ID, tenant.MemberInput{Status: testkit.Ptr("suspended")}, time.Now())
		return err
	})
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := outbox.ToManagers(ctx, tx, co.Company.ID, "test", "Olá", "corpo", time.Now())
		return err
	})
	tr := &capture{}
	s := &mail.Sender{DB: testkit.WorkerDB(t), Transport: tr, Only: []string{co.Company.ID}}
	for range 2 {
		if _, err := s.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if len(tr.sent) != 1 || !slices.Equal(tr.sent[0].To, []string{"admin@example.com", "boss@example.com"}) {
		t.Fatalf("sent %+v", tr.sent)
	}
	if ms := messages(t, co); ms[0].SentAt == nil {
		t.Fatal("not marked sent")
	}
}

// A failed send is retried later with backoff and given up after
// MaxAttempts; nothing is lost in between.
func TestFailedMailIsRetriedThenGivenUp(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := outbox.Enqueue(ctx, tx, co.Company.ID, "test", []string{"a@example.com"}, "s", "b", time.Now())
		return err
	})
	now := time.Now()
	tr := &capture{fail: true}
	s := &mail.Sender{Base: service.Base{Now: func() time.Time { return now }}, DB: testkit.WorkerDB(t), Transport: tr, MaxAttempts: 2, Only: []string{co.Company.ID}}
	if _, err := s.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := messages(t, co)[0]
	if m.Attempts != 1 || m.LastError == nil || !m.NextAttemptAt.After(now) || m.FailedAt != nil {
		t.Fatalf("after one failure %+v", m)
	}
	if _, err := s.RunOnce(context.Background()); err != nil || messages(t, co)[0].Attempts != 1 {
		t.Fatal("retried before its time")
	}
	now = now.Add(time.Hour)
	if _, err := s.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m := messages(t, co)[0]; m.Attempts != 2 || m.FailedAt == nil {
		t.Fatalf("not given up: %+v", m)
	}
}

func TestFormatEncodesUTF8(t *testing.T) {
	t.Parallel()
	b := string(mail.Format("Oficina <no-reply@oficina.dev>", &outbox.Message{ID: "mail_1", To: []string{"a@x.com", "b@x.com"},
		Subject: "Endpoint de webhook desativado", Body: "Domínios afetados:\n- x.com\n"}, time.Unix(0, 0)))
	for _, want := range []string{"To: a@x.com, b@x.com\r\n", "Subject: Endpoint de webhook desativado\r\n",
		"Content-Transfer-Encoding: quoted-printable\r\n", "Dom=C3=ADnios afetados:\r\n"} {
		if !strings.Contains(b, want) {
			t.Errorf("missing %q in\n%s", want, b)
		}
	}
}
