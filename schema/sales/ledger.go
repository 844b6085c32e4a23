package sales

import (
	"cmp"
	"slices"
	"strconv"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/ids"
)

// The pure money rules. Invariants after every write of a sale that is not
// canceled (the property tests check them):
//
//	Σ installment amount    = total_cents
//	Σ installment paid      = paid_cents = Σ active payment amounts
//	Σ installment remaining = total_cents − paid_cents ≥ 0
//
// Every payment is applied to installments (the upfront payment of
// paid_full and the down payment of entry_and_rest have an installment of
// their own), so reversing any payment reopens exactly what it paid.

// draft is an installment to create.
type draft struct {
	Kind   InstallmentKind
	Amount int64
	Due    apitime.Date
}

// fit adjusts a list of amounts to add up to due: a difference of one cent
// is absorbed by the last amount, a larger one is 422 amount_mismatch on
// param. The last amount must stay at least min.
func fit(param string, amounts []int64, due, min int64) error {
	if len(amounts) == 0 {
		if due == 0 {
			return nil
		}
		return apierr.Invalid(param, apierr.AmountMismatch)
	}
	var sum int64
	for _, a := range amounts {
		sum += a
	}
	diff := due - sum
	if diff < -1 || diff > 1 {
		return apierr.Invalid(param, apierr.AmountMismatch)
	}
	last := &amounts[len(amounts)-1]
	if *last+diff < min {
		return apierr.Invalid(param, apierr.AmountMismatch)
	}
	*last += diff
	return nil
}

// planFor builds the stored plan and the installments to create for a sale
// total (spec 4.4, payment plan rules 1-5). in has passed validate.
func planFor(in *PaymentPlanInput, total int64, saleDate apitime.Date) (PaymentPlan, []draft, error) {
	p := PaymentPlan{Mode: in.Mode, PaymentMethod: in.PaymentMethod, AccountID: in.AccountID}
	paidAt := saleDate
	if in.PaidAt != nil {
		paidAt = *in.PaidAt
	}
	var drafts []draft
	due := total
	switch in.Mode {
	case ModePaidFull:
		p.PaidAt = &paidAt
		if total > 0 {
			drafts = append(drafts, draft{Kind: KindUpfront, Amount: total, Due: paidAt})
		}
		return p, drafts, nil
	case ModeEntryAndRest:
		entry := *in.EntryAmountCents
		if entry >= total {
			return p, nil, apierr.Invalid("payment_plan.entry_amount_cents", apierr.OutOfRange) // 0 < entry < total
		}
		p.PaidAt, p.EntryAmountCents = &paidAt, &entry
		drafts = append(drafts, draft{Kind: KindEntry, Amount: entry, Due: paidAt})
		due = total - entry
	}
	amounts := make([]int64, len(in.Installments))
	for i, n := range in.Installments {
		amounts[i] = *n.AmountCents
	}
	if err := fit("payment_plan.installments", amounts, due, 1); err != nil {
		return p, nil, err
	}
	p.Installments = make([]PaymentPlanInstallment, len(amounts))
	for i, a := range amounts {
		p.Installments[i] = PaymentPlanInstallment{AmountCents: a, DueDate: *in.Installments[i].DueDate}
		drafts = append(drafts, draft{Kind: KindInstallment, Amount: a, Due: *in.Installments[i].DueDate})
	}
	return p, drafts, nil
}

// newInstallments turns drafts into installments of sale s.
func newInstallments(s *Row, drafts []draft, e Env) []InstallmentRow {
	out := make([]InstallmentRow, len(drafts))
	for i, d := range drafts {
		out[i] = InstallmentRow{ID: ids.New("ins"), CompanyID: s.CompanyID, SaleID: s.ID, Kind: d.Kind, AmountCents: d.Amount,
			DueDate: d.Due, CreatedAt: e.Write.At, UpdatedAt: e.Write.At}
		out[i].Status = statusFor(&out[i], e.Today())
	}
	return out
}

