package public

import (
	"context"

	"github.com/uptrace/bun"

	"oficina/schema/clients"
)

func (s *Server) getClient(ctx context.Context, c *Call[any]) (clients.Client, error) {
	p := c.P
	var out clients.Client
	err := s.read(ctx, p, func(ctx context.Context, tx bun.Tx) error {
		cl, err := clients.Get(ctx, tx, c.Path("id"))
		if err == nil {
			out = cl.View()
		}
		return err
	})
	return out, err
}
