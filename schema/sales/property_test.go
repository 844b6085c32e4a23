package sales_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/finance"
	"oficina/schema/sales"
	"oficina/streams"
	"oficina/tenant"
)

// money is a sequence of random writes on one sale of a company, against
// the real database.
type money struct {
	t   *testing.T
	co  *testkit.Company
	rnd *rand.Rand
	id  string
	at  time.Time
}

func (m *money) write(fn func(ctx context.Context, w *streams.Write) error) error {
	m.at = m.at.Add(time.Second)
	w := &streams.Write{CompanyID: m.co.Company.ID, Actor: streams.Actor{Kind: streams.ActorAPI}, At: m.at}
	return tenant.Tx(context.Background(), m.co.DB, m.co.Company.ID, func(ctx context.Context, tx bun.Tx) error {
		w.Tx = tx
		return fn(ctx, w)
	})
}

func (m *money) load() *sales.Row {
	var s *sales.Row
	m.co.Tx(m.t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		s, err = sales.Load(ctx, tx, m.id, sales.LoadOptions{Finance: true})
		return err
	})
	return s
}

func day(n int) *apitime.Date {
	d := apitime.Date{Time: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, n)}
	return &d
}

// split cuts total into n positive amounts, each off by a random cent or
// none (the plan rules absorb a 1-cent difference).
func (m *money) split(total int64, n int) []int64 {
	if total < int64(n) {
		n = int(max(total, 1))
	}
	out := make([]int64, n)
	left := total
	for i := range n - 1 {
		share := max(1, left/int64(n-i)+int64(m.rnd.IntN(5))-2)
		share = min(share, left-int64(n-1-i))
		out[i], left = share, left-share
	}
	out[n-1] = left
	if out[n-1] > 1 && m.rnd.IntN(3) == 0 {
		out[n-1] += int64(m.rnd.IntN(3)) - 1
	}
	return out
}

func (m *money) schedule(total int64) []sales.PaymentPlanInstallmentInput {
	var out []sales.PaymentPlanInstallmentInput
	for i, a := range m.split(total, 1+m.rnd.IntN(6)) {
		out = append(out, sales.PaymentPlanInstallmentInput{AmountCents: new(a), DueDate: day(30 * (i + 1))})
	}
	return out
}

func (m *money) create() {
	total := int64(1 + m.rnd.IntN(500000))
	plan := &sales.PaymentPlanInput{Mode: []sales.PaymentPlanMode{sales.ModePaidFull, sales.ModeEntryAndRest, sales.ModeInstallments}[m.rnd.IntN(3)]}
	switch plan.Mode {
	case sales.ModeEntryAndRest:
		if total < 2 {
			total = 2
		}
		entry := 1 + m.rnd.Int64N(total-1)
		plan.EntryAmountCents, plan.Installments = &entry, m.schedule(total-entry)
	case sales.ModeInstallments:
		plan.Installments = m.schedule(total)
	}
	in := sales.SaleCreate{Items: []sales.SaleItemInput{{Type: sales.ItemCustom, Name: new("x"), UnitPriceCents: &total}},
		PaymentPlan: plan, SaleDate: day(0)}
	if err := m.write(func(ctx context.Context, w *streams.Write) error {
		s, err := sales.Create(ctx, w, in, sales.CreateOptions{})
		if err == nil {
			m.id = s.ID
		}
		return err
	}); err != nil {
		m.t.Fatalf("create %+v: %v", plan, err)
	}
}

