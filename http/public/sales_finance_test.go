package public_test

import (
	"slices"
	"strings"
	"testing"

	"oficina/ops/testkit"
	"oficina/tenant"
)

// saleMember adds a MEMBER whose profile ticks sales, and finance when
// withFinance.
func (e *saleEnv) saleMember(t *testing.T, withFinance bool) *tenant.Member {
	t.Helper()
	perms := tenant.MemberPermissions{"sales": {"read", "create", "update"}}
	if withFinance {
		perms["finance"] = []string{"read", "create", "update"}
	}
	return e.Co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember), Permissions: &perms})
}

// 4.4 and 5.4: finance permissions are needed only when the request decides
// track_in_finance or chooses an account; omitted, the company setting
// decides. Refusals save nothing.
func TestSaleFinancePermissions(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	acc := e.account(t, "Caixa", true)
	noFin, fin := e.saleMember(t, false), e.saleMember(t, true)
	key := func(m *tenant.Member, perms ...string) string {
		return e.Co.Key(t, m, append(slices.Clone(salePerms), perms...)...).Secret
	}
	plan := map[string]any{"mode": "paid_full"}
	withAccount := map[string]any{"mode": "paid_full", "account_id": acc}
	for _, tc := range []struct {
		name   string
		key    string
		track  any // nil: omitted
		plan   map[string]any
		status int
		code   string
		posted bool
	}{
		{"omitted: no finance permission, company setting posts", key(noFin), nil, plan, 201, "", true},
		{"false sent by a member without finance access", key(noFin), false, plan, 403, "member_permission_denied", false},
		{"true without finance:create on the key", key(noFin), true, plan, 403, "permission_missing", false},
		{"true with finance:create, member without finance access", key(noFin, "finance:create"), true, plan, 403, "member_permission_denied", false},
		{"false by a member with finance access", key(fin), false, plan, 201, "", false},
		{"true without finance:create", key(fin), true, plan, 403, "permission_missing", false},
		{"true with finance:create", key(fin, "finance:create"), true, plan, 201, "", true},
		{"account without finance:read", key(fin, "finance:create"), nil, withAccount, 403, "permission_missing", false},
		{"account without finance:create", key(fin, "finance:read"), nil, withAccount, 403, "permission_missing", false},
		{"account by a member without finance access", key(noFin, "finance:read", "finance:create"), nil, withAccount, 403, "member_permission_denied", false},
		{"account with finance:read and finance:create", key(fin, "finance:read", "finance:create"), nil, withAccount, 201, "", true},
	} {
		before := e.count(t, "SELECT count(*) FROM sales")
		body := customSale(1000, tc.plan)
		if tc.track != nil {
			body["track_in_finance"] = tc.track
		}
		r := e.As(t, tc.key, "POST", "/sales", body)
		if r.Status != tc.status || r.ErrorCode() != tc.code {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
			continue
		}
		if r.Status != 201 {
			if n := e.count(t, "SELECT count(*) FROM sales"); n != before {
				t.Errorf("%s: refused request saved a sale", tc.name)
			}
			continue
		}
		n := e.count(t, "SELECT count(*) FROM financial_transactions WHERE sale_id = ?", r.Body["id"])
		if (n > 0) != tc.posted {
			t.Errorf("%s: %d finance transactions", tc.name, n)
		}
	}
	// With the company setting off, an omitted track_in_finance posts nothing.
	e.admin(t, "PATCH", "/sales_settings", map[string]any{"track_in_finance": false})
	r := e.As(t, key(noFin), "POST", "/sales", customSale(1000, plan))
	if r.Status != 201 || e.count(t, "SELECT count(*) FROM financial_transactions WHERE sale_id = ?", r.Body["id"]) != 0 {
		t.Errorf("setting off: %d %s", r.Status, r.Raw)
	}
}

