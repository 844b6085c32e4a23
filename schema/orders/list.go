package orders

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/ids"
	"oficina/schema/page"
)

// Filter narrows GET /service_orders (docs/api.md).
type Filter struct {
	Status       string
	ClientID     string
	TechnicianID string // in charge or in the support team
	TypeID       string
	page.Sync
}

var listParams = append([]string{"limit", "starting_after", "status", "client_id", "technician_id", "type_id"},
	page.SyncParams...)

// ParseFilter reads the list's query: an unknown parameter, a repeated one,
// an unknown status or a timestamp of another shape is 400 invalid_request.
func ParseFilter(q url.Values) (Filter, error) {
	var f Filter
	bad := apierr.New(apierr.InvalidRequest)
	for k, vs := range q {
		if !slices.Contains(listParams, k) || len(vs) != 1 || utf8.RuneCountInString(vs[0]) > page.MaxCursor {
			return f, bad
		}
	}
	f.Status, f.ClientID, f.TechnicianID, f.TypeID = q.Get("status"), q.Get("client_id"), q.Get("technician_id"), q.Get("type_id")
	if q.Has("status") && !slices.Contains(Statuses, f.Status) {
		return f, bad
	}
	// An id filter that cannot be an id is malformed; an unknown one (or
	// another company's) just matches nothing.
	for _, id := range []struct{ prefix, value, name string }{
		{"cli", f.ClientID, "client_id"}, {"mem", f.TechnicianID, "technician_id"}, {"sot", f.TypeID, "type_id"},
	} {
		if q.Has(id.name) && !ids.Valid(id.prefix, id.value) {
			return f, bad
		}
	}
	var err error
	f.Sync, err = page.ParseSync(q)
	return f, err
}

// List lists the company's orders, newest first, filtered.
func List(ctx context.Context, tx bun.IDB, companyID string, p page.Params, f Filter) (page.List[ServiceOrder], error) {
	var rows []Row
	q := tx.NewSelect().Model(&rows).Where("company_id = ?", companyID)
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.ClientID != "" {
		q = q.Where("client_id = ?", f.ClientID)
	}
	if f.TechnicianID != "" {
		q = q.Where("(technician_id = ? OR ? = ANY (support_technician_ids))", f.TechnicianID, f.TechnicianID)
	}
	if f.TypeID != "" {
		q = q.Where("type_id = ?", f.TypeID)
	}
	q = f.Sync.Apply(q, "created_at", "updated_at")
	if err := p.Apply(q, "id").Scan(ctx); err != nil {
		return page.List[ServiceOrder]{}, fmt.Errorf("orders: list: %w", err)
	}
	l := page.Wrap(p, rows)
	out := page.List[ServiceOrder]{Object: "list", HasMore: l.HasMore, Data: make([]ServiceOrder, len(l.Data))}
	for i := range l.Data {
		out.Data[i] = l.Data[i].View()
	}
	return out, nil
}