// step applies one random write; refusals (422/409/404) are allowed but
// must leave the sale as it was.
func (m *money) step() string {
	s := m.load()
	balance := s.TotalCents - s.PaidCents
	var name string
	var err error
	switch op := m.rnd.IntN(4); {
	case op == 0 && balance > 0:
		amount := 1 + m.rnd.Int64N(balance)
		in := sales.PaymentCreate{AmountCents: &amount, PaidAt: day(m.rnd.IntN(100))}
		if len(s.Installments) > 0 && m.rnd.IntN(3) == 0 {
			in.InstallmentID = &s.Installments[m.rnd.IntN(len(s.Installments))].ID
		}
		name = fmt.Sprintf("receive %d", amount)
		err = m.write(func(ctx context.Context, w *streams.Write) error {
			_, err := sales.Receive(ctx, w, m.id, in)
			return err
		})
	case op == 1 && len(s.Payments) > 0:
		y := s.Payments[m.rnd.IntN(len(s.Payments))]
		name = "reverse " + y.ID
		err = m.write(func(ctx context.Context, w *streams.Write) error {
			_, err := sales.ReversePayment(ctx, w, m.id, y.ID, sales.Cancellation{Reason: "teste"})
			return err
		})
	case op == 2:
		var entries []sales.InstallmentsRescheduleEntry
		left := balance
		for _, n := range s.Installments {
			if n.Remaining() > 0 && n.PaidCents > 0 {
				add := m.rnd.Int64N(left + 1)
				entries = append(entries, sales.InstallmentsRescheduleEntry{ID: &n.ID, AmountCents: new(n.PaidCents + add), DueDate: day(60)})
				left -= add
			}
		}
		for _, a := range m.split(left, 1+m.rnd.IntN(3)) {
			if a > 0 {
				entries = append(entries, sales.InstallmentsRescheduleEntry{AmountCents: new(a), DueDate: day(90 + m.rnd.IntN(90))})
			}
		}
		name = fmt.Sprintf("reschedule %d entries", len(entries))
		err = m.write(func(ctx context.Context, w *streams.Write) error {
			_, err := sales.Reschedule(ctx, w, m.id, sales.InstallmentsReschedule{Installments: entries})
			return err
		})
	default:
		total := s.PaidCents + m.rnd.Int64N(200000)
		in := sales.SaleVersionCreate{Reason: "mudança", Items: []sales.SaleItemInput{{Type: sales.ItemCustom, Name: new("y"), UnitPriceCents: &total}}}
		if total > s.PaidCents {
			for i, a := range m.split(total-s.PaidCents, 1+m.rnd.IntN(4)) {
				in.Installments = append(in.Installments, sales.InstallmentsRescheduleEntry{AmountCents: new(a), DueDate: day(120 + i)})
			}
		}
		name = fmt.Sprintf("version total %d", total)
		err = m.write(func(ctx context.Context, w *streams.Write) error {
			_, err := sales.NewVersion(ctx, w, m.id, in)
			return err
		})
	}
	var ae *apierr.Error
	if err != nil && (!errors.As(err, &ae) || ae.Status() >= 500) {
		m.t.Fatalf("%s: %v", name, err)
	}
	if err != nil {
		if after := m.load(); after.UpdatedAt != s.UpdatedAt || after.PaidCents != s.PaidCents || after.Version != s.Version {
			m.t.Fatalf("%s refused (%v) but changed the sale", name, err)
		}
		return name + " (refused: " + err.Error() + ")"
	}
	return name
}

// check verifies the money invariants of ledger.go on the stored sale and
// its finance transactions.
func (m *money) check(after string) {
	s := m.load()
	var amount, paid, remaining, received int64
	for _, n := range s.Installments {
		amount += n.AmountCents
		paid += n.PaidCents
		remaining += n.Remaining()
		if n.AmountCents <= 0 || n.PaidCents < 0 || n.Remaining() < 0 {
			m.t.Fatalf("after %s: bad installment %+v", after, n)
		}
	}
	for _, y := range s.Payments {
		if y.Active() {
			received += y.AmountCents
		}
	}
	var open, posted int64
	for _, x := range s.Transactions {
		switch x.Status {
		case finance.StatusOpen:
			open += x.AmountCents
		case finance.StatusPaid:
			posted += x.AmountCents
		}
	}
	want := map[string]string{
		"Σ installments = total":       fmt.Sprint(amount == s.TotalCents),
		"Σ paid = paid_cents":          fmt.Sprint(paid == s.PaidCents && received == s.PaidCents),
		"paid + remaining = total":     fmt.Sprint(s.PaidCents+remaining == s.TotalCents),
		"open receivables = balance":   fmt.Sprint(open == s.TotalCents-s.PaidCents),
		"received in finance = paid":   fmt.Sprint(posted == s.PaidCents),
		"status follows the balance":   fmt.Sprint(s.PaymentStatus == status(s)),
		"view remaining = the balance": fmt.Sprint(s.View(false).RemainingCents == remaining),
	}
	for rule, ok := range want {
		if ok != "true" {
			m.t.Fatalf("after %s: %s broken: total %d paid %d installments %d/%d/%d received %d open %d posted %d",
				after, rule, s.TotalCents, s.PaidCents, amount, paid, remaining, received, open, posted)
		}
	}
}

func status(s *sales.Row) sales.PaymentStatus {
	switch {
	case s.PaidCents == s.TotalCents:
		return sales.StatusPaid
	case s.PaidCents > 0:
		return sales.StatusPartial
	}
	return sales.StatusPending
}

// Money properties (4.4, 3.2): installments always add up to the amount
// due, and paid + remaining = total after any sequence of payments,
// reversals, reschedules and versions, with finance in step. Randomised
// with a fixed seed, against the real database.
func TestMoneyProperties(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := finance.CreateAccount(ctx, tx, co.Company.ID, "Banco", true, time.Now())
		return err
	})
	for seed := range uint64(12) {
		m := &money{t: t, co: co, rnd: rand.New(rand.NewPCG(seed, 7)), at: time.Now()}
		m.create()
		m.check("create")
		for range 14 {
			name := m.step()
			t.Log(name)
			m.check(name)
		}
	}
}
