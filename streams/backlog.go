package streams

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/schema"

	"oficina/tenant"
)

// Backlog entry kinds.
const (
	BacklogEvent    = "event"    // an event to publish on EVENTS
	BacklogDelivery = "delivery" // a delivery to publish on DELIVERIES
)

// BacklogEntry is a row of publish_backlog: an event or a delivery whose
// publish is not known to have succeeded (decision 0029). A failed publish,
// a write no publisher vouches for, and a lost publisher's window put
// entries here; the relay publishes them and deletes them.
type BacklogEntry struct {
	bun.BaseModel `bun:"table:publish_backlog"`

	CompanyID string    `bun:"company_id,pk"`
	ID        string    `bun:"id,pk"`
	Kind      string    `bun:"kind"`
	CreatedAt time.Time `bun:"created_at"` // the log row's
}

// entries lists the backlog entries of rs.
func entries(rs []Recorded) []BacklogEntry {
	var out []BacklogEntry
	for _, r := range rs {
		if !r.DeliveriesOnly {
			out = append(out, BacklogEntry{CompanyID: r.CompanyID, ID: r.ID, Kind: BacklogEvent, CreatedAt: r.at})
		}
		for _, d := range r.Deliveries {
			out = append(out, BacklogEntry{CompanyID: r.CompanyID, ID: d.ID, Kind: BacklogDelivery, CreatedAt: r.at})
		}
	}
	return out
}

// addToBacklog is the statement that puts es (one company's) in the
// backlog; an entry already there stays.
func addToBacklog(idb bun.IDB, es []BacklogEntry) *bun.InsertQuery {
	return idb.NewInsert().Model(&es).On("CONFLICT DO NOTHING")
}

// removeFromBacklog is the statement that deletes one company's entries
// named by ids: JetStream has them.
func removeFromBacklog(idb bun.IDB, companyID string, ids []string) *bun.DeleteQuery {
	return idb.NewDelete().Model((*BacklogEntry)(nil)).
		Where("company_id = ?", companyID).Where("id = ANY (?)", pgdialect.Array(ids))
}

// byCompany groups es by company, companies and ids in order, so two
// writers of the backlog lock its rows in the same order.
func byCompany(es []BacklogEntry) ([]string, map[string][]BacklogEntry) {
	m := map[string][]BacklogEntry{}
	for _, e := range es {
		m[e.CompanyID] = append(m[e.CompanyID], e)
	}
	for _, v := range m {
		slices.SortFunc(v, func(a, b BacklogEntry) int { return cmp.Compare(a.ID, b.ID) })
	}
	return slices.Sorted(maps.Keys(m)), m
}

// changeBacklog runs, for each company of es, the statement stmt builds
// for that company's entries in its own scope: all in one message (one
// round trip, one implicit transaction).
func changeBacklog(ctx context.Context, db *bun.DB, es []BacklogEntry, stmt func(companyID string, es []BacklogEntry) schema.QueryAppender) error {
	if len(es) == 0 {
		return nil
	}
	companies, m := byCompany(es)
	scoped := make([]tenant.Scoped, 0, len(companies))
	for _, co := range companies {
		b, err := stmt(co, m[co]).AppendQuery(db.QueryGen(), nil)
		if err != nil {
			return fmt.Errorf("streams: backlog: %w", err)
		}
		scoped = append(scoped, tenant.Scoped{CompanyID: co, Statements: string(b)})
	}
	if err := tenant.ExecAll(ctx, db, scoped); err != nil {
		return fmt.Errorf("streams: backlog: %w", err)
	}
	return nil
}

// Backlog puts es in the backlog, each company in its scope.
func Backlog(ctx context.Context, db *bun.DB, es []BacklogEntry) error {
	return changeBacklog(ctx, db, es, func(_ string, es []BacklogEntry) schema.QueryAppender { return addToBacklog(db, es) })
}

// Unbacklog deletes es from the backlog: JetStream has them.
func Unbacklog(ctx context.Context, db *bun.DB, es []BacklogEntry) error {
	return changeBacklog(ctx, db, es, func(co string, es []BacklogEntry) schema.QueryAppender {
		ids := make([]string, len(es))
		for i, e := range es {
			ids[i] = e.ID
		}
		return removeFromBacklog(db, co, ids)
	})
}
