// Package page is list pagination, one rule for every list (docs/api.md):
// newest first, `limit` 1..100 (default 100), cursor `starting_after=<id>`
// (the last id of the previous page), and `has_more`. Ids sort by creation,
// so the cursor is stable while records are added.
package page

import (
	"net/url"
	"strconv"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
)

// MaxLimit is the largest and default page size.
const MaxLimit = 100

// MaxCursor bounds starting_after, in characters (as the OpenAPI
// document's maxLength counts): an id is far shorter.
const MaxCursor = 64

// Params of a list request.
type Params struct {
	Limit         int
	StartingAfter string
}

// Parse reads limit and starting_after; a bad value is 400 invalid_request.
func Parse(q url.Values) (Params, error) {
	p := Params{Limit: MaxLimit}
	if vs, ok := q["limit"]; ok {
		if len(vs) != 1 {
			return p, apierr.New(apierr.InvalidRequest)
		}
		n, err := strconv.Atoi(vs[0])
		if err != nil || n < 1 || n > MaxLimit {
			return p, apierr.New(apierr.InvalidRequest)
		}
		p.Limit = n
	}
	if vs, ok := q["starting_after"]; ok {
		if len(vs) != 1 || vs[0] == "" || utf8.RuneCountInString(vs[0]) > MaxCursor {
			return p, apierr.New(apierr.InvalidRequest)
		}
		p.StartingAfter = vs[0]
	}
	return p, nil
}

// List is the list wrapper.
type List[T any] struct {
	Object  string `json:"object" const:"list"`
	Data    []T    `json:"data"`
	HasMore bool   `json:"has_more"`
}

// Apply adds the cursor, order and limit+1 to q (id column named idCol).
func (p Params) Apply(q *bun.SelectQuery, idCol string) *bun.SelectQuery {
	if p.StartingAfter != "" {
		q = q.Where("? < ?", bun.Ident(idCol), p.StartingAfter)
	}
	return q.OrderExpr("? DESC", bun.Ident(idCol)).Limit(int64(p.Limit + 1))
}

// Wrap cuts the extra row fetched by Apply and builds the list.
func Wrap[T any](p Params, rows []T) List[T] {
	more := len(rows) > p.Limit
	if more {
		rows = rows[:p.Limit]
	}
	if rows == nil {
		rows = []T{}
	}
	return List[T]{Object: "list", Data: rows, HasMore: more}
}
