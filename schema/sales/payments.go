package sales

import (
	"context"
	"slices"
	"strings"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/ids"
	"oficina/streams"
)

// PaymentCreate is the body of POST /sales/{id}/payments (4.4).
type PaymentCreate struct {
	AmountCents   *int64         `json:"amount_cents" api:"required" min:"1" max:"1000000000000"`
	PaidAt        *apitime.Date  `json:"paid_at" api:"required"`
	PaymentMethod *PaymentMethod `json:"payment_method"`
	InstallmentID *string        `json:"installment_id"`
	AccountID     *string        `json:"account_id"`
}

func (in *PaymentCreate) validate() error {
	var f apierr.Fields
	if in.AmountCents == nil {
		f.Add("amount_cents", apierr.Required)
	} else if *in.AmountCents < 1 || *in.AmountCents > MaxAmountCents {
		f.Add("amount_cents", apierr.OutOfRange)
	}
	if in.PaidAt == nil {
		f.Add("paid_at", apierr.Required)
	}
	if in.PaymentMethod != nil && !slices.Contains(PaymentMethods, *in.PaymentMethod) {
		f.Add("payment_method", apierr.InvalidValue)
	}
	return f.Err()
}

// Receive registers a payment: at most the sale's balance, applied to the
// given open installment or in due-date order. paid_cents grows and
// payment_status moves pending → partial → paid. It records sale.updated,
// sale.payment_registered, sale.paid when the balance reaches zero, and the
// finance transactions it posts. A canceled or contract-generated sale
// refuses payments (409).
func Receive(ctx context.Context, w *streams.Write, saleID string, in PaymentCreate) (*Row, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	o, err := beginWritable(ctx, w, saleID)
	if err != nil {
		return nil, err
	}
	if o.s.ContractID != nil {
		return nil, apierr.New(apierr.Conflict) // received through the contract (3.2)
	}
	if *in.AmountCents > o.s.TotalCents-o.s.PaidCents {
		return nil, apierr.Invalid("amount_cents", apierr.ExceedsBalance)
	}
	if in.InstallmentID != nil && !ids.Valid("ins", *in.InstallmentID) {
		return nil, apierr.New(apierr.ResourceNotFound)
	}
	y := PaymentRow{ID: ids.New("pay"), CompanyID: o.s.CompanyID, SaleID: o.s.ID, AmountCents: *in.AmountCents,
		PaidAt: *in.PaidAt, PaymentMethod: in.PaymentMethod, AccountID: o.s.AccountID,
		CreatedAt: w.At, UpdatedAt: w.At}
	if in.AccountID != nil {
		if y.AccountID, err = resolveAccount(ctx, w.Tx, in.AccountID, true); err != nil {
			return nil, err
		}
	}
	if err := allocate(o.s, &y, in.InstallmentID, o.env.Today()); err != nil {
		return nil, err
	}
	o.s.Payments = append(o.s.Payments, y)
	settle(o.s, o.env.Today())
	o.events = []string{EventPaymentRegistered}
	if o.s.PaymentStatus == StatusPaid {
		o.events = append(o.events, EventPaid)
	}
	return o.commit()
}

// Cancellation is the body of payment reversal and of sale cancellation.
type Cancellation struct {
	Reason string `json:"reason" api:"required" minLength:"1" maxLength:"10000" pattern:"nonblank"`
}

// ReversePayment cancels a payment: its amounts go back onto the
// installments it paid, paid_cents and payment_status follow, and its
// finance transaction is canceled. It records sale.updated and
// sale.payment_canceled. A payment already reversed or with an active
// invoice is 409.
func ReversePayment(ctx context.Context, w *streams.Write, saleID, paymentID string, in Cancellation) (*Row, error) {
	o, err := beginCancellation(ctx, w, saleID, in)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(o.s.Payments, func(y PaymentRow) bool { return y.ID == paymentID })
	if i < 0 {
		return nil, apierr.New(apierr.ResourceNotFound)
	}
	y := &o.s.Payments[i]
	if !y.Active() || y.HasActiveInvoice {
		return nil, apierr.New(apierr.Conflict)
	}
	reverse(o.s, y, strings.TrimSpace(in.Reason), o.env)
	settle(o.s, o.env.Today())
	o.events = []string{EventPaymentCanceled}
	return o.commit()
}

// reverse marks a payment reversed and takes it off its installments.
func reverse(s *Row, y *PaymentRow, reason string, e Env) {
	at := e.Write.At
	y.CanceledAt, y.CancelReason = &at, &reason
	unallocate(s, y, e.Today())
}