// statusFor is an installment's status from its amounts and due date.
func statusFor(n *InstallmentRow, today apitime.Date) InstallmentStatus {
	switch {
	case n.Status == InstCanceled:
		return InstCanceled
	case n.Remaining() == 0:
		return InstPaid
	case n.DueDate.Before(today.Time):
		return InstOverdue
	}
	return InstOpen
}

func isOpen(n *InstallmentRow) bool { return n.Status != InstCanceled && n.Remaining() > 0 }

// allocate applies a payment of amount to the sale's installments: to the
// target installment (which must exist, 404, and be open, 409) or in
// due-date order. The caller has checked amount ≤ balance.
func allocate(s *Row, y *PaymentRow, target *string, today apitime.Date) error {
	var order []int
	for i := range s.Installments {
		n := &s.Installments[i]
		if target != nil && n.ID == *target {
			if !isOpen(n) {
				return apierr.New(apierr.Conflict) // 3.2: must target an open installment
			}
			if y.AmountCents > n.Remaining() {
				return apierr.Invalid("amount_cents", apierr.ExceedsBalance)
			}
			order = []int{i}
			break
		}
		if target == nil && isOpen(n) {
			order = append(order, i)
		}
	}
	if target != nil && len(order) == 0 {
		return apierr.New(apierr.ResourceNotFound)
	}
	slices.SortStableFunc(order, func(a, b int) int {
		x, z := &s.Installments[a], &s.Installments[b]
		return cmp.Or(x.DueDate.Compare(z.DueDate.Time), cmp.Compare(x.ID, z.ID))
	})
	left := y.AmountCents
	for _, i := range order {
		if left == 0 {
			break
		}
		n := &s.Installments[i]
		a := min(left, n.Remaining())
		n.PaidCents += a
		left -= a
		y.Allocations = append(y.Allocations, AllocationRow{CompanyID: s.CompanyID, PaymentID: y.ID, InstallmentID: n.ID, AmountCents: a})
		if n.Remaining() == 0 {
			d := y.PaidAt
			n.PaidDate = &d
		}
		n.Status = statusFor(n, today)
	}
	if left != 0 {
		return apierr.Invalid("amount_cents", apierr.ExceedsBalance)
	}
	return nil
}

// unallocate takes a reversed payment's amounts back off its installments.
func unallocate(s *Row, y *PaymentRow, today apitime.Date) {
	for _, a := range y.Allocations {
		for i := range s.Installments {
			n := &s.Installments[i]
			if n.ID == a.InstallmentID {
				n.PaidCents -= a.AmountCents
				n.PaidDate = nil
				n.Status = statusFor(n, today)
			}
		}
	}
}

// settle recomputes the sale's money fields from its payments and
// installments, and refreshes installment statuses against today.
func settle(s *Row, today apitime.Date) {
	s.PaidCents = 0
	for i := range s.Payments {
		if s.Payments[i].Active() {
			s.PaidCents += s.Payments[i].AmountCents
		}
	}
	s.Overdue = false
	for i := range s.Installments {
		n := &s.Installments[i]
		n.Status = statusFor(n, today)
		s.Overdue = s.Overdue || n.Status == InstOverdue
	}
	switch {
	case s.PaidCents == s.TotalCents:
		s.PaymentStatus = StatusPaid
	case s.PaidCents > 0:
		s.PaymentStatus = StatusPartial
	default:
		s.PaymentStatus = StatusPending
	}
}

// InstallmentsRescheduleEntry is an installment of a new schedule (reschedule, version):
// with id it changes that open installment (amount_cents is its full
// amount, including what was already paid on it); without id it adds one.
type InstallmentsRescheduleEntry struct {
	ID          *string       `json:"id"`
	AmountCents *int64        `json:"amount_cents" api:"required" min:"1" max:"1000000000000"`
	DueDate     *apitime.Date `json:"due_date" api:"required"`
}

