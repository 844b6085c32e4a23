package sales

import (
	"context"
	"fmt"
	"net/url"
	"slices"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/finance"
	"oficina/schema/page"
)

// Filter narrows GET /sales. Date bounds are inclusive.
type Filter struct {
	SaleDateAfter  *apitime.Date // sale_date on or after
	SaleDateBefore *apitime.Date // sale_date on or before
	PaymentStatus  *string
	ClientID       *string
	Canceled       *bool
	page.Sync
}

// ParseFilter reads the filters of GET /sales; a malformed value is 400
// invalid_request (like any invalid query parameter).
func ParseFilter(q url.Values) (Filter, error) {
	var f Filter
	bad := apierr.New(apierr.InvalidRequest)
	one := func(name string) (string, bool, error) {
		vs, ok := q[name]
		if !ok {
			return "", false, nil
		}
		if len(vs) != 1 || vs[0] == "" {
			return "", false, bad
		}
		return vs[0], true, nil
	}
	for name, dst := range map[string]**apitime.Date{"sale_date_after": &f.SaleDateAfter, "sale_date_before": &f.SaleDateBefore} {
		v, ok, err := one(name)
		if err != nil {
			return f, err
		}
		if ok {
			d, err := apitime.ParseDate(v)
			if err != nil {
				return f, bad
			}
			*dst = &d
		}
	}
	if v, ok, err := one("payment_status"); err != nil {
		return f, err
	} else if ok {
		if !slices.Contains([]string{StatusPending, StatusPartial, StatusPaid}, v) {
			return f, bad
		}
		f.PaymentStatus = &v
	}
	if v, ok, err := one("client_id"); err != nil {
		return f, err
	} else if ok {
		f.ClientID = &v
	}
	if v, ok, err := one("canceled"); err != nil {
		return f, err
	} else if ok {
		if v != "true" && v != "false" {
			return f, bad
		}
		c := v == "true"
		f.Canceled = &c
	}
	var err error
	f.Sync, err = page.ParseSync(q)
	return f, err
}

// List lists sales, newest first, rendered with or without finance.
func List(ctx context.Context, tx bun.IDB, p page.Params, f Filter, withFinance bool) (page.List[Sale], error) {
	var rows []Row
	q := tx.NewSelect().Model(&rows)
	if f.SaleDateAfter != nil {
		q = q.Where("s.sale_date >= ?", *f.SaleDateAfter)
	}
	if f.SaleDateBefore != nil {
		q = q.Where("s.sale_date <= ?", *f.SaleDateBefore)
	}
	if f.PaymentStatus != nil {
		q = q.Where("s.payment_status = ?", *f.PaymentStatus)
	}
	if f.ClientID != nil {
		q = q.Where("s.client_id = ?", *f.ClientID)
	}
	if f.Canceled != nil {
		q = q.Where("(s.canceled_at IS NOT NULL) = ?", *f.Canceled)
	}
	q = f.Sync.Apply(q, "s.created_at", "s.updated_at")
	if err := p.Apply(q, "s.id").Scan(ctx); err != nil {
		return page.List[Sale]{}, fmt.Errorf("sales: list: %w", err)
	}
	l := page.Wrap(p, rows)
	txs := map[string][]finance.TransactionRow{}
	if withFinance && len(l.Data) > 0 {
		idList := make([]string, len(l.Data))
		for i := range l.Data {
			idList[i] = l.Data[i].ID
		}
		var all []finance.TransactionRow
		if err := tx.NewSelect().Model(&all).Where("sale_id IN (?)", bun.List(idList)).OrderExpr("id").Scan(ctx); err != nil {
			return page.List[Sale]{}, fmt.Errorf("sales: list finance: %w", err)
		}
		for _, t := range all {
			txs[*t.SaleID] = append(txs[*t.SaleID], t)
		}
	}
	out := page.List[Sale]{Object: "list", HasMore: l.HasMore, Data: make([]Sale, len(l.Data))}
	for i := range l.Data {
		s := &l.Data[i]
		if err := s.decodeChildren(); err != nil {
			return page.List[Sale]{}, err
		}
		s.Transactions = txs[s.ID]
		out.Data[i] = s.View(withFinance)
	}
	return out, nil
}
