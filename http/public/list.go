package public

import (
	"context"
	"net/url"

	"github.com/uptrace/bun"

	"oficina/schema/page"
	"oficina/tenant"
)

// filteredList answers a list route with a filter: the page and then the
// filter parsed from the query (their rules live in schema/, parse is the
// module's), then read reads one page in the caller's company transaction.
func filteredList[F, T any](ctx context.Context, s *Server, c *Call[any], parse func(url.Values) (F, error),
	read func(ctx context.Context, tx bun.Tx, p *tenant.Principal, pg page.Params, f F) (page.List[T], error),
) (page.List[T], error) {
	q := c.Query()
	pg, err := page.Parse(q)
	if err != nil {
		return page.List[T]{}, err
	}
	f, err := parse(q)
	if err != nil {
		return page.List[T]{}, err
	}
	var out page.List[T]
	err = s.read(ctx, c.P, func(ctx context.Context, tx bun.Tx) error {
		out, err = read(ctx, tx, c.P, pg, f)
		return err
	})
	return out, err
}
