package public

import (
	"context"

	"github.com/uptrace/bun"

	"oficina/streams"
	"oficina/tenant"
)

// writeView runs one write that yields a row (fn) and answers the row as
// view renders it for the caller.
func writeView[R, V any](ctx context.Context, s *Server, p *tenant.Principal,
	fn func(ctx context.Context, tx bun.Tx, w *streams.Write) (R, error), view func(R) V,
) (V, error) {
	var out V
	err := s.write(ctx, p, func(ctx context.Context, tx bun.Tx, w *streams.Write) error {
		r, err := fn(ctx, tx, w)
		if err == nil {
			out = view(r)
		}
		return err
	})
	return out, err
}
