package page

import (
	"net/url"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
)

// Sync is the time window a sync loop reads a list through (docs/api.md,
// "Keeping a copy in sync"): records created or changed after the last
// run, page by page in the list's order. Each bound is a timestamp of part
// 2.1 and excludes its instant.
type Sync struct {
	CreatedAfter, CreatedBefore *time.Time
	UpdatedAfter, UpdatedBefore *time.Time
}

// SyncParams are the query members of Sync.
var SyncParams = []string{"created_after", "created_before", "updated_after", "updated_before"}

// ParseSync reads the members of SyncParams in q; one given twice, or not a
// timestamp of part 2.1, is 400 invalid_request.
func ParseSync(q url.Values) (Sync, error) {
	var s Sync
	for i, dst := range []**time.Time{&s.CreatedAfter, &s.CreatedBefore, &s.UpdatedAfter, &s.UpdatedBefore} {
		vs, ok := q[SyncParams[i]]
		if !ok {
			continue
		}
		if len(vs) != 1 {
			return s, apierr.New(apierr.InvalidRequest)
		}
		t, err := apitime.ParseTimestamp(vs[0])
		if err != nil {
			return s, apierr.New(apierr.InvalidRequest)
		}
		*dst = &t.Time
	}
	return s, nil
}

// Apply narrows q to the window, on the columns created and updated.
func (s Sync) Apply(q *bun.SelectQuery, created, updated string) *bun.SelectQuery {
	for _, b := range []struct {
		col, op string
		at      *time.Time
	}{{created, ">", s.CreatedAfter}, {created, "<", s.CreatedBefore}, {updated, ">", s.UpdatedAfter}, {updated, "<", s.UpdatedBefore}} {
		if b.at != nil {
			q = q.Where("? "+b.op+" ?", bun.Ident(b.col), *b.at)
		}
	}
	return q
}
