package public

import (
	"context"

	"github.com/go-fuego/fuego"
	"github.com/uptrace/bun"

	"oficina/schema/clients"
)

func (s *Server) getClient(c fuego.ContextNoBody) (clients.Client, error) {
	p := principal(c.Context())
	var out clients.Client
	err := s.tx(c.Context(), p, func(ctx context.Context, tx bun.Tx) error {
		cl, err := clients.Get(ctx, tx, c.PathParam("id"))
		if err == nil {
			out = cl.View()
		}
		return err
	})
	return out, err
}