// checkEntries checks what rescheduled installments are alone: how many,
// their amounts and due dates. It runs before anything is read, so that a
// malformed entry is 422 whatever the sale's records say (their ids are
// checked against the sale in replan).
func checkEntries(f *apierr.Fields, param string, entries []InstallmentsRescheduleEntry) {
	if len(entries) > MaxInstallments {
		f.Add(param, apierr.OutOfRange)
		return
	}
	for i, en := range entries {
		checkInstallment(f, param+"["+strconv.Itoa(i)+"]", en.AmountCents, en.DueDate != nil)
	}
}

// replan replaces the open installments with entries so that what remains
// to receive equals balance. Open installments left out are removed, or,
// when partly paid, keep only what was paid (and so become paid).
func replan(s *Row, param string, entries []InstallmentsRescheduleEntry, balance int64, e Env) error {
	var f apierr.Fields
	if checkEntries(&f, param, entries); f.Err() != nil {
		return f.Err()
	}
	byID := map[string]int{}
	for i := range s.Installments {
		byID[s.Installments[i].ID] = i
	}
	listed := map[string]bool{}
	amounts := make([]int64, len(entries))
	paid := make([]int64, len(entries))
	for i, en := range entries {
		p := param + "[" + strconv.Itoa(i) + "]"
		amounts[i] = *en.AmountCents
		if en.ID == nil {
			continue
		}
		j, ok := byID[*en.ID]
		if !ok {
			return apierr.New(apierr.ResourceNotFound)
		}
		if !isOpen(&s.Installments[j]) {
			return apierr.New(apierr.Conflict) // only open installments are rescheduled
		}
		if listed[*en.ID] {
			f.Add(p+".id", apierr.InvalidValue)
		}
		listed[*en.ID] = true
		paid[i] = s.Installments[j].PaidCents
		if amounts[i] != 0 && amounts[i] < paid[i] {
			f.Add(p+".amount_cents", apierr.OutOfRange) // below what was already paid on it
		}
	}
	if err := f.Err(); err != nil {
		return err
	}
	// What entries leave to receive must equal the balance (1 cent absorbed).
	rem := make([]int64, len(entries))
	for i := range entries {
		rem[i] = amounts[i] - paid[i]
	}
	// The last installment's full amount must stay at least one cent.
	lastMin := int64(0)
	if n := len(entries); n > 0 {
		lastMin = max(0, 1-paid[n-1])
	}
	if err := fit(param, rem, balance, lastMin); err != nil {
		return err
	}
	kept := s.Installments[:0:0]
	for i := range s.Installments {
		n := s.Installments[i]
		if isOpen(&n) && !listed[n.ID] {
			if n.PaidCents == 0 {
				continue // removed
			}
			n.AmountCents = n.PaidCents
		}
		kept = append(kept, n)
	}
	s.Installments = kept
	for i, en := range entries {
		amount := rem[i] + paid[i]
		if en.ID == nil {
			s.Installments = append(s.Installments, newInstallments(s, []draft{{Kind: KindInstallment, Amount: amount, Due: *en.DueDate}}, e)...)
			continue
		}
		for j := range s.Installments {
			if n := &s.Installments[j]; n.ID == *en.ID {
				n.AmountCents, n.DueDate = amount, *en.DueDate
			}
		}
	}
	for i := range s.Installments {
		if n := &s.Installments[i]; n.Remaining() == 0 && n.PaidDate == nil {
			d := e.Today()
			n.PaidDate = &d
		}
	}
	return nil
}

// openBalance is what the open installments still have to receive.
func openBalance(s *Row) int64 {
	var b int64
	for i := range s.Installments {
		if isOpen(&s.Installments[i]) {
			b += s.Installments[i].Remaining()
		}
	}
	return b
}

// clone copies a sale deeply enough for the rules above to change the copy.
func (s *Row) clone() *Row {
	c := *s
	c.Items = slices.Clone(s.Items)
	c.Installments = slices.Clone(s.Installments)
	c.Payments = slices.Clone(s.Payments)
	for i := range c.Payments {
		c.Payments[i].Allocations = slices.Clone(s.Payments[i].Allocations)
	}
	c.Transactions = slices.Clone(s.Transactions)
	return &c
}