// 4.4: posting creates receivables for the installments and received
// transactions for payments, in the chosen account or the default one,
// with financial_transaction.created events.
func TestSaleFinancePosting(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	def := e.account(t, "Banco", true)
	other := e.account(t, "Caixa", false)
	s := e.sale(t, customSale(10000, map[string]any{"mode": "entry_and_rest", "entry_amount_cents": 4000, "payment_method": "pix",
		"installments": installmentsBody("2099-02-01", 3000, "2099-03-01", 3000)}))
	if s["account_id"] != def {
		t.Fatalf("account: %v", s["account_id"])
	}
	txs := saleList(s, "finance_transactions")
	var open, settled, received int64
	for _, x := range txs {
		if x["account_id"] != def || x["sale_id"] != s["id"] || x["kind"] != "income" {
			t.Errorf("transaction: %v", x)
		}
		switch x["status"] {
		case "open":
			open += saleNum(x["amount_cents"])
		case "settled":
			settled++
			if saleNum(x["original_amount_cents"]) != 4000 || saleNum(x["amount_cents"]) != 0 {
				t.Errorf("settled entry: %v", x)
			}
		case "paid":
			received += saleNum(x["amount_cents"])
		}
	}
	if len(txs) != 4 || open != 6000 || settled != 1 || received != 4000 {
		t.Fatalf("transactions: %s", mustJSON(t, txs))
	}
	var created int
	for _, ev := range e.events(t) {
		if ev.Type == "financial_transaction.created" {
			created++
		}
	}
	if created != 4 {
		t.Errorf("%d financial_transaction.created", created)
	}
	s2 := e.sale(t, customSale(500, map[string]any{"mode": "paid_full", "account_id": other}))
	if s2["account_id"] != other || s2["payment_plan"].(map[string]any)["account_id"] != other {
		t.Errorf("chosen account: %v", s2["account_id"])
	}
	for _, x := range saleList(s2, "finance_transactions") {
		if x["account_id"] != other {
			t.Errorf("posted to %v", x["account_id"])
		}
	}
	if r := e.Do(t, "POST", "/sales", customSale(500, map[string]any{"mode": "paid_full", "account_id": "acc_00000000000000000000000000"})); r.Status != 404 {
		t.Errorf("unknown account: %d %s", r.Status, r.Raw)
	}
}

// 2.6 and 6.3 rule 6: account_id and finance_transactions appear only for a
// key with finance:read whose member has finance access; sale.* events
// never carry them.
func TestSaleFinanceFieldsVisibility(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	acc := e.account(t, "Banco", true)
	s := e.sale(t, customSale(3000, map[string]any{"mode": "installments", "account_id": acc,
		"installments": installmentsBody("2099-01-01", 1000, "2099-02-01", 2000)}))
	id := s["id"].(string)
	e.ok(t, "POST", "/sales/"+id+"/payments", map[string]any{"amount_cents": 3000, "paid_at": "2026-01-02"})
	noFin, fin := e.saleMember(t, false), e.saleMember(t, true)
	for _, tc := range []struct {
		name string
		key  string
		want bool
	}{
		{"finance:read and member access", e.Co.Key(t, fin, "sales:read", "finance:read").Secret, true},
		{"no finance:read on the key", e.Co.Key(t, fin, "sales:read").Secret, false},
		{"member without finance access", e.Co.Key(t, noFin, "sales:read", "finance:read").Secret, false},
	} {
		for _, path := range []string{"/sales/" + id, "/sales?limit=1"} {
			r := e.As(t, tc.key, "GET", path, nil)
			obj := r.Body
			if strings.HasPrefix(path, "/sales?") {
				obj = saleList(r.Body, "data")[0]
			}
			_, hasAcc := obj["account_id"]
			_, hasTx := obj["finance_transactions"]
			planAcc := obj["payment_plan"].(map[string]any)["account_id"]
			if r.Status != 200 || hasAcc != tc.want || hasTx != tc.want || (planAcc != nil) != tc.want {
				t.Errorf("%s %s: %d account %v transactions %v plan %v", tc.name, path, r.Status, hasAcc, hasTx, planAcc)
			}
		}
	}
	for _, typ := range []string{"sale.created", "sale.updated", "sale.payment_registered", "sale.paid"} {
		bodies := e.rawEvents(t, typ)
		if len(bodies) == 0 {
			t.Errorf("no %s", typ)
		}
		for _, b := range bodies {
			if strings.Contains(b, "finance_transactions") || strings.Contains(b, `"account_id"`) && strings.Contains(b, acc) {
				t.Errorf("%s carries finance: %s", typ, b)
			}
		}
	}
}
