package finance

import "slices"

// Payment plan modes (2.6): how a sale's total is to be received. Quotes
// propose a plan and sales follow one, so the closed set sits here, below
// both.
const (
	ModePaidFull     = "paid_full"
	ModeEntryAndRest = "entry_and_rest"
	ModeInstallments = "installments"
	ModeUnpaid       = "unpaid"
)

// PaymentPlanMode is payment_plan.mode (2.6).
type PaymentPlanMode string

// Values are the modes.
func (PaymentPlanMode) Values() []string {
	return []string{ModePaidFull, ModeEntryAndRest, ModeInstallments, ModeUnpaid}
}

// PaymentMethod is a payment_method (2.6).
type PaymentMethod string

// PaymentMethods are the values of payment_method (2.6).
var PaymentMethods = []PaymentMethod{"pix", "credit_card", "debit_card", "cash", "boleto", "transfer", "other"}

// Values are the payment methods.
func (PaymentMethod) Values() []string {
	out := make([]string, len(PaymentMethods))
	for i, m := range PaymentMethods {
		out[i] = string(m)
	}
	return out
}

// Valid reports whether m is a payment method.
func (m PaymentMethod) Valid() bool { return slices.Contains(PaymentMethods, m) }

// Valid reports whether m is a mode.
func (m PaymentPlanMode) Valid() bool { return slices.Contains(m.Values(), string(m)) }
