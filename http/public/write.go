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
//
// In a request sent with an Idempotency-Key, fn joins the request's
// transaction instead (it also holds the idempotency record); the pipeline
// commits and publishes after the handler has answered, and an error
// answer — or any failed write — rolls back everything the handler wrote.
func (s *Server) write(ctx context.Context, p *tenant.Principal, fn func(ctx context.Context, tx bun.Tx, w streams.Write) error) error {
	w := streams.Write{CompanyID: p.CompanyID(), Actor: actor(p), At: s.deps.Now()}
	ctx, recorded := streams.Collect(ctx)
	if call := callOf(ctx, w.CompanyID); call != nil {
		if err := fn(ctx, call.tx, w); err != nil {
			call.failed = err
			return err
		}
		call.events = append(call.events, recorded()...)
		return nil
	}
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

// tx runs fn in the caller's company transaction (the request's own, in an
// idempotent write). Reads belong here; writes go through s.write.
func (s *Server) tx(ctx context.Context, p *tenant.Principal, fn func(ctx context.Context, tx bun.Tx) error) error {
	if call := callOf(ctx, p.CompanyID()); call != nil {
		return fn(ctx, call.tx)
	}
	return tenant.Tx(ctx, s.deps.DB, p.CompanyID(), fn)
}
