package quotes

import (
	"bytes"
	"encoding/json"
	"fmt"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/finance"
)

// QuotePaymentPlan is the payment plan a quote proposes: members of a
// sale's payment plan, each optional, as the dashboard wrote them. A
// missing mode follows from what the plan has when the quote is converted
// (docs/api.md, "Converting a quote"), and the account is chosen then.
type QuotePaymentPlan struct {
	Mode             *finance.PaymentPlanMode      `json:"mode,omitempty" api:"nullable" doc:"When absent, conversion derives it: an entry → entry_and_rest, installments → installments, else paid_full."`
	PaymentMethod    *finance.PaymentMethod        `json:"payment_method,omitempty" api:"nullable"`
	AccountID        *string                       `json:"account_id,omitempty" api:"nullable" doc:"Ignored by conversion, whose request chooses the account."`
	PaidAt           *apitime.Date                 `json:"paid_at,omitempty" api:"nullable"`
	EntryAmountCents *int64                        `json:"entry_amount_cents,omitempty" api:"nullable"`
	Installments     []QuotePaymentPlanInstallment `json:"installments,omitempty" api:"nullable"`
}

// QuotePaymentPlanInstallment is an installment a quote's plan proposes.
type QuotePaymentPlanInstallment struct {
	AmountCents int64        `json:"amount_cents"`
	DueDate     apitime.Date `json:"due_date"`
}

// RawPaymentPlan is a quote's payment plan as stored: sent as the database
// returns it (what was written, in jsonb's normal form), and documented as
// QuotePaymentPlan, the shape every write is checked against.
type RawPaymentPlan json.RawMessage

// MarshalJSON sends the stored plan, null when there is none.
func (p RawPaymentPlan) MarshalJSON() ([]byte, error) {
	if len(p) == 0 {
		return []byte("null"), nil
	}
	return p, nil
}

// Shape is the type the OpenAPI document shows for the plan.
func (RawPaymentPlan) Shape() any { return QuotePaymentPlan{} }

// checkPlan reports a plan that does not have QuotePaymentPlan's shape:
// not an object, a member of the wrong type, a mode or method outside
// their sets, an installment without its amount or due date. Members it
// does not know are kept, as before (conversion ignores them).
func checkPlan(raw json.RawMessage, f *apierr.Fields) {
	if len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return
	}
	var p QuotePaymentPlan
	if err := json.Unmarshal(raw, &p); err != nil { // not an object, or a member of the wrong type
		f.Add("payment_plan", apierr.InvalidValue)
		return
	}
	if p.Mode != nil && !p.Mode.Valid() {
		f.Add("payment_plan.mode", apierr.InvalidValue)
	}
	if p.PaymentMethod != nil && !p.PaymentMethod.Valid() {
		f.Add("payment_plan.payment_method", apierr.InvalidValue)
	}
	var members []map[string]json.RawMessage
	var whole struct {
		Installments []map[string]json.RawMessage `json:"installments"`
	}
	if err := json.Unmarshal(raw, &whole); err == nil {
		members = whole.Installments
	}
	for i, m := range members {
		for _, name := range []string{"amount_cents", "due_date"} {
			if v, ok := m[name]; !ok || bytes.Equal(v, []byte("null")) {
				f.Add(fmt.Sprintf("payment_plan.installments[%d].%s", i, name), apierr.Required)
			}
		}
	}
}
