package public

import (
	"context"

	"github.com/uptrace/bun"

	"oficina/streams"
	"oficina/tenant"
)

// Publisher publishes the events a committed write recorded.
type Publisher interface {
	AfterCommit(ctx context.Context, events []streams.Recorded)
}

// actor is the API caller as a writer of events.
func actor(p *tenant.Principal) streams.Actor {
	return streams.Actor{Kind: streams.ActorAPI, MemberID: p.Member.ID, KeyID: p.Key.ID}
}

// write runs fn as one write of the caller's company: in the company
// transaction, with the Write that streams.Record needs, and publishes the
// recorded events once the transaction has committed.
func (s *Server) write(ctx context.Context, p *tenant.Principal, fn func(ctx context.Context, tx bun.Tx, w streams.Write) error) error {
	ctx, recorded := streams.Collect(ctx)
	w := streams.Write{CompanyID: p.CompanyID(), Actor: actor(p), At: s.deps.Now()}
	if err := tenant.Tx(ctx, s.deps.DB, w.CompanyID, func(ctx context.Context, tx bun.Tx) error {
		return fn(ctx, tx, w)
	}); err != nil {
		return err
	}
	if s.deps.Publisher != nil {
		s.deps.Publisher.AfterCommit(context.WithoutCancel(ctx), recorded())
	}
	return nil
}
